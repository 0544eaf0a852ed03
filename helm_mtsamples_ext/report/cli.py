"""`helm-mtsamples-report`: a suite's mtsamples_procedures runs as tables with uncertainty and judge agreement.

    helm-mtsamples-report --suite v1 [-o benchmark_output] [--out DIR] [--bootstrap 2000] [--seed 0]
                          [--rating-sample N|plan [--rating-overlap 0.2]] [--ratings a.csv [--ratings b.csv]]
                          [--plan-ratings [--target-halfwidth 0.05]]
                          [--export medmarks] [--export eee]
    helm-mtsamples-report --door-results logs/ outputs/

Reads every run of ours in `<output>/runs/<suite>/` (the files HELM's runner writes) and writes, by default to
`<output>/mtsamples_report/<suite>/` (beside the suite rather than inside it, where helm-summarize would take
it for a broken run): instances.csv/.parquet, leaderboard.csv, pairwise.csv, by_specialty.csv,
judge_self_preference.csv, leaderboard.png,
report.md, report.html (the review page, with its rating mode) and, when the suite holds control runs,
judge_audit.csv; with clinicians' ratings, judge_human_agreement.csv and human rewards in leaderboard.csv;
judge_versions.csv (the model each judge's server reported, with a WARNING when one judge's verdicts mix them);
with --export medmarks, medmarks/ (medmarks_export.py: the parquet and result records Medmarks reads); with
--export eee, eee/ (eee_export.py: Every Eval Ever's aggregate and instance records); with --plan-ratings (or
--rating-sample plan), rating_plan.csv (rating_plan.py: how many more answers to rate per model). A run
directory that cannot be read, and a rating that matches no run or note, are named on stderr; the rest is still
reported.

This module is the console script's door (names.py): its arguments and what the terminal is told. Reading the
suite is suite.py's (with rows.py), the tables are tables.py's, the files outputs.py's, the progress bar on
stderr (a terminal only, once the report has run a few seconds) progress.py's.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from helm_mtsamples_ext.common.helm_paths import OUTPUT_PATH
from helm_mtsamples_ext.common.outside_text import encodable_table, terminal
from helm_mtsamples_ext.common.secrets import machine_keys, mask_table
from helm_mtsamples_ext.common.suite_name import suite_problem
from helm_mtsamples_ext.data.custom_manifest import resolve_manifest
from helm_mtsamples_ext.data.example_ids import example_ids
from helm_mtsamples_ext.data.notes import DataError
from helm_mtsamples_ext.report.cost import Prices, PricesError, load_prices, unpriced
from helm_mtsamples_ext.report.door_results import door_lines, read_door_runs, summarize
from helm_mtsamples_ext.report.eee_export import EXPORT_DIR as EEE_DIR
from helm_mtsamples_ext.report.eee_export import build_eee
from helm_mtsamples_ext.report.eee_runs import suite_run_facts
from helm_mtsamples_ext.report.medmarks_export import EXPORT_DIR, ExportError, ModelExport, build_export, summary
from helm_mtsamples_ext.report.medmarks_readme import EXPORT_TABLE
from helm_mtsamples_ext.report.outputs import FIGURE_NAME, write_report
from helm_mtsamples_ext.report.progress import ReportProgress
from helm_mtsamples_ext.report.rating_plan import PLAN_TABLE, plan_lines, plan_quotas, rated_answers, suite_plan
from helm_mtsamples_ext.report.rating_sample import RatingRound, answers_table
from helm_mtsamples_ext.report.ratings import RatingsError, suite_ratings
from helm_mtsamples_ext.report.render import terminal_leaderboard
from helm_mtsamples_ext.report.review import nothing_to_rate
from helm_mtsamples_ext.report.suite import load_suite, report_path, suite_path
from helm_mtsamples_ext.report.tables import audit_lines, build_tables
from helm_mtsamples_ext.stats.intervals import BootstrapSettings


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


def _sample_size(text: str) -> int | str:
    """``--rating-sample``'s value: a number of answers, or ``plan`` (the rating plan's quotas)."""
    return "plan" if text.strip().lower() == "plan" else _positive(text)


def _halfwidth(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError("is a half-width between 0 and 1 on the reward's scale (0.05 = +-0.05)")
    return value


def _share(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("is a share between 0 and 1 (0.2 = 20%)")
    return value


EXPORTS = ("medmarks", "eee")


def _exports(text: str) -> list[str]:
    """``--export``'s value: one export or a comma list of them."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in EXPORTS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"takes {' or '.join(EXPORTS)} (repeat --export, or a comma list)")
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="helm-mtsamples-report", description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", help="the suite given to helm-run")
    parser.add_argument(
        "--door-results",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="instead of a suite: Inspect logs (.eval) and verifiers results.jsonl files, or folders holding them; "
        "prints each judge's failed share per model and warns when one model's answers make a judge fail",
    )
    parser.add_argument("-o", "--output-path", default=OUTPUT_PATH, help="helm-run's output path")
    parser.add_argument("--out", type=Path, help="report directory (default: <output-path>/mtsamples_report/<suite>)")
    parser.add_argument("--bootstrap", type=_resamples, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap and rating-sample seed (default 0)")
    parser.add_argument(
        "--rating-sample",
        type=_sample_size,
        metavar="N|plan",
        help="offer N answers for rating in report.html (default: all); plan: the answers --plan-ratings asks for",
    )
    parser.add_argument(
        "--plan-ratings",
        action="store_true",
        help="write rating_plan.csv and print, per model, how many more rated answers reach --target-halfwidth "
        "and decide the leading pair",
    )
    parser.add_argument(
        "--target-halfwidth",
        type=_halfwidth,
        default=0.05,
        help="the clinician-scale interval's half-width the rating plan aims at (default 0.05)",
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
    parser.add_argument(
        "--export",
        type=_exports,
        action="append",
        default=[],
        metavar="{medmarks,eee}",
        help="also write medmarks/: per panel and model, the parquet `medarc-eval winrate` reads and MedARC's records; "
        "eee/: Every Eval Ever's aggregate and instance records (repeatable, or a comma list)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if (args.suite is None) == (args.door_results is None):
        print("error: give --suite (a HELM suite) or --door-results (Inspect logs, verifiers results)", file=sys.stderr)
        return 2
    if args.door_results is not None:
        return _door_results(args.door_results)
    problem = suite_problem(args.suite)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    suite_dir = suite_path(args.output_path, args.suite)
    if not suite_dir.is_dir():
        print(f"error: no suite directory {suite_dir} (check --suite and -o/--output-path)", file=sys.stderr)
        return 1
    try:
        prices = load_prices(args.judge_prices) if args.judge_prices else None
    except PricesError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    with ReportProgress() as progress:
        done = _report(args, suite_dir, prices, progress)
    if done is None:
        return 1
    tables, out = done
    print(terminal(terminal_leaderboard(tables["leaderboard"])))
    print(terminal("\n" + "\n".join(audit_lines(tables))))
    if args.plan_ratings:
        print(terminal("\n" + "\n".join(plan_lines(tables[PLAN_TABLE]))))
    print(terminal(f"\nReport written to {out}/ (report.md, report.html for review, {FIGURE_NAME}, CSV tables)"))
    return 0


def _door_results(paths: list[Path]) -> int:
    """The Inspect and verifiers runs' failures per judge and model (door_results.py), on the terminal."""
    runs = read_door_runs(paths)
    for problem in runs.problems:
        print(terminal(f"warning: run skipped, {problem}"), file=sys.stderr)
    if runs.rows.empty:
        where = " ".join(str(p) for p in paths)
        print(terminal(f"error: no Inspect log or verifiers results.jsonl of mtsamples_procedures in {where}"),
              file=sys.stderr)  # fmt: skip
        return 1
    print(terminal("\n".join(door_lines(summarize(runs.rows)))))
    return 0


def _report(
    args: argparse.Namespace, suite_dir: Path, prices: Prices | None, progress: ReportProgress
) -> tuple[dict[str, pd.DataFrame], Path] | None:
    """Read the suite, build the tables and write the report directory; None after saying why on stderr.
    The bar (progress.py) is cleared before the leaderboard is printed."""
    progress.step("reading the suite")
    data = load_suite(suite_dir)
    data.instances = mask_table(data.instances, machine_keys())  # keys recorded by older releases stay off the page
    data.instances, replaced = encodable_table(data.instances)
    if replaced:
        progress.say(
            f"warning: {replaced} character(s) no file can hold (lone surrogates, control characters) in the suite's "
            f"records replaced by U+FFFD"
        )
    for problem in data.problems:
        progress.say(f"warning: run skipped, {problem}")
    if data.instances.empty:
        progress.say(f"error: no readable mtsamples_procedures run in {suite_dir}")
        return None
    settings = BootstrapSettings(n_resamples=args.bootstrap, seed=args.seed)
    try:
        ratings = suite_ratings(args.ratings, data.instances, args.suite) if args.ratings else None
    except RatingsError as error:
        progress.say(f"error: {error}")
        return None
    exports = {name for names in args.export for name in names}
    medmarks: list[ModelExport] | None = None
    if "medmarks" in exports:
        try:  # before anything is written: a refused export leaves the previous report as it was
            medmarks = build_export(data.instances, example_ids(resolve_manifest()), prices)
        except (ExportError, DataError) as error:
            progress.say(f"error: --export medmarks: {error}")
            return None
    progress.step("tables")
    tables = build_tables(data.instances, settings, ratings, prices)
    if medmarks is not None:  # report.md's Medmarks section: the command per panel, what it cannot rank
        tables[EXPORT_TABLE] = summary(data.instances, medmarks)
    for judge in unpriced(data.instances, prices) if prices else []:
        progress.say(f"warning: {args.judge_prices} has no price for judge {judge!r}: its cost is missing")
    out: Path = args.out or report_path(args.output_path, args.suite)
    settings_text = f"{settings.n_resamples} resamples, seed {settings.seed}"
    if args.plan_ratings or args.rating_sample == "plan":
        tables[PLAN_TABLE] = suite_plan(data.instances, ratings, args.target_halfwidth)
    if args.rating_sample == "plan":  # the plan's quotas, from the answers not yet rated
        rated = rated_answers(ratings)
        quotas = plan_quotas(tables[PLAN_TABLE], data.instances, rated)
        sample = RatingRound(None, args.seed, args.rating_overlap, quotas, rated)
        offered = sum(quota for _, quota in quotas)
        progress.say(
            f"--rating-sample plan: report.html offers {offered} unrated answers, each model's quota in rating_plan.csv"
            if offered
            else "--rating-sample plan: the plan asks for no more ratings; report.html offers none"
        )
    else:
        sample = RatingRound(args.rating_sample, args.seed, args.rating_overlap)
    if args.rating_sample is not None and answers_table(data.instances).empty:
        progress.say(
            f"warning: --rating-sample {args.rating_sample}: nothing to rate: {nothing_to_rate(data.instances)}"
        )
    eee = None
    if "eee" in exports:
        facts = suite_run_facts(suite_dir, sorted(set(data.instances["run"])))
        eee = build_eee(data.instances, tables["leaderboard"], args.suite, facts, settings, time.time())
    write_report(tables, out, args.suite, data.problems, settings_text, sample, progress, medmarks, eee)
    if medmarks is not None:
        progress.say(f"Medmarks export written to {out / EXPORT_DIR}/ (one env_index.json per panel)")
        for line in tables[EXPORT_TABLE]["line"].dropna():
            progress.say(line)
    if eee is not None:
        progress.say(f"Every Eval Ever export written to {out / EEE_DIR}/ (a data/ folder per panel)")
    return tables, out


if __name__ == "__main__":
    sys.exit(main())
