"""The review page's rating mode (templates/rating.html.j2), as a clinician uses it: in headless Chromium, from disk.

The suite is the report's main synthetic one (tests/report/test_cli.py); the page offers a sample of 6 answers, half
of them to every rater. A rater names themself, rates three answers, reloads (the ratings stay), looks for anything that
would anchor them (judges' scores, model names: hidden while blind), exports ratings.csv, and the report measures
the judges against those three ratings.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.ratings import read_ratings
from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.report.review_page import page_data
from tests.report.suites import JUDGES, NOTES, STRONG, STRONG_RUN, WEAK, WEAK_RUN, build_main_suite, build_suite

RATER = "Dr Ana Example"
COMMENT = 'misses the "follow-up", otherwise fine'
SCORES = [(5, 4, 4), (2, 3, 1), (4, 4, 5)]


def report(output: Path, out: Path, *extra: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--suite", "v1", "-o", str(output), "--out", str(out), "--bootstrap", "50", *extra]) == 0


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("rating")
    build_main_suite(output)
    report(output, output / "report", "--rating-sample", "6", "--rating-overlap", "0.5", "--seed", "7")
    return output


def _items(html: str) -> list[tuple[str, str, int]]:
    """The page's rating sample (its embedded data, review_data.py): (run, note id, shared) in order."""
    rating = page_data(html).rating
    notes = {note["name"]: note["id"] for note in page_data(html).notes}
    return [(item["answer"]["run"], notes[item["answer"]["note"]], item["shared"]) for item in rating]


def test_the_page_offers_the_sample_the_same_for_the_same_seed(sampled: Path, tmp_path: Path) -> None:
    html = (sampled / "report" / "report.html").read_text(encoding="utf-8")
    report(sampled, tmp_path / "again", "--rating-sample", "6", "--rating-overlap", "0.5", "--seed", "7")
    assert len(_items(html)) == 6
    assert [shared for _, _, shared in _items(html)] == [1, 1, 1, 0, 0, 0]
    assert _items((tmp_path / "again" / "report.html").read_text(encoding="utf-8")) == _items(html)


def test_the_rubric_is_at_hand_in_the_prompts_own_words(sampled: Path) -> None:
    html = (sampled / "report" / "report.html").read_text(encoding="utf-8")
    assert "does it cover the important aspects of care found in the reference plan?" in html


def _visible_text(page: object) -> str:
    return page.locator("body").inner_text()  # type: ignore[attr-defined]


def test_a_clinician_rates_blind_reloads_exports_and_the_report_reads_it(sampled: Path, tmp_path: Path) -> None:
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    page_path = sampled / "report" / "report.html"
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900}, accept_downloads=True)
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.as_uri())
            page.click("#rate-open")
            page.fill("#rate-rater", RATER)
            page.press("#rate-rater", "Enter")
            items = page.locator(".rate-item")
            expect(items).to_have_count(6)
            shown = _visible_text(page)
            for hidden in (STRONG, WEAK, *JUDGES, "disagreement", "reward"):
                assert hidden not in shown, hidden  # blind: nothing that would anchor the rater
            rated = []
            for k, scores in enumerate(SCORES):
                item = items.nth(k)
                for dim, score in zip(("accuracy", "completeness", "clarity"), scores, strict=True):
                    item.locator(f'fieldset[data-dim="{dim}"] input[value="{score}"]').check()
                rated.append((item.get_attribute("data-run"), item.get_attribute("data-id")))
            items.nth(0).locator(".rate-comment").fill(COMMENT)
            items.nth(1).locator(".rate-bad-reference").check()  # "the reference is not a good plan"
            expect(page.locator("#rate-progress")).to_have_text("3 of 6 rated")
            page.screenshot(path=str(tmp_path / "rating.png"))

            page.reload()  # still rating, same rater, same answers in the same order, the ratings kept
            expect(page.locator("#rate-progress")).to_have_text("3 of 6 rated")
            expect(page.locator("#rate-rater")).to_have_value(RATER)
            assert [
                (items.nth(k).get_attribute("data-run"), items.nth(k).get_attribute("data-id")) for k in range(3)
            ] == rated
            expect(items.nth(1).locator('fieldset[data-dim="clarity"] input[value="1"]')).to_be_checked()
            expect(items.nth(0).locator(".rate-comment")).to_have_value(COMMENT)
            expect(items.nth(1).locator(".rate-bad-reference")).to_be_checked()  # kept like the scores
            expect(items.nth(0).locator(".rate-bad-reference")).not_to_be_checked()

            page.uncheck("#rate-blind")  # unblinded on request only
            assert STRONG in _visible_text(page) or WEAK in _visible_text(page)
            page.check("#rate-blind")
            with page.expect_download() as download:
                page.click("#rate-export")
            assert download.value.suggested_filename == "ratings.csv"
            exported = tmp_path / "ratings.csv"
            download.value.save_as(exported)
        finally:
            browser.close()
    assert all(not url.startswith(("http:", "https:")) for url in requests), requests

    with exported.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["run"], r["instance_id"]) for r in rows] == rated
    assert [(int(r["accuracy"]), int(r["completeness"]), int(r["clarity"])) for r in rows] == SCORES
    assert {r["rater"] for r in rows} == {RATER} and rows[0]["comment"] == COMMENT
    assert [r["bad_reference"] for r in rows] == ["0", "1", "0"]
    html = page_path.read_text(encoding="utf-8")
    notes = {note["name"]: note["id"] for note in page_data(html).notes}
    probability = {
        (item["answer"]["run"], notes[item["answer"]["note"]]): item["inclusion_probability"]
        for item in page_data(html).rating
    }
    assert [float(r["inclusion_probability"]) for r in rows] == [probability[answer] for answer in rated]
    assert all(0 < p <= 1 for p in probability.values()) and min(probability.values()) < 1  # a sample of 6, not all
    read = read_ratings([exported])
    assert read["bad_reference"].tolist() == [False, True, False]
    assert read["inclusion_probability"].tolist() == [probability[answer] for answer in rated]

    report(sampled, tmp_path / "with-ratings", "--ratings", str(exported))
    agreement = pd.read_csv(tmp_path / "with-ratings" / "judge_human_agreement.csv")
    assert agreement.loc[agreement["judge"] == "(panel)", "n"].tolist() == [3]
    keep = os.environ.get("MTSAMPLES_E2E_SCREENSHOTS")
    if keep:  # how docs/ratings.md's screenshot was made
        shutil.copy(tmp_path / "rating.png", Path(keep) / "rating.png")


