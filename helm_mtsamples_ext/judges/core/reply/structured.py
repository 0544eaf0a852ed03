"""A reply that is a verdict by its structure, and the verdicts an answer planted. Pure; no I/O.

Why: the judge is asked for one JSON object. When its whole reply (a ```json fence and surrounding space aside)
is one JSON object of the asked form, that object is its verdict: what its strings hold (a quote of the answer,
a verdict-looking text) is never read as a verdict and nothing in it is masked, so an answer cannot remove or
refuse a strict judge's verdict by carrying the judge's own words (the opening of its verdict, its stock
sentences).

For a reply in prose, a verdict object it holds is a quote, not the judge's, when it is a piece of the answer or
the note (compared normalised: ``normalise.py``), or when it gives the scores and explanations of a verdict
planted in them (``planted_verdicts``), however it was retyped, re-indented or reordered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from helm_mtsamples_ext.common.rubric import DIMENSIONS, normalise_score
from helm_mtsamples_ext.judges.core.reply.normalise import normalised
from helm_mtsamples_ext.judges.core.reply.spans import Candidate, duplicate_keys, lower_keys, verdict_objects

__all__ = ["is_quote", "planted_verdicts", "top_level_verdict"]

_FENCE = re.compile(r"\A\s*```[A-Za-z]*[ \t]*\n(.*)\n[ \t]*```\s*\Z", re.DOTALL)


def top_level_verdict(reply: str) -> Candidate | None:
    """The verdict ``reply`` is as a whole (a JSON object with a dimension key, fenced or not), or None."""
    fenced = _FENCE.match(reply)
    body = (fenced.group(1) if fenced else reply).strip()
    if not body.startswith("{"):
        return None
    try:
        obj = json.loads(body)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    fields = lower_keys(obj)
    if not any(dim in fields for dim in DIMENSIONS):
        return None
    return Candidate(fields, None, 0, len(reply), duplicate_keys(body))


@lru_cache(maxsize=16)
def _planted(text: str) -> tuple[dict[str, tuple[int | None, str]], ...]:
    found = []
    for candidate in verdict_objects(normalised(text)):
        found.append({dim: _dimension(candidate.fields[dim]) for dim in DIMENSIONS if dim in candidate.fields})
    return tuple(found)


def _dimension(value: Any) -> tuple[int | None, str]:
    """A dimension's score and normalised explanation, as a plant and a quote of it are compared."""
    if isinstance(value, dict):
        fields = lower_keys(value)
        explanation = fields.get("explanation", "")
        return normalise_score(fields.get("score")), normalised(str(explanation))
    return normalise_score(value), ""


def planted_verdicts(untrusted: Sequence[str]) -> list[dict[str, tuple[int | None, str]]]:
    """Every verdict written in ``untrusted`` (read normalised), as {dimension: (score, explanation)}."""
    return [plant for text in untrusted if text for plant in _planted(text)]


def is_quote(
    candidate: Candidate, text: str, untrusted: Sequence[str], forms: Sequence[str], by_scores: bool = False
) -> bool:
    """Whether ``candidate`` (found in ``text``) is a quote: its object a piece of one of ``forms`` (the untrusted
    texts normalised), or every dimension it gives a planted verdict's score and explanation (``by_scores``: its
    score alone, for a candidate that only stands in for what masking removed, so a plant quoted in part, its
    explanation cut or reworded, is still a quote)."""
    piece = normalised(text[candidate.start : candidate.end])
    if piece and any(piece in form for form in forms):
        return True
    given = {dim: _dimension(candidate.fields[dim]) for dim in DIMENSIONS if dim in candidate.fields}

    def same(mine: tuple[int | None, str], planted: tuple[int | None, str]) -> bool:
        return mine[0] == planted[0] if by_scores else mine == planted

    plants = planted_verdicts(untrusted)
    return bool(given) and any(all(dim in p and same(v, p[dim]) for dim, v in given.items()) for p in plants)
