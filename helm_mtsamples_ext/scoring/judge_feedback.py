"""A note's record and scores as one evaluation of MedARC's ``info["judge_feedback"]``, our fields beside MedARC's.

Why: MedARC's ``mtsamples_procedures`` environment appends to ``info["judge_feedback"]`` (a list) one evaluation per
scoring, ``{"judges": [{"model", "raw", "error", "scores": {dimension: {"score", "explanation"}}, "score"}], "score"}``,
and its readers take ``judge_feedback[-1]["judges"]``. Ours is that evaluation, with our meaning: ``score`` is our
reward (the mean of score/5, where MedARC's is (score-1)/4), None for a judge that failed (``error`` says why) and for a
note no judge scored (MedARC would write 0.0); ``raw`` is the reply of a judge that failed (what could not be read; None
after a call error), None for one that scored (its reply is not kept: its verdict is ``scores``). Our fields, under keys
MedARC never writes: per judge ``judge`` (its name in the panel), ``status`` (``ok``, ``failed``; None when no judge was
asked: an empty answer), ``failure_kind`` (a constant of common/failure_kinds.py) and ``served_model`` (the model its
server said it ran); per evaluation ``failures`` (judges that failed) and ``empty_answer``. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from helm_mtsamples_ext.common.record import FAILED, OK, NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.scoring.reward import NoteScores

OURS = ("judge", "status", "failure_kind", "served_model")
"""Our keys in a judge's entry, beside MedARC's ``model``, ``raw``, ``error``, ``scores`` and ``score``."""


def judge_feedback(record: NoteRecord, scores: NoteScores, models: Mapping[str, str]) -> dict[str, Any]:
    """One evaluation: ``{"judges": [...], "score": reward or None, "failures": n, "empty_answer": bool}``;
    ``models`` maps each judge's name to the model its server was asked for."""
    judges = []
    for judge in scores.judges:
        entry = record.judges.get(judge.name)
        failed = record.judge_failed(judge.name) if not scores.empty_answer else False
        explanations = entry.explanations if entry is not None else {}
        judges.append(
            {
                "model": models.get(judge.name, judge.name),
                "raw": entry.raw_reply if entry is not None and failed else None,
                "error": record.failure_of(judge.name) if failed else None,
                "scores": {
                    dim: {"score": judge.scores.get(dim), "explanation": explanations.get(dim) or None}
                    for dim in DIMENSIONS
                },
                "score": judge.reward,
                "judge": judge.name,
                "status": None if scores.empty_answer else FAILED if failed else OK,
                "failure_kind": record.kind_of_failure(judge.name) if failed else None,
                "served_model": entry.reported_model if entry is not None else None,
            }
        )
    return {
        "judges": judges,
        "score": scores.reward,
        "failures": scores.failures,
        "empty_answer": scores.empty_answer,
    }


__all__ = ["OURS", "judge_feedback"]
