"""The rubric, in one place: what a judge is asked about a plan, on which scale, and what counts as a score.

The judges' prompt and verdict parser, the record, the reward arithmetic, the report and the clinicians'
review page all read these from here, so the judge side and the metric side agree on the rubric without
either importing the other. Pure: no I/O, no HELM.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral, Real

MIN_SCORE = 1
"""The lowest score, "very poor"."""
MAX_SCORE = 5
"""The highest score, "excellent"; a reward is score / MAX_SCORE."""

QUESTIONS: dict[str, str] = {
    "accuracy": "is the clinical advice correct and does it follow established clinical guidelines for this patient?",
    "completeness": "does it cover the important aspects of care found in the reference plan?",
    "clarity": "is it clear and organised so that clinicians can follow it easily?",
}
"""The question asked per dimension, word for word: the judges' prompt lists them and the review page shows
them to clinicians, so a human rating and a judge's answer the same question."""
DIMENSIONS: tuple[str, ...] = tuple(QUESTIONS)
"""The rubric's dimensions, in the order every prompt, record and table lists them (the questions' order)."""


@dataclass(frozen=True)
class Rubric:
    """The rubric as one value: the builders of what names a dimension or the scale (the judge prompts, the repair
    turn, the verdict schema, the ratings header) take one, so a copy with a dimension renamed shows they follow
    (tests/common/test_rubric_rename.py). ``RUBRIC`` is the one in use."""

    questions: Mapping[str, str]
    """The question per dimension, in the dimensions' order."""
    min_score: int
    max_score: int

    @property
    def dimensions(self) -> tuple[str, ...]:
        return tuple(self.questions)


RUBRIC = Rubric(QUESTIONS, MIN_SCORE, MAX_SCORE)
"""The rubric every judge is asked and every rater shown."""


def normalise_score(value: object) -> int | None:
    """The score as an int 1-5, or None when it is not one (booleans, 4.5, "four", 0, 6, NaN...).

    4, 4.0 and "4" are all 4: judges write a score in any of these forms and mean the same. A mapping is
    read at its "score" key (a record's dimension). The verdict parser applies the rule to what a judge
    wrote, and the scoring applies it again to what a record holds, so a hand-edited or older record
    cannot sneak a 4.5 or a 0 into the reward.
    """
    if isinstance(value, Mapping):
        value = value.get("score")
    if value is None or isinstance(value, bool):
        return None
    number: float
    if isinstance(value, Integral):
        number = float(int(value))
    elif isinstance(value, Real):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(number) or not number.is_integer():
        return None
    score = int(number)
    return score if MIN_SCORE <= score <= MAX_SCORE else None
