"""report.html opens on the leaderboard (page_overview.py, review.py): each panel's rewards with their intervals,
the clinician scale where there are ratings, the audit's verdict and the figure; the review behind a tab; every text
escaped. In headless Chromium for what a reader sees, as text for the escaping."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.page_overview import CLINICIAN_SENTENCE, Overview, panel_boards
from helm_mtsamples_ext.report.review import render_review
from helm_mtsamples_ext.report.suite import load_suite
from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.report.plan_suite import MODELS, RATED_PER_MODEL, build_plan_suite

HOSTILE = '<img src=x onerror="window.pwnedByBoard=1">'


@pytest.fixture(scope="module")
def rated_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("overview")
    ratings = build_plan_suite(output)
    args = ["--suite", "v1", "-o", str(output), "--out", str(output / "report"), "--bootstrap", "50"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*args, "--ratings", str(ratings)]) == 0
    return output


def _board(**extra: object) -> pd.DataFrame:
    row = {
        "panel": "j1+j2",
        "rank": 1,
        "rank_low": 1,
        "rank_high": 2,
        "model": HOSTILE,
        "reward": 0.8,
        "reward_ci_low": 0.7,
        "reward_ci_high": 0.9,
        "n_judged": 20,
        "n_notes": 20,
        "judge_failure_rate": 0.0,
    }
    return pd.DataFrame([{**row, **extra}])  # fmt: skip


def test_the_leaderboard_cells_are_text_and_the_clinician_columns_appear_with_ratings() -> None:
    (plain,) = panel_boards(_board())
    assert plain.columns == ["#", "rank 95%", "model", "reward", "95% CI", "judged", "judge failures"]
    assert plain.rows == [["1", "1-2", HOSTILE, "0.800", "[0.700, 0.900]", "20/20", "0.0%"]]
    clinician = _board(clinician_reward=0.7, clinician_ci_low=0.62, clinician_ci_high=0.78, n_rated=14,
                       calibration="ppi++ own ratings")  # fmt: skip
    (rated,) = panel_boards(clinician)
    assert rated.columns[-4:] == ["clinician scale", "clinician 95% CI", "rated", "calibration"]
    assert rated.rows[0][-4:] == ["0.700", "[0.620, 0.780]", "14", "ppi++ own ratings"]
    (below,) = panel_boards(_board(clinician_reward=float("nan"), clinician_ci_low=float("nan"),
                                   clinician_ci_high=float("nan"), n_rated=3, calibration="none: 3 rated"))  # fmt: skip
    assert below.rows[0][-4:] == ["-", "-", "3", "none: 3 rated"]


def test_every_overview_text_is_escaped(rated_report: Path) -> None:
    instances = load_suite(rated_report / "runs" / "v1").instances
    overview = Overview(_board(panel=HOSTILE), [f"Judge panel {HOSTILE}: unchecked"], b"\x89PNG")
    html = render_review(instances, "v1", overview=overview)
    assert HOSTILE not in html and "&lt;img src=x onerror=" in html
    assert CLINICIAN_SENTENCE not in html  # no clinician columns: no sentence about them


def test_the_page_opens_on_the_leaderboard_and_the_review_is_a_tab_away(rated_report: Path) -> None:
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    page_path = rated_report / "report" / "report.html"
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.as_uri())
            expect(page.locator("#overview")).to_be_visible()
            expect(page.locator("#review")).to_be_hidden()
            board = page.locator("table.board")
            expect(board).to_have_count(1)
            headers = board.locator("th").all_inner_texts()
            assert headers[:4] == ["#", "rank 95%", "model", "reward"] and "clinician scale" in headers
            models = board.locator("tbody tr td:nth-child(3)").all_inner_texts()
            assert sorted(models) == sorted(MODELS)
            rated = board.locator(f"tbody tr td:nth-child({headers.index('rated') + 1})").all_inner_texts()
            assert rated == [str(RATED_PER_MODEL)] * len(MODELS)
            expect(page.locator("#overview")).to_contain_text("Clinician scale: the judges' reward on every")
            expect(page.locator("#verdicts li").first).to_contain_text("Judge panel")
            assert page.evaluate("document.getElementById('figure').naturalWidth") > 0  # the figure, drawn
            assert page.evaluate("window.pwnedByBoard") is None

            page.click("#tab-review")
            expect(page.locator("#review")).to_be_visible()
            expect(page.locator("#overview")).to_be_hidden()
            expect(page.locator("article.note").first).to_be_visible()
            page.reload()  # the tab is kept in the address
            expect(page.locator("#review")).to_be_visible()
            page.click("#tab-leaderboard")
            expect(page.locator("#overview")).to_be_visible()

            page.click("#rate-open")  # blind rating: neither the leaderboard nor the review shows
            expect(page.locator("#overview")).to_be_hidden()
            expect(page.locator("#tabs")).to_be_hidden()
            page.click("#rate-close")
            expect(page.locator("#overview")).to_be_visible()
        finally:
            browser.close()
    assert requests and all(url.startswith(("file://", "data:")) for url in requests), requests
