"""Scripts timing ours against a bound, a floor or HELM's built-in, each printing ratios against stated goals.

The convention every ``benchmarks/*.py`` script follows: it parses its arguments with ``parse_args`` below, which
adds ``--smallest``: the script at its smallest size (a few notes, short waits), done in well under a minute in a
fresh clone with nothing beside it (no ``../shared``, no network: notes through ``MTSAMPLES_PROCEDURES_BASE_URL``
and ``MTSAMPLES_PROCEDURES_MANIFEST`` when it needs them). ``tests/e2e/test_benchmarks.py`` runs every script so and
fails on a non-zero exit, a traceback, a ``nan`` in what it prints or a file it could not find; a new script joins
by being here and calling ``parse_args``. Its numbers mean nothing at that size: the test checks that it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

SMALLEST = "--smallest"


def parse_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None, **smallest: Any
) -> argparse.Namespace:
    """``parser``'s arguments, with ``--smallest`` added: when given, each of ``smallest`` (an option's dest and its
    smallest value) replaces what the command line or the default said."""
    parser.add_argument(
        SMALLEST,
        action="store_true",
        help="the smallest size (" + ", ".join(f"{k.replace('_', '-')}={v}" for k, v in smallest.items()) + "): "
        "checks the script runs, in seconds; its numbers mean nothing",
    )
    args = parser.parse_args(argv)
    if args.smallest:
        for dest, value in smallest.items():
            setattr(args, dest, value)
    return args
