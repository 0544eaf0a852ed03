"""The reward arithmetic of MTSamples Procedures, free of HELM's runtime.

The metric (metric.py) and the report module both score the annotator's per-note record with
these functions, so a number in a HELM stats file and a number in report.md cannot drift apart.

The rules, in one place:
- a judge's dimension counts only if its score is an integer 1-5 (4, 4.0 and "4" are all 4:
  ``rubric.normalise_score``);
- a judge counts only if it did not fail and gave at least one valid dimension; its reward is the
  mean of score/5 over its valid dimensions;
- the note's reward is the mean over counting judges, and does not exist when none counted: a
  failed judge is missing data, never a low score;
- an empty model answer is the model's failure, not the judges': reward 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import krippendorff
import numpy as np

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS, MAX_SCORE, MIN_SCORE, normalise_score
from helm_mtsamples_ext.scoring.same_verdict import is_same_verdict

REWARD = f"{names.STAT_PREFIX}_reward"
UNJUDGED = f"{names.STAT_PREFIX}_unjudged"
EMPTY_ANSWER = f"{names.STAT_PREFIX}_empty_answer"
JUDGE_FAILURES = f"{names.STAT_PREFIX}_judge_failures"
JUDGE_FAILURE_RATE = f"{names.STAT_PREFIX}_judge_failure_rate"
SAME_VERDICT_RATE = f"{names.STAT_PREFIX}_same_verdict"
# MedHELM's schema (schema_medhelm.yaml) shows this scenario by this name: the panel's mean 1-5 score.
JURY_SCORE = f"{names.STAT_PREFIX}_accuracy"


def dimension_stat_name(dimension: str) -> str:
    """Panel mean 1-5 score of one dimension for a note."""
    return f"{names.STAT_PREFIX}_judge_{dimension}"


def alpha_stat_name(dimension: str) -> str:
    """Run-level Krippendorff's alpha of one dimension."""
    return f"{names.STAT_PREFIX}_alpha_{dimension}"


def slugify(judge_name: str) -> str:
    """Stat-name-safe form of a judge name: lowercase, every non-alphanumeric becomes "_"."""
    return re.sub(r"[^a-z0-9]", "_", judge_name.lower())


def judge_reward_stat_name(judge_name: str) -> str:
    """Reward given by one judge; the slug keeps HELM's stat names and the frontend's URLs plain."""
    return f"{REWARD}_{slugify(judge_name)}"


def judge_reward_stat_names(judge_names: Sequence[str]) -> dict[str, str]:
    """The per-judge stat name of each panel judge.

    Names whose slugs clash ("a.b", "a-b") get "_2", "_3"... in panel order, so two judges never
    merge into one stat; raising instead would throw away a run whose model and judges already ran.
    """
    names: dict[str, str] = {}
    for judge in judge_names:
        base = candidate = judge_reward_stat_name(judge)
        suffix = 2
        while candidate in names.values():
            candidate = f"{base}_{suffix}"
            suffix += 1
        names.setdefault(judge, candidate)
    return names


def instance_stat_names(judge_names: Sequence[str]) -> list[str]:
    """Every per-note stat name the metric can emit for this panel."""
    names = [REWARD, JURY_SCORE, UNJUDGED, EMPTY_ANSWER, JUDGE_FAILURES, JUDGE_FAILURE_RATE, SAME_VERDICT_RATE]
    names += [dimension_stat_name(d) for d in DIMENSIONS]
    names += list(judge_reward_stat_names(judge_names).values())
    return names


def run_stat_names() -> list[str]:
    """Every run-level stat name the metric can emit."""
    return [alpha_stat_name(d) for d in DIMENSIONS]


