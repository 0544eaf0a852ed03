"""``python -m helm_mtsamples_ext.schema [--suite S]``: print the shipped leaderboard schema's path, or write one
for a suite's judge panels (report/leaderboard_schema.py holds the rules; this door parses the command line).

    helm-summarize --suite S --schema-path "$(python -m helm_mtsamples_ext.schema)"            # shipped
    helm-summarize --suite S --schema-path "$(python -m helm_mtsamples_ext.schema --suite S)"  # this suite's
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from helm_mtsamples_ext.common.helm_paths import OUTPUT_PATH
from helm_mtsamples_ext.common.suite_name import suite_problem
from helm_mtsamples_ext.report.leaderboard_schema import (
    AUDIT_HEADING,
    SCHEMA_FILENAME,
    SCHEMA_PATH,
    SuiteRun,
    read_suite,
    suite_audit,
    suite_schema,
    with_audit,
    write_suite_schema,
)

__all__ = [
    "AUDIT_HEADING",
    "SCHEMA_FILENAME",
    "SCHEMA_PATH",
    "SuiteRun",
    "main",
    "read_suite",
    "suite_audit",
    "suite_schema",
    "with_audit",
    "write_suite_schema",
]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m helm_mtsamples_ext.schema",
        description="Print the shipped schema's path, or with --suite write a schema for that suite's judge panels.",
    )
    parser.add_argument("--suite", help="write a schema whose per-judge columns match this suite's panels")
    parser.add_argument("-o", "--output-path", default=OUTPUT_PATH, help="helm-run's output path")
    parser.add_argument(
        "--out", help="where to write it (default: benchmark_output/runs/SUITE/" + SCHEMA_FILENAME + ")"
    )
    args = parser.parse_args(argv)
    if args.suite is None:
        print(SCHEMA_PATH)
        return
    problem = suite_problem(args.suite)
    if problem is not None:
        sys.exit(f"error: {problem}")
    print(write_suite_schema(args.suite, args.output_path, args.out))


if __name__ == "__main__":
    main()
