"""The leaderboard schema for helm-summarize: the one we ship, and one written for a suite's own judge panels.

    helm-summarize --suite S --schema-path "$(python -m helm_mtsamples_ext.schema)"            # shipped
    helm-summarize --suite S --schema-path "$(python -m helm_mtsamples_ext.schema --suite S)"  # this suite's

Why a generated one: per-judge rewards are named after the judge (mtsamples_procedures_reward_<slug>),
so a static schema can only name known panels. helm-summarize warns "metric name ... undefined" for a
stat the schema does not define, and "does not have any stat matched by ..." for a column some run does
not emit. The generated schema is the shipped one plus the metric definitions of every panel in the
suite (from stat_metadata.metric_metadata, the same texts --auto-generate-schema uses), with the optional
columns (per-judge rewards, Krippendorff's alphas, which are absent by design for some runs) kept only
where every run of the suite has them, so `--schema-validation error` runs without either warning.
The shipped schema is package data, so the printed path is the installed copy, not a checkout's.

The generated schema also puts the suite's judge audit where the leaderboard's readers look: the verdict of
each panel (a WARNING for a panel that cannot tell the clinician's plan from another patient's, or a model
scored above that plan) and its failed calls with why, as report.md's top says them, in the run groups'
descriptions, which helm-server shows above the leaderboard. An AUROC column does not fit HELM's schema: a
column is a stat of each run, and the AUROC is a panel's, over the suite's control runs.
"""

from __future__ import annotations

import contextlib
import copy
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.atomic import write_text_whole
from helm_mtsamples_ext.common.helm_paths import OUTPUT_PATH
from helm_mtsamples_ext.common.outside_text import terminal

SCHEMA_FILENAME = "schema_mtsamples_procedures.yaml"
SCHEMA_PATH: str = str(Path(__file__).resolve().parents[1] / SCHEMA_FILENAME)
"""The shipped schema: package data at the package's top, so the path printed is the installed copy."""


@dataclass(frozen=True)
class SuiteRun:
    """What the schema needs from one of our runs: its panel and the stats it emitted on the main split."""

    name: str
    judge_names: tuple[str, ...]
    stat_names: frozenset[str]


def read_suite(suite_dir: Path, split: str) -> list[SuiteRun]:
    """Our finished runs in a suite (report/suite.py says which are ours, and their panel), with the stats
    each emitted, read from stats.json."""
    from helm_mtsamples_ext.common.panel import panel_of
    from helm_mtsamples_ext.report.suite import RunProblem, our_run_spec, run_dirs

    runs: list[SuiteRun] = []
    for run_dir in run_dirs(suite_dir):
        stats_path = run_dir / "stats.json"
        try:
            spec = our_run_spec(run_dir) if stats_path.is_file() else None  # helm-summarize skips unfinished runs
        except RunProblem as problem:
            raise SystemExit(f"{run_dir}: {problem}; re-run the suite or remove that run") from None
        if spec is None:
            continue
        judges = tuple(panel_of(spec) or ())
        stat_names = frozenset(
            s["name"]["name"]
            for s in json.loads(stats_path.read_text())
            if s["name"].get("split") == split and not s["name"].get("perturbation") and s.get("count", 0) > 0
        )
        runs.append(SuiteRun(spec.get("name", run_dir.name), judges, stat_names))
    return runs


def _metric_entry(metadata: Any) -> dict[str, Any]:
    entry = {
        "name": metadata.name,
        "display_name": metadata.display_name,
        "short_display_name": metadata.short_display_name,
        "description": metadata.description,
        "lower_is_better": metadata.lower_is_better,
    }
    return {k: v for k, v in entry.items() if v is not None}


