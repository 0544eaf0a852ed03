"""Reading a suite: every run of ours in `<output>/runs/<suite>/`, as HELM's runner wrote it, into one table.

The one suite reader of the report, the recheck (judged_answers.py) and the schema: it builds a suite's paths
(``suite_path``, ``report_path``), lists its run directories (``run_dirs``) and says which runs are ours
(``our_run_spec``). A run is ours by its scenario, annotator or run group (names.py), so a suite mixing
benchmarks is read for ours alone; its panel is found one way (``panel.panel_of``). A run directory that
cannot be read (unfinished, half-written, an unexpected shape) is named in ``SuiteData.problems`` and the others
are still read: one broken run must not hide a suite's results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.log import hlog
from helm_mtsamples_ext.common.panel import judge_families, panel_of
from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.report.rows import SCORED_COLUMNS, answer_of, record_of, state_rows
from helm_mtsamples_ext.scoring.verdict_view import suite_view
from helm_mtsamples_ext.stats.intervals import KEYS

RUN_FILES = ("run_spec.json", "scenario_state.json", "per_instance_stats.json", "stats.json")
"""What a finished run has (HELM writes all of them at the very end of a run; a crash leaves some out)."""
NOT_RUNS = {"eval_cache", "groups"}
"""Directories HELM's runner writes beside the runs of a suite."""
RUNS_DIR = "runs"
REPORT_DIR = "mtsamples_report"


def suite_path(output_path: str | Path, suite: str) -> Path:
    """Where helm-run wrote ``suite`` under its ``-o``: ``<output_path>/runs/<suite>``."""
    return Path(output_path) / RUNS_DIR / suite


def report_path(output_path: str | Path, suite: str) -> Path:
    """Where our commands write what they say about ``suite``: ``<output_path>/mtsamples_report/<suite>``."""
    return Path(output_path) / REPORT_DIR / suite


def run_dirs(suite: Path) -> list[Path]:
    """The run directories of a suite directory, in name order (not HELM's ``eval_cache`` or ``groups``)."""
    return sorted(p for p in suite.iterdir() if p.is_dir() and p.name not in NOT_RUNS)


class RunProblem(Exception):
    """A run of ours that cannot be read: reported by path, the others still are."""


@dataclass
class SuiteData:
    """The per-judge rows of every readable run, and one message per run directory that could not be read."""

    instances: pd.DataFrame
    problems: list[str] = field(default_factory=list)


def is_ours(run_spec: dict[str, Any]) -> bool:
    annotators = run_spec.get("annotators") or []
    return (
        run_spec.get("scenario_spec", {}).get("class_name") == names.SCENARIO_CLASS
        or any(a.get("class_name") == names.ANNOTATOR_CLASS for a in annotators)
        or names.ANNOTATION_KEY in (run_spec.get("groups") or [])
    )


def our_run_spec(run_dir: Path) -> dict[str, Any] | None:
    """The run_spec.json of a run of ours; None for a directory without one or another benchmark's run
    (``RunProblem`` for one that is not JSON)."""
    if not (run_dir / "run_spec.json").is_file():
        return None
    run_spec = _read_json(run_dir / "run_spec.json")
    return run_spec if isinstance(run_spec, dict) and is_ours(run_spec) else None


def our_annotator_args(run_spec: dict[str, Any]) -> dict[str, Any] | None:
    """The arguments our annotator stored with its panel (``judges``); None for a run it did not judge."""
    for spec in run_spec.get("annotators") or []:
        if spec.get("class_name") == names.ANNOTATOR_CLASS and (spec.get("args") or {}).get("judges"):
            return dict(spec["args"])
    return None


def panel_judges(run_spec: dict[str, Any], states: list[dict[str, Any]]) -> list[str]:
    """The judge names in panel order: from the run's panel (panel.py), else from the annotations themselves."""
    named = panel_of(run_spec)
    if named is not None:
        return named
    seen: dict[str, None] = {}
    for state in states:
        record = record_of(state)
        seen.update(dict.fromkeys(record.judges if record is not None else ()))
    return list(seen)


