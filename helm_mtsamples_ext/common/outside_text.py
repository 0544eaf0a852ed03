"""Text from outside (an answer, a judge's reply, a server's reported model, a rater's name) made safe for where
it goes: a file, report.md, a terminal.

Why one module: the same few characters break every output in their own way. A lone surrogate (U+D800-U+DFFF
alone, which a JSON ``\\ud800`` escape decodes to) cannot be encoded as UTF-8, so hashing a prompt, writing a
record or a page raises; a control character (ESC, NUL, a carriage return, a bidi override) rewrites a terminal
or reorders a line; ``<``, ``*``, ``|`` or a backtick in report.md becomes markup. Each function here is pure and
returns plain ``str``; ``encodable`` also counts what it replaced, so the boundary that calls it can name it.

- ``encodable``: for any text kept or sent (a record, a prompt, a cache entry): lone surrogates and control
  characters but tab and newline become U+FFFD, counted.
- ``terminal``: for stdout and stderr: escape sequences removed whole, other controls and bidi controls dropped.
- ``markdown``: for a line or table cell of report.md: ``terminal`` on one line, then each markup character
  escaped with a backslash (``<`` and ``&`` as entities, which every renderer shows as text).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = [
    "Encodable",
    "REPLACEMENT",
    "encodable",
    "encodable_table",
    "encodable_text",
    "markdown",
    "strings_mapped",
    "terminal",
]

REPLACEMENT = "\ufffd"
_SURROGATE = "\ud800-\udfff"
_CONTROL = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
"""C0 controls but tab, newline and carriage return (kept in stored text), DEL and the C1 controls."""
_UNENCODABLE = re.compile(f"[{_SURROGATE}{_CONTROL}]")
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Marks and overrides that reorder what a terminal or a page shows (the Trojan Source characters)."""
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: cursor moves, colours, clear screen
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window title, hyperlinks
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]?"  # any other escape and its final byte
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the 8-bit CSI
)
_TERMINAL_DROP = re.compile(f"[{_SURROGATE}\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
"""What a terminal line keeps none of: controls but tab and newline (a carriage return rewrites the line),
lone surrogates (the terminal's encoder would raise) and bidi controls."""
_MARKUP = re.compile(r"([\\`*\[\]|~])|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
"""What is markup anywhere in a line: backslash, code, emphasis, links and images, table cells, strike-through;
an underscore only at a word's edge (inside a word, as in ``gpt_4o``, no renderer reads it as emphasis)."""


@dataclass(frozen=True)
class Encodable:
    """Text any file or hash takes, and how many characters were replaced to make it so."""

    text: str
    replaced: int


def encodable(text: str) -> Encodable:
    """``text`` with each lone surrogate and control character (tab, newline, carriage return kept) replaced by
    U+FFFD, and how many were: the caller names that count where the text entered."""
    safe, replaced = _UNENCODABLE.subn(REPLACEMENT, text)
    return Encodable(safe, replaced)


def encodable_text(text: str) -> str:
    """``encodable(text).text``: for a boundary that names nothing (the count is named where the text entered)."""
    return _UNENCODABLE.sub(REPLACEMENT, text)


def strings_mapped(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (JSON-like: mappings, lists, tuples, scalars) with every string, keys included, through ``change``;
    a tuple comes back a list, as JSON has it. For a whole reply or record that outside text reaches (a key to mask,
    a character no file takes)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        return {strings_mapped(k, change): strings_mapped(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strings_mapped(v, change) for v in value]
    return value


def encodable_table(table: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``table`` with every text cell ``encodable``, and how many characters were replaced in all (a record
    written before the run's boundary made its texts safe still gives a readable report)."""
    replaced = 0

    def safe(value: object) -> object:
        nonlocal replaced
        if not isinstance(value, str):
            return value
        found = encodable(value)
        replaced += found.replaced
        return found.text

    if table.empty:
        return table, 0
    cleaned = table.copy()
    for column in cleaned.select_dtypes(include="object").columns:
        cleaned[column] = cleaned[column].map(safe)
    return cleaned, replaced


def terminal(text: str) -> str:
    """``text`` as a terminal shows it and nothing else: escape sequences removed whole, controls (tab and
    newline kept), lone surrogates and bidi controls dropped."""
    return _TERMINAL_DROP.sub("", _ESCAPE_SEQUENCE.sub("", text))


def markdown(text: str) -> str:
    """``text`` as literal text on one line of report.md (a table cell, a list item, a quoted warning):
    terminal-safe, line breaks as spaces, ``&`` and ``<`` as entities, every other markup character escaped."""
    flat = " ".join(terminal(text).split("\n")).replace("\t", " ")
    flat = flat.replace("&", "&amp;").replace("<", "&lt;")
    return _MARKUP.sub(lambda m: "\\" + m.group(0), flat)
