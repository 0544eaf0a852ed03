"""session.py: a panel made ready to judge once, the same way for the annotator and the recheck."""

from __future__ import annotations

from pathlib import Path

import pytest
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.helm_calls.call import JudgeAccessError
from helm_mtsamples_ext.judges.helm_calls.session import JudgingSession

pytestmark = pytest.mark.helm

URL = "http://127.0.0.1:9/v1"  # never contacted: opening a session and building its calls call no server


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> JudgingSession:
    monkeypatch.setenv("JUDGE_API_KEY_1", "sk-session-key-4242")
    auto_client = AutoClient({}, str(tmp_path), SqliteCacheBackendConfig(str(tmp_path)))
    panel = [JudgeSpec("a", "a", None, URL, 1), JudgeSpec("b", "b", None, URL, 1)]
    return JudgingSession.open(auto_client, panel, CallSettings.from_args(RunEntryArgs()))


def test_opening_binds_the_keys_and_builds_every_judges_target(session: JudgingSession) -> None:
    assert [j.name for j in session.judges] == ["a", "b"]
    assert session.secrets == ("sk-session-key-4242",)
    assert session.keep("echoed sk-session-key-4242") == "echoed ***"


def test_an_empty_answer_is_asked_about_to_no_one(session: JudgingSession) -> None:
    assert session.calls(None) == []


def test_a_named_failure_takes_the_place_of_a_call(session: JudgingSession) -> None:
    """A judge whose batch request failed is recorded with that failure; the others are called."""
    calls = session.calls(("prompt", ("answer",)), {"b": "batch request failed"})
    assert [endpoint for endpoint, _ in calls] == [session.judges[0].endpoint] * 2
    assert calls[1][1]() == Judgment(failure="batch request failed")


def test_a_fatal_failure_ends_the_run_before_the_next_note(session: JudgingSession) -> None:
    session.caller.fatal = JudgeAccessError("judge 'a': key refused")
    with pytest.raises(JudgeAccessError, match="key refused"):
        session.calls(("prompt", ("answer",)))


def test_an_unknown_hosted_deployment_fails_on_opening(tmp_path: Path) -> None:
    auto_client = AutoClient({}, str(tmp_path), SqliteCacheBackendConfig(str(tmp_path)))
    panel = [JudgeSpec("x", "nowhere/none", "nowhere/none")]
    with pytest.raises(JudgeAccessError, match="no model deployment"):
        JudgingSession.open(auto_client, panel, CallSettings.from_args(RunEntryArgs()))
