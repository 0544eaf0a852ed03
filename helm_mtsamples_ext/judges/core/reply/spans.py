"""Where verdicts are in a reply's text: spans of objects, their repair, the scores a reply literally writes.

The lexical half of reading a verdict (prompt.py applies the rules): kept apart so the rules read as rules.
Pure; no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import json_repair

from helm_mtsamples_ext.common.rubric import DIMENSIONS, normalise_score


def show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def lower_keys(obj: dict[Any, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in obj.items()}


def _is_verdict(obj: Any) -> bool:
    return isinstance(obj, dict) and any(key in DIMENSIONS for key in lower_keys(obj))


def find_verdict(obj: Any) -> dict[str, Any] | None:
    """The verdict an object is, or the last verdict nested in a wrapper such as ``{"evaluation": {...}}``."""
    if _is_verdict(obj):
        return lower_keys(obj)
    children = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []
    found = None
    for child in children:
        found = find_verdict(child) or found
    return found


_MAX_RESCANS = 8
"""Unterminated strings after which span ends are computed from a fresh start (bounds a pathological reply)."""


_TOKEN_STARTS = ("", "{", "[", ",", ":")
_CLOSERS = ",:}]"
_VALUE_CLOSERS = ",}]"


def _before(text: str, i: int) -> str:
    """The last non-space character before ``i`` ("" at the start)."""
    j = i - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return text[j] if j >= 0 else ""


def _string_end(text: str, i: int) -> int:
    """The index of the quote closing the string opened at ``i`` (``len(text)`` if none).

    A quote closes only when a delimiter follows it (``, } ]`` or the end; also ``:`` unless the string is
    a value), so an apostrophe ("doesn't") or an unescaped quote inside a broken string ("he said "stop"
    twice", "the answer says {"accuracy": 5}") is text of the string."""
    quote, j = text[i], i + 1
    closers = _VALUE_CLOSERS if _before(text, i) == ":" else _CLOSERS
    while j < len(text):
        char = text[j]
        if char == "\\":
            j += 2
            continue
        if char == quote:
            k = j + 1
            while k < len(text) and text[k] in " \t\r\n":
                k += 1
            if k == len(text) or text[k] in closers:
                return j
        j += 1
    return len(text)


def _opens_string(char: str, last: str) -> bool:
    """Whether a quote opens a string: a double quote always, a single quote where a JSON token may start."""
    return char == '"' or (char == "'" and last in _TOKEN_STARTS)


def _span_ends(text: str) -> dict[int, int]:
    """For each ``{`` outside a string literal, the end of its span (end of text if never closed).

    A ``{`` or ``}`` inside a string neither opens nor closes a span, so an explanation quoting ``}}}`` cannot
    end the judge's object early nor start a scan inside the quote. Strings are recognised inside braces only
    (prose apostrophes stay prose). A string that never closes swallows nothing: scanning starts again after
    its opening quote, as if it were text."""
    ends: dict[int, int] = {}
    start, rescans = 0, 0
    while start < len(text):
        stack: list[int] = []
        unterminated, last, i = -1, "", start
        while i < len(text):
            char = text[i]
            if stack and _opens_string(char, last):
                end = _string_end(text, i)
                if end == len(text):
                    unterminated = i
                i, last = end + 1, char
                continue
            if char == "{":
                stack.append(i)
            elif char == "}" and stack:
                ends[stack.pop()] = i + 1
            if not char.isspace():
                last = char
            i += 1
        for unclosed in stack:
            ends.setdefault(unclosed, len(text))
        if unterminated < 0 or rescans >= _MAX_RESCANS:
            break
        start, rescans = unterminated + 1, rescans + 1
    return ends


def _json_string(raw: str) -> str:
    """``raw`` (a string's contents as the judge wrote them) as a JSON string literal; its escapes kept."""
    out = ['"']
    i = 0
    while i < len(raw):
        char = raw[i]
        if char == "\\" and i + 1 < len(raw):
            out.append("'" if raw[i + 1] == "'" else raw[i : i + 2])
            i += 2
            continue
        out.append(json.dumps(char)[1:-1] if char == '"' or char < " " else char)
        i += 1
    out.append('"')
    return "".join(out)


def _requote(span: str) -> str:
    """``span`` with every string (single-quoted, or double-quoted with unescaped quotes inside) written as a
    JSON string, so json_repair, which counts braces inside such strings, reads them as the strings they are."""
    out: list[str] = []
    i, last = 0, ""
    while i < len(span):
        char = span[i]
        if _opens_string(char, last):
            end = _string_end(span, i)
            if end == len(span):  # unterminated: json_repair's guess is as good as ours
                out.append(span[i:])
                break
            out.append(_json_string(span[i + 1 : end]))
            i, last = end + 1, char
            continue
        out.append(char)
        if not char.isspace():
            last = char
        i += 1
    return "".join(out)


# Repair is for a judge's slightly broken object, not for mining garbage: a span too long or too nested
# to be a verdict is not repaired, which keeps a pathological reply (thousands of braces) fast.
_MAX_REPAIR_CHARS = 20_000
_MAX_REPAIR_BRACES = 64


def _repair(span: str) -> Any:
    if len(span) > _MAX_REPAIR_CHARS or span.count("{") > _MAX_REPAIR_BRACES:
        return None
    try:
        return json_repair.loads(_requote(span))
    except MemoryError:  # not "no verdict": the call names it (call.py)
        raise
    except Exception:  # json_repair is best effort; a span it cannot read is no verdict
        return None


@dataclass(frozen=True)
class Candidate:
    """A verdict found in a reply; ``repaired_span`` is the text json_repair read (None if strict JSON), ``start``
    and ``end`` where its object is in the text read, ``duplicates`` the keys its object writes twice."""

    fields: dict[str, Any]
    repaired_span: str | None = None
    start: int = 0
    end: int = 0
    duplicates: tuple[str, ...] = ()


def duplicate_keys(text: str) -> tuple[str, ...]:
    """The keys (case and spaces aside) some object of the JSON ``text`` writes more than once, in order.

    JSON parsers keep the last of a repeated key silently; in a verdict that is two answers to one question."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            name = str(key).strip().lower()
            if name in seen and name not in found:
                found.append(name)
            seen.add(name)
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return ()
    return tuple(found)


def verdict_objects(text: str) -> list[Candidate]:
    """Every top-level verdict in ``text``, in order; a valid object's interior is never searched."""
    decoder = json.JSONDecoder()
    found: list[Candidate] = []
    ends = _span_ends(text)
    resume = 0
    for i in sorted(ends):
        if i < resume:
            continue
        span: str | None = None
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            end = ends[i]
            span = text[i:end]
            obj = _repair(span)
            if find_verdict(obj) is None:
                continue
        verdict = find_verdict(obj)
        if verdict is not None:
            duplicates = duplicate_keys(text[i:end]) if span is None else ()
            found.append(Candidate(verdict, span, i, end, duplicates))
        resume = end
    return found


_NUMBER = r"""["']?(-?\d+(?:\.\d+)?)["']?\s*(?=[,}\]])"""
# A key or a score, never words inside an explanation: string contents are blanked out first (except key
# names and numeric strings), then keys may be quoted or bare, and must open the object or follow a comma.
_DIMENSION_KEY = re.compile(r"""(?:^|[{,])\s*["']?(""" + "|".join(DIMENSIONS) + r""")["']?\s*:""", re.IGNORECASE)
_LITERAL_SCORE = re.compile(r"^\s*" + _NUMBER + r"""|["']?score["']?\s*:\s*""" + _NUMBER, re.IGNORECASE)
_KEPT_STRINGS = re.compile(r"\s*(?:" + "|".join(DIMENSIONS) + r"|score|explanation|-?\d+(?:\.\d+)?)\s*", re.IGNORECASE)


def _blank_strings(span: str) -> str:
    """``span`` with the text inside its strings replaced by spaces (same length, so positions hold).

    A double quote always opens a string; a single quote only where a JSON token may start (after ``{``,
    ``[``, ``,``, ``:`` or at the start), so an apostrophe in bare text is left alone."""
    chars = list(span)
    i, last = 0, ""
    while i < len(span):
        char = span[i]
        if _opens_string(char, last):
            j = _string_end(span, i)
            if not _KEPT_STRINGS.fullmatch(span[i + 1 : j]):
                chars[i + 1 : min(j, len(span))] = " " * (min(j, len(span)) - i - 1)
            i, last = j + 1, char
            continue
        if not char.isspace():
            last = char
        i += 1
    return "".join(chars)


def literal_scores(span: str, dimension: str) -> list[int]:
    """The 1-5 scores ``span`` literally gives ``dimension``: a number (or numeric string) right after the
    dimension key or its ``score`` key and followed by a delimiter, within that dimension's part of the span."""
    text = _blank_strings(span)
    keys = list(_DIMENSION_KEY.finditer(text))
    found: list[int] = []
    for n, key in enumerate(keys):
        if key.group(1).lower() != dimension:
            continue
        region = text[key.end() : keys[n + 1].start(1) if n + 1 < len(keys) else len(text)]
        for match in _LITERAL_SCORE.finditer(region):
            score = normalise_score(match.group(1) or match.group(2))
            if score is not None:
                found.append(score)
    return found
