"""What a judge server says it ran is read from any reply shape, never a crash."""

from __future__ import annotations

from typing import Any

import pytest

from helm_mtsamples_ext.judges.served_model import MAX_CHARS, NOT_REPORTED, ServedModel, served_model


def test_model_and_fingerprint_are_read_from_a_completion() -> None:
    reply = {"id": "c1", "model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_0ba0d124f1", "choices": []}
    assert served_model(reply) == ServedModel("gpt-4o-mini-2024-07-18", "fp_0ba0d124f1")


def test_a_server_without_a_fingerprint_reports_only_its_model() -> None:
    assert served_model({"model": "llama-3.3-70b"}) == ServedModel("llama-3.3-70b", None)


@pytest.mark.parametrize(
    "reply",
    [
        {},
        {"model": None, "system_fingerprint": None},
        {"model": "", "system_fingerprint": "   "},
        {"model": 4, "system_fingerprint": ["fp"]},
        {"model": {"name": "x"}, "system_fingerprint": 1.5},
        [],
        None,
        "a string",
    ],
)
def test_anything_but_a_non_empty_string_is_not_reported(reply: Any) -> None:
    assert served_model(reply) == NOT_REPORTED


def test_values_are_stripped_and_bounded() -> None:
    reply = {"model": "  judge-v1\n", "system_fingerprint": "f" * (MAX_CHARS + 50)}
    got = served_model(reply)
    assert got.reported_model == "judge-v1"
    assert got.system_fingerprint == "f" * MAX_CHARS