FORMULA = '=HYPERLINK("http://evil.example","click")'
"""A comment a spreadsheet would run."""
FORMULA_RATER = "@ana"


def _rate(item: object, scores: tuple[int, int, int], comment: str = "") -> None:
    for dim, score in zip(("accuracy", "completeness", "clarity"), scores, strict=True):
        item.locator(f'fieldset[data-dim="{dim}"] input[value="{score}"]').check()  # type: ignore[attr-defined]
    if comment:
        item.locator(".rate-comment").fill(comment)  # type: ignore[attr-defined]


def _export(page: object, path: Path) -> list[dict[str, str]]:
    with page.expect_download() as download:  # type: ignore[attr-defined]
        page.click("#rate-export")  # type: ignore[attr-defined]
    download.value.save_as(path)
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_ratings_belong_to_the_answer_and_exported_cells_are_neutralised_and_re_import(tmp_path: Path) -> None:
    """Rate report A, then open report B: the same suite name and runs, new answers. B opens unrated and says once
    that the browser holds ratings of answers it does not have; neither page exports another's ratings. Every cell
    a spreadsheet would run is exported with a leading quote, and the report reads the comment back as written."""
    require_chromium()
    from playwright.sync_api import expect, sync_playwright

    build_main_suite(tmp_path / "a")
    # One new answer for every note (different answers given one verdict would be the same-verdict rule's case).
    new_answers = dict.fromkeys((note.filename for note in NOTES), "Revised plan: new imaging, then surgery.")
    build_suite(tmp_path / "b", [replace(run, outputs=new_answers) for run in (STRONG_RUN, WEAK_RUN)])
    for name in ("a", "b"):
        report(tmp_path / name, tmp_path / name / "report")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(accept_downloads=True)  # one browser profile: A's and B's pages share storage
            page.goto((tmp_path / "a" / "report" / "report.html").as_uri())
            page.click("#rate-open")
            page.fill("#rate-rater", FORMULA_RATER)
            page.press("#rate-rater", "Enter")
            items = page.locator(".rate-item")
            total = items.count()
            _rate(items.nth(0), (5, 4, 4), FORMULA)
            _rate(items.nth(1), (2, 3, 1))
            expect(page.locator("#rate-progress")).to_have_text(f"2 of {total} rated")
            expect(page.locator("#rate-orphans")).to_be_hidden()

            page.goto((tmp_path / "b" / "report" / "report.html").as_uri())
            expect(page.locator("#rate-rater")).to_have_value(FORMULA_RATER)  # the same rater, the same suite name
            expect(page.locator("#rate-progress")).to_have_text(f"0 of {total} rated")
            expect(page.locator(".rate-item input:checked")).to_have_count(0)
            comments = page.locator(".rate-comment").evaluate_all("es => es.map(e => e.value)")
            assert set(comments) == {""}
            orphans = page.locator("#rate-orphans")
            expect(orphans).to_be_visible()
            expect(orphans).to_have_text(re.compile(r"^2 ratings kept in this browser .* not shown, not exported\.$"))
            assert _visible_text(page).count("this page does not hold") == 1  # said once
            assert _export(page, tmp_path / "b-empty.csv") == []  # A's ratings are not B's
            _rate(page.locator(".rate-item").nth(0), (3, 3, 3), FORMULA)
            b_rows = _export(page, tmp_path / "b.csv")

            page.goto((tmp_path / "a" / "report" / "report.html").as_uri())
            page.fill("#rate-rater", "  @ANA ")  # the same rater, written differently
            page.press("#rate-rater", "Enter")
            expect(page.locator("#rate-progress")).to_have_text(f"2 of {total} rated")
            a_rows = _export(page, tmp_path / "a.csv")
        finally:
            browser.close()

    assert len(b_rows) == 1 and len(a_rows) == 2
    for rows in (a_rows, b_rows):
        assert all(not cell[:1] or cell[0] not in "=+-@\t\r" for row in rows for cell in row.values())
        assert rows[0]["comment"] == "'" + FORMULA and rows[0]["rater"].strip() in ("'@ana", "'@ANA")
    for name in ("a", "b"):
        report(tmp_path / name, tmp_path / name / "rated", "--ratings", str(tmp_path / f"{name}.csv"))
        assert read_ratings([tmp_path / f"{name}.csv"])["comment"].iloc[0] == FORMULA  # re-imported as written
