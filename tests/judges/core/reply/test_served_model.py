"""What a judge server says it ran is read from any reply shape, never a crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext.judges.core.reply.served_model import MAX_CHARS, NOT_REPORTED, ServedModel, served_model
from tests.judges.callers import FIXED, KEY, SHORT, judge_once
from tests.servers.judge import Behaviour, JudgeServer

pytestmark = pytest.mark.helm


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


# ---------------------------------------------------------------- through HELM's client and cache


def test_a_call_keeps_what_the_server_ran_live_and_replayed_from_helms_cache(tmp_path: Path) -> None:
    """Live, the reply's model and fingerprint; replayed, the stored reply's, even after the server changed."""
    with JudgeServer({"steady": Behaviour("steady", FIXED)}, reported_model="judge-v1", system_fingerprint="fp_1") as s:
        live = judge_once(tmp_path, s, "steady")
        s.reported_model, s.system_fingerprint = "judge-v2", None
        calls = s.count()
        replayed = judge_once(tmp_path, s, "steady")
        assert s.count() == calls, "the second call replays from HELM's cache"
        fresh = judge_once(tmp_path, s, "steady", prompt=SHORT + " (a new note)")
    assert live.served == replayed.served == ServedModel("judge-v1", "fp_1")
    assert fresh.served == ServedModel("judge-v2", None)


def test_a_key_the_server_puts_in_its_model_name_is_masked_in_the_cache_and_the_call(tmp_path: Path) -> None:
    with JudgeServer({"steady": Behaviour("steady", FIXED)}, reported_model=f"gateway-{KEY}") as s:
        outcome = judge_once(tmp_path, s, "steady", key=KEY)
    assert outcome.verdict is not None and outcome.served.reported_model is not None
    assert KEY not in outcome.served.reported_model and outcome.served.reported_model.startswith("gateway-")
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
