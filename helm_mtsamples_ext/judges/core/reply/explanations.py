"""Whether an explanation is the judge's own words, the evidence a verdict's score needs. Pure; no I/O.

A dimension counts only when its explanation is a reading of the answer. Small judges copy the prompt's
format line (its placeholders, in any wording: SmolLM2-135M writes ``<...}``, or ``<other text
here``), and a quoting judge may copy the answer's own words. Refused, by shape rather than by a list of
known strings:

  a placeholder (the whole explanation)  ``<one or two sentences>``, ``<...>``, ``<other text here``
      (opened, never closed), ``text here>`` (closed, never opened), ``[your explanation]``, ``{reason}``,
      ``{{explanation}}``, ``$EXPLANATION``, ``...``, ``___``, HELM's ``Explain why this score was given.``,
      ``one or two sentences``, ``explanation here``
  a fragment of a format line (anywhere)  ``<...}``, ``<...``, ``sentences>``, ``<integer 1-5``,
      ``{{reason}}``, ``"score": 3``
  copied (``copied.py``)                  a verbatim piece of the candidate answer or the note, or quotes
      of them with no word of the judge's own (a judge's own words beside a quote are its reading; only
      they are counted for the word floor below)
  too short                               fewer than MIN_EXPLANATION_WORDS words: ``""`` (the flat form
      ``{"accuracy": 4}``), ``ok``, ``Good plan.``; a word is a run of letters, so ``4/5 !!`` has none

Accepted: ``Correct steps, though antibiotics are not named.``, ``It is <one> of two options``, ``<b>bold</b>
plan``, ``Blood loss <50 mL``. A placeholder, a fragment or a copy means the judge was copying, not
judging: prompt.py then refuses the whole verdict (``refuses_verdict``); a short explanation costs only
its own dimension.
"""

from __future__ import annotations

import re

# The kinds of a refused explanation and of a verdict refused whole, in the table of every kind
# (common/failure_kinds.py); named here too, where the reasons are written.
from helm_mtsamples_ext.common.failure_kinds import NOT_OWN_WORDS as NOT_OWN_WORDS
from helm_mtsamples_ext.common.failure_kinds import VERDICT_REFUSED as VERDICT_REFUSED

MIN_EXPLANATION_WORDS = 3
"""Fewer words than this is not a reading of the answer ("ok", "Good plan.", the flat form's no explanation)."""

PLACEHOLDER = "a placeholder"
FRAGMENT = "a fragment of a format line"
COPIED = "copied from the prompt's answer or note"
COPYING = (PLACEHOLDER, FRAGMENT, COPIED)
"""The problems that refuse the whole verdict (a short explanation refuses only its dimension)."""

_WORD = re.compile(r"[^\W\d_]+")
# A whole explanation that is a stand-in: bracketed or templated in any wording, opened or closed but not both,
# an ellipsis or a blank line, a variable.
_PLACEHOLDER_SHAPES = re.compile(
    r"""<[^<>]*>                               # <one or two sentences>, <...>, <your words>
    | <\s*(?:[^\W\d_]|\.\.|…)[^>]*             # <other text here   (opened, never closed)
    | [^<]*[\w.…]\s*>                          # one or two sentences>   (closed, never opened)
    | \[[^\[\]]*\] | \{\{?[^{}]*\}?\} | \$\{?\w+\}? | %s
    | \.{2,} | …+ | _{2,} | -{2,}
    """,
    re.VERBOSE,
)
_PLACEHOLDER_WORDS = re.compile(
    r"(?:explain why this score was given|one or two sentences|integer 1-5"
    r"|(?:your |an? |the |short |brief |other )*(?:explanation|justification|reason(?:ing)?|text|sentences?)"
    r"(?: goes)? here)",
    re.IGNORECASE,
)
# Pieces of a format line inside longer text: a placeholder opened or closed with an ellipsis or the format's own
# words, a template variable, or the format's JSON syntax ("score": 3) written into an explanation.
_FORMAT_FRAGMENT = re.compile(
    r"<\s*(?:\.\.\.|…|one or two sentences|integer\b|your\b|insert\b|other text|explanation\b)"
    r"|(?:\.\.\.|…|sentences|1-5)\s*>|\{\{\s*\w+\s*\}\}|[\"']score[\"']\s*:",
    re.IGNORECASE,
)


def words(text: str) -> int:
    return len(_WORD.findall(text))


def is_placeholder(explanation: str) -> bool:
    """Whether the whole explanation is a stand-in for one (see the module docstring)."""
    core = explanation.strip().strip("\"'").strip()
    plain = " ".join(core.lower().rstrip(".").split())
    return bool(_PLACEHOLDER_SHAPES.fullmatch(core) or _PLACEHOLDER_WORDS.fullmatch(plain))


def explanation_problem(explanation: str, own_words: str | None = None, verbatim: bool = False) -> str | None:
    """Why ``explanation`` is not the judge's own words (the reason recorded for its dimension), or None.

    ``own_words`` is the explanation without what it quoted of the answer or note (None: nothing quoted): a
    placeholder or format fragment is looked for there, since a quote of the answer may hold anything;
    ``verbatim`` says the whole explanation is a piece of them."""
    text = explanation.strip()
    own = text if own_words is None else own_words.strip()
    if is_placeholder(own):
        return f"{NOT_OWN_WORDS}: {PLACEHOLDER} {text!r}"
    if _FORMAT_FRAGMENT.search(own):
        return f"{NOT_OWN_WORDS}: {FRAGMENT} {text!r}"
    if verbatim or (own_words is not None and words(own_words) == 0):
        return f"{NOT_OWN_WORDS}: {COPIED} {text[:200]!r}"
    count = words(own)
    if count < MIN_EXPLANATION_WORDS:
        mine = "" if own_words is None else " of its own"
        shown = "none" if not text else f"{count} word{'' if count == 1 else 's'}{mine} {text[:200]!r}"
        return f"{NOT_OWN_WORDS}: {shown}, fewer than {MIN_EXPLANATION_WORDS} words"
    return None


def refuses_verdict(problem: str | None) -> bool:
    """Whether a dimension's problem shows the judge was copying (a placeholder, a format fragment, a copy)."""
    return problem is not None and problem.startswith(tuple(f"{NOT_OWN_WORDS}: {kind}" for kind in COPYING))
