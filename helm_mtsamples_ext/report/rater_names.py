"""Who a rater is, from the name typed on the rating page: one person whatever the keyboard, look-alikes named.

Why: the clinician ceiling and every human agreement count raters. ``Dr Test``, ``dr test``, ``Dr\u200bTest`` (a
zero-width space) and ``Ｄｒ Ｔｅｓｔ`` (full-width letters) are one person typing; counted as two, the person agrees
with themself and the ceiling reads 1.0. So a name's key is its compatibility form (NFKC: full-width, ligatures,
superscripts folded), without format characters (zero-width, bidi controls: Unicode category Cf), its spaces
collapsed, case-folded. ``Dr Tеst`` with a Cyrillic ``е`` is another string that looks the same: it may be another
person, so it is not merged, but flagged: its confusable skeleton (the key with look-alike letters of other
scripts mapped to Latin, accents dropped) equals another name's.

The skeleton's mapping is a small table (``CONFUSABLES``: the Cyrillic and Greek letters that look like Latin ones)
rather than a dependency: names are short and typed, and the table is tested letter by letter. Pure.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["CONFUSABLES", "lookalike_groups", "rater_key", "shown_name", "skeleton"]

CONFUSABLES = str.maketrans(
    {
        # Cyrillic lower case (after case-folding, upper case arrives here as lower)
        "а": "a", "в": "b", "е": "e", "ё": "e", "з": "3", "і": "i", "ї": "i", "ј": "j", "к": "k", "м": "m",
        "н": "h", "о": "o", "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d",
        "һ": "h", "ԛ": "q", "ԝ": "w", "ь": "b", "г": "r",
        # Greek lower case
        "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "μ": "u", "ν": "v", "ο": "o",
        "ρ": "p", "σ": "o", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ζ": "z",
        # Latin look-alikes of other letters and digits
        "ı": "i", "ɡ": "g", "ɑ": "a", "ʏ": "y", "0": "o", "1": "l", "|": "l",
    }
)  # fmt: skip
"""Letters that look like a Latin letter in common fonts, mapped to it (after NFKC and case-folding)."""


def _without_format(text: str) -> str:
    return "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Cc", "Cs"))


def rater_key(name: str) -> str:
    """Who a rater is: compatibility form, format and control characters removed, spaces collapsed, case-folded."""
    return " ".join(_without_format(unicodedata.normalize("NFKC", name)).split()).casefold()


def shown_name(name: str) -> str:
    """A rater's name as it may be shown anywhere: its compatibility form without format or control characters,
    spaces collapsed (no bidi override reorders a line it is on, no zero-width character hides in it)."""
    return " ".join(_without_format(unicodedata.normalize("NFKC", name)).split())


def skeleton(name: str) -> str:
    """What a name looks like: its key, accents dropped, look-alike letters mapped to Latin, spaces removed."""
    bare = unicodedata.normalize("NFD", rater_key(name))
    bare = "".join(c for c in bare if unicodedata.category(c) != "Mn")
    return "".join(bare.translate(CONFUSABLES).split())


def lookalike_groups(names: Iterable[str]) -> list[list[str]]:
    """Names (one per rater key, as given) that are different raters but look alike, in groups of two or more."""
    by_skeleton: dict[str, dict[str, str]] = {}
    for name in names:
        by_skeleton.setdefault(skeleton(name), {}).setdefault(rater_key(name), name)
    return [list(keys.values()) for keys in by_skeleton.values() if len(keys) > 1]
