"""Which same verdicts (same_verdict.py) count for nothing, so that voiding one never raises a model's reward.

A judge giving one verdict to many different answers may not be reading them (a blind judge), or may be fairly
giving its one low verdict to junk. Voiding a low verdict raises the reward of the model that earned it, so an
answer could buy its way up by drawing a canned verdict. Two readers, two rules:

- **one run** (the metric, which sees one model): a judge's same verdicts are voided only when that does not raise
  the run's reward (mean note reward over the notes still judged); a high canned verdict goes, a low one stays.
  When voiding would leave no note judged there is nothing to compare with but the scale: the verdicts go when
  the run's reward is above the scale's middle (3 of 5: a blind judge flattering every answer, which
  ``max_unjudged`` then reports), and stay at or below it (a judge's one low verdict for junk);
- **a suite** (the report, which sees every model): first, a verdict above the scale's middle that the judge gave
  to ``MIN_ANSWERS`` different answers of ``MIN_MODELS`` or more models is void on every note holding it, whichever
  model it scored; then each run is read as the metric reads it. So the report and HELM's stats agree unless a
  verdict crosses models. A low verdict crossing models stays: junk answers drawing the canned low verdict a
  judge also gives another model's junk (a shuffled control's, say) must not void it for both.

Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.common.rubric import MAX_SCORE, MIN_SCORE
from helm_mtsamples_ext.scoring.reward import score_note
from helm_mtsamples_ext.scoring.same_verdict import MIN_MODELS, same_verdict_judges, without_same_verdicts

MIDDLE = (MIN_SCORE + MAX_SCORE) / 2 / MAX_SCORE
"""The scale's middle as a reward: what a run's same verdicts are weighed against when nothing else is judged."""

Notes = Sequence[tuple[str, NoteRecord | None]]


def run_reward(records: Sequence[NoteRecord | None], judges: Sequence[str]) -> float | None:
    """Mean note reward over the notes judged (the metric's reward); None when no note was."""
    rewards = [r for record in records if (r := score_note(record, judges).reward) is not None]
    return sum(rewards) / len(rewards) if rewards else None


def verdict_reward(record: NoteRecord | None, judge: str) -> float | None:
    """The reward of one judge's verdict on one note (None when it gave none)."""
    return score_note(record, [judge]).judges[0].reward if record is not None else None


def may_void(before: float | None, after: float | None) -> bool:
    """Whether voiding takes a run's reward from ``before`` to ``after`` without raising it (None: nothing judged)."""
    if before is None:
        return False
    if after is None:
        return before > MIDDLE
    return round(after, 9) <= round(before, 9)


def run_view(notes: Notes, judges: Sequence[str] = ()) -> list[NoteRecord | None]:
    """One run's records with each judge's same verdicts voided where that does not raise the run's reward."""
    records = [record for _, record in notes]
    copied = same_verdict_judges(notes)
    for judge in dict.fromkeys(j for marks in copied for j in marks):
        mine = [{j: n for j, n in marks.items() if j == judge} for marks in copied]
        voided = without_same_verdicts(list(zip((a for a, _ in notes), records, strict=True)), mine)
        after, before = run_reward(voided, judges), run_reward(records, judges)
        if may_void(before, after):
            records = voided
    return records


def suite_view(runs: Sequence[tuple[Hashable, Notes, Sequence[str]]]) -> list[list[NoteRecord | None]]:
    """Every run's records, given as (model, notes, panel) per run: verdicts crossing models void everywhere, then
    each run's own same verdicts as in ``run_view``."""
    flat = [note for _, notes, _ in runs for note in notes]
    owners = [model for model, notes, _ in runs for _ in notes]
    crossing = [
        {judge: n for judge, n in marks.items() if (verdict_reward(record, judge) or 0.0) > MIDDLE}
        for marks, (_, record) in zip(same_verdict_judges(flat, owners, MIN_MODELS), flat, strict=True)
    ]
    voided = without_same_verdicts(flat, crossing, "of several models in this suite")
    views: list[list[NoteRecord | None]] = []
    start = 0
    for _, notes, judges in runs:
        mine = voided[start : start + len(notes)]
        start += len(notes)
        views.append(run_view(list(zip((a for a, _ in notes), mine, strict=True)), judges))
    return views
