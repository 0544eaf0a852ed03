"""The judge panel: one ``JudgeSpec`` per judge, shared by the run entry, the annotator and the report.

The panel travels in run_spec.json as the annotator's ``judges`` argument; this module is the one place
that writes that form (``as_arg``) and reads it back (``from_arg``, ``panel_of``), so the report does not
depend on a constructor argument's name and shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from helm_mtsamples_ext import names

OUR_ANNOTATOR = names.ANNOTATOR_CLASS


@dataclass(frozen=True)
class JudgeSpec:
    """One member of the panel (no secrets: this lands in run_spec.json).

    ``model_deployment`` is a HELM deployment for hosted judges, None for a ``base_url`` endpoint (the
    annotator registers one); ``endpoint_index`` is the 1-based position of ``base_url`` in
    ``judge_base_url``: the ``n`` of ``JUDGE_API_KEY_<n>``."""

    name: str
    model: str
    model_deployment: str | None
    base_url: str | None = None
    endpoint_index: int | None = None

    def as_arg(self) -> dict[str, Any]:
        arg: dict[str, Any] = {
            "name": self.name,
            "model": self.model,
            "model_deployment": self.model_deployment,
            "base_url": self.base_url,
        }
        if self.endpoint_index is not None:
            arg["endpoint_index"] = self.endpoint_index
        return arg

    @classmethod
    def from_arg(cls, arg: Mapping[str, Any]) -> JudgeSpec:
        index = arg.get("endpoint_index")
        deployment = arg.get("model_deployment")
        return cls(
            name=str(arg["name"]),
            model=str(arg.get("model") or deployment or arg["name"]),
            model_deployment=str(deployment) if deployment else None,
            base_url=str(arg["base_url"]) if arg.get("base_url") else None,
            endpoint_index=int(index) if index is not None else None,
        )


def panel_of(run_spec: Mapping[str, Any]) -> list[str] | None:
    """The judge names of a run, in panel order, from its run_spec.json; None when it names no panel.

    Reads our annotator's panel, or HELM's built-in jury (``annotator_models``) for its own runs."""
    for spec in run_spec.get("annotators") or []:
        args = spec.get("args") or {}
        judges = args.get("judges")
        if judges:
            return [JudgeSpec.from_arg(j).name if isinstance(j, Mapping) else str(j) for j in judges]
        if isinstance(args.get("annotator_models"), Mapping):
            return list(args["annotator_models"])
    return None
