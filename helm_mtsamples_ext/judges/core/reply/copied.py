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
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.core.reply.normalise import normalise, normalised

T = TypeVar("T")

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


CACHED_CHARACTERS = 16 * 20_000
"""Untrusted text whose automata are kept, in characters: as much as the 16 texts at the default ``answer_cap`` that
were kept before (about 400 bytes a character, so at most ~130 MB), but counted in characters, so a run's calls in
flight (48 at once, 16 notes of 3 judges, each note and answer a few KB) find their texts' automata built instead of
rebuilding one per call, and a text larger than all of it is built for its call and never kept."""


class _SizedCache(Generic[T]):
    """The values built for the texts used most recently, up to ``budget`` characters of text in all; safe across
    the threads HELM's path judges on (a value is built outside the lock: two threads may build one twice)."""

    def __init__(self, build: Callable[[str], T], budget: int) -> None:
        self._build, self._budget = build, budget
        self._items: OrderedDict[str, T] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def __call__(self, text: str) -> T:
        with self._lock:
            hit = self._items.get(text)
            if hit is not None:
                self._items.move_to_end(text)
                return hit
        value = self._build(text)
        if len(text) <= self._budget:
            with self._lock:
                if text not in self._items:
                    self._items[text], self._size = value, self._size + len(text)
                    while self._size > self._budget:
                        old, _ = self._items.popitem(last=False)
                        self._size -= len(old)
        return value

    def kept(self) -> tuple[int, int]:
        """(texts kept, their characters)."""
        with self._lock:
            return len(self._items), self._size


_automaton = _SizedCache(_Automaton, CACHED_CHARACTERS)
"""Built once per untrusted text: every judge of a note, and every turn, reads against the same note and answer."""


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


_normalised_form = _SizedCache(normalised, CACHED_CHARACTERS)
"""The normalised form of each text kept as its automaton is (a few bytes a character)."""


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
