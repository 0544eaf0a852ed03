"""The answer as the judges see it: cut at ``answer_cap`` characters. Pure; no I/O.

Why: nothing bounded an answer before judging, and reading a verdict costs memory in the answer's length (the
copy detector's suffix automaton, about 0.5 KB per character, cached per text: ``copied.py``): ten 1 MB answers
exhausted a machine, and a MemoryError was recorded as "no verdict in reply". A plan longer than the cap is cut
for judging, never failed, and its record says so (``record.ANSWER_CUT``), so the report can tell a cut answer
from a whole one. The cap is a run-entry argument (``RunEntryArgs.answer_cap``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CutAnswer", "judged_answer"]


@dataclass(frozen=True)
class CutAnswer:
    """What the judges read of an answer, and the answer's whole length when that is less than all of it."""

    text: str
    cut_from: int | None = None


def judged_answer(answer: str, cap: int) -> CutAnswer:
    """``answer`` cut to its first ``cap`` characters, or whole when it is not longer than that."""
    if len(answer) <= cap:
        return CutAnswer(answer)
    return CutAnswer(answer[:cap], len(answer))
