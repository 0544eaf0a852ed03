"""A one-judge synthetic suite whose audit warns twice: on notes n1-n3 the judge gives every control 3,3,3 (reward
.6), so the reference never beats the shuffled plan (AUROC 0.5: blind; a constant judge, so its verdict is "no
information" and still a warning), and gives acme/re 4,4,4 (reward .8): above the ceiling of .6. Read by
tests/report/test_audit_warnings.py and, through the real helm-summarize, tests/e2e/test_audit_on_leaderboard.py."""

from __future__ import annotations

from pathlib import Path

from tests.report.suites import Run, build_suite, control_run, ok

JUDGE = "judge-one"
RE = "acme/re"
NOTES3 = ["n1.txt", "n2.txt", "n3.txt"]


def blind_suite(output: Path) -> None:
    runs = [control_run(kind, {n: {JUDGE: 0.6} for n in NOTES3}, judges=[JUDGE]) for kind in
            ("reference", "shuffled", "truncated", "padded")]  # fmt: skip
    runs.append(Run(RE, [JUDGE], {n: {JUDGE: ok(4, 4, 4)} for n in NOTES3}))
    build_suite(output, runs)


PANEL_LINE = "WARNING: Judge panel judge-one: the panel gave one score to every answer: no information"
CEILING_LINE = (
    "WARNING: acme/re scores above the clinician's own plan under panel judge-one (0.800 > reference 0.600): "
    "these judges do not rank by plan quality"
)
