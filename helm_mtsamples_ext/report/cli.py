"""`helm-mtsamples-report`: a suite's mtsamples_procedures runs as tables with uncertainty and judge agreement.

    helm-mtsamples-report --suite v1 [-o benchmark_output] [--out DIR] [--bootstrap 2000] [--seed 0]
                          [--rating-sample N [--rating-overlap 0.2]] [--ratings a.csv [--ratings b.csv]]

Reads every run of ours in `<output>/runs/<suite>/` (the files HELM's runner writes) and writes, by default to
`<output>/mtsamples_report/<suite>/` (beside the suite rather than inside it, where helm-summarize would take
it for a broken run): instances.csv/.parquet, leaderboard.csv, pairwise.csv, by_specialty.csv, leaderboard.png,
report.md, report.html (the review page, with its rating mode) and, when the suite holds control runs,
judge_audit.csv; with clinicians' ratings, judge_human_agreement.csv and human rewards in leaderboard.csv. A run
directory that cannot be read, and a rating that matches no run or note, are named on stderr; the rest is still
reported.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from helm.benchmark.scenarios.scenario import CORRECT_TAG
from helm.common.hierarchical_logger import hlog

from helm_mtsamples_ext import names
from helm_mtsamples_ext.failure_reasons import panel_lines
from helm_mtsamples_ext.masking import machine_keys, mask_table
from helm_mtsamples_ext.panel import OUR_ANNOTATOR, panel_of
from helm_mtsamples_ext.record import ANNOTATION_KEY, JudgeEntry, NoteRecord
from helm_mtsamples_ext.report.audit import judge_audit
from helm_mtsamples_ext.report.audit_warnings import (
    above_ceiling,
    blind_panels,
    panels_with_controls,
    verdict_lines,
    with_panel_auroc,
)
from helm_mtsamples_ext.report.cost import Prices, PricesError, cost_markdown, load_prices, unpriced, with_judge_cost
from helm_mtsamples_ext.report.human_agreement import human_tables
from helm_mtsamples_ext.report.rating_sample import EVERY_ANSWER, RatingRound
from helm_mtsamples_ext.report.ratings import RatingsError, suite_ratings
from helm_mtsamples_ext.report.render import markdown_report, terminal_leaderboard, write_figure
from helm_mtsamples_ext.report.review import write_review
from helm_mtsamples_ext.report.stats import (
    KEYS,
    BootstrapSettings,
    by_specialty,
    leaderboard,
    note_table,
    pairwise,
)
from helm_mtsamples_ext.rubric import DIMENSIONS
from helm_mtsamples_ext.same_verdict import without_same_verdicts
from helm_mtsamples_ext.scoring import score_note
from helm_mtsamples_ext.sections import specialty_of
from helm_mtsamples_ext.suite_name import suite_problem

OUR_SCENARIO = names.SCENARIO_CLASS
RUN_FILES = ("run_spec.json", "scenario_state.json", "per_instance_stats.json", "stats.json")
"""What a finished run has (HELM writes all of them at the very end of a run; a crash leaves some out)."""
NOT_RUNS = {"eval_cache", "groups"}
FIGURE_NAME = "leaderboard.png"
SCORED_COLUMNS = [*DIMENSIONS, "judge_reward", "note_reward"]


class RunProblem(Exception):
    """A run of ours that cannot be read: reported by path, the others still are."""


@dataclass
class SuiteData:
    instances: pd.DataFrame
    problems: list[str] = field(default_factory=list)


def is_ours(run_spec: dict[str, Any]) -> bool:
    annotators = run_spec.get("annotators") or []
    return (
        run_spec.get("scenario_spec", {}).get("class_name") == OUR_SCENARIO
        or any(a.get("class_name") == OUR_ANNOTATOR for a in annotators)
        or ANNOTATION_KEY in (run_spec.get("groups") or [])
    )


def panel_judges(run_spec: dict[str, Any], states: list[dict[str, Any]]) -> list[str]:
    """The judge names in panel order: from the run's panel (panel.py), else from the annotations themselves."""
    named = panel_of(run_spec)
    if named is not None:
        return named
    seen: dict[str, None] = {}
    for state in states:
        record = NoteRecord.from_dict((state.get("annotations") or {}).get(ANNOTATION_KEY))
        seen.update(dict.fromkeys(record.judges if record is not None else ()))
    return list(seen)


