"""The review page's data: every text once, and the notes, answers, verdicts and rating sample as small records.

Printed as markup, every answer with its judges costs 11 KB and 100 DOM nodes: a 23.9 MB file and a 686,000-px page
at 16 models. So the page embeds this data once (review.py) and its script draws only the notes on screen. Texts are
stored once in a string table and records point into it, so what many answers share (a note and its reference, read
by every model; a failure reason; a model's name) costs its length once, and the file is about the size of the text
it holds. Records are lists in the order their ``FIELDS`` name (written into the data too, so the page reads them by
name). Pure: the report's instance table in, plain lists and dicts out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import pandas as pd

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.report.audit import PADDED, REFERENCE, SHUFFLED, TRUNCATED
from helm_mtsamples_ext.report.rating_sample import EVERY_ANSWER, RatingRound, answer_key
from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

FOLD_LINES = 4
"""Lines of a reference or answer shown before the rest is folded."""
FOLD_CHARS = 480
"""...or fewer, when lines are long (a wrapped line is several on screen)."""
CONTROL_LABELS = {
    REFERENCE: "control: the clinician's own plan (ceiling)",
    SHUFFLED: "control: another patient's plan (floor)",
    TRUNCATED: "control: the first third of the clinician's plan",
    PADDED: "control: the clinician's plan plus filler",
}
REWARD_PLACES = 6
"""Rewards and spreads are written rounded: 6 places show and sort them (equal settled spreads stay equal)."""

NOTE_FIELDS = ("name", "id", "specialty", "section", "text", "ref_head", "ref_rest", "ref_size")
"""A note: every field is a text (its position in ``strings``)."""
ANSWER_FIELDS = ("note", "run", "model", "panel", "control", "head", "rest", "size", "reward", "spread", "judges")
"""An answer: ``note`` is its note's position in ``notes``; ``reward`` and ``spread`` are numbers or null;
``judges`` is a list of judge records; every other field is a text."""
JUDGE_FIELDS = ("name", "status", "reward", "failure", "scores", "explanations")
"""A judge's verdict on one answer: ``scores`` holds a valid score or null per dimension, ``explanations`` a text
per dimension, ``reward`` a number or null; the rest are texts."""
RATING_FIELDS = ("answer", "shared", "key", "inclusion_probability")
"""An answer offered for rating, in the order raters start with: its position in ``answers``, whether every rater
gets it (0 or 1), the key its rating is stored under (rating_sample.answer_key; a literal, not a text), and its
chance of being in this sample (rating_sample.choose; a number, exported with the rating)."""


@dataclass(frozen=True)
class Folded:
    """A text shown as its first lines (``head``) with the rest behind a toggle; ``rest`` is "" when short."""

    head: str
    rest: str

    @property
    def lines(self) -> int:
        return (self.head + self.rest).count("\n") + 1

    @property
    def size(self) -> str:
        """What "show all" shows: its lines, or for one long line (many references are) its characters."""
        return f"{self.lines} lines" if self.lines > 1 else f"{len(self.head + self.rest):,} characters"


def fold(text: str, max_lines: int = FOLD_LINES, max_chars: int = FOLD_CHARS) -> Folded:
    """Split ``text`` after ``max_lines`` lines or about ``max_chars`` characters (at a line end, else a space)."""
    if text.count("\n") < max_lines and len(text) <= max_chars:
        return Folded(text, "")
    cut = 0
    for _ in range(max_lines):
        end = text.find("\n", cut)
        if end < 0 or end > max_chars:
            break
        cut = end + 1
    if cut == 0:
        space = text.rfind(" ", 0, max_chars)
        cut = space + 1 if space > 0 else max_chars
    return Folded(text[:cut], text[cut:])


class Strings:
    """The string table: each distinct text once, a record holding its position."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, text: object) -> int:
        key = text if isinstance(text, str) else "" if _missing(text) else str(text)
        at = self._at.get(key)
        if at is None:
            at = self._at[key] = len(self.table)
            self.table.append(key)
        return at

    def folded(self, text: object) -> list[int]:
        """(head, rest, size) of a folded text; size is "" when nothing is folded."""
        parts = fold(str(text or ""))
        return [self(parts.head), self(parts.rest), self(parts.size if parts.rest else "")]


def _missing(value: object) -> bool:
    """None, NaN or pandas' NA: a score or reward that does not exist (a text is never missing)."""
    return not isinstance(value, str) and bool(pd.isna(value))


def _number(value: object) -> float | None:
    return None if _missing(value) else round(float(value), REWARD_PLACES)  # type: ignore[arg-type]


