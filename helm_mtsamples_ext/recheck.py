"""Would the judges still say this? A finished suite's judges asked again, live, about a seeded sample of answers.

    python -m helm_mtsamples_ext.recheck --suite v1 --sample 20 [--seed 0] [--repeats 2] [--yes]
                                         [--judge-prices prices.yaml] [-o benchmark_output] [--local-path prod_env]

A hosted judge changes behind a fixed name: run it before comparing a new model with a leaderboard judged long
ago. For each panel of the suite it draws N answers its judges scored (the same N for the same suite and seed),
asks every judge of the panel about each (twice by default: the two replies of today are the judge's own noise,
which the drift is measured beyond), with the run's prompt, settings and verdict parser, through HELM's
client but never its cache (nothing of the suite, its cache or its records changes), and writes
``judge_drift.csv`` to ``<output>/mtsamples_report/<suite>/``, one line per judge on the terminal. Before any
call it prints the calls and tokens (and, with prices, the cost) as ``python -m helm_mtsamples_ext.estimate``
does, and above ``RECHECK_CALLS_WITHOUT_YES`` calls it makes none without ``--yes``.

The door only: reading the suite is report/judged_answers.py's, the calls judges/helm_calls/recheck_calls.py's, the
comparison report/drift.py's.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from helm_mtsamples_ext.common.atomic import replace_file
from helm_mtsamples_ext.common.helm_paths import LOCAL_PATH, OUTPUT_PATH
from helm_mtsamples_ext.common.outside_text import terminal
from helm_mtsamples_ext.common.run_entry_args import RECHECK_CALLS_WITHOUT_YES
from helm_mtsamples_ext.common.suite_name import suite_problem
from helm_mtsamples_ext.judges.helm_calls.call import JudgeAccessError
from helm_mtsamples_ext.judges.helm_calls.recheck_calls import Question, ask_again, question, uncached_client
from helm_mtsamples_ext.report.cost import PricesError, load_prices
from helm_mtsamples_ext.report.csv_safe import safe_rows
from helm_mtsamples_ext.report.drift import DRIFT_COLUMNS, DRIFT_FILE, Recheck, compared, drift, drift_line
from helm_mtsamples_ext.report.judged_answers import (
    JudgedAnswer,
    JudgedRun,
    SampleTooLarge,
    SuiteUnreadable,
    judged_runs,
    sample_runs,
)
from helm_mtsamples_ext.report.judging_cost import CHARS_PER_TOKEN, VERDICT_TOKENS, Estimate, Judge, render
from helm_mtsamples_ext.report.suite import report_path, suite_path
from helm_mtsamples_ext.stats.intervals import BootstrapSettings


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("needs at least 1 answer")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m helm_mtsamples_ext.recheck", description=__doc__.split("\n")[0])
    parser.add_argument("--suite", required=True, help="the suite given to helm-run")
    parser.add_argument("--sample", type=_positive, required=True, metavar="N", help="answers per panel to ask again")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument(
        "--repeats",
        type=int,
        choices=(1, 2),
        default=2,
        help="times each answer is asked today (default 2: the second measures the judge's own noise; 1 for a "
        "server known to be deterministic, with no noise baseline)",
    )
    parser.add_argument(
        "--yes", action="store_true", help=f"make the calls even above {RECHECK_CALLS_WITHOUT_YES} (they are paid)"
    )
    parser.add_argument("--judge-prices", type=Path, help="USD per million input/output tokens per judge (YAML)")
    parser.add_argument("-o", "--output-path", default=OUTPUT_PATH, help="helm-run's output path")
    parser.add_argument("--local-path", default=LOCAL_PATH, help="helm-run's local path (credentials.conf)")
    return parser


def _questions(run: JudgedRun) -> list[Question]:
    return [_question(a) for a in run.answers]


def _question(a: JudgedAnswer) -> Question:
    return question(a.note, a.answer, a.reference, a.style)


def _estimate(run: JudgedRun, repeats: int) -> Estimate:
    """The calls and tokens of asking ``run``'s panel about its sampled answers ``repeats`` times: the prompts are
    known, so the input is one figure; the verdicts are estimate.py's range."""
    judges = tuple(Judge(spec.name, spec.model_deployment) for spec in run.panel)
    n = len(judges)
    tokens_in = sum(len(prompt) for prompt, _ in _questions(run)) / CHARS_PER_TOKEN * n * repeats
    out = [float(len(run.answers) * repeats * n * t) for t in VERDICT_TOKENS]
    entry = run.run if repeats == 1 else f"{run.run} (each answer asked {repeats} times)"
    return Estimate(entry, len(run.answers) * repeats, judges, (tokens_in, tokens_in), (out[0], out[1]))


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    problem = suite_problem(args.suite)
    if problem is not None:
        return _fail(problem)
    suite_dir = suite_path(args.output_path, args.suite)
    if not suite_dir.is_dir():
        return _fail(f"no suite directory {suite_dir} (check --suite and -o/--output-path)")
    try:
        prices = load_prices(args.judge_prices) if args.judge_prices else None
        runs = sample_runs(judged_runs(suite_dir), args.sample, args.seed)
    except (PricesError, SuiteUnreadable, SampleTooLarge) as error:
        return _fail(str(error))
    if not runs:
        return _fail(f"no answer in {suite_dir} was scored by a judge panel of ours: nothing to ask again")
    estimates = [_estimate(run, args.repeats) for run in runs]
    print("\n".join(render(estimates, prices, args.judge_prices)))
    calls = sum(e.calls for e in estimates)
    if calls > RECHECK_CALLS_WITHOUT_YES and not args.yes:
        return _fail(f"{calls} live judge calls is more than {RECHECK_CALLS_WITHOUT_YES}: add --yes to make them")
    rechecks: list[Recheck] = []
    try:
        with uncached_client(args.local_path) as client:
            for run in runs:
                questions = _questions(run)
                replies = ask_again(client, run.panel, run.args, run.knobs, questions * args.repeats)
                now, again = replies[: len(questions)], replies[len(questions) :] if args.repeats == 2 else None
                names = [spec.name for spec in run.panel]
                rechecks += compared(run.panel_name, names, [a.before for a in run.answers], now, again)
    except JudgeAccessError as error:
        return _fail(str(error))
    rows = drift(rechecks, BootstrapSettings(seed=args.seed))
    out = report_path(args.output_path, args.suite)
    replace_file(out / DRIFT_FILE, lambda tmp: _write_drift(tmp, rows))
    print(terminal("\n".join(drift_line(row) for row in rows)))
    print(terminal(f"Drift written to {out / DRIFT_FILE}"))
    return 0


def _write_drift(path: Path, rows: list[Any]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=DRIFT_COLUMNS)
        writer.writeheader()
        writer.writerows(safe_rows(row.row() for row in rows))


if __name__ == "__main__":
    sys.exit(main())