def _run_args(run_name: str) -> dict[str, str]:
    _, _, args = run_name.partition(":")
    return dict(part.split("=", 1) for part in args.split(",") if "=" in part)


def _reference(instance: Mapping[str, Any]) -> str:
    """The section cut from the note: the reference tagged correct, else the first one."""
    references = instance.get("references") or []
    correct = [r for r in references if CORRECT_TAG in (r.get("tags") or [])]
    chosen = (correct or references or [{}])[0]
    return str((chosen.get("output") or {}).get("text") or "")


def judge_rows(record: object, judges: list[str]) -> list[dict[str, Any]]:
    """One row per panel judge for one note, scored by scoring.score_note so report.md and the metric agree.

    Scores are the judge's valid ones (an invalid or missing dimension is None); a failed judge has no reward and
    a failure reason; an empty answer scores 0 by every judge, as in the metric's per-judge stats.
    """
    note = score_note(record, judges)
    parsed = record if isinstance(record, NoteRecord) else NoteRecord.from_dict(record)
    rows = []
    for judge in note.judges:
        entry = parsed.judges.get(judge.name) if parsed is not None else None
        status = "empty_answer" if note.empty_answer else "failed" if judge.failed else "ok"
        if status != "failed":
            failure = ""
        elif parsed is None:
            failure = "no annotation"
        else:
            failure = parsed.failure_of(judge.name)
        invalid = entry.invalid if entry is not None and not note.empty_answer else {}
        rows.append(
            {
                "judge": judge.name,
                **{dim: judge.scores.get(dim) for dim in DIMENSIONS},
                **{f"{dim}_explanation": entry.explanations.get(dim, "") if entry else "" for dim in DIMENSIONS},
                "judge_reward": 0.0 if note.empty_answer else judge.reward,
                "note_reward": note.reward,
                "status": status,
                "failure": failure,
                "invalid": "; ".join(f"{dim}: {why}" for dim, why in invalid.items()),
                "empty_answer": note.empty_answer,
                **_tokens(entry, note.empty_answer),
                "judge_model": entry.model_deployment if entry is not None else None,
            }
        )
    return rows


def _answer(state: dict[str, Any]) -> str:
    completions = (state.get("result") or {}).get("completions") or [{}]
    return str(completions[0].get("text") or "")


def _record(state: dict[str, Any]) -> NoteRecord | None:
    return NoteRecord.from_dict((state.get("annotations") or {}).get(ANNOTATION_KEY))


def _tokens(entry: JudgeEntry | None, empty_answer: bool) -> dict[str, float]:
    """A judge's tokens in and out on a note: 0 where no call was made or none was reported, NaN for a record
    from before they were kept apart (its total alone cannot be priced)."""
    if entry is None or empty_answer:
        return {"tokens_in": 0.0, "tokens_out": 0.0}
    if entry.tokens_in is None and entry.tokens_out is None and entry.tokens is not None:
        return {"tokens_in": math.nan, "tokens_out": math.nan}
    return {"tokens_in": float(entry.tokens_in or 0), "tokens_out": float(entry.tokens_out or 0)}


