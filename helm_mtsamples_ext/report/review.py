"""The review page: report.html, one self-contained file a clinician opens from disk to read contested notes.

Per note: the operative note (collapsed), the reference, each model's answer and each judge's three scores with
explanations side by side; filters by model, specialty and section; notes sorted by judge disagreement, the
largest spread of judge rewards first, so the notes where the judges disagree most are read first. With one judge
there is no disagreement: no badge, and notes sorted by name. References and answers longer than a few lines show
those lines and fold the rest (eight notes fully expanded made a 17,000-px page); control runs are labelled.

Rendered by Jinja2 (a maintained template engine, not string concatenation) with autoescaping on: notes,
answers and judge explanations are untrusted text, and a `<script>` in any of them must show as text. CSS and
JS are inline and the page holds no URL, so it works offline and fetches nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pandas as pd

from helm_mtsamples_ext.report.audit import PADDED, REFERENCE, SHUFFLED, TRUNCATED, control_kind
from helm_mtsamples_ext.report.rating_sample import EVERY_ANSWER, RatingItem, RatingRound, rating_items
from helm_mtsamples_ext.report.ties import settled
from helm_mtsamples_ext.rubric import DIMENSIONS, QUESTIONS

TEMPLATE = "review.html.j2"
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


@dataclass(frozen=True)
class JudgeView:
    name: str
    status: str
    """ok, failed or empty_answer (as in instances.csv)."""
    reward: float | None
    scores: tuple[tuple[str, int | None, str], ...]
    """(dimension, valid score or None, explanation) for each dimension."""
    failure: str


@dataclass(frozen=True)
class AnswerView:
    model: str
    panel: str
    text: Folded
    reward: float | None
    spread: float | None
    """Largest minus smallest judge reward among the judges that counted; None with fewer than two."""
    judges: tuple[JudgeView, ...]

    @property
    def control(self) -> str:
        """What a control run's answer is ("" for a real model), so nobody reads it as a model's plan."""
        return CONTROL_LABELS.get(control_kind(self.model), "")


@dataclass(frozen=True)
class NoteView:
    note: str
    note_id: str
    specialty: str
    section: str
    text: str
    reference: Folded
    answers: tuple[AnswerView, ...]

    @property
    def spread(self) -> float | None:
        """The note's disagreement: the largest spread over its answers."""
        spreads = [a.spread for a in self.answers if a.spread is not None]
        return max(spreads) if spreads else None


def _number(value: object) -> float | None:
    return None if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]


def reward_spread(rewards: pd.Series) -> float | None:
    """max - min of the judges' rewards that exist; None when fewer than two judges counted.

    Settled (ties.settled) so that equal spreads sort as equal (1.0 - 0.8 and 0.6 - 0.4 differ in the last bit).
    """
    valid = rewards.dropna()
    return settled(float(valid.max() - valid.min())) if len(valid) >= 2 else None


def _judge(row: pd.Series) -> JudgeView:
    scores = tuple(
        (dim, None if pd.isna(row[dim]) else int(row[dim]), str(row.get(f"{dim}_explanation") or ""))
        for dim in DIMENSIONS
    )
    return JudgeView(str(row["judge"]), str(row["status"]), _number(row["judge_reward"]), scores, str(row["failure"]))


def _answer(rows: pd.DataFrame) -> AnswerView:
    first = rows.iloc[0]
    return AnswerView(
        model=str(first["model"]),
        panel=str(first["panel"]),
        text=fold(str(first["answer"])),
        reward=_number(first["note_reward"]),
        spread=reward_spread(rows["judge_reward"]),
        judges=tuple(_judge(row) for _, row in rows.iterrows()),
    )


def several_judges(instances: pd.DataFrame) -> bool:
    """Whether any answer was judged by more than one judge: only then is there a disagreement to show."""
    return bool(instances.groupby(["run", "note_id"])["judge"].nunique().gt(1).any()) if len(instances) else False


def review_notes(instances: pd.DataFrame) -> list[NoteView]:
    """The notes of the report's per-judge table, most contested first (then by name); unscored spreads last.
    With one judge per answer nothing is contested, and the notes are in name order."""
    notes = []
    for _, rows in instances.groupby(["extraction", "note_id"], sort=False):
        first = rows.iloc[0]
        answers = tuple(_answer(group) for _, group in rows.groupby(["panel", "model"], sort=True))
        notes.append(
            NoteView(
                note=str(first["note"]),
                note_id=str(first["note_id"]),
                specialty=str(first["specialty"]),
                section=str(first["extracted_section"]),
                text=str(first["note_text"]),
                reference=fold(str(first["reference"])),
                answers=answers,
            )
        )
    if not several_judges(instances):
        return sorted(notes, key=lambda n: (n.note, n.note_id))
    return sorted(notes, key=lambda n: (-(n.spread if n.spread is not None else -math.inf), n.note, n.note_id))


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("helm_mtsamples_ext.report", "templates"),
        autoescape=True,  # every value is untrusted text; nothing is marked safe
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@dataclass(frozen=True)
class RatingPage:
    """The rating mode's answers (rating_sample.py), in the order every rater starts with, and the order's seed."""

    items: list[RatingItem]
    seed: int

    @property
    def n_shared(self) -> int:
        return sum(item.shared for item in self.items)


def render_review(instances: pd.DataFrame, suite: str, sample: RatingRound = EVERY_ANSWER) -> str:
    notes = review_notes(instances)
    rating = RatingPage(rating_items(instances, sample.n, sample.seed, sample.overlap), sample.seed)
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            suite=suite,
            notes=notes,
            models=sorted({a.model for n in notes for a in n.answers}),
            specialties=sorted({n.specialty for n in notes}),
            sections=sorted({n.section for n in notes}),
            dimensions=DIMENSIONS,
            rating=rating,
            rubric=QUESTIONS,
            several_judges=several_judges(instances),
        )
    )


def write_review(instances: pd.DataFrame, path: Path, suite: str, sample: RatingRound = EVERY_ANSWER) -> None:
    path.write_text(render_review(instances, suite, sample), encoding="utf-8")
