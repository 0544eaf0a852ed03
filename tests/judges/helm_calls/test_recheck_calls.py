"""judges/helm_calls/recheck_calls.py: the panel asked again, live every time, with the run's keys, writing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.prompt import build_prompt
from helm_mtsamples_ext.judges.helm_calls.recheck_calls import ask_again, uncached_client
from tests.servers.judge import Behaviour, JudgeServer

pytestmark = pytest.mark.helm

KEY = "sk-recheck-credentials-conf-5d1e"
FIXED = {"accuracy": 3, "completeness": 4, "clarity": 5}


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_every_ask_reaches_the_server_with_the_runs_key_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("JUDGE_API_KEY", "JUDGE_API_KEY_1", "HELM_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    with JudgeServer({"a": Behaviour("steady", FIXED), "b": "steady"}, api_key=KEY, reported_model="v7") as server:
        local = tmp_path / "prod_env"
        local.mkdir()
        (local / "credentials.conf").write_text(f'judgeApiKeys: {{"{server.base_url}": "{KEY}"}}\n')
        before = files(tmp_path)
        panel = [JudgeSpec(name, name, None, server.base_url, 1) for name in ("a", "b")]
        answer, note = "Rest and review in two weeks.", "PROCEDURE: arthroscopy."
        question = (build_prompt(note, answer, "Review in two weeks.", "ours"), (answer, note))
        with uncached_client(str(local)) as client:
            first = ask_again(client, panel, RunEntryArgs(), {}, [question])
            again = ask_again(client, panel, RunEntryArgs(), {}, [question])
        assert server.count("a") == server.count("b") == 2, "no reply may come from a cache"
        assert first == again
        (record,) = first
        assert {d: record["a"][d]["score"] for d in FIXED} == FIXED
        assert record["a"]["reported_model"] == "v7" and record["b"]["status"] == "ok"
        assert files(tmp_path) == before, "nothing under the local path (no cache, no record) is written"
