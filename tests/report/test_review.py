"""The review page, report.html (review.py, review_data.py): every note in the embedded data, shown as text,
contested notes first, a page at a time, working offline.

The suite (tests/report/review_suites.py) is the report's main synthetic one (tests/report/test_cli.py has its
scores) plus a model `acme/evil` whose note, answer and judge explanation carry markup. Judge spread = largest
minus smallest judge reward on one answer; a note's spread is the largest over its answers:

  evil.txt  acme/evil 555 vs 111 -> 1.0 - 0.2 = .8
  n3        acme/evil 444 vs 222 -> .8 - .4 = .4 (strong and weak agree on n3: 0)
  n1 n2 n4 n6 n7   .2 (strong: n2 n4 n7 1.0 vs .8; weak: n1 .6 vs .4, n6 .6 vs .4)
  n5 n8 n9  0 (weak's n5 and n9 have fewer than two judges that counted: no spread)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.review import render_review, script_json
from helm_mtsamples_ext.report.review_data import fold, reward_spread
from helm_mtsamples_ext.report.suite import load_suite
from tests.report.review_page import DATA_BLOCK, PageData, page_data, raw_data
from tests.report.review_suites import (
    ANSWER_SCRIPT,
    EXPECTED_ORDER,
    EXPLANATION_SCRIPT,
    NOTE_SCRIPT,
    review_suite,
)


@pytest.fixture(scope="module")
def suite_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return review_suite(tmp_path_factory.mktemp("review"))


@pytest.fixture(scope="module")
def page_html(suite_output: Path) -> str:
    return (suite_output / "report" / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def data(page_html: str) -> PageData:
    return page_data(page_html)


def test_each_note_carries_its_answers_judge_spreads(data: PageData) -> None:
    """The page sorts by these (tests/report/test_review_page.py checks the order in Chromium): a note's spread is
    its largest."""
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
    """Self-contained: no stylesheet, script, font or image from anywhere (the page must work offline); the one
    image, the leaderboard figure, is inside the page as a data: URI."""
    assert not re.search(r"https?://|\bsrc=\"(?!data:image/png;base64,)|\bhref=\"", page_html)
    assert len(re.findall(r"\bsrc=\"data:image/png;base64,", page_html)) == 1


def test_render_needs_no_suite_on_disk(suite_output: Path) -> None:
    """render_review takes the report's instance table only, so the review's data is the same however it was
    loaded (the report adds the leaderboard tab; without its tables the page is the review alone)."""
    instances = load_suite(suite_output / "runs" / "v1").instances
    html = render_review(instances, "v1")
    written = (suite_output / "report" / "report.html").read_text(encoding="utf-8")
    assert raw_data(html) == raw_data(written)
    assert 'id="tabs"' in written and 'id="tabs"' not in html and 'id="review" hidden' in written


def test_failed_judges_do_not_make_a_spread() -> None:
    """A spread needs two judges that counted: a failed judge is missing, not a 0 that would look contested."""
    assert reward_spread(pd.Series([0.6, float("nan")])) is None
    assert reward_spread(pd.Series([0.6, 0.2, 1.0])) == pytest.approx(0.8)


# ---------------------------------------------------------------- one judge, three judges, long texts, controls


def test_with_one_judge_there_is_no_sort_by_disagreement(one_judge_page: Path) -> None:
    """(tests/report/test_review_page.py checks in Chromium that no badge is drawn and the notes are in name order.)"""
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