def _run_args(run_name: str) -> dict[str, str]:
    _, _, args = run_name.partition(":")
    return dict(part.split("=", 1) for part in args.split(",") if "=" in part)


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise RunProblem(f"{path.name} is missing (run unfinished?)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise RunProblem(f"{path.name} is not valid JSON (half-written?): {error}") from error


@dataclass
class OpenRun:
    """One run of ours, read and checked, before its rows are built: the suite's same-verdict view needs them all."""

    path: Path
    run_spec: dict[str, Any]
    states: list[dict[str, Any]]
    model: str
    judges: list[str]

    def notes(self) -> list[tuple[str, NoteRecord | None]]:
        return [(answer_of(state), record_of(state)) for state in self.states]


def open_run(run_dir: Path) -> OpenRun | None:
    """One run directory read and checked; None if the run is not an mtsamples_procedures run."""
    if not (run_dir / "run_spec.json").is_file() and run_dir.name.startswith(names.ANNOTATION_KEY):
        raise RunProblem("run_spec.json is missing (run unfinished?)")
    run_spec = our_run_spec(run_dir)
    if run_spec is None:
        return None
    files = {name: _read_json(run_dir / name) for name in RUN_FILES[1:]}
    try:
        states = files["scenario_state.json"]["request_states"]
        model = run_spec["adapter_spec"]["model"]
        judges = panel_judges(run_spec, states) or [""]
        run = OpenRun(run_dir, run_spec, list(states), str(model), judges)
        run.notes()
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise RunProblem(f"scenario_state.json or run_spec.json has an unexpected shape: {error!r}") from error
    if not states:
        raise RunProblem("the run has no request states")
    return run


def run_rows(run: OpenRun, view: list[NoteRecord | None]) -> pd.DataFrame:
    """Raw per-judge rows of one opened run, its records as the suite's view reads them (verdict_view.py)."""
    try:
        rows = [
            row for state, record in zip(run.states, view, strict=True) for row in state_rows(state, run.judges, record)
        ]
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise RunProblem(f"scenario_state.json or run_spec.json has an unexpected shape: {error!r}") from error
    args = _run_args(run.run_spec.get("name", run.path.name))
    variant = ",".join(f"{k}={v}" for k, v in args.items() if k not in ("model", "judges")) or run.path.name
    # Float columns per run, so that concat sees float scores even when every judge of the run failed.
    table = pd.DataFrame(rows).astype({column: float for column in SCORED_COLUMNS})
    families = judge_families(run.run_spec)
    table["judge_family"] = [families.get(judge) for judge in table["judge"]]
    return table.assign(run=run.path.name, model=run.model, panel="+".join(run.judges), variant=variant)


def read_run(run_dir: Path) -> pd.DataFrame | None:
    """Raw per-judge rows of one run directory read alone; None if the run is not an mtsamples_procedures run."""
    run = open_run(run_dir)
    if run is None:
        return None
    return run_rows(run, suite_view([(run.model, run.notes(), run.judges)])[0])


def load_suite(suite_dir: Path) -> SuiteData:
    """All readable runs of ours in a suite, plus a message naming each run directory that could not be read."""
    runs: list[OpenRun] = []
    problems: list[str] = []
    for run_dir in run_dirs(suite_dir):
        try:
            run = open_run(run_dir)
        except RunProblem as problem:
            problems.append(f"{run_dir}: {problem}")
            continue
        if run is None:
            hlog(f"Not an mtsamples_procedures run, ignored: {run_dir}")
        else:
            runs.append(run)
    # The same-verdict rule across the suite (verdict_view.py): a judge is blind when one verdict goes to different
    # answers of several models; the metric, seeing one model, voids only what cannot raise its reward.
    views = suite_view([(run.model, run.notes(), run.judges) for run in runs])
    frames: list[pd.DataFrame] = []
    for run, view in zip(runs, views, strict=True):
        try:
            frames.append(run_rows(run, view))
        except RunProblem as problem:
            problems.append(f"{run.path}: {problem}")
    if not frames:
        return SuiteData(pd.DataFrame(), problems)
    raw = pd.concat(frames, ignore_index=True)
    # Two runs of one model under one panel (e.g. extraction=helm and =sections) stay apart, named by their args.
    runs_per_model = raw.groupby(KEYS)["run"].transform("nunique")
    raw["model"] = raw["model"].where(runs_per_model == 1, raw["model"] + " [" + raw["variant"] + "]")
    return SuiteData(raw.drop(columns="variant"), problems)
