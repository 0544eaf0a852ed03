"""Text and URLs from outside, through HELM's real helm-run and helm-mtsamples-report (loopback model, judge and
note servers): a lone surrogate in a model's answer and in a judge's explanation ends neither the run, nor its
re-run from HELM's cache, nor the report; a judge server's hostile reported model is data in report.md and on
stdout; judge_base_url's query reaches the server as a query, and a URL carrying a secret is refused in one line
that never repeats it, leaving it in no file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.helm_tools import (
    BIN,
    P,
    files_containing,
    helm_tool,
    register_loopback_model,
    request_states,
    run_dir,
    user_env,
)
from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.mirror import NoteMirror

pytestmark = pytest.mark.e2e

HOSTILE_MODEL = "<img src=x onerror=alert(1)>\x1b[2J\x1b]0;owned\x07**judge** \u202eevil"
FOURS = {"accuracy": 4, "completeness": 4, "clarity": 4}


def test_unencodable_text_and_a_hostile_server_break_no_run_no_rerun_and_no_report(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    panel = {
        "writer": Behaviour("unencodable"),
        "steady": Behaviour("steady", FOURS),
        "garbled": Behaviour("unencodable_judge", FOURS),
    }
    with JudgeServer(panel, reported_model=HOSTILE_MODEL) as server:
        model = register_loopback_model(tmp_path / "prod_env", server.base_url, "writer")
        entry = f"{P}:model={model},judges=steady+garbled,judge_base_url={server.base_url}"
        env = user_env(**mirror.env)
        args = ["--run-entries", entry, "--suite", "odd", "-m", "2", "-n", "1"]
        first = helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        calls = server.count()
        assert server.count("steady") == 2 and server.count("garbled") == 2
        judge_prompts = server.prompts_for("steady")
        again = helm_tool("helm-run", *args, cwd=tmp_path, env=env)  # HELM's cache holds the surrogate answer
        assert server.count() == calls, "the re-run replays the answers and the verdicts from HELM's cache"
        report = helm_tool("helm-mtsamples-report", "--suite", "odd", "--bootstrap", "20", cwd=tmp_path, env=env)

    assert "Traceback" not in first + again + report
    assert "holds 2 character(s) no file can hold" in first  # named where it entered
    assert all("Watch the \ufffd wound\ufffd." in prompt for prompt in judge_prompts)  # judged, made safe
    states = request_states(run_dir(tmp_path / "benchmark_output", "odd"))
    assert len(states) == 2
    for state in states:
        # kept made safe too: HELM's own metrics encode every token of it (medhelm's crashed on the surrogate)
        assert state["result"]["completions"][0]["text"].endswith("Watch the \ufffd wound\ufffd.")
        record = state["annotations"][P]
        assert record["failed_judges"] == []
        assert record["garbled"]["accuracy"] == {"score": 4, "explanation": "accurate \ufffd plan\ufffd[2J"}
    out = tmp_path / "benchmark_output" / "mtsamples_report" / "odd"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "accurate \ufffd plan\ufffd[2J" in page and "Watch the \ufffd wound" in page
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "<img" not in md and "\x1b" not in md and "\u202e" not in md
    assert "\x1b" not in report and "\x07" not in report and "\u202e" not in report


def test_the_query_of_judge_base_url_reaches_the_server_as_a_query(mirror: NoteMirror, tmp_path: Path) -> None:
    with JudgeServer({"steady": Behaviour("steady", FOURS)}) as server:
        url = f"{server.base_url}?api-version=2024-02-15-preview"
        entry = f"{P}:model=simple/model1,judges=steady,judge_base_url={url}"
        helm_tool("helm-run", "--run-entries", entry, "--suite", "q", "-m", "1", "-n", "1",
                  cwd=tmp_path, env=user_env(**mirror.env))  # fmt: skip
    assert server.post_paths == ["/v1/chat/completions?api-version=2024-02-15-preview"]
    assert "/v1/models?api-version=2024-02-15-preview" in server.get_requests


SECRET = "Zq9xK2mP7vL4nR8tW3yB6cF1"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:9/v1;key=" + SECRET, ";parameters"),
        ("http://127.0.0.1:9/v1#" + SECRET, "#fragment"),
        ("http://127.0.0.1:9/" + SECRET + "/v1", "path segment that reads as a key"),
        ("http://127.0.0.1:9/v1?api-version=" + SECRET, "a value that reads as a key"),
        ("htp//user:" + SECRET + "@127.0.0.1:9/v1", "must be an http(s) URL"),
    ],
    ids=["params", "fragment", "path", "query-value", "mistyped"],
)
def test_a_url_carrying_a_secret_is_refused_in_one_line_and_written_nowhere(
    tmp_path: Path, url: str, said: str
) -> None:
    entry = f"{P}:model=simple/model1,judges=a,judge_base_url={url}"
    done = subprocess.run(
        [str(BIN / "helm-run"), "--run-entries", entry, "--suite", "s", "-m", "1", "-n", "1"],
        cwd=tmp_path, env=user_env(), capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    said_all = done.stdout + done.stderr
    assert done.returncode != 0 and said in said_all and "Traceback" not in said_all
    assert SECRET not in said_all
    assert files_containing(tmp_path, SECRET) == []
