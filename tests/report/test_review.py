"""The review page, report.html (review.py, review_data.py): every note in the embedded data, shown as text,
contested notes first, a page at a time, working offline.

The suite is the report's main synthetic one (tests/report/test_cli.py has its scores) plus a model `acme/evil` whose
note, answer and judge explanation carry markup. Judge spread = largest minus smallest judge reward on one
answer; a note's spread is the largest over its answers:

  evil.txt  acme/evil 555 vs 111 -> 1.0 - 0.2 = .8
  n3        acme/evil 444 vs 222 -> .8 - .4 = .4 (strong and weak agree on n3: 0)
  n1 n2 n4 n6 n7   .2 (strong: n2 n4 n7 1.0 vs .8; weak: n1 .6 vs .4, n6 .6 vs .4)
  n5 n8 n9  0 (weak's n5 and n9 have fewer than two judges that counted: no spread)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.review import render_review, script_json
from helm_mtsamples_ext.report.review_data import fold, reward_spread
from helm_mtsamples_ext.report.suite import load_suite
from tests.e2e.helm_tools import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.report.review_page import DATA_BLOCK, PageData, page_data, raw_data
from tests.report.suites import JUDGES, NOTES, STRONG_RUN, WEAK, WEAK_RUN, Note, Run, build_suite, ok

EVIL = "acme/evil"
NOTE_SCRIPT = "<script>window.pwnedByNote = 1</script>"
ANSWER_SCRIPT = "</pre><script>window.pwnedByAnswer = 1</script>"
EXPLANATION_SCRIPT = '<img src=x onerror="window.pwnedByJudge = 1">'
EVIL_NOTE = Note("evil.txt", "Urology", "FINDINGS", body=f"PROCEDURE: {NOTE_SCRIPT} & more")
ALL_NOTES = [*NOTES, EVIL_NOTE]
EXPECTED_ORDER = ["evil.txt", "n3.txt", "n1.txt", "n2.txt", "n4.txt", "n6.txt", "n7.txt", "n5.txt", "n8.txt", "n9.txt"]


def _evil_run() -> Run:
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


@pytest.fixture(scope="module")
def suite_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("review")
    build_suite(output, [STRONG_RUN, WEAK_RUN, _evil_run()], ALL_NOTES)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--suite", "v1", "-o", str(output), "--out", str(output / "report"), "--bootstrap", "50"]) == 0
    return output


@pytest.fixture(scope="module")
def page_html(suite_output: Path) -> str:
    return (suite_output / "report" / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def data(page_html: str) -> PageData:
    return page_data(page_html)


def test_each_note_carries_its_answers_judge_spreads(data: PageData) -> None:
    """The page sorts by these (its Chromium test below checks the order): a note's spread is its largest."""
    spreads = {note["name"]: [a["spread"] for a in note["answers"] if a["spread"] is not None] for note in data.notes}
    assert {name: max(s) if s else None for name, s in spreads.items()} == pytest.approx(
        {"evil.txt": 0.8, "n3.txt": 0.4, **dict.fromkeys(["n1.txt", "n2.txt", "n4.txt", "n6.txt", "n7.txt"], 0.2)}
        | dict.fromkeys(["n5.txt", "n8.txt", "n9.txt"], 0.0)
    )


def test_every_note_answer_and_judge_is_in_the_data(data: PageData) -> None:
    assert sorted(note["name"] for note in data.notes) == sorted(EXPECTED_ORDER)
    assert len(data.answers) == 9 + 9 + 2  # strong, weak, evil
    assert sum(len(a["judges"]) for a in data.answers) == 2 * 20
    assert "call error: timeout after 60s" in [j["failure"] for a in data.answers for j in a["judges"]]
    assert {note["ref_head"] + note["ref_rest"] for note in data.notes} == {"Follow up in two weeks."}


def test_texts_shared_by_answers_are_written_once(page_html: str) -> None:
    """Every model reads the same note and reference: the file holds each once, not once per answer."""
    strings = raw_data(page_html)["strings"]
    assert len(strings) == len(set(strings))
    assert page_html.count("Sample Name: n3") == 1  # n3's note text, answered by three models
    assert page_html.count("Follow up in two weeks.") == 1


@pytest.mark.parametrize("markup", [NOTE_SCRIPT, ANSWER_SCRIPT, EXPLANATION_SCRIPT])
def test_untrusted_text_is_data_not_markup(page_html: str, data: PageData, markup: str) -> None:
    """The JSON block holds no `<` at all, so an answer's `</script>` cannot end it; the texts read back verbatim."""
    assert markup not in page_html
    (block,) = DATA_BLOCK.findall(page_html)
    assert "<" not in block and ">" not in block and "&" not in block
    texts = [n["text"] for n in data.notes] + [a["text"] for a in data.answers]
    texts += [e for a in data.answers for j in a["judges"] for e in j["explanations"]]
    assert any(markup in text for text in texts)


@pytest.mark.parametrize("text", ["</script><script>alert(1)</script>", "a\u2028b & <!-- c", "\u2029</SCRIPT >"])
def test_script_json_reads_back_and_holds_no_markup(text: str) -> None:
    escaped = str(script_json({"t": [text]}))
    assert not set("<>&\u2028\u2029") & set(escaped)
    assert json.loads(escaped) == {"t": [text]}


