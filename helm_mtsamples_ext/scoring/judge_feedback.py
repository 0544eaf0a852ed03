"""A note's record and scores as MedARC's ``info["judge_feedback"]``: each judge's scores, explanations and
failure, and the note's reward.

Why: Medmarks' tools and readers of a verifiers run look for ``judge_feedback`` (MedARC's shape: ``{"judges":
[{model, raw, error, scores, score}], "score"}``). Ours keeps those keys, so a reader of MedARC's finds what it
expects, with our meaning: ``score`` is our reward (mean score/5), None for a judge that failed (``error`` says
why, ``failure_kind`` its kind, a constant of common/failure_kinds.py) and for a note no judge scored; ``raw`` is
kept only for a failed judge, as our record keeps it. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.scoring.reward import NoteScores


def judge_feedback(record: NoteRecord, scores: NoteScores, models: Mapping[str, str]) -> dict[str, Any]:
    """``{"judges": [...], "score": reward or None, "failures": n, "empty_answer": bool}``; ``models`` maps each
    judge's name to the model its server was asked for."""
    judges = []
    for judge in scores.judges:
        entry = record.judges.get(judge.name)
        failed = record.judge_failed(judge.name) if not scores.empty_answer else False
        judges.append(
            {
                "name": judge.name,
                "model": models.get(judge.name, judge.name),
                "scores": dict(judge.scores),
                "explanations": dict(entry.explanations) if entry is not None else {},
                "error": record.failure_of(judge.name) if failed else None,
                "failure_kind": record.kind_of_failure(judge.name) if failed else None,
                "raw": entry.raw_reply if entry is not None and failed else None,
                "score": judge.reward,
            }
        )
    return {
        "judges": judges,
        "score": scores.reward,
        "failures": scores.failures,
        "empty_answer": scores.empty_answer,
    }


__all__ = ["judge_feedback"]
