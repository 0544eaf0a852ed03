"""Pure: would the judge still say this? A seeded sample of judged answers, and each judge's verdicts then and now.

A hosted judge changes behind a fixed name, so a leaderboard judged months ago may not be comparable with a model
judged today. ``python -m helm_mtsamples_ext.recheck`` asks each judge again, live, about a sample of answers it
already judged; this module draws that sample and compares the two verdicts per judge:
- ``same_verdict_rate``: the share of answers whose three scores are identical then and now (an invalid dimension,
  recorded as None, is the same only as None);
- ``mean_abs_diff``: the mean absolute score difference over the three dimensions, where both scored it;
- an answer counts (``n``) for a judge that gave a verdict both times; a judge that fails now is counted apart
  (``failed_now``), never as a changed verdict.

Why a second ask: a judge served with sampling (or batched on a GPU) does not give the same verdict twice even
when nothing changed, so a same-verdict rate of 70% may be the judge's noise, not drift. The recheck asks each
sampled answer twice; the two replies of today measure that noise (``repeat_same_verdict_rate``,
``repeat_mean_abs_diff``), and the figures to act on are beyond it:
- ``reward_change``: the mean of (today's reward, both asks averaged) minus the stored one, signed (positive: the
  judge is kinder now), with a Student's t interval over the sampled answers; its noise is zero-mean, so the
  interval is all it needs;
- ``excess_abs_diff``: the mean |then - now| minus the mean |now - again| per answer (then, now and again are
  alike when nothing changed), with its interval: how much more the verdicts moved than the judge's replays do.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from scipy import stats

from helm_mtsamples_ext.common.record import FAILED, REPORTED_MODEL, STATUS, SYSTEM_FINGERPRINT
from helm_mtsamples_ext.common.rubric import DIMENSIONS, MAX_SCORE, normalise_score
from helm_mtsamples_ext.stats.evidence import MINIMUMS, too_few
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

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
    "reward_change",
    "change_ci_low",
    "change_ci_high",
    "n_repeated",
    "repeat_same_verdict_rate",
    "repeat_mean_abs_diff",
    "excess_abs_diff",
    "excess_ci_low",
    "excess_ci_high",
    "reading",
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
    again: Said | None = None
    """Today's second reply to the same prompt (None when asked once)."""


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
    reward_change: float | None = None
    change_ci_low: float | None = None
    change_ci_high: float | None = None
    n_repeated: int = 0
    repeat_same_verdict_rate: float | None = None
    repeat_mean_abs_diff: float | None = None
    excess_abs_diff: float | None = None
    excess_ci_low: float | None = None
    excess_ci_high: float | None = None
    reading: str = ""

    def row(self) -> dict[str, Any]:
        return {column: getattr(self, column) for column in DRIFT_COLUMNS}


def _text(value: object) -> str | None:
    return str(value) if value else None


def _distinct(values: Iterable[str | None]) -> str:
    """What the servers reported over the sample, sorted and joined by ``+`` when several; blank when none was."""
    return "+".join(sorted({v for v in values if v}))


Scores = tuple[int | None, ...]


def _reward(scores: Scores) -> float:
    """The judge's reward: the mean of score/5 over its valid dimensions (scoring.JudgeScores.reward)."""
    valid = [s for s in scores if s is not None]
    return sum(s / MAX_SCORE for s in valid) / len(valid)


