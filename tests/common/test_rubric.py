"""The rubric: three dimensions, each with its question, scored on an integer scale of 1 to 5."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from helm_mtsamples_ext.common.rubric import DIMENSIONS, MAX_SCORE, MIN_SCORE, QUESTIONS, normalise_score


def test_the_dimensions_are_accuracy_completeness_clarity_in_that_order() -> None:
    """Records, prompts and tables list them in this order; stored records and stat names use these words."""
    assert DIMENSIONS == ("accuracy", "completeness", "clarity")


def test_every_dimension_has_one_question_in_dimension_order() -> None:
    assert tuple(QUESTIONS) == DIMENSIONS
    assert all(question.endswith("?") for question in QUESTIONS.values())


def test_the_scale_is_one_to_five() -> None:
    assert (MIN_SCORE, MAX_SCORE) == (1, 5)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(4, 4, id="an int"),
        pytest.param(4.0, 4, id="an integral float"),
        pytest.param("4", 4, id="a numeric string"),
        pytest.param(" 2 ", 2, id="a numeric string with spaces"),
        pytest.param("5.0", 5, id="an integral float string"),
        pytest.param({"score": 3}, 3, id="a record's dimension, read at its score"),
        pytest.param(1, 1, id="the lowest score"),
        pytest.param(5, 5, id="the highest score"),
        pytest.param(np.int64(3), 3, id="a numpy int"),
        pytest.param(np.float64(2.0), 2, id="a numpy integral float"),
        pytest.param(Fraction(8, 2), 4, id="an integral fraction"),
    ],
)
def test_an_integer_one_to_five_in_any_form_is_a_score(raw: Any, expected: int) -> None:
    """4, 4.0 and "4" are the score 4: judges write it in any of these forms and mean the same."""
    score = normalise_score(raw)
    assert score == expected and type(score) is int


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(4.5, id="a fraction of a point"),
        pytest.param("4.5", id="a fractional string"),
        pytest.param("four", id="a word"),
        pytest.param("4/5", id="a ratio"),
        pytest.param("N/A", id="not applicable"),
        pytest.param("", id="an empty string"),
        pytest.param(None, id="null"),
        pytest.param(True, id="true (an int to Python, not a score)"),
        pytest.param(False, id="false"),
        pytest.param(0, id="below the scale"),
        pytest.param(6, id="above the scale"),
        pytest.param(-1, id="negative"),
        pytest.param(math.nan, id="NaN"),
        pytest.param("nan", id="NaN as a string"),
        pytest.param(math.inf, id="infinity"),
        pytest.param([4], id="a list holding a score"),
        pytest.param({"score": 4.5}, id="a record's dimension with no valid score"),
        pytest.param({"value": 4}, id="a mapping without a score"),
    ],
)
def test_anything_else_is_not_a_score(raw: Any) -> None:
    """Not a score is None, never a guess: 4.5 is not rounded, 0 is not clamped, true is not 1."""
    assert normalise_score(raw) is None
