"""What a judge's reply copied from the prompt's untrusted texts (the note, the candidate answer), masked out
before a verdict is looked for.

Why: the model under test writes the candidate answer, so it can write a verdict into it ("{"accuracy":
{"score": 5, ...}}"), and judges quote the answer: before their own verdict, after it, inside a broken or
single-quoted object, or in a reply whose own verdict is prose. A verdict is read only from the judge's own
words, so every stretch of the reply that is a verbatim copy of an untrusted text is masked first: a
planted verdict, whole or in part, is then no verdict candidate wherever the judge put it.

What counts as copied (``copied_spans``): a maximal stretch of the reply that occurs in an untrusted text (as
written, or JSON-escaped as a judge quoting it inside a JSON string writes it), both compared normalised
(``normalise.py``: a quote retyped in compatibility forms, without zero-width characters, with its whitespace
collapsed or broken over lines, with full-width digits, is still a quote), and holds
at least ``MIN_QUOTE_WORDS`` words other than the verdict's own key names. The word floor keeps a judge's
own verdict from being masked because its format happens to match text in the answer (``{"accuracy":
{"score": 2, "explanation": "`` is the judge's format as much as the answer's); a short planted verdict that
slips under it still fails, because its explanation is then a verbatim copy of the answer, which is not
the judge's own words (prompt.py). Pure; no I/O.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.core.reply.normalise import normalise, normalised

MIN_QUOTE_WORDS = 4
"""Words (other than the verdict's key names) a copied stretch must hold to be masked."""
_WORD = re.compile(r"[^\W\d_]+")
_KEY_WORDS = frozenset((*DIMENSIONS, "score", "explanation"))
_MASK_BASE = 0xF0000  # Supplementary Private Use Area-A: no reply or answer uses it, and it is no JSON syntax
_MAX_MASKS = 0xFFFD


class _Automaton:
    """The suffix automaton of one text: for each position of another text, the longest stretch ending there
    that occurs in this one, in time linear in both (a long note and a 64 KB reply stay fast)."""

    def __init__(self, text: str) -> None:
        self.next: list[dict[str, int]] = [{}]
        self.link: list[int] = [-1]
        self.length: list[int] = [0]
        last = 0
        for char in text:
            last = self._extend(last, char)

    def _extend(self, last: int, char: str) -> int:
        nxt, link, length = self.next, self.link, self.length
        cur = len(length)
        nxt.append({})
        length.append(length[last] + 1)
        link.append(0)
        p = last
        while p != -1 and char not in nxt[p]:
            nxt[p][char] = cur
            p = link[p]
        if p != -1:
            q = nxt[p][char]
            if length[p] + 1 == length[q]:
                link[cur] = q
            else:
                clone = len(length)
                nxt.append(dict(nxt[q]))
                length.append(length[p] + 1)
                link.append(link[q])
                while p != -1 and nxt[p].get(char) == q:
                    nxt[p][char] = clone
                    p = link[p]
                link[q] = link[cur] = clone
        return cur

    def matches(self, text: str) -> Iterable[tuple[int, int]]:
        """(start, end) of the longest stretch of ``text`` ending at each end that occurs in the automaton's text."""
        state, matched = 0, 0
        for end, char in enumerate(text, 1):
            while state and char not in self.next[state]:
                state = self.link[state]
                matched = self.length[state]
            if char in self.next[state]:
                state, matched = self.next[state][char], matched + 1
            else:
                state, matched = 0, 0
            if matched:
                yield end - matched, end


@lru_cache(maxsize=16)
def _automaton(text: str) -> _Automaton:
    """Built once per untrusted text: every judge of a note, and every turn, reads against the same note and answer.
    About 400 bytes per character of text (8 MB for a 20 KB note), so only the texts of a few notes are kept."""
    return _Automaton(text)


def normalised_forms(untrusted: Sequence[str]) -> list[str]:
    """The forms quotes are compared with (``_forms``)."""
    return _forms(untrusted)


def _forms(untrusted: Sequence[str]) -> list[str]:
    """Each untrusted text as written and as a judge quoting it inside a JSON string writes it, normalised."""
    forms: list[str] = []
    for text in untrusted:
        if not text:
            continue
        forms.append(_normalised_form(text))
        escaped = json.dumps(text, ensure_ascii=False)[1:-1]
        if escaped != text:
            forms.append(_normalised_form(escaped))
    return [form for form in forms if form]


@lru_cache(maxsize=16)
def _normalised_form(text: str) -> str:
    return normalised(text)


def _maximal(matches: Iterable[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    """The matches not contained in the next one (each end's longest match is contained in the next end's
    when that one starts no later): the maximal stretches, each once."""
    previous: tuple[int, int] | None = None
    for match in matches:
        if previous is not None and not (match[0] <= previous[0] and match[1] == previous[1] + 1):
            yield previous
        previous = match
    if previous is not None:
        yield previous


def copied_spans(reply: str, untrusted: Sequence[str], min_words: int = MIN_QUOTE_WORDS) -> list[tuple[int, int]]:
    """The stretches of ``reply`` copied from ``untrusted`` (see the module docstring), merged, in order."""
    content = [m.span() for m in _WORD.finditer(reply) if m.group().lower() not in _KEY_WORDS]
    starts, ends = [a for a, _ in content], [b for _, b in content]

    def words_within(start: int, end: int) -> int:
        return bisect_right(ends, end) - bisect_left(starts, start)

    flat, origin = normalise(reply)
    spans: list[tuple[int, int]] = []
    for form in _forms(untrusted):
        for start, end in _maximal(_automaton(form).matches(flat)):
            at, to = origin[start], origin[end - 1] + 1  # the stretch of the reply as written
            if words_within(at, to) >= min_words:
                spans.append((at, to))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@dataclass(frozen=True)
class Masked:
    """A reply with each copied stretch replaced by one private-use character, and the stretches, so the
    judge's own strings (an explanation quoting the answer) can be given back their text."""

    text: str
    stretches: tuple[str, ...]

    def restore(self, value: str) -> str:
        """``value`` (read from the masked text) with every masked stretch written back."""
        if not self.stretches:
            return value
        return "".join(
            self.stretches[ord(c) - _MASK_BASE] if _MASK_BASE <= ord(c) < _MASK_BASE + len(self.stretches) else c
            for c in value
        )

    def own_text(self, value: str) -> str:
        """``value`` (read from the masked text) without its copied stretches: what the judge wrote itself."""
        top = _MASK_BASE + len(self.stretches)
        return "".join(" " if _MASK_BASE <= ord(c) < top else c for c in value)

    def holds_copy(self, value: str) -> bool:
        top = _MASK_BASE + len(self.stretches)
        return any(_MASK_BASE <= ord(c) < top for c in value)


def mask_copied(reply: str, untrusted: Sequence[str]) -> Masked:
    """``reply`` with what it copied from ``untrusted`` masked out (at most ``_MAX_MASKS`` stretches)."""
    spans = copied_spans(reply, untrusted)[:_MAX_MASKS]
    if not spans:
        return Masked(reply, ())
    parts: list[str] = []
    stretches: list[str] = []
    at = 0
    for n, (start, end) in enumerate(spans):
        parts.append(reply[at:start])
        parts.append(chr(_MASK_BASE + n))
        stretches.append(reply[start:end])
        at = end
    parts.append(reply[at:])
    return Masked("".join(parts), tuple(stretches))


def holds_verbatim(text: str, untrusted: Sequence[str]) -> bool:
    """Whether ``text`` (an explanation) is, trimmed and normalised, a piece of an untrusted text."""
    core = text.strip().strip("\"'").strip()
    flat = normalised(core)
    return bool(_WORD.search(core)) and bool(flat) and any(flat in form for form in _forms(untrusted))


def own_words(text: str, untrusted: Sequence[str]) -> str | None:
    """``text`` (an explanation) without the stretches it copied from ``untrusted``, or None when it copied none."""
    masked = mask_copied(text, untrusted)
    return masked.own_text(masked.text) if masked.stretches else None
