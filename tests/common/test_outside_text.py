"""outside_text.py: an attack table per output (a file, a terminal, report.md), and properties of each function
over any text hypothesis makes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helm_mtsamples_ext.common.outside_text import encodable, encodable_table, markdown, strings_mapped, terminal

ENCODABLE_ATTACKS = [
    ("lone high surrogate", "plan \ud800 rest", "plan \ufffd rest", 1),
    ("lone low surrogate", "\udfff", "\ufffd", 1),
    ("a pair as two code points", "\ud83d\ude00", "\ufffd\ufffd", 2),
    ("NUL", "a\x00b", "a\ufffdb", 1),
    ("escape", "\x1b[2J", "\ufffd[2J", 1),
    ("C1 control", "a\x85b", "a\ufffdb", 1),
    ("DEL", "a\x7f", "a\ufffd", 1),
    ("tab, newline, CR kept", "a\tb\nc\r\n", "a\tb\nc\r\n", 0),
    ("emoji and accents kept", "caf\u00e9 \U0001f600", "caf\u00e9 \U0001f600", 0),
]


@pytest.mark.parametrize(("case", "text", "safe", "replaced"), ENCODABLE_ATTACKS, ids=[a[0] for a in ENCODABLE_ATTACKS])
def test_encodable_attacks(case: str, text: str, safe: str, replaced: int) -> None:
    found = encodable(text)
    assert (found.text, found.replaced) == (safe, replaced)
    found.text.encode("utf-8")  # what hashing a prompt or writing a file does


TERMINAL_ATTACKS = [
    ("clear screen", "model\x1b[2J\x1b[H", "model"),
    ("colour", "\x1b[31mred\x1b[0m", "red"),
    ("window title (OSC, BEL)", "a\x1b]0;owned\x07b", "ab"),
    ("hyperlink (OSC, ST)", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("8-bit CSI", "a\x9b2Jb", "ab"),
    ("carriage return rewrite", "ok\rFAIL", "okFAIL"),
    ("bidi override", "abc\u202edcba", "abcdcba"),
    ("isolate", "\u2066x\u2069", "x"),
    ("lone surrogate", "a\ud800", "a"),
    ("backspace", "secret\x08\x08", "secret"),
    ("newline and tab kept", "a\n\tb", "a\n\tb"),
]


@pytest.mark.parametrize(("case", "text", "shown"), TERMINAL_ATTACKS, ids=[a[0] for a in TERMINAL_ATTACKS])
def test_terminal_attacks(case: str, text: str, shown: str) -> None:
    assert terminal(text) == shown


MARKDOWN_ATTACKS = [
    ("html", "<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
    ("image", "![x](http://evil/p.png)", "!\\[x\\](http://evil/p.png)"),
    ("link", "[click](javascript:x)", "\\[click\\](javascript:x)"),
    ("emphasis", "**bold** *it*", "\\*\\*bold\\*\\* \\*it\\*"),
    ("code", "`rm -rf`", "\\`rm -rf\\`"),
    ("table cell", "a | b", "a \\| b"),
    ("underscore emphasis", "_it_", "\\_it\\_"),
    ("underscore inside a word kept", "gpt_4o_mini", "gpt_4o_mini"),
    ("entity", "&lt;", "&amp;lt;"),
    ("new line cannot start a heading", "x\n# Title", "x # Title"),
    ("escape sequences gone", "m\x1b[2J", "m"),
    ("backslash", "a\\*", "a\\\\\\*"),
]


@pytest.mark.parametrize(("case", "text", "line"), MARKDOWN_ATTACKS, ids=[a[0] for a in MARKDOWN_ATTACKS])
def test_markdown_attacks(case: str, text: str, line: str) -> None:
    assert markdown(text) == line


def test_encodable_table_cleans_text_cells_and_counts() -> None:
    import pandas as pd

    table = pd.DataFrame({"a": ["x\ud800", "ok"], "n": [1, 2]})
    cleaned, replaced = encodable_table(table)
    assert list(cleaned["a"]) == ["x\ufffd", "ok"] and list(cleaned["n"]) == [1, 2] and replaced == 1
    assert table["a"][0] == "x\ud800"  # the caller's table is left alone


@given(st.text())
def test_encodable_always_encodes_and_counts_its_replacements(text: str) -> None:
    found = encodable(text)
    found.text.encode("utf-8")
    assert len(found.text) == len(text)
    assert found.replaced == sum(1 for a, b in zip(text, found.text, strict=True) if a != b)
    assert encodable(found.text).replaced == 0  # safe text stays as it is


@given(st.text())
def test_terminal_leaves_no_control_but_newline_and_tab(text: str) -> None:
    shown = terminal(text)
    shown.encode("utf-8")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", shown)
    assert terminal(shown) == shown


@given(st.text())
def test_markdown_is_one_line_without_live_markup(text: str) -> None:
    line = markdown(text)
    assert "\n" not in line and "<" not in line
    unescaped = re.sub(r"\\.", "", line)  # what is left once every escaped character is taken out
    assert not re.search(r"[`*\[\]|]", unescaped)


def test_every_string_of_a_json_like_value_is_changed_keys_included_and_nothing_else() -> None:
    """strings_mapped: what masks a key in a cached reply (cache_gate.py) and makes a verifiers rollout's info
    encodable (verifiers_env.kept) alike, at any depth."""
    value = {"a\ud800": [{"b": "x\x00y"}, ("t", 3)], "n": None, "f": 1.5}
    changed = strings_mapped(value, lambda text: encodable(text).text.upper())
    assert changed == {"A\ufffd": [{"B": "X\ufffdY"}, ["T", 3]], "N": None, "F": 1.5}