@pytest.mark.parametrize("sink", ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "srcdoc"])
def test_the_pages_script_never_writes_markup(page_html: str, sink: str) -> None:
    """Texts reach the page through textContent only: no script line hands a string to the HTML parser."""
    assert sink not in page_html


def test_page_refers_to_no_url(page_html: str) -> None:
    """Self-contained: no stylesheet, script, font or image from anywhere (the page must work offline)."""
    assert not re.search(r"https?://|\bsrc=\"|\bhref=\"", page_html)


def test_render_needs_no_suite_on_disk(suite_output: Path) -> None:
    """render_review takes the report's instance table only, so the page is the same however it was loaded."""
    instances = load_suite(suite_output / "runs" / "v1").instances
    html = render_review(instances, "v1")
    assert html == (suite_output / "report" / "report.html").read_text(encoding="utf-8")


def _shown(page: object) -> list[str]:
    """The notes the filters keep, in the page's order (its index lists them all; a page of them is drawn)."""
    return page.locator("#index-list li").evaluate_all("els => els.map(e => e.dataset.note)")  # type: ignore[attr-defined]


def _drawn(page: object) -> list[str]:
    return page.locator("article.note").evaluate_all("els => els.map(e => e.dataset.note)")  # type: ignore[attr-defined]


@pytest.mark.e2e
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
            page.goto(report.as_uri())
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


def test_failed_judges_do_not_make_a_spread() -> None:
    """A spread needs two judges that counted: a failed judge is missing, not a 0 that would look contested."""
    assert reward_spread(pd.Series([0.6, float("nan")])) is None
    assert reward_spread(pd.Series([0.6, 0.2, 1.0])) == pytest.approx(0.8)


# ---------------------------------------------------------------- one judge, three judges, long texts, controls

LONG = "\n".join(f"Step {k}: keep the dressing dry and check the wound." for k in range(1, 13))
SCORES = {n.filename: 1 + k % 5 for k, n in enumerate(NOTES)}


def panel_suite(output: Path, judges: list[str]) -> Path:
    """Every note answered by a control and by acme/long (a 12-line plan), under ``judges``; scores vary by note
    and judge so that no judge gives one verdict to different answers."""

    def verdicts(offset: int) -> dict[str, dict[str, Any]]:
        return {n: {j: ok(*[1 + (s + k + offset) % 5] * 3) for k, j in enumerate(judges)} for n, s in SCORES.items()}

    runs = [
        Run("mtsamples-control/shuffled", judges, verdicts(0)),
        Run("acme/long", judges, verdicts(2), outputs={n: f"{LONG}\n({n})" for n in SCORES}),
    ]
    build_suite(output, runs, NOTES)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--suite", "v1", "-o", str(output), "--out", str(output / "report"), "--bootstrap", "50"]) == 0
    return output / "report" / "report.html"


@pytest.fixture(scope="module")
def one_judge_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return panel_suite(tmp_path_factory.mktemp("one"), ["judge-one"])


@pytest.fixture(scope="module")
def three_judge_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return panel_suite(tmp_path_factory.mktemp("three"), ["judge-one", "judge-two", "judge-three"])


def test_with_one_judge_there_is_no_sort_by_disagreement(one_judge_page: Path) -> None:
    """(The Chromium test below checks that no badge is drawn and the notes are in name order.)"""
    html = one_judge_page.read_text(encoding="utf-8")
    assert 'value="spread"' not in html and not page_data(html).several_judges
    assert {a["spread"] for a in page_data(html).answers} == {None}


def test_with_three_judges_notes_are_sorted_by_disagreement(three_judge_page: Path) -> None:
    html = three_judge_page.read_text(encoding="utf-8")
    assert 'value="spread"' in html and page_data(html).several_judges


@pytest.mark.parametrize(
    ("text", "head", "rest"),
    [
        ("one line", "one line", ""),
        ("a\nb\nc\nd\ne", "a\nb\nc\nd\n", "e"),
        ("a\nb\nc\nd", "a\nb\nc\nd", ""),
        ("word " * 200, "word " * 96, "word " * 104),
    ],
    ids=["short", "five-lines", "four-lines", "one-long-line"],
)
def test_long_texts_fold_after_four_lines_or_about_480_characters(text: str, head: str, rest: str) -> None:
    folded = fold(text)
    assert (folded.head, folded.rest) == (head, rest) and folded.head + folded.rest == text


@pytest.mark.parametrize(
    ("text", "size"),
    [("a\nb\nc\nd\ne", "5 lines"), ("word " * 200, "1,000 characters")],
    ids=["lines", "one long line"],
)
def test_show_all_says_how_much_is_folded(text: str, size: str) -> None:
    """One long line (many references are one) is counted in characters, never "all 1 lines"."""
    assert fold(text).size == size


def test_controls_are_labelled_as_controls(one_judge_page: Path) -> None:
    labels = {(a["model"], a["control"]) for a in page_data(one_judge_page.read_text(encoding="utf-8")).answers}
    assert labels == {("mtsamples-control/shuffled", "control: another patient's plan (floor)"), ("acme/long", "")}


def _page_height(page: object) -> int:
    return int(page.evaluate("document.documentElement.scrollHeight"))  # type: ignore[attr-defined]


@pytest.mark.e2e
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
            page.goto(one_judge_page.as_uri())
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

            page.goto(three_judge_page.as_uri())
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