def reward_spread(rewards: Iterable[float | None]) -> float | None:
    """max - min of the judges' rewards that exist; None when fewer than two judges counted.

    Rounded (ties.rounded_for_ranks) so that equal spreads sort as equal (1.0 - 0.8 and 0.6 - 0.4 differ in the last
    bit).
    """
    valid = [float(r) for r in rewards if not _missing(r)]  # type: ignore[arg-type]
    return rounded_for_ranks(max(valid) - min(valid)) if len(valid) >= 2 else None


def several_judges(instances: pd.DataFrame) -> bool:
    """Whether any answer was judged by more than one judge: only then is there a disagreement to show."""
    return bool(instances.groupby(["run", "note_id"])["judge"].nunique().gt(1).any()) if len(instances) else False


def _judge(row: dict[str, Any], text: Strings) -> list[Any]:
    scores = [None if _missing(row[dim]) else int(row[dim]) for dim in DIMENSIONS]
    explanations = [text(row[f"{dim}_explanation"] or "") for dim in DIMENSIONS]
    return [
        text(row["judge"]),
        text(row["status"]),
        _number(row["judge_reward"]),
        text(row["failure"]),
        scores,
        explanations,
    ]


def _note(first: dict[str, Any], text: Strings) -> list[int]:
    fields = ("note", "note_id", "specialty", "extracted_section", "note_text")
    return [*(text(first[field]) for field in fields), *text.folded(first["reference"])]


def _answer(note: int, rows: list[dict[str, Any]], text: Strings) -> list[Any]:
    first = rows[0]
    return [
        note,
        *(text(first[field]) for field in ("run", "model", "panel")),
        text(CONTROL_LABELS.get(control_kind(str(first["model"])), "")),
        *text.folded(first["answer"]),
        _number(first["note_reward"]),
        reward_spread(row["judge_reward"] for row in rows),
        [_judge(row, text) for row in rows],
    ]


def _rating(instances: pd.DataFrame, sample: RatingRound, answer_at: dict[tuple[str, str], int]) -> list[list[Any]]:
    chosen = sample.chosen(instances)
    texts = instances.groupby(["run", "note_id"], sort=False)["answer"].first()
    return [
        [
            answer_at[(str(run), str(note_id))],
            int(bool(shared)),
            answer_key(str(run), str(note_id), str(texts[(run, note_id)])),
            float(probability),
        ]
        for run, note_id, shared, probability in chosen.itertuples(index=False)
    ]


NOTE_KEY = ("note", "note_id", "extraction")
ANSWER_KEY = ("panel", "model", "run")
COLUMNS = [
    *NOTE_KEY, *ANSWER_KEY, "specialty", "extracted_section", "note_text", "reference", "answer", "note_reward",
    "judge", "status", "judge_reward", "failure", *DIMENSIONS, *(f"{dim}_explanation" for dim in DIMENSIONS),
]  # fmt: skip


def review_data(instances: pd.DataFrame, sample: RatingRound = EVERY_ANSWER) -> dict[str, Any]:
    """The page's data: notes in name order (the page sorts them), each note's answers by panel, model and run."""
    text = Strings()
    notes: list[list[int]] = []
    answers: list[list[Any]] = []
    answer_at: dict[tuple[str, str], int] = {}
    # Plain records, sorted once: pandas' per-group row access cost seconds at 16 models.
    ordered = instances.sort_values([*NOTE_KEY, *ANSWER_KEY], kind="stable", key=lambda column: column.astype(str))
    records = ordered[COLUMNS].to_dict("records")
    for _, note_rows in groupby(records, key=lambda row: tuple(str(row[k]) for k in NOTE_KEY)):
        rows = list(note_rows)
        note = len(notes)
        notes.append(_note(rows[0], text))
        for _, answer_rows in groupby(rows, key=lambda row: tuple(str(row[k]) for k in ANSWER_KEY)):
            group = list(answer_rows)
            answer_at[(str(group[0]["run"]), str(group[0]["note_id"]))] = len(answers)
            answers.append(_answer(note, group, text))
    rating = _rating(instances, sample, answer_at)
    return {
        "fields": {"note": NOTE_FIELDS, "answer": ANSWER_FIELDS, "judge": JUDGE_FIELDS, "rating": RATING_FIELDS},
        "dimensions": list(DIMENSIONS),
        "several_judges": several_judges(instances),
        "notes": notes,
        "answers": answers,
        "rating": rating,
        "strings": text.table,
    }
