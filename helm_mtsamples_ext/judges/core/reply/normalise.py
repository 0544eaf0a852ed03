"""Text as a quote detector compares it: a retyped quote is still a quote. Pure; no I/O.

Why: a judge that quotes the candidate answer may retype it (Unicode compatibility forms such as full-width
letters and digits or ligatures, zero-width and other format characters dropped, whitespace collapsed or
broken over lines, curly quotes for straight ones). Compared as written, such a quote is not recognised, so a
planted verdict it carries could be scored as the judge's. Both sides are compared after ``normalise``:

- compatibility forms folded (NFKD per character), combining marks dropped (composed and decomposed accents
  compare equal);
- format characters (Unicode category Cf: zero-width spaces and joiners, bidi controls, soft hyphens) dropped;
- whitespace of any kind and length dropped, so a quote split over lines or re-indented still matches;
- every decimal digit folded to its ASCII digit (full-width ``５``, Arabic-Indic ``٥``);
- typographic quotes folded to ``'`` and ``"``.

``normalise`` also gives, for every character of the result, the index of the character of the input it came
from, so a stretch found in the normalised text is a stretch of the reply as written.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["normalise", "normalised"]

_QUOTES = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035\uff07", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\uff02", '"'),
    }
)
_DROPPED = frozenset(("Cf", "Mn", "Me", "Cc", "Zs", "Zl", "Zp"))


@lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    """What one character of the input becomes (possibly nothing, possibly several characters)."""
    if char.isspace():
        return ""
    out = []
    for part in unicodedata.normalize("NFKD", char):
        if part.isspace() or unicodedata.category(part) in _DROPPED:
            continue
        digit = unicodedata.decimal(part, None)
        out.append(str(digit) if digit is not None else part)
    return "".join(out).translate(_QUOTES)


def normalise(text: str) -> tuple[str, list[int]]:
    """``text`` normalised (module docstring), and for each of its characters the index in ``text`` it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        if char.isascii() and not char.isspace():  # the common case, kept fast for long replies
            chars.append(char)
            origin.append(i)
            continue
        for folded in _fold(char):
            chars.append(folded)
            origin.append(i)
    return "".join(chars), origin


def normalised(text: str) -> str:
    """``text`` normalised, without the positions."""
    return normalise(text)[0]
