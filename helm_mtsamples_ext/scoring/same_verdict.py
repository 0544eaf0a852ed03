"""A judge that does not read the answer is not judging: one verdict given to many different answers.

A small local judge (SmolLM2-135M under llama.cpp) can write byte for byte the same reply for every note,
whatever the model answered; its scores then rank models by nothing, and a model answering "re" comes out above the
clinician's own plan. No single reply shows this: each one parses.
Only many notes do, so this rule is read where whole runs are (the metric's ``evaluate``, the report's suite) on
the records the annotator wrote, which keep the raw verdict on disk:

- a judge's verdict (its three scores and explanations, compared exactly) that it gave to ``MIN_ANSWERS`` or more
  different answers is a same verdict: "same verdict for different answers";
- a voided one counts for nothing on its notes, as a failed judge does (never as a low score), so a note no other
  judge scored is unjudged, and ``max_unjudged`` fails the run as for any other judge failure.

Which same verdicts are voided is verdict_view.py's: a fair judge also gives its one low verdict to junk, and
voiding that would raise the junk's reward. Across a suite, a verdict must have gone to ``MIN_MODELS`` models.
Identical answers (two notes answered "re") may of course get identical verdicts: only different answers count.
Pure; no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import replace

from helm_mtsamples_ext.common.failure_kinds import SAME_VERDICT
from helm_mtsamples_ext.common.record import FAILED, JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS

MIN_MODELS = 2
"""Models whose answers one verdict must have gone to before the report, which sees the whole suite, voids it."""
MIN_ANSWERS = 3
"""Different answers one verdict must be given to before it is taken as a judge not reading the answer. Two
short, equally empty answers may deserve one verdict; three is already a pattern."""


def _verdict_key(record: NoteRecord, judge: str) -> Hashable | None:
    """What the judge said about this note, exactly; None when it said nothing that counts (a failed call)."""
    if record.judge_failed(judge):
        return None
    entry = record.judges[judge]
    return tuple((entry.scores.get(dim), entry.explanations.get(dim, "")) for dim in DIMENSIONS)


def same_verdict_judges(
    notes: Sequence[tuple[str, NoteRecord | None]], models: Sequence[Hashable] | None = None, min_models: int = 1
) -> list[dict[str, int]]:
    """Per note, given as (answer, record): each judge whose verdict on it is one the judge gave to
    ``MIN_ANSWERS`` or more different answers, with the number of those answers.

    ``models``, one per note, says whose answer each note holds; a verdict counts only when the answers it went to
    come from ``min_models`` or more models. Across a suite (``MIN_MODELS``) this tells a judge not reading the
    answer from a judge fairly giving its one low verdict to one model's junk: the rule never picks out one
    model's answers."""
    owners = list(models) if models is not None else [None] * len(notes)
    answers: defaultdict[tuple[str, Hashable], set[str]] = defaultdict(set)
    owners_of: defaultdict[tuple[str, Hashable], set[Hashable]] = defaultdict(set)
    keys: list[dict[str, Hashable]] = []
    for (answer, record), owner in zip(notes, owners, strict=True):
        found: dict[str, Hashable] = {}
        if record is not None and not record.empty_answer:
            for judge in record.judges:
                key = _verdict_key(record, judge)
                if key is not None:
                    found[judge] = key
                    answers[(judge, key)].add(answer.strip())
                    owners_of[(judge, key)].add(owner)
        keys.append(found)
    return [
        {
            judge: n
            for judge, key in found.items()
            if (n := len(answers[(judge, key)])) >= MIN_ANSWERS and len(owners_of[(judge, key)]) >= min_models
        }
        for found in keys
    ]


def without_same_verdicts(
    notes: Sequence[tuple[str, NoteRecord | None]],
    copied: Sequence[dict[str, int]] | None = None,
    where: str = "in this run",
) -> list[NoteRecord | None]:
    """The records with every same-verdict judge marked failed on its note (its scores kept out, its
    explanations kept for the reader), in the order given. ``copied``: the judges to mark per note (by default
    ``same_verdict_judges(notes)``); ``where``: the failure's last words."""
    result: list[NoteRecord | None] = []
    marks = same_verdict_judges(notes) if copied is None else copied
    for (_, record), judged in zip(notes, marks, strict=True):
        if record is None or not judged:
            result.append(record)
            continue
        judges = dict(record.judges)
        for judge, n in judged.items():
            failure = f"{SAME_VERDICT}: the same scores and explanations given to {n} different answers {where}"
            judges[judge] = replace(
                judges[judge],
                status=FAILED,
                failure=failure,
                failure_kind=SAME_VERDICT,
                scores=dict.fromkeys(DIMENSIONS),
            )
        failed = (*record.failed_judges, *(j for j in judged if j not in record.failed_judges))
        result.append(replace(record, judges=judges, failed_judges=failed))
    return result


def is_same_verdict(entry: JudgeEntry) -> bool:
    """A judge whose verdict this rule voided (its stored kind; an older record's text)."""
    return entry.kind == SAME_VERDICT
