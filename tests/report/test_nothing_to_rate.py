"""Rating mode with nothing to rate says why on the review page (it showed "0 answers to rate" and an empty page)."""

from __future__ import annotations

from pathlib import Path

from helm_mtsamples_ext.report.review import nothing_to_rate, render_review
from helm_mtsamples_ext.report.suite import load_suite
from tests.report.suites import JUDGES, NOTES, Run, build_suite, control_run, failed, ok

UNJUDGED = Run("acme/tested", JUDGES, {n.filename: {j: failed("timed out") for j in JUDGES} for n in NOTES[:3]})
JUDGED = Run("acme/tested", JUDGES, {n.filename: {j: ok(4, 4, 4) for j in JUDGES} for n in NOTES[:3]})
REFERENCE = control_run("reference", {n.filename: {j: 0.8 for j in JUDGES} for n in NOTES[:3]})


def page(tmp_path: Path, runs: list[Run]) -> tuple[str, str]:
    instances = load_suite(build_suite(tmp_path, runs)).instances
    return render_review(instances, "v1"), nothing_to_rate(instances)


def test_no_judged_answer_of_a_model_under_test_says_so_on_the_page(tmp_path: Path) -> None:
    html, why = page(tmp_path, [UNJUDGED, REFERENCE])
    assert why.startswith("no judge scored any of the 3 answers of the models under test")
    assert f'<p id="rate-nothing">Nothing to rate: {why}.</p>' in html


def test_a_suite_of_controls_only_says_controls_are_not_rated(tmp_path: Path) -> None:
    html, why = page(tmp_path, [REFERENCE])
    assert why == "the suite holds only control runs, and controls are not rated"
    assert 'id="rate-nothing"' in html


def test_with_answers_to_rate_no_reason_shows(tmp_path: Path) -> None:
    html, _ = page(tmp_path, [JUDGED, REFERENCE])
    assert 'id="rate-nothing"' not in html and "3 answers to rate" in html
