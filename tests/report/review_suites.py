"""The synthetic suites the review page is tested on (tests/report/test_review.py reads their data, the Chromium
tests in tests/report/test_review_page.py drive their pages): the report's main suite plus a model whose texts carry
markup, and panels of one and three judges with long plans and a control."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

from helm_mtsamples_ext.report.cli import main
from tests.report.suites import JUDGES, NOTES, STRONG_RUN, WEAK_RUN, Note, Run, build_suite, ok

EVIL = "acme/evil"
NOTE_SCRIPT = "<script>window.pwnedByNote = 1</script>"
ANSWER_SCRIPT = "</pre><script>window.pwnedByAnswer = 1</script>"
EXPLANATION_SCRIPT = '<img src=x onerror="window.pwnedByJudge = 1">'
EVIL_NOTE = Note("evil.txt", "Urology", "FINDINGS", body=f"PROCEDURE: {NOTE_SCRIPT} & more")
ALL_NOTES = [*NOTES, EVIL_NOTE]
EXPECTED_ORDER = ["evil.txt", "n3.txt", "n1.txt", "n2.txt", "n4.txt", "n6.txt", "n7.txt", "n5.txt", "n8.txt", "n9.txt"]


def evil_run() -> Run:
    scheming = ok(1, 1, 1)
    scheming["accuracy"]["explanation"] = EXPLANATION_SCRIPT
    # judge-one's own words on this answer: the suite's other 5s read "accuracy reasoning", and one verdict on three
    # different answers of two models would be a blind judge's (verdict_view.py).
    five = ok(5, 5, 5)
    five["accuracy"]["explanation"] = "accuracy reasoning on this answer"
    return Run(
        EVIL,
        JUDGES,
        {
            "evil.txt": {"judge-one": five, "judge-two": scheming},
            "n3.txt": {"judge-one": ok(4, 4, 4), "judge-two": ok(2, 2, 2)},
        },
        outputs={"evil.txt": ANSWER_SCRIPT},
    )


def report_of(output: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--suite", "v1", "-o", str(output), "--out", str(output / "report"), "--bootstrap", "50"]) == 0


def review_suite(output: Path) -> Path:
    """The main suite plus ``acme/evil``, reported: the output directory (report.html under ``report/``)."""
    build_suite(output, [STRONG_RUN, WEAK_RUN, evil_run()], ALL_NOTES)
    report_of(output)
    return output


LONG = "\n".join(f"Step {k}: keep the dressing dry and check the wound." for k in range(1, 13))
SCORES = {n.filename: 1 + k % 5 for k, n in enumerate(NOTES)}


def panel_suite(output: Path, judges: list[str]) -> Path:
    """Every note answered by a control and by acme/long (a 12-line plan), under ``judges``; scores vary by note
    and judge so that no judge gives one verdict to different answers."""

    def verdicts(offset: int) -> dict[str, dict[str, Any]]:
        def same(score: int) -> dict[str, Any]:
            return ok(score, score, score)

        return {n: {j: same(1 + (s + k + offset) % 5) for k, j in enumerate(judges)} for n, s in SCORES.items()}

    runs = [
        Run("mtsamples-control/shuffled", judges, verdicts(0)),
        Run("acme/long", judges, verdicts(2), outputs={n: f"{LONG}\n({n})" for n in SCORES}),
    ]
    build_suite(output, runs, NOTES)
    report_of(output)
    return output / "report" / "report.html"