@dataclass(frozen=True)
class JudgeScores:
    """One judge's valid scores for one note; empty scores means the judge failed on it."""

    name: str
    scores: dict[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return not self.scores

    @property
    def reward(self) -> float | None:
        """Mean of score/5 over the valid dimensions (the seed's (a/5 + c/5 + l/5)/3)."""
        if not self.scores:
            return None
        return sum(s / MAX_SCORE for s in self.scores.values()) / len(self.scores)


@dataclass(frozen=True)
class NoteScores:
    """The panel's verdict on one note, with every judge of the panel in panel order."""

    judges: tuple[JudgeScores, ...] = ()
    empty_answer: bool = False
    same_verdict: int = 0
    """Judges whose verdict on this note was invalid as the same verdict given to different answers
    (same_verdict.py); they are among the failed judges too."""

    @property
    def panel_size(self) -> int:
        return len(self.judges)

    @property
    def valid_judges(self) -> tuple[JudgeScores, ...]:
        return tuple(j for j in self.judges if not j.failed)

    @property
    def failures(self) -> int:
        """Judges that gave nothing usable; none when no judge was asked (empty answer)."""
        return 0 if self.empty_answer else sum(1 for j in self.judges if j.failed)

    @property
    def unjudged(self) -> bool:
        return not self.empty_answer and not self.valid_judges

    @property
    def reward(self) -> float | None:
        if self.empty_answer:
            return 0.0
        rewards = [j.reward for j in self.valid_judges if j.reward is not None]
        return sum(rewards) / len(rewards) if rewards else None

    @property
    def mean_score(self) -> float | None:
        """The jury score MedHELM reports: the mean of every valid 1-5 score over judges and dimensions.

        HELM's LLMJuryMetric pools the scores the same way but truncates each with int() and scores a
        note no judge answered as 1; here only valid scores count, so an unjudged note has none. An
        empty answer gets the lowest score, as its reward is 0: leaving it out would rank a model that
        answers nothing above one that answers badly.
        """
        if self.empty_answer:
            return float(MIN_SCORE)
        scores = [s for j in self.judges for s in j.scores.values()]
        return sum(scores) / len(scores) if scores else None

    @property
    def reward_failed_at_min(self) -> float:
        """The reward with each failed judgment at the scale's minimum (``failed_at_min``), 0 for an empty answer."""
        return failed_at_min([None if j.failed else j.reward for j in self.judges], self.empty_answer)

    def dimension_mean(self, dimension: str) -> float | None:
        """Panel mean 1-5 score over the judges with a valid score for this dimension."""
        scores = [j.scores[dimension] for j in self.judges if dimension in j.scores]
        return sum(scores) / len(scores) if scores else None


FLOOR_REWARD = MIN_SCORE / MAX_SCORE
"""A failed judgment at the scale's minimum: score 1 on every dimension."""


def failed_at_min(judge_rewards: Sequence[float | None], empty_answer: bool) -> float:
    """A note's reward with each failed judgment (a reward of None) at the scale's minimum, ``FLOOR_REWARD``; 0 for an
    empty answer. What a lost judgment cannot push the reward below: the per-note rule of the report's
    ``reward_failed_at_min`` (report/answer_failures.bounded_rewards), which the doors without HELM give per note."""
    if empty_answer:
        return 0.0
    floored = [FLOOR_REWARD if r is None or math.isnan(r) else r for r in judge_rewards]
    return sum(floored) / len(floored) if floored else FLOOR_REWARD


def score_note(record: object, judge_names: Sequence[str] = ()) -> NoteScores:
    """Score the annotator's record for one note (its dict, read through record.NoteRecord, or a NoteRecord:
    the run-level readers pass the record after ``same_verdict.without_same_verdicts``).

    `judge_names` is the panel; when empty, the judges found in the record are the panel. A panel
    judge absent from the record, marked failed, or without a valid dimension counts as failed.
    Keys the contract does not know are ignored. A record that is not a mapping scores as a note
    every judge failed on.
    """
    note = record if isinstance(record, NoteRecord) else NoteRecord.from_dict(record)
    if note is None:
        return NoteScores(judges=tuple(JudgeScores(name) for name in judge_names))
    if note.empty_answer:
        return NoteScores(judges=tuple(JudgeScores(name) for name in judge_names), empty_answer=True)
    judges: list[JudgeScores] = []
    same_verdict = 0
    for name in list(judge_names) or list(note.judges):
        if note.judge_failed(name):
            judges.append(JudgeScores(name))
            same_verdict += name in note.judges and is_same_verdict(note.judges[name])
            continue
        recorded = note.judges[name].scores
        scores = {d: s for d in DIMENSIONS if (s := normalise_score(recorded.get(d))) is not None}
        judges.append(JudgeScores(name, scores))
    return NoteScores(judges=tuple(judges), same_verdict=same_verdict)


def ratings_matrix(ratings: Iterable[tuple[str, Hashable, float | None]]) -> tuple[list[str], list[list[float]]]:
    """Judges x notes matrix from (judge, note, score) triples, NaN where a judge gave no score: the one
    place an agreement matrix is built (the metric's and the report's alpha both come from here).

    Judges and notes are listed in order of first appearance, so panels that differ across notes line up."""
    judges: dict[str, int] = {}
    notes: dict[Hashable, int] = {}
    cells: list[tuple[int, int, float]] = []
    for judge, note, score in ratings:
        row = judges.setdefault(judge, len(judges))
        col = notes.setdefault(note, len(notes))
        if score is not None and not (isinstance(score, float) and math.isnan(score)):
            cells.append((row, col, float(score)))
    matrix = [[math.nan] * len(notes) for _ in judges]
    for row, col, score in cells:
        matrix[row][col] = score
    return list(judges), matrix


def rating_matrix(notes: Sequence[NoteScores], dimension: str) -> tuple[list[str], list[list[float]]]:
    """Judges x notes ratings of one dimension (NaN where a judge gave no valid score)."""
    return ratings_matrix(
        (judge.name, col, judge.scores.get(dimension)) for col, note in enumerate(notes) for judge in note.judges
    )


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha, or why it is undefined (value None, reason set)."""

    value: float | None
    reason: str = ""
    pairable_notes: int = 0
    judges: int = 0


def ordinal_alpha(matrix: Sequence[Sequence[float]]) -> AlphaResult:
    """Ordinal Krippendorff's alpha over a judges x notes matrix (NaN = missing).

    Only notes with at least two ratings carry information about agreement; the checks name the
    cases where the statistic is 0/0 or meaningless instead of letting NaN reach the leaderboard.
    """
    data = np.asarray(matrix, dtype=float)
    if data.ndim != 2 or data.size == 0:
        return AlphaResult(None, "no ratings")
    rated = ~np.isnan(data)
    judges = int(rated.any(axis=1).sum())
    pairable = rated.sum(axis=0) >= 2
    n_pairable = int(pairable.sum())
    if judges < 2:
        return AlphaResult(None, f"only {judges} judge(s) gave a valid score", n_pairable, judges)
    if n_pairable < 2:
        return AlphaResult(None, f"only {n_pairable} note(s) were rated by two or more judges", n_pairable, judges)
    values = data[:, pairable][rated[:, pairable]]
    if np.all(values == values[0]):
        return AlphaResult(None, f"no variation: every paired score is {int(values[0])}", n_pairable, judges)
    value = float(
        krippendorff.alpha(
            reliability_data=data,
            value_domain=list(range(MIN_SCORE, MAX_SCORE + 1)),
            level_of_measurement="ordinal",
        )
    )
    if not math.isfinite(value):
        return AlphaResult(None, f"alpha is not finite ({value})", n_pairable, judges)
    return AlphaResult(value, "", n_pairable, judges)
