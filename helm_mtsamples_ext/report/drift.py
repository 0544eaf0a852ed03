"""Pure: would the judge still say this? A seeded sample of judged answers, and each judge's verdicts then and now.

A hosted judge changes behind a fixed name, so a leaderboard judged months ago may not be comparable with a model
judged today. ``python -m helm_mtsamples_ext.recheck`` asks each judge again, live, about a sample of answers it
already judged; this module draws that sample and compares the two verdicts per judge:
- ``same_verdict_rate``: the share of answers whose three scores are identical then and now (an invalid dimension,
  recorded as None, is the same only as None);
- ``mean_abs_diff``: the mean absolute score difference over the three dimensions, where both scored it;
- an answer counts (``n``) for a judge that gave a verdict both times; a judge that fails now is counted apart
  (``failed_now``), never as a changed verdict.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from helm_mtsamples_ext.record import FAILED, REPORTED_MODEL, STATUS, SYSTEM_FINGERPRINT
from helm_mtsamples_ext.rubric import DIMENSIONS, normalise_score

K = TypeVar("K", bound=Hashable)

DRIFT_FILE = "judge_drift.csv"
DRIFT_COLUMNS = (
    "panel",
    "judge",
    "n",
    "same_verdict_rate",
    "mean_abs_diff",
    "reported_model_before",
    "reported_model_now",
    "system_fingerprint_before",
    "system_fingerprint_now",
    "n_asked",
    "failed_now",
)


def draw_sample(answers: Iterable[K], n: int, seed: int) -> list[K]:
    """``n`` of ``answers``, the same for the same answers and seed whatever order they were read in."""
    pool = sorted(set(answers), key=repr)
    if n > len(pool):
        raise ValueError(f"a sample of {n} from {len(pool)} answers")
    return sorted(random.Random(seed).sample(pool, n), key=repr)


@dataclass(frozen=True)
class Said:
    """One judge on one answer: its three scores (None for a dimension it left invalid), or None when it gave no
    verdict; and the model and fingerprint its server reported (None when it sent none, and in a record written
    before they were kept)."""

    scores: tuple[int | None, ...] | None
    reported_model: str | None = None
    system_fingerprint: str | None = None

    @classmethod
    def of(cls, entry: object) -> Said:
        """From a judge entry of the record (its dict form, as scenario_state.json holds it)."""
        if not isinstance(entry, Mapping):
            return cls(None)
        scores = tuple(normalise_score(entry.get(dim)) for dim in DIMENSIONS)
        judged = entry.get(STATUS) != FAILED and any(s is not None for s in scores)
        return cls(scores if judged else None, _text(entry.get(REPORTED_MODEL)), _text(entry.get(SYSTEM_FINGERPRINT)))


@dataclass(frozen=True)
class Recheck:
    """One judge asked again about one answer."""

    panel: str
    judge: str
    then: Said
    now: Said


@dataclass(frozen=True)
class Drift:
    """One judge's verdicts then and now over the sample (one row of judge_drift.csv)."""

    panel: str
    judge: str
    n: int
    same_verdict_rate: float | None
    mean_abs_diff: float | None
    reported_model_before: str
    reported_model_now: str
    system_fingerprint_before: str
    system_fingerprint_now: str
    n_asked: int
    failed_now: int

    def row(self) -> dict[str, Any]:
        return {column: getattr(self, column) for column in DRIFT_COLUMNS}


def _text(value: object) -> str | None:
    return str(value) if value else None


def _distinct(values: Iterable[str | None]) -> str:
    """What the servers reported over the sample, sorted and joined by ``+`` when several; blank when none was."""
    return "+".join(sorted({v for v in values if v}))


def drift(rechecks: Sequence[Recheck]) -> list[Drift]:
    """One ``Drift`` per (panel, judge), in the order they first appear."""
    by_judge: dict[tuple[str, str], list[Recheck]] = {}
    for r in rechecks:
        by_judge.setdefault((r.panel, r.judge), []).append(r)
    rows = []
    for (panel, judge), asked in by_judge.items():
        both = [(r.then.scores, r.now.scores) for r in asked if r.then.scores is not None and r.now.scores is not None]
        diffs = [
            abs(a - b) for then, now in both for a, b in zip(then, now, strict=True) if a is not None and b is not None
        ]
        rows.append(
            Drift(
                panel=panel,
                judge=judge,
                n=len(both),
                same_verdict_rate=sum(then == now for then, now in both) / len(both) if both else None,
                mean_abs_diff=sum(diffs) / len(diffs) if diffs else None,
                reported_model_before=_distinct(r.then.reported_model for r in asked),
                reported_model_now=_distinct(r.now.reported_model for r in asked),
                system_fingerprint_before=_distinct(r.then.system_fingerprint for r in asked),
                system_fingerprint_now=_distinct(r.now.system_fingerprint for r in asked),
                n_asked=len(asked),
                failed_now=sum(r.now.scores is None for r in asked),
            )
        )
    return rows


def drift_line(d: Drift) -> str:
    """What the terminal says of one judge."""
    head = f"{d.panel} / {d.judge}:"
    failed = f", {d.failed_now} of {d.n_asked} failed now" if d.failed_now else ""
    if d.same_verdict_rate is None:
        return f"{head} no answer of the {d.n_asked} asked has a verdict both then and now{failed}"
    same = round(d.same_verdict_rate * d.n)
    diff = "n/a" if d.mean_abs_diff is None else f"{d.mean_abs_diff:.2f}"
    models = ""
    if d.reported_model_before != d.reported_model_now:
        then, now = d.reported_model_before or "not recorded", d.reported_model_now or "not reported"
        models = f"; reported model {then} then, {now} now"
    rate = f"same verdict on {same}/{d.n} answers ({d.same_verdict_rate:.0%})"
    return f"{head} {rate}, mean |difference| {diff}{failed}{models}"


def compared(
    panel: str, judges: Sequence[str], before: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]
) -> list[Recheck]:
    """Each judge on each answer, from the stored records (``before``) and the recheck's (``now``), answer by answer."""
    return [
        Recheck(panel, judge, Said.of(then.get(judge)), Said.of(again.get(judge)))
        for then, again in zip(before, now, strict=True)
        for judge in judges
    ]