def _abs_diff(a: Scores, b: Scores) -> list[int]:
    return [abs(x - y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _interval(values: list[float], settings: BootstrapSettings) -> tuple[float | None, float | None]:
    """Student's t interval of the mean over the sampled answers (none below the evidence minimum or with no
    spread). Not a percentile bootstrap: at the recheck's 20 answers it covers 89-91%, not 95%."""
    if len(values) < max(2, MINIMUMS.notes_for_verdict):
        return (None, None)
    array = np.array(values, dtype=float)
    spread = float(array.std(ddof=1)) / np.sqrt(array.size)
    if rounded_for_ranks(spread) == 0:
        return (None, None)
    half = float(stats.t.ppf(0.5 + settings.confidence / 2, array.size - 1)) * spread
    return (float(array.mean()) - half, float(array.mean()) + half)


def _reading(changes: list[float], low: float | None, high: float | None) -> str:
    """The signed verdict on the change in reward, beyond the judge's noise, in words."""
    short = too_few(len(changes), "answers")
    if short:
        return short
    if len({rounded_for_ranks(c) for c in changes}) == 1:  # every answer moved alike: no spread, no interval
        change = rounded_for_ranks(changes[0])
        return "no change" if change == 0 else f"{'kinder' if change > 0 else 'harsher'} now on every answer"
    if low is not None and high is not None and rounded_for_ranks(low) > 0:
        return "kinder now"
    if low is not None and high is not None and rounded_for_ranks(high) < 0:
        return "harsher now"
    return "no change beyond its noise"


def _figures(asked: Sequence[Recheck], settings: BootstrapSettings) -> dict[str, Any]:
    """The signed change in reward and the change beyond the judge's replay noise, with their intervals."""
    changes, repeats, same, excess = [], [], [], []
    for r in asked:
        then, now = r.then.scores, r.now.scores
        again = r.again.scores if r.again is not None else None
        if then is None or now is None:
            continue
        today = (_reward(now) + _reward(again)) / 2 if again is not None else _reward(now)
        changes.append(today - _reward(then))
        if again is not None:
            noise = _abs_diff(now, again)
            repeats += noise
            same.append(now == again)
            moved = _abs_diff(then, now)
            if moved and noise:
                excess.append(sum(moved) / len(moved) - sum(noise) / len(noise))
    change_low, change_high = _interval(changes, settings)
    excess_low, excess_high = _interval(excess, settings)
    return {
        "reward_change": _mean(changes),
        "change_ci_low": change_low,
        "change_ci_high": change_high,
        "n_repeated": len(same),
        "repeat_same_verdict_rate": _mean([float(x) for x in same]),
        "repeat_mean_abs_diff": _mean([float(x) for x in repeats]),
        "excess_abs_diff": _mean(excess),
        "excess_ci_low": excess_low,
        "excess_ci_high": excess_high,
        "reading": _reading(changes, change_low, change_high),
    }


def drift(rechecks: Sequence[Recheck], settings: BootstrapSettings | None = None) -> list[Drift]:
    """One ``Drift`` per (panel, judge), in the order they first appear."""
    settings = settings or BootstrapSettings()
    by_judge: dict[tuple[str, str], list[Recheck]] = {}
    for r in rechecks:
        by_judge.setdefault((r.panel, r.judge), []).append(r)
    rows = []
    for (panel, judge), asked in by_judge.items():
        both = [(r.then.scores, r.now.scores) for r in asked if r.then.scores is not None and r.now.scores is not None]
        diffs = [d for then, now in both for d in _abs_diff(then, now)]
        rows.append(
            Drift(
                panel=panel,
                judge=judge,
                n=len(both),
                same_verdict_rate=sum(then == now for then, now in both) / len(both) if both else None,
                mean_abs_diff=_mean([float(d) for d in diffs]),
                reported_model_before=_distinct(r.then.reported_model for r in asked),
                reported_model_now=_distinct(r.now.reported_model for r in asked),
                system_fingerprint_before=_distinct(r.then.system_fingerprint for r in asked),
                system_fingerprint_now=_distinct(r.now.system_fingerprint for r in asked),
                n_asked=len(asked),
                failed_now=sum(r.now.scores is None for r in asked),
                **_figures(asked, settings),
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
    noise = ""
    if d.repeat_same_verdict_rate is not None:
        repeat = round(d.repeat_same_verdict_rate * d.n_repeated)
        noise = f" (asked twice today: same verdict on {repeat}/{d.n_repeated})"
    change = ""
    if d.reward_change is not None:
        interval = "" if d.change_ci_low is None else f" [{d.change_ci_low:+.3f}, {d.change_ci_high:+.3f}]"
        change = f"; reward {d.reward_change:+.3f}{interval}: {d.reading}"
    return f"{head} {rate}{noise}, mean |difference| {diff}{change}{failed}{models}"


def compared(
    panel: str,
    judges: Sequence[str],
    before: Sequence[Mapping[str, Any]],
    now: Sequence[Mapping[str, Any]],
    again: Sequence[Mapping[str, Any]] | None = None,
) -> list[Recheck]:
    """Each judge on each answer, from the stored records (``before``) and the recheck's (``now`` and, asked a second
    time, ``again``), answer by answer."""
    seconds: Sequence[Mapping[str, Any] | None] = again if again is not None else [None] * len(now)
    return [
        Recheck(
            panel,
            judge,
            Said.of(then.get(judge)),
            Said.of(today.get(judge)),
            None if second is None else Said.of(second.get(judge)),
        )
        for then, today, second in zip(before, now, seconds, strict=True)
        for judge in judges
    ]
