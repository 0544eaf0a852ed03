"""One row per panel judge per note: what the report reads from one request state.

Each row is scored by ``scoring.score_note``, the metric's own rule, so report.md and HELM's stats agree on
every note; the note's texts ride along for the review page. Pure: a request state (HELM's JSON) in, rows
out; reading the run from disk is suite.py's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.answer import first_completion
from helm_mtsamples_ext.common.record import JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.data.sections import specialty_of
from helm_mtsamples_ext.names import CORRECT_TAG
from helm_mtsamples_ext.scoring.failure_reasons import NO_ANNOTATION, NOT_RUN
from helm_mtsamples_ext.scoring.reward import score_note

SCORED_COLUMNS = [*DIMENSIONS, "judge_reward", "note_reward"]


def _reference(instance: Mapping[str, Any]) -> str:
    """The section cut from the note: the reference tagged correct, else the first one."""
    references = instance.get("references") or []
    correct = [r for r in references if CORRECT_TAG in (r.get("tags") or [])]
    chosen = (correct or references or [{}])[0]
    return str((chosen.get("output") or {}).get("text") or "")


def judge_rows(record: object, judges: list[str], asked: bool = True) -> list[dict[str, Any]]:
    """One row per panel judge for one note, scored by scoring.score_note so report.md and the metric agree.

    Scores are the judge's valid ones (an invalid or missing dimension is None); a failed judge has no reward and
    a failure reason and its kind (``failure_kind``: the stored one, or an older record's read from its text; the
    report's readers compare it, it is not written to instances.csv); an empty answer scores 0 by every judge, as in
    the metric's per-judge stats. A note whose model was never ``asked`` (a dry run) and has no record was not
    judged: its failure says "not run".
    """
    note = score_note(record, judges)
    parsed = record if isinstance(record, NoteRecord) else NoteRecord.from_dict(record)
    rows = []
    for judge in note.judges:
        entry = parsed.judges.get(judge.name) if parsed is not None else None
        status = "empty_answer" if note.empty_answer else "failed" if judge.failed else "ok"
        if status != "failed":
            failure = kind = ""
        elif parsed is None:
            failure = kind = NO_ANNOTATION if asked else NOT_RUN
        else:
            failure, kind = parsed.failure_of(judge.name), parsed.kind_of_failure(judge.name)
        invalid = entry.invalid if entry is not None and not note.empty_answer else {}
        rows.append(
            {
                "judge": judge.name,
                **{dim: judge.scores.get(dim) for dim in DIMENSIONS},
                **{f"{dim}_explanation": entry.explanations.get(dim, "") if entry else "" for dim in DIMENSIONS},
                "judge_reward": 0.0 if note.empty_answer else judge.reward,
                "note_reward": note.reward,
                "status": status,
                "failure": failure,
                "failure_kind": kind,
                "invalid": "; ".join(f"{dim}: {why}" for dim, why in invalid.items()),
                "empty_answer": note.empty_answer,
                **_tokens(entry, note.empty_answer),
                "judge_model": entry.model_deployment if entry is not None else None,
                "reported_model": entry.reported_model if entry is not None else None,
                "system_fingerprint": entry.system_fingerprint if entry is not None else None,
                "loaded_model": entry.loaded_model if entry is not None else None,
            }
        )
    return rows


def answer_of(state: dict[str, Any]) -> str:
    """The model's answer in a request state ("" when it gave none)."""
    return first_completion((state.get("result") or {}).get("completions"))


def record_of(state: dict[str, Any]) -> NoteRecord | None:
    """Our annotation of a request state, as stored (None when the note was never annotated)."""
    return NoteRecord.from_dict((state.get("annotations") or {}).get(names.ANNOTATION_KEY))


def _tokens(entry: JudgeEntry | None, empty_answer: bool) -> dict[str, float]:
    """A judge's tokens in and out on a note: 0 where no call was made or none was reported, NaN for a record
    from before they were kept apart (its total alone cannot be priced)."""
    if entry is None or empty_answer:
        return {"tokens_in": 0.0, "tokens_out": 0.0}
    if entry.tokens_in is None and entry.tokens_out is None and entry.tokens is not None:
        return {"tokens_in": math.nan, "tokens_out": math.nan}
    return {"tokens_in": float(entry.tokens_in or 0), "tokens_out": float(entry.tokens_out or 0)}


def state_rows(state: dict[str, Any], judges: list[str], record: NoteRecord | None = None) -> list[dict[str, Any]]:
    """One row per judge of the panel for one request state (a judge with no record has failed); ``record`` is
    the run-level view of its annotation (``same_verdict.without_same_verdicts``), else the annotation as stored."""
    instance = state["instance"]
    extra = instance.get("extra_data") or {}
    text = answer_of(state)
    stored = record_of(state)
    note = {
        "note": extra.get("filename") or instance.get("id"),
        "note_id": instance.get("id"),
        "specialty": extra.get("specialty") or specialty_of(instance.get("input", {}).get("text", "")) or "unknown",
        "extracted_section": extra.get("extracted_section") or "",
        "extraction": extra.get("extraction") or "",
        "output_words": len(text.split()),
        # The texts ride along for the review page (instances.csv leaves them out); one string per note, shared by
        # its judges' rows, so they cost no copies.
        "note_text": instance.get("input", {}).get("text", ""),
        "reference": _reference(instance),
        "answer": text,
        "prompt": str((state.get("request") or {}).get("prompt") or ""),  # what the model was sent (Medmarks export)
        "model_family": stored.model_family if stored is not None else None,
        "rules_version": stored.rules_version if stored is not None else None,
    }
    asked = state.get("result") is not None  # HELM's --dry-run asks no model: its states hold no result
    return [{**note, **row} for row in judge_rows(record if record is not None else stored, judges, asked)]
