"""What a panel is asked about one note, and the record its judges' entries make: the steps every door shares.

Why one home: HELM's annotator, the Inspect scorer and the verifiers environment each cut the answer, set an empty
answer aside, fenced the prompt and gathered the entries into a record; a step changed at one door and not the
others would make the doors' rewards differ for the same answer. How each judge is asked (threads and HELM's
cache, or an async client) is the door's transport; what it is asked, and what its entries become, is here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from helm_mtsamples_ext.common.answer import strip_think
from helm_mtsamples_ext.common.answer_cap import CutAnswer, judged_answer
from helm_mtsamples_ext.common.outside_text import encodable_text
from helm_mtsamples_ext.common.record import JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.judges.core.prompt import build_prompt

__all__ = ["NoteQuestion", "Question", "ask_about", "panel_record"]

Question = tuple[str, tuple[str, ...]]
"""(the judge prompt, the texts in it no verdict is read from: the cut answer and the note)."""


@dataclass(frozen=True)
class NoteQuestion:
    """One note as its judges see it: the answer they read, and the question, or None for an empty answer,
    which no judge is asked about (the record says so, and the note is unjudged, never scored low)."""

    answer: CutAnswer
    question: Question | None


def ask_about(
    answer: str, note: str, reference: str, *, use_think: bool, answer_cap: int, judge_prompt: str
) -> NoteQuestion:
    """The question about ``answer``: what no file or hash can hold replaced (outside_text.py), its reasoning cut
    off with ``use_think``, cut at ``answer_cap`` characters, and the prompt of the ``judge_prompt`` style."""
    text = encodable_text(answer)
    cut = judged_answer(strip_think(text) if use_think else text, answer_cap)
    if not cut.text.strip():
        return NoteQuestion(cut, None)
    note = encodable_text(note)
    prompt = build_prompt(note, cut.text, encodable_text(reference), judge_prompt)
    return NoteQuestion(cut, (prompt, (cut.text, note)))


def panel_record(entries: Mapping[str, JudgeEntry], answer_cut: int | None = None) -> NoteRecord:
    """The note's record from its judges' entries, in panel order, stamped with the rules it is scored under."""
    failed = tuple(name for name, entry in entries.items() if entry.failed)
    return NoteRecord(dict(entries), failed, answer_cut=answer_cut, rules_version=RULES_VERSION)
