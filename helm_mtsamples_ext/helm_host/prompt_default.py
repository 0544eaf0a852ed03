"""Which judge prompt a run gets when its run entry names none: a suite keeps the style it was judged with.

Why: HELM's cache answers a judge call only for the very prompt it stored. New runs get the ``prefix`` style
(laid out for prefix caches, prefix_prompt.py), but a suite judged by an earlier release stored ``ours`` in each
run's run_spec.json; re-running that suite with the same command must send the same prompts, replay them from
the cache with zero calls and keep its rewards. So a run entry without ``judge_prompt`` takes the value the
suite's runs of the same run entry (any model under test) stored, when there are any: a suite compares its models
on one prompt, and a model added to an old suite is judged as the others were. The run's name is unchanged either
way (the argument stays out of it). A run entry that names ``judge_prompt`` gets what it names, but for a
suite that stored HELM's template unfenced (common/choices.py's HELM_FENCED).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from helm.benchmark.run_expander import RUN_EXPANDERS
from helm.benchmark.run_spec import RunSpec

from helm_mtsamples_ext.common.choices import HELM_FENCED, STORED_STYLES
from helm_mtsamples_ext.helm_host.model_check import BuildingCommand

__all__ = ["stored_prompt_style", "with_stored_prompt_style"]


def _entry_args(run_name: str) -> tuple[str, dict[str, str]] | None:
    """(entry, {argument: value}) of a HELM run name; None when it is not ``entry[:k=v,...]``."""
    entry, _, rest = run_name.partition(":")
    pairs = [part.partition("=") for part in rest.split(",")] if rest else []
    if any(not sep for _, sep, _ in pairs):
        return None
    return entry, {key: value for key, _, value in pairs}


def _same_entry(stored_run: str, run_name: str) -> bool:
    """Whether ``stored_run`` was built from the run entry ``run_name`` names: HELM's run expanders (model=,
    stop=...) add to the name after the run entry is built, so their arguments are set aside."""
    stored, ours = _entry_args(stored_run), _entry_args(run_name)
    if stored is None or ours is None or stored[0] != ours[0]:
        return False
    return {k: v for k, v in stored[1].items() if k not in RUN_EXPANDERS} == ours[1]


def stored_prompt_style(output_path: str, suite: str, run_name: str) -> str | None:
    """The ``judge_prompt`` the suite's runs of the run entry ``run_name`` (any model) stored in their
    run_spec.json; None when there is none or none that is known (a file being written, hand-edited)."""
    runs = Path(output_path) / "runs" / suite
    try:
        candidates = sorted(d for d in runs.iterdir() if _same_entry(d.name, run_name))
    except OSError:
        return None
    for run in candidates:
        try:
            spec = json.loads((run / "run_spec.json").read_text(encoding="utf-8"))
            styles = [a.get("args", {}).get("judge_prompt") for a in spec.get("annotators") or []]
        except (OSError, ValueError, AttributeError, TypeError):
            continue
        known = [style for style in styles if style in STORED_STYLES]
        if known:
            return known[0]
    return None


def with_stored_prompt_style(spec: RunSpec, command: BuildingCommand, named: bool) -> RunSpec:
    """``spec`` with the judge prompt its suite stored for it, unless the run entry ``named`` one; a named
    ``judge_prompt=helm`` in a suite judged before HELM's template was fenced keeps the unfenced template it
    stored (``helm``), so its re-run replays HELM's cache too."""
    if command.suite is None:
        return spec
    stored = stored_prompt_style(command.output_path, command.suite, spec.name)
    if named:
        fenced = any(a.args.get("judge_prompt") == HELM_FENCED for a in spec.annotators or [])
        style = "helm" if fenced and stored == "helm" else None
    else:
        style = stored
    if style is None:
        return spec
    annotators = [
        dataclasses.replace(a, args={**a.args, "judge_prompt": style}) if "judge_prompt" in a.args else a
        for a in spec.annotators or []
    ]
    return dataclasses.replace(spec, annotators=annotators)
