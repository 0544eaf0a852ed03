"""The judge panel: one ``JudgeSpec`` per judge, shared by the run entry, the annotator and the report, and
the ``JudgeTarget`` each becomes once the annotator has found its deployment.

The panel travels in run_spec.json as the annotator's ``judges`` argument; this module is the one place
that writes that form (``as_arg``) and reads it back (``from_arg``, ``panel_of``), so the report does not
depend on a constructor argument's name and shape. A judge's identity lives here, with the panel, not with
the code that calls it: the judges wing imports this module, never the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.record import RESERVED_KEYS


@dataclass(frozen=True)
class JudgeSpec:
    """One member of the panel (no secrets: this lands in run_spec.json).

    ``model_deployment`` is a HELM deployment for hosted judges, None for a ``base_url`` endpoint (the
    annotator registers one); ``endpoint_index`` is the 1-based position of ``base_url`` in
    ``judge_base_url``: the ``n`` of ``JUDGE_API_KEY_<n>``. ``family`` is its maker (families.py), stored only
    when known, so a run_spec.json of an earlier release reads as "family unknown"."""

    name: str
    model: str
    model_deployment: str | None
    base_url: str | None = None
    endpoint_index: int | None = None
    family: str | None = None

    def as_arg(self) -> dict[str, Any]:
        arg: dict[str, Any] = {
            "name": self.name,
            "model": self.model,
            "model_deployment": self.model_deployment,
            "base_url": self.base_url,
        }
        if self.endpoint_index is not None:
            arg["endpoint_index"] = self.endpoint_index
        if self.family is not None:
            arg["family"] = self.family
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
            family=str(arg["family"]) if arg.get("family") else None,
        )


def panel_from_args(judges: Sequence[Mapping[str, Any]]) -> list[JudgeSpec]:
    """The panel the annotator was given (its ``judges`` argument), checked: not empty, names unique and not
    one of the record's own keys (they sit beside the judge names in a note's record)."""
    if not judges:
        raise ValueError("The judge panel is empty")
    panel = [JudgeSpec.from_arg(spec) for spec in judges]
    judge_names = [judge.name for judge in panel]
    if len(set(judge_names)) != len(judge_names) or set(judge_names) & set(RESERVED_KEYS):
        raise ValueError(f"Judge names must be unique and not one of {sorted(RESERVED_KEYS)}: {judge_names}")
    return panel


@dataclass(frozen=True)
class JudgeTarget:
    """A judge as its calls see it: ``endpoint`` keys the shared gate, ``where`` and ``key_hint`` make error
    messages name the endpoint and the setting to fix, never the key; ``base_url`` (endpoint judges only) is
    what the endpoint check asks."""

    name: str
    model: str
    model_deployment: str
    endpoint: str
    where: str
    key_hint: str
    base_url: str | None = None


def panel_of(run_spec: Mapping[str, Any]) -> list[str] | None:
    """The judge names of a run, in panel order, from its run_spec.json; None when it names no panel.

    Reads our annotator's panel, or HELM's built-in jury (``annotator_models``) for its own runs, else the judge
    names our metric was given (a run_spec.json that keeps no annotator)."""
    for spec in run_spec.get("annotators") or []:
        args = spec.get("args") or {}
        judges = args.get("judges")
        if judges:
            return [JudgeSpec.from_arg(j).name if isinstance(j, Mapping) else str(j) for j in judges]
        if isinstance(args.get("annotator_models"), Mapping):
            return list(args["annotator_models"])
    for spec in run_spec.get("metric_specs") or []:
        if spec.get("class_name") == names.METRIC_CLASS and (spec.get("args") or {}).get("judge_names"):
            return [str(j) for j in spec["args"]["judge_names"]]
    return None


def judge_families(run_spec: Mapping[str, Any]) -> dict[str, str | None]:
    """{judge name: family} of a run's panel, from its run_spec.json (None where the run stored none: an
    earlier release's run, an endpoint judge without ``judge_family``, HELM's built-in jury)."""
    for spec in run_spec.get("annotators") or []:
        judges = (spec.get("args") or {}).get("judges")
        if judges:
            found = [JudgeSpec.from_arg(j) for j in judges if isinstance(j, Mapping)]
            return {judge.name: judge.family for judge in found}
    return {}
