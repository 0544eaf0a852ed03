"""The answers a suite's judges already scored, each with the texts its judges were asked about, for a recheck.

The recheck (``python -m helm_mtsamples_ext.recheck``) must ask each judge what the run asked it: the note, the
answer as the judges read it (the run's own ``use_think`` and ``answer_cap``, read from run_spec.json, an earlier
release's included, through ``RunEntryArgs``) and the reference, with the run's ``judge_prompt`` style, from which
judges/helm_calls/recheck_calls.py builds the prompt exactly as the annotator does; the run's panel and call settings
travel
with it. The suite is read by suite.py (which runs are ours, where they are); only runs judged by our
annotator are kept (HELM's built-in jury keeps no panel to ask again). Reading only: nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.answer import answer_text
from helm_mtsamples_ext.common.answer_cap import judged_answer
from helm_mtsamples_ext.common.panel import JudgeSpec, panel_from_args
from helm_mtsamples_ext.common.record import RESERVED_KEYS
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.report.drift import Said, draw_sample
from helm_mtsamples_ext.report.suite import RunProblem, our_annotator_args, our_run_spec, run_dirs

CALL_KNOBS = ("max_tokens", "retry_base")
"""Annotator arguments that are not run-entry arguments (CallSettings knobs), used as stored when present."""


@dataclass(frozen=True)
class JudgedAnswer:
    """One answer at least one judge scored: the texts to ask about again, and what each judge's entry held."""

    run: str
    instance_id: str
    note: str
    answer: str
    """As the judges read it: its reasoning cut off with ``use_think``, cut at ``answer_cap``."""
    reference: str
    style: str
    """The run's ``judge_prompt`` style."""
    before: Mapping[str, Mapping[str, Any]]

    @property
    def key(self) -> tuple[str, str]:
        return (self.run, self.instance_id)


@dataclass(frozen=True)
class JudgedRun:
    """A run's panel and call settings as its run_spec.json stores them, and its judged answers."""

    run: str
    panel: tuple[JudgeSpec, ...]
    args: RunEntryArgs
    knobs: Mapping[str, Any]
    max_answer_tokens: int
    answers: tuple[JudgedAnswer, ...]

    @property
    def panel_name(self) -> str:
        """The panel as the report names it: its judges joined by ``+``."""
        return "+".join(judge.name for judge in self.panel)


class SuiteUnreadable(Exception):
    """A run the recheck cannot read; the message names it and what to do."""


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SuiteUnreadable(f"{path} cannot be read ({error}); re-run the suite or remove that run") from None


def _answer(state: Mapping[str, Any], args: RunEntryArgs, run: str) -> JudgedAnswer | None:
    """The request state as a judged answer, or None when no judge scored it (unjudged, empty, not annotated)."""
    record = (state.get("annotations") or {}).get(names.ANNOTATION_KEY)
    if not isinstance(record, Mapping):
        return None
    before = {str(k): v for k, v in record.items() if k not in RESERVED_KEYS and isinstance(v, Mapping)}
    if not any(Said.of(entry).scores is not None for entry in before.values()):
        return None
    instance = state["instance"]
    answer = answer_text((state.get("result") or {}).get("completions"), args.use_think)
    references = instance.get("references") or []
    reference = str(references[0]["output"]["text"]) if references else ""
    note = str(instance["input"]["text"])
    answer = judged_answer(answer, args.answer_cap).text  # as the judges read it
    return JudgedAnswer(run, str(instance.get("id")), note, answer, reference, args.judge_prompt, before)


def read_run(run_dir: Path) -> JudgedRun | None:
    """One run's judged answers; None for a run that is not ours or that our annotator did not judge."""
    spec_path = run_dir / "run_spec.json"
    try:
        run_spec = our_run_spec(run_dir)
    except RunProblem as problem:
        raise SuiteUnreadable(f"{spec_path}: {problem}; re-run the suite or remove that run") from None
    stored = our_annotator_args(run_spec) if run_spec is not None else None
    if run_spec is None or stored is None:
        return None
    try:
        panel = tuple(panel_from_args(stored["judges"]))
        args = RunEntryArgs.parse(**{k: v for k, v in stored.items() if k not in ("judges", *CALL_KNOBS)})
    except (ValueError, KeyError, TypeError) as error:
        raise SuiteUnreadable(f"{spec_path}: the stored annotator arguments do not read back: {error}") from None
    states = _read(run_dir / "scenario_state.json").get("request_states") or []
    try:
        answers = tuple(a for a in (_answer(s, args, run_dir.name) for s in states) if a is not None)
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        raise SuiteUnreadable(f"{run_dir}/scenario_state.json has an unexpected shape: {error!r}") from None
    knobs = {k: stored[k] for k in CALL_KNOBS if k in stored}
    max_tokens = int((run_spec.get("adapter_spec") or {}).get("max_tokens") or 0)
    return JudgedRun(run_dir.name, panel, args, knobs, max_tokens, answers)


def judged_runs(suite_dir: Path) -> list[JudgedRun]:
    """Every run of the suite our annotator judged, in directory order (a run without scenario_state.json, still
    running or crashed, is an error: its answers cannot be asked about)."""
    runs = []
    for run_dir in run_dirs(suite_dir):
        run = read_run(run_dir)
        if run is not None:
            runs.append(run)
    return runs


class SampleTooLarge(ValueError):
    """More answers asked for than a panel's judges scored."""


def sample_runs(runs: Sequence[JudgedRun], n: int, seed: int) -> list[JudgedRun]:
    """``n`` judged answers per panel (a panel's runs pooled: its models' answers), seeded; each run keeps the
    sampled answers of its own, and a run none of whose answers was drawn is left out."""
    pools: dict[str, list[tuple[str, str]]] = {}
    for run in runs:
        pools.setdefault(run.panel_name, []).extend(a.key for a in run.answers)
    drawn: set[tuple[str, str]] = set()
    for panel, keys in pools.items():
        if n > len(keys):
            raise SampleTooLarge(f"panel {panel} scored {len(keys)} answers, fewer than --sample {n}")
        drawn.update(draw_sample(keys, n, seed))
    sampled = [replace(run, answers=tuple(a for a in run.answers if a.key in drawn)) for run in runs]
    return [run for run in sampled if run.answers]
