"""rater_names.py: one rater whatever the keyboard (compatibility forms, format characters, case), look-alike
names flagged; an attack table, the confusable table letter by letter, properties, and the report's files."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helm_mtsamples_ext.report.rater_names import CONFUSABLES, lookalike_groups, rater_key, shown_name, skeleton
from helm_mtsamples_ext.report.ratings import read_ratings, suite_ratings
from helm_mtsamples_ext.stats.human_agreement import CLINICIANS_ROW
from tests.report.rated import RATINGS, build, report, write_ratings

SAME_RATER = [
    ("case", "Dr Test", "dr TEST"),
    ("spaces", "Dr Test", "  Dr   Test "),
    ("zero-width space", "Dr Test", "Dr Te\u200bst"),
    ("zero-width joiner", "Dr Test", "\u200dDr Test"),
    ("word joiner", "Dr Test", "Dr\u2060 Test"),
    ("full-width letters", "Dr Test", "\uff24\uff52 \uff34\uff45\uff53\uff54"),
    ("ideographic space", "Dr Test", "Dr\u3000Test"),
    ("bidi override", "Dr Test", "\u202eDr Test\u202c"),
    ("ligature", "Dr Fine", "Dr \ufb01ne"),
    ("soft hyphen", "Dr Test", "Dr Te\u00adst"),
    ("control character", "Dr Test", "Dr Test\x1b"),
]


@pytest.mark.parametrize(("case", "a", "b"), SAME_RATER, ids=[c[0] for c in SAME_RATER])
def test_one_person_typing_differently_is_one_rater(case: str, a: str, b: str) -> None:
    assert rater_key(a) == rater_key(b)


LOOK_ALIKE = [
    ("cyrillic e", "Dr Test", "Dr T\u0435st"),
    ("cyrillic a and o", "Anna Orlov", "\u0410nna \u041erlov"),
    ("greek omicron", "Dr Otto", "Dr \u039ftto"),
    ("accent", "Dr Rene", "Dr Ren\u00e9"),
    ("digit for letter", "Dr Lee", "Dr 1ee"),
]


@pytest.mark.parametrize(("case", "a", "b"), LOOK_ALIKE, ids=[c[0] for c in LOOK_ALIKE])
def test_names_that_only_look_alike_stay_two_raters_and_are_flagged(case: str, a: str, b: str) -> None:
    assert rater_key(a) != rater_key(b)
    assert lookalike_groups([a, b, "Someone Else"]) == [[a, b]]


def test_different_names_are_not_flagged() -> None:
    assert lookalike_groups(["alice", "bob", "carol", "Alice", "ALICE"]) == []


@pytest.mark.parametrize("letter", sorted(chr(k) for k in CONFUSABLES))
def test_every_confusable_maps_to_one_ascii_character_and_survives_folding(letter: str) -> None:
    mapped = letter.translate(CONFUSABLES)
    assert len(mapped) == 1 and mapped.isascii() and mapped != letter
    assert rater_key(letter) == letter  # the table is keyed by what folding leaves


def test_shown_name_drops_what_hides_or_reorders() -> None:
    assert shown_name("\u202e<b>Dr</b>\u200b Test\x1b[2J") == "<b>Dr</b> Test[2J"


@given(st.text())
def test_the_key_is_idempotent_and_blind_to_case_width_and_format(name: str) -> None:
    key = rater_key(name)
    assert rater_key(key) == key
    assert rater_key("\u200b".join(name)) == key
    assert rater_key(name.swapcase()) == key or not name.isascii()  # case, where case-folding is a round trip
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)
    assert rater_key(wide) == key
    assert not any(unicodedata.category(c) in ("Cf", "Cc") for c in key)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1))
def test_the_skeleton_sees_through_cyrillic_substitutes(name: str) -> None:
    cyrillic = name.replace("a", "\u0430").replace("e", "\u0435").replace("o", "\u043e").replace("c", "\u0441")
    assert skeleton(cyrillic) == skeleton(name)


def test_through_the_report_full_width_and_zero_width_names_are_one_rater_and_a_look_alike_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """alice's second file is typed full-width and bob's with a zero-width space: still three raters; a fourth
    name with a Cyrillic a beside "carol" is flagged on stderr and stays its own rater."""
    run = build(tmp_path)
    alice, bob, carol = RATINGS["alice"], RATINGS["bob"], RATINGS["carol"]
    first = write_ratings(tmp_path / "a.csv", run, {"alice": dict(list(alice.items())[:4]), "bob": bob})
    second = write_ratings(
        tmp_path / "b.csv",
        run,
        {"\uff41\uff4c\uff49\uff43\uff45": dict(list(alice.items())[4:]), "c\u0430rol": {1: (3, 3, 3)}, "carol": carol},
    )
    table = read_ratings([first, second])
    assert sorted(table["rater"].unique()) == ["alice", "bob", "carol", "c\u0430rol"]
    from helm_mtsamples_ext.report.suite import load_suite

    suite_ratings([first, second], load_suite(tmp_path / "runs" / "v1").instances, "v1")
    err = capsys.readouterr().err
    assert "warning: raters 'c\\u0430rol', 'carol' look alike" in err or "warning: raters 'carol', 'c\\u0430rol'" in err
    bidi = write_ratings(tmp_path / "c.csv", run, {"\u202e<b>mallory</b>": {1: (3, 3, 3)}})
    assert read_ratings([bidi])["rater"].tolist() == ["<b>mallory</b>"]
    noisy = tmp_path / "d.csv"
    noisy.write_text(bidi.read_text(encoding="utf-8").replace(",\n", ",fine\x00\x1b[2J\n"), encoding="utf-8")
    assert read_ratings([noisy])["comment"].tolist() == ["fine\ufffd\ufffd[2J"]
    both = tmp_path / "both.csv"
    both.write_text(
        first.read_text(encoding="utf-8") + "".join(second.read_text(encoding="utf-8").splitlines(True)[1:])
    )
    agreement = pd.read_csv(report(tmp_path, "r", both) / "judge_human_agreement.csv")
    assert agreement.loc[agreement["judge"] == CLINICIANS_ROW, "n_raters"].tolist() == [4]  # not 5: alice is one
