"""Pure: what the judge prompts say about the rubric, built from ``common/rubric.py``, and the block marker.

Why here: the ``ours`` and ``prefix`` prompts and the repair turn each name the dimensions (a list of questions, the
keys in words, a reply's example line) and the scale; typed in each, a renamed dimension would leave one behind.
Every such piece is built from a ``Rubric``, so a copy with a dimension renamed changes every prompt
(tests/common/test_rubric_rename.py), and the words for the rubric in use stay byte for byte what suites' caches
hold. The marker that fences the prompts' blocks is written once too.
"""

from __future__ import annotations

import hashlib

from helm_mtsamples_ext.common.rubric import Rubric

__all__ = ["block_marker", "rubric_words"]

_COUNTS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _keys_in_words(dimensions: tuple[str, ...]) -> str:
    """``"accuracy", "completeness" and "clarity"``."""
    quoted = [f'"{dim}"' for dim in dimensions]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def _example(rubric: Rubric) -> str:
    """The reply's form in the ``ours`` prompt, one line: each dimension's object, the first one's explanation
    described, the others' elided."""
    score = f"<integer {rubric.min_score}-{rubric.max_score}>"
    objects = [
        f'"{dim}": {{"score": {score}, "explanation": "{"<one or two sentences>" if i == 0 else "<...>"}"}}'
        for i, dim in enumerate(rubric.dimensions)
    ]
    return "{" + ", ".join(objects) + "}"


def rubric_words(rubric: Rubric) -> dict[str, str]:
    """The rubric's pieces as the prompts' templates take them: ``count`` (``three``), ``low`` and ``high`` (the
    scale's ends), ``questions`` (one line per dimension: ``- accuracy: is ...?``), ``keys`` (the dimensions quoted,
    in words) and ``example`` (the ``ours`` prompt's reply line)."""
    count = len(rubric.dimensions)
    return {
        "count": _COUNTS[count] if count < len(_COUNTS) else str(count),
        "low": str(rubric.min_score),
        "high": str(rubric.max_score),
        "questions": "\n".join(f"- {dim}: {question}" for dim, question in rubric.questions.items()),
        "keys": _keys_in_words(rubric.dimensions),
        "example": _example(rubric),
    }


def block_marker(*texts: str, seed: tuple[str, ...] = ()) -> str:
    """A marker no block holds, so no content can forge a closing tag: derived from the content and ``seed`` (the
    ``prefix`` style's is its name; no randomness, so identical prompts stay identical for HELM's cache), re-derived
    in the practically impossible case a content holds it."""
    joined = "\x00".join((*seed, *texts))
    counter = 0
    while True:
        marker = hashlib.sha256(f"{counter}\x00{joined}".encode()).hexdigest()[:12]
        if not any(marker in text for text in texts):
            return marker
        counter += 1
