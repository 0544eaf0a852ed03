"""The review page, report.html, in headless Chromium: opened from disk, filters, sorts, pages, folds long texts,
labels controls and runs no script it was sent (its data: tests/report/test_review.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.report.review_suites import ANSWER_SCRIPT, EXPECTED_ORDER, NOTE_SCRIPT, review_suite
from tests.report.suites import NOTES, WEAK


@pytest.fixture(scope="module")
def suite_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return review_suite(tmp_path_factory.mktemp("review"))


def _shown(page: object) -> list[str]:
    """The notes the filters keep, in the page's order (its index lists them all; a page of them is drawn)."""
    return page.locator("#index-list li").evaluate_all("els => els.map(e => e.dataset.note)")  # type: ignore[attr-defined]


def _drawn(page: object) -> list[str]:
    return page.locator("article.note").evaluate_all("els => els.map(e => e.dataset.note)")  # type: ignore[attr-defined]


def _page_height(page: object) -> int:
    return int(page.evaluate("document.documentElement.scrollHeight"))  # type: ignore[attr-defined]


def test_page_in_headless_chromium_filters_and_sorts(suite_output: Path, tmp_path: Path) -> None:
    """Opened from disk in Chromium: no request leaves the file, filters hide notes, the sort orders them, a page of
    them is drawn (three models: six notes a page), the pager and the index reach the rest, search finds a name."""
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    report = suite_output / "report" / "report.html"
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report.as_uri() + "#review")
            expect(page.locator("#shown")).to_have_text("10 of 10 notes")
            assert _shown(page) == EXPECTED_ORDER
            assert _drawn(page) == EXPECTED_ORDER[:6]
            expect(page.locator("#page")).to_have_text("notes 1–6 of 10")
            assert page.evaluate("[window.pwnedByNote, window.pwnedByAnswer, window.pwnedByJudge]") == [None] * 3
            first = page.locator("article.note").first
            expect(first.locator("pre.text")).to_contain_text(ANSWER_SCRIPT)
            first.locator("summary").click()
            expect(first.locator("details pre")).to_contain_text(NOTE_SCRIPT)
            page.click("#next")
            assert _drawn(page) == EXPECTED_ORDER[6:]
            expect(page.locator("#next")).to_be_disabled()
            page.click("#prev")
            page.locator("#index-list li[data-note='n9.txt'] button").click()  # the index opens the note's page
            assert _drawn(page) == EXPECTED_ORDER[6:]
            expect(page.locator("#index-list li.current")).to_have_count(4)
            page.fill("#search", "N3")  # by name, any case
            assert _shown(page) == _drawn(page) == ["n3.txt"]
            expect(page.locator("article.note section.answer")).to_have_count(3)
            page.fill("#search", "")

            page.select_option("#filter-model", WEAK)
            # weak's own spreads: n1 and n6 .2, then 0 (n3 n4 n8), then no spread (n2 n5 n7 n9); evil.txt has no answer
            assert _shown(page) == [
                "n1.txt",
                "n6.txt",
                "n3.txt",
                "n4.txt",
                "n8.txt",
                "n2.txt",
                "n5.txt",
                "n7.txt",
                "n9.txt",
            ]
            expect(page.locator("article.note section.answer")).to_have_count(9)  # one model: ten notes a page
            page.select_option("#filter-specialty", "Neurosurgery")
            assert _shown(page) == ["n6.txt", "n8.txt", "n5.txt", "n7.txt"]
            page.select_option("#filter-model", "")
            assert _shown(page) == ["n6.txt", "n7.txt", "n5.txt", "n8.txt"]
            page.screenshot(path=str(tmp_path / "review.png"))  # docs/report.md's: a specialty, every model
            page.select_option("#filter-section", "PLAN")
            assert _shown(page) == ["n7.txt", "n5.txt"]
            page.select_option("#filter-specialty", "")
            page.select_option("#filter-section", "")
            page.select_option("#sort", "note")
            assert _shown(page) == sorted(EXPECTED_ORDER)
            assert _drawn(page) == sorted(EXPECTED_ORDER)[:6]
            expect(page.locator("#shown")).to_have_text("10 of 10 notes")
        finally:
            browser.close()
    assert requests and all(url.startswith("file://") for url in requests), requests
    keep = os.environ.get("MTSAMPLES_E2E_SCREENSHOTS")
    if keep:  # how docs/report.md's screenshot was made
        shutil.copy(tmp_path / "review.png", Path(keep) / "review.png")


def test_one_and_three_judge_pages_in_headless_chromium(
    one_judge_page: Path, three_judge_page: Path, tmp_path: Path
) -> None:
    """One judge: no badge, name order, no sort by disagreement; long plans show 4 lines until unfolded;
    controls labelled. Three judges: a disagreement badge per note, sorted largest first."""
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(one_judge_page.as_uri() + "#review")
            expect(page.locator(".spread")).to_have_count(0)
            assert page.locator("#sort option").all_inner_texts() == ["note name"]
            assert _shown(page) == sorted(n.filename for n in NOTES)
            answer = page.locator("section.answer[data-model='acme/long']").first
            expect(answer.locator(".control")).to_have_count(0)
            expect(page.locator("section.answer[data-model='mtsamples-control/shuffled'] .control").first).to_have_text(
                "control: another patient's plan (floor)"
            )
            folded = answer.locator("details.fold")
            expect(folded.locator("summary pre")).to_contain_text("Step 4:")
            expect(folded.locator("summary pre")).not_to_contain_text("Step 5:")
            expect(folded.locator(":scope > pre")).to_be_hidden()
            expect(folded.locator(".more")).to_have_text("… show all 13 lines")
            folded_height = _page_height(page)
            page.screenshot(path=str(tmp_path / "review_one_judge.png"))
            folded.locator("summary").click()
            expect(folded.locator(":scope > pre")).to_be_visible()
            expect(folded.locator(":scope > pre")).to_contain_text("Step 12:")
            expect(folded.locator(".more")).to_be_hidden()
            assert _page_height(page) > folded_height, "unfolding shows the rest"

            page.goto(three_judge_page.as_uri() + "#review")
            expect(page.locator(".spread")).to_have_count(len(NOTES))
            assert page.locator("#sort").input_value() == "spread"
            spreads = page.locator("article.note").evaluate_all("els => els.map(e => Number(e.dataset.visibleSpread))")
            assert spreads == sorted(spreads, reverse=True) and spreads[0] > 0
            page.screenshot(path=str(tmp_path / "review.png"))
        finally:
            browser.close()
    keep = os.environ.get("MTSAMPLES_E2E_SCREENSHOTS")
    if keep:  # docs/report.md's review screenshots
        for name in ("review.png", "review_one_judge.png"):
            shutil.copy(tmp_path / name, Path(keep) / name)