def state_rows(state: dict[str, Any], judges: list[str], record: NoteRecord | None = None) -> list[dict[str, Any]]:
    """One row per judge of the panel for one request state (a judge with no record has failed); ``record`` is
    the run-level view of its annotation (``same_verdict.without_same_verdicts``), else the annotation as stored."""
    instance = state["instance"]
    extra = instance.get("extra_data") or {}
    text = _answer(state)
    note = {
        "note": extra.get("filename") or instance.get("id"),
        "note_id": instance.get("id"),
        "specialty": extra.get("specialty") or specialty_of(instance.get("input", {}).get("text", "")) or "unknown",
        "extracted_section": extra.get("extracted_section") or "",
        "extraction": extra.get("extraction") or "",
        "output_words": len(text.split()),
        # The texts ride along for the review page (instances.csv leaves them out); one string per note, shared by
        # its judges' rows, so they cost no copies.
        "note_text": instance.get("input", {}).get("text", ""),
        "reference": _reference(instance),
        "answer": text,
    }
    return [{**note, **row} for row in judge_rows(record if record is not None else _record(state), judges)]


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise RunProblem(f"{path.name} is missing (run unfinished?)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise RunProblem(f"{path.name} is not valid JSON (half-written?): {error}") from error


def read_run(run_dir: Path) -> pd.DataFrame | None:
    """Raw per-judge rows of one run directory; None if the run is not an mtsamples_procedures run."""
    if not (run_dir / "run_spec.json").is_file() and not run_dir.name.startswith(ANNOTATION_KEY):
        return None
    run_spec = _read_json(run_dir / "run_spec.json")
    if not is_ours(run_spec):
        return None
    files = {name: _read_json(run_dir / name) for name in RUN_FILES[1:]}
    try:
        states = files["scenario_state.json"]["request_states"]
        model = run_spec["adapter_spec"]["model"]
        judges = panel_judges(run_spec, states) or [""]
        # The run-level rule (same_verdict.py), as the metric applies it: both read the same run the same way.
        view = without_same_verdicts([(_answer(state), _record(state)) for state in states])
        rows = [row for state, record in zip(states, view, strict=True) for row in state_rows(state, judges, record)]
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise RunProblem(f"scenario_state.json or run_spec.json has an unexpected shape: {error!r}") from error
    if not rows:
        raise RunProblem("the run has no request states")
    args = _run_args(run_spec.get("name", run_dir.name))
    variant = ",".join(f"{k}={v}" for k, v in args.items() if k not in ("model", "judges")) or run_dir.name
    # Float columns per run, so that concat sees float scores even when every judge of the run failed.
    table = pd.DataFrame(rows).astype({column: float for column in SCORED_COLUMNS})
    return table.assign(run=run_dir.name, model=model, panel="+".join(judges), variant=variant)


def load_suite(suite_dir: Path) -> SuiteData:
    """All readable runs of ours in a suite, plus a message naming each run directory that could not be read."""
    frames: list[pd.DataFrame] = []
    problems: list[str] = []
    for run_dir in sorted(p for p in suite_dir.iterdir() if p.is_dir() and p.name not in NOT_RUNS):
        try:
            table = read_run(run_dir)
        except RunProblem as problem:
            problems.append(f"{run_dir}: {problem}")
            continue
        if table is None:
            hlog(f"Not an mtsamples_procedures run, ignored: {run_dir}")
        else:
            frames.append(table)
    if not frames:
        return SuiteData(pd.DataFrame(), problems)
    raw = pd.concat(frames, ignore_index=True)
    # Two runs of one model under one panel (e.g. extraction=helm and =sections) stay apart, named by their args.
    runs_per_model = raw.groupby(KEYS)["run"].transform("nunique")
    raw["model"] = raw["model"].where(runs_per_model == 1, raw["model"] + " [" + raw["variant"] + "]")
    return SuiteData(raw.drop(columns="variant"), problems)


def build_tables(
    instances: pd.DataFrame,
    settings: BootstrapSettings,
    ratings: pd.DataFrame | None = None,
    prices: Prices | None = None,
) -> dict[str, pd.DataFrame]:
    """The report's tables; with clinicians' ratings (matched to the suite), the agreement and human columns too;
    with prices, what judging cost."""
    notes = note_table(instances)
    board = with_judge_cost(leaderboard(instances, notes, settings), instances, prices)
    audit = judge_audit(instances, settings)
    tables = {
        "instances": instances,
        "leaderboard": with_panel_auroc(board, audit, instances),
        "pairwise": pairwise(notes, board, settings),
        "by_specialty": by_specialty(notes, board),
        "judge_audit": audit,
        "above_ceiling": above_ceiling(board, instances),
    }
    return tables if ratings is None else {**tables, **human_tables(instances, board, ratings, settings)}


def audit_lines(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Each panel's audit verdict, each model above its ceiling, and each panel's failed calls with why, one line
    each (stdout and report.md's top)."""
    board = tables["leaderboard"]
    panels = list(dict.fromkeys(board["panel"]))
    lines = verdict_lines(tables["judge_audit"], tables["above_ceiling"], panels, panels_with_controls(board))
    calls = tables["instances"][["panel", "status", "failure"]].itertuples(index=False, name=None)
    return lines + panel_lines(calls)


INSTANCE_COLUMNS = [
    "panel", "model", "judge", "note", "note_id", "specialty", "extracted_section", *DIMENSIONS,
    "judge_reward", "status", "failure", "invalid", "empty_answer", "output_words", "run",
    "tokens_in", "tokens_out",
]  # fmt: skip


def write_report(
    tables: dict[str, pd.DataFrame],
    out: Path,
    suite: str,
    problems: list[str],
    settings_text: str,
    sample: RatingRound = EVERY_ANSWER,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    instances = tables["instances"][INSTANCE_COLUMNS].astype({dim: "Int64" for dim in DIMENSIONS})
    instances.to_csv(out / "instances.csv", index=False)
    try:
        instances.to_parquet(out / "instances.parquet", index=False)
    except ImportError:
        hlog("pyarrow is not installed: instances.parquet not written")
    for name in ("leaderboard", "pairwise", "by_specialty"):
        tables[name].to_csv(out / f"{name}.csv", index=False)
    audit = tables["judge_audit"]
    if not audit.empty:  # only a suite with control runs has an audit
        audit.to_csv(out / "judge_audit.csv", index=False)
    if "judge_human_agreement" in tables:
        tables["judge_human_agreement"].to_csv(out / "judge_human_agreement.csv", index=False)
    write_figure(tables["leaderboard"], out / FIGURE_NAME, suite, blind_panels(audit))
    write_review(tables["instances"], out / "report.html", suite, sample)
    report = markdown_report(
        suite,
        tables,
        FIGURE_NAME,
        problems,
        settings_text,
        audit,
        audit_lines(tables),
        cost_markdown(tables["leaderboard"]),
    )
    (out / "report.md").write_text(report, encoding="utf-8")


def _resamples(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("needs at least 1 resample")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("needs at least 1 answer")
    return value


def _share(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("is a share between 0 and 1 (0.2 = 20%)")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="helm-mtsamples-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", required=True, help="the suite given to helm-run")
    parser.add_argument("-o", "--output-path", default="benchmark_output", help="helm-run's output path")
    parser.add_argument("--out", type=Path, help="report directory (default: <output-path>/mtsamples_report/<suite>)")
    parser.add_argument("--bootstrap", type=_resamples, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap and rating-sample seed (default 0)")
    parser.add_argument(
        "--rating-sample", type=_positive, metavar="N", help="offer N answers for rating in report.html (default: all)"
    )
    parser.add_argument(
        "--rating-overlap", type=_share, default=0.2, help="share of the rating sample every rater gets (default 0.2)"
    )
    parser.add_argument(
        "--ratings", type=Path, action="append", default=[], help="a ratings.csv exported by a rater (repeatable)"
    )
    parser.add_argument(
        "--judge-prices", type=Path, help="YAML of USD per million input/output tokens per judge model: adds the cost"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    problem = suite_problem(args.suite)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    suite_dir = Path(args.output_path) / "runs" / args.suite
    if not suite_dir.is_dir():
        print(f"error: no suite directory {suite_dir} (check --suite and -o/--output-path)", file=sys.stderr)
        return 1
    try:
        prices = load_prices(args.judge_prices) if args.judge_prices else None
    except PricesError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    data = load_suite(suite_dir)
    data.instances = mask_table(data.instances, machine_keys())  # keys recorded by older releases stay off the page
    for problem in data.problems:
        print(f"warning: run skipped, {problem}", file=sys.stderr)
    if data.instances.empty:
        print(f"error: no readable mtsamples_procedures run in {suite_dir}", file=sys.stderr)
        return 1
    settings = BootstrapSettings(n_resamples=args.bootstrap, seed=args.seed)
    try:
        ratings = suite_ratings(args.ratings, data.instances, args.suite) if args.ratings else None
    except RatingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    tables = build_tables(data.instances, settings, ratings, prices)
    for judge in unpriced(data.instances, prices) if prices else []:
        print(f"warning: {args.judge_prices} has no price for judge {judge!r}: its cost is missing", file=sys.stderr)
    out = args.out or Path(args.output_path) / "mtsamples_report" / args.suite
    settings_text = f"{settings.n_resamples} resamples, seed {settings.seed}"
    sample = RatingRound(args.rating_sample, args.seed, args.rating_overlap)
    write_report(tables, out, args.suite, data.problems, settings_text, sample)
    print(terminal_leaderboard(tables["leaderboard"]))
    print("\n" + "\n".join(audit_lines(tables)))
    print(f"\nReport written to {out}/ (report.md, report.html for review, {FIGURE_NAME}, CSV tables)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
