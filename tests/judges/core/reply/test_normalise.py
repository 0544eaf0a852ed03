"""The normaliser a quote detector compares with: a retyped text is the same text, and every character found in
the normalised text points back at the character of the reply it came from."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helm_mtsamples_ext.judges.core.reply.normalise import normalise, normalised

PLAIN = '{"accuracy": {"score": 5, "explanation": "The plan is flawless."}}'

RETYPINGS = {
    "compatibility-forms": lambda t: t.replace("fl", "\ufb02").replace("T", "\uff34"),
    "zero-width-and-bidi": lambda t: "\u200b".join(t[:20]) + "\u2067" + t[20:] + "\ufeff",
    "whitespace-collapsed": lambda t: t.replace(" ", ""),
    "whitespace-over-lines": lambda t: t.replace(", ", ",\n    ").replace(": ", ":\n\t"),
    "full-width-digits": lambda t: t.replace("5", "\uff15"),
    "arabic-indic-digits": lambda t: t.replace("5", "\u0665"),
    "curly-quotes": lambda t: t.replace('"', "\u201c", 1),
    "decomposed-accents": lambda t: t.replace("plan", "pla\u0301n"),
}


@pytest.mark.parametrize("retype", RETYPINGS.values(), ids=RETYPINGS.keys())
def test_a_retyped_text_normalises_as_the_text(retype: object) -> None:
    expected = normalised(PLAIN.replace("plan", "plán"))
    assert normalised(retype(PLAIN)) in (normalised(PLAIN), expected)  # type: ignore[operator]


texts = st.text(alphabet=st.characters(max_codepoint=0x2FFFF, exclude_categories=["Cs"]), max_size=60)


@given(texts)
@settings(max_examples=300, deadline=None)
def test_positions_point_back_into_the_text_in_order(text: str) -> None:
    flat, origin = normalise(text)
    assert len(flat) == len(origin)
    assert origin == sorted(origin) and all(0 <= i < len(text) for i in origin)


@given(texts)
@settings(max_examples=300, deadline=None)
def test_normalising_twice_changes_nothing(text: str) -> None:
    once = normalised(text)
    assert normalised(once) == once


@given(texts)
@settings(max_examples=300, deadline=None)
def test_no_whitespace_format_character_or_non_ascii_digit_survives(text: str) -> None:
    flat = normalised(text)
    assert not any(c.isspace() or unicodedata.category(c) == "Cf" for c in flat)
    assert all(c.isascii() for c in flat if unicodedata.decimal(c, None) is not None)


@given(texts, texts, texts)
@settings(max_examples=300, deadline=None)
def test_a_piece_of_a_text_is_a_piece_of_it_normalised(before: str, piece: str, after: str) -> None:
    """What quote detection needs: a quote (normalised alone) is found in the normalised text it was taken from."""
    assert normalised(piece) in normalised(before + piece + after)


@given(texts, st.lists(st.sampled_from(["\u200b", "\u200d", "\u00ad", "\u2066", " ", "\n", "\t"]), max_size=8))
@settings(max_examples=300, deadline=None)
def test_zero_width_and_whitespace_inserted_anywhere_change_nothing(text: str, noise: list[str]) -> None:
    noisy = "".join(c + (noise[i] if i < len(noise) else "") for i, c in enumerate(text))
    assert normalised(noisy) == normalised(text)