def suite_schema(base: dict[str, Any], runs: Sequence[SuiteRun]) -> tuple[dict[str, Any], list[str]]:
    """The shipped schema adapted to these runs, and a note for each column left out (with why) or stat guessed."""
    from helm_mtsamples_ext.scoring.reward import run_stat_names
    from helm_mtsamples_ext.scoring.stat_metadata import PER_JUDGE_GROUP, metric_metadata

    schema = copy.deepcopy(base)
    # A literal split, as the shipped schema writes it (why: in the schema's header).
    (split,) = {g["environment"]["main_split"] for g in schema["run_groups"] if "environment" in g}
    defined = {m["name"] for m in schema["metrics"]}
    judge_columns: list[str] = []
    for run in runs:  # per run: slug clashes are resolved within a panel, as the metric does
        for metadata in metric_metadata(run.judge_names):
            if metadata.group == PER_JUDGE_GROUP and metadata.name not in judge_columns:
                judge_columns.append(metadata.name)
            if metadata.name not in defined:
                schema["metrics"].append(_metric_entry(metadata))
                defined.add(metadata.name)
    notes: list[str] = []
    # A stat neither we nor the shipped schema know (a newer HELM's): named as itself, not warned about.
    for name in sorted(set().union(*(r.stat_names for r in runs)) - defined):
        schema["metrics"].append({"name": name, "display_name": name, "description": f"{name} (emitted by HELM)."})
        notes.append(f"{name}: a stat the shipped schema does not describe, defined by its name only")

    optional = set(judge_columns) | set(run_stat_names())
    for group in schema["metric_groups"]:
        columns = group["metrics"]
        if group["name"] == PER_JUDGE_GROUP:
            columns = [{"name": name, "split": split} for name in judge_columns]
        group["metrics"] = []
        for column in columns:
            missing = [r.name for r in runs if column["name"] not in r.stat_names]
            if column["name"] in optional and missing:
                notes.append(
                    f"{column['name']}: column left out (on the run pages only), not emitted by "
                    f"{len(missing)} of {len(runs)} runs (e.g. {missing[0]})"
                )
            else:
                group["metrics"].append(column)
    empty = {g["name"] for g in schema["metric_groups"] if not g["metrics"]}
    schema["metric_groups"] = [g for g in schema["metric_groups"] if g["name"] not in empty]
    for run_group in schema["run_groups"]:
        if "metric_groups" in run_group:
            run_group["metric_groups"] = [g for g in run_group["metric_groups"] if g not in empty]
    return schema, notes


AUDIT_HEADING = "Judge audit of this suite (helm-mtsamples-report):"


def suite_audit(suite_dir: Path) -> list[str]:
    """The lines report.md opens with (each panel's audit verdict, models above their ceiling, failed calls and
    why), computed as helm-mtsamples-report does with its default bootstrap; [] when nothing can be read."""
    from helm_mtsamples_ext.report.suite import load_suite
    from helm_mtsamples_ext.report.tables import audit_lines, build_tables
    from helm_mtsamples_ext.stats.intervals import BootstrapSettings

    with contextlib.redirect_stdout(sys.stderr):  # stdout is the schema's path, for "$(...)"
        data = load_suite(suite_dir)
        if data.instances.empty:
            return []
        return audit_lines(build_tables(data.instances, BootstrapSettings()))


def with_audit(schema: dict[str, Any], lines: Sequence[str]) -> dict[str, Any]:
    """The schema with the audit's lines after each of our run groups' descriptions (as is when there are none)."""
    if not lines:
        return schema
    text = "\n\n" + AUDIT_HEADING + "\n\n" + "\n\n".join(lines)
    for run_group in schema["run_groups"]:
        if run_group["name"].startswith(names.RUN_GROUP):
            run_group["description"] = run_group.get("description", "").rstrip() + text
    return schema


def write_suite_schema(suite: str, output_path: str = OUTPUT_PATH, out: str | None = None) -> Path:
    """Write the schema for a suite (default: inside the suite's directory) and return its path."""
    base = yaml.safe_load(Path(SCHEMA_PATH).read_text())
    (run_group,) = [g for g in base["run_groups"] if g["name"] == names.RUN_GROUP]
    from helm_mtsamples_ext.report.suite import suite_path

    suite_dir = suite_path(output_path, suite)
    if not suite_dir.is_dir():
        raise SystemExit(f"no suite {suite!r} at {suite_dir}")
    runs = read_suite(suite_dir, run_group["environment"]["main_split"])
    if not runs:
        raise SystemExit(f"no finished {names.RUN_GROUP} run in {suite_dir}")
    schema, notes = suite_schema(base, runs)
    audit = suite_audit(suite_dir)
    schema = with_audit(schema, audit)
    notes += [line for line in audit if line.startswith("WARNING")]
    target = Path(out) if out else suite_dir / SCHEMA_FILENAME
    header = (
        f"# Written by `python -m helm_mtsamples_ext.schema --suite {suite}` for the {len(runs)} "
        f"{names.RUN_GROUP} run(s) of this suite.\n"
    )
    write_text_whole(target, header + yaml.safe_dump(schema, sort_keys=False, allow_unicode=True, width=1000))
    for note in notes:  # stderr: stdout is the path, for "$(...)"
        print(terminal(note), file=sys.stderr)
    return target.resolve()
