"""``inspect eval helm_mtsamples_ext/mtsamples_procedures`` end to end, as a user types it: the real CLI against a
loopback model under test and a loopback panel (one judge steady, one that loses its verdict on one note), the
notes from a loopback mirror of the synthetic notes. The log must hold our rewards for the verdicts the judges
gave, the failed judge unscored with its reason (never a low score), and each judge's usage."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import pytest
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.scorer import Score

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.failure_kinds import (
    CONNECTION_FAILED,
    CONTEXT_FAILURE,
    JUDGE_UNAVAILABLE,
    NO_VERDICT,
    REQUEST_REFUSED,
    failure_kind,
)
from helm_mtsamples_ext.common.record import JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.data.instances import build_samples
from helm_mtsamples_ext.scoring.reward import score_note
from tests.doors.inspect.eval_command import eval_command, eval_env
from tests.servers.judge import Behaviour, JudgeServer, hashed_scores
from tests.servers.loopback import closed_port_url
from tests.servers.model import ModelServer, default_answer
from tests.synthetic_notes import SyntheticNotes, notes_in

pytestmark = pytest.mark.inspect

MARKER = Behaviour("lost_some").fail_marker
LIMIT = 3
LOST_NOTE = 1
"""The note (in dataset order) whose plan carries the marker that makes judge ``b`` lose its verdict."""


def inspect_eval(
    notes: SyntheticNotes,
    tmp: Path,
    judges: Mapping[str, str | Behaviour],
    *task_args: str,
    urls: Callable[[str], str] = lambda served: served,
    judge_key: str | None = None,
) -> tuple[subprocess.CompletedProcess[str], EvalLog | None, JudgeServer]:
    """``inspect eval`` on the first notes, judges ``judges`` on a loopback server (``judge_base_url`` is
    ``urls(its URL)``; with ``judge_key``, the server takes only that key and ``JUDGE_API_KEY`` gives it); the
    command, its log and the server."""
    lost_input = build_samples(notes_in(notes.directory), "helm").samples[LOST_NOTE].input

    def answer_for(prompt: str) -> str:
        return default_answer(prompt) + (f" {MARKER}" if lost_input in prompt else "")

    with notes.mirror() as mirror, ModelServer(answer_for) as model, JudgeServer(judges, api_key=judge_key) as server:
        env = eval_env(mirror.env, tmp, model.base_url) | ({"JUDGE_API_KEY": judge_key} if judge_key else {})
        command = eval_command(
            tmp, "--limit", str(LIMIT), "-T", f"judges={'+'.join(judges)}",
            "-T", f"judge_base_url={urls(server.base_url)}", *task_args,
        )  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    logs = list((tmp / "logs").glob("*.eval"))
    return done, read_eval_log(str(logs[0])) if len(logs) == 1 else None, server


@pytest.fixture(scope="module")
def run(synthetic_notes: SyntheticNotes, tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalLog, JudgeServer]:
    done, log, server = inspect_eval(
        synthetic_notes, tmp_path_factory.mktemp("eval"), {"a": "steady", "b": "lost_some"}
    )
    assert done.returncode == 0 and log is not None, done.stderr[-3000:]
    return log, server


def panel_score(sample: EvalSample) -> Score:
    """The sample's score from our panel (the scorer is named after its function)."""
    assert sample.scores is not None
    return sample.scores["panel_scorer"]


def value(sample: EvalSample) -> dict[str, Any]:
    found = panel_score(sample).value
    assert isinstance(found, dict)
    return cast(dict[str, Any], found)


def _expected(judges: JudgeServer, answer: str) -> tuple[dict[str, dict[str, int] | None], float | None]:
    """Each judge's scores for the note whose plan is ``answer`` (None when it gave no verdict), and the reward
    our scoring gives for them."""
    verdicts: dict[str, dict[str, int] | None] = {}
    for name in ("a", "b"):
        (prompt,) = {p for p in judges.prompts_for(name) if answer in p}
        verdicts[name] = None if name == "b" and MARKER in answer else hashed_scores(name, prompt)
    entries = {
        n: JudgeEntry(scores=dict(s)) if s else JudgeEntry(status="failed", failure=NO_VERDICT)
        for n, s in verdicts.items()
    }
    return verdicts, score_note(NoteRecord(judges=entries), ["a", "b"]).reward


def test_the_eval_succeeds_on_the_first_notes(run: tuple[EvalLog, JudgeServer]) -> None:
    log, _ = run
    assert log.status == "success" and log.samples is not None and len(log.samples) == LIMIT
    assert (log.eval.task, log.eval.dataset.name) == (f"helm_mtsamples_ext/{names.RUN_ENTRY}", names.RUN_ENTRY)


def test_each_reward_is_our_scoring_of_the_verdicts_the_judges_gave(run: tuple[EvalLog, JudgeServer]) -> None:
    log, judges = run
    assert log.samples
    for sample in log.samples:
        assert sample.scores is not None
        score = sample.scores["panel_scorer"]
        verdicts, reward = _expected(judges, sample.output.completion)
        assert isinstance(score.value, dict) and reward is not None
        assert score.value["reward"] == pytest.approx(reward)
        assert score.metadata is not None
        for name, scores in verdicts.items():
            recorded = score.metadata["judges"][name]
            assert {d: recorded[d]["score"] for d in DIMENSIONS} == (scores or dict.fromkeys(DIMENSIONS))


def test_a_judge_that_lost_its_verdict_is_unscored_with_its_reason(run: tuple[EvalLog, JudgeServer]) -> None:
    log, _ = run
    assert log.samples
    lost = log.samples[LOST_NOTE]
    assert MARKER in lost.output.completion
    assert lost.scores is not None
    score = lost.scores["panel_scorer"]
    metadata: dict[str, Any] = score.metadata or {}
    assert metadata["failures"] == {"b": NO_VERDICT}
    assert metadata["judges"]["b"]["status"] == "failed" and metadata["judge_rewards"]["b"] is None
    assert value(lost)["reward"] == pytest.approx(metadata["judge_rewards"]["a"])
    others = [s for i, s in enumerate(log.samples) if i != LOST_NOTE]
    assert all((panel_score(s).metadata or {})["failures"] == {} for s in others)


def test_the_metrics_are_the_means_of_the_notes_scored(run: tuple[EvalLog, JudgeServer]) -> None:
    log, _ = run
    assert log.results is not None and log.samples
    metrics = {(s.name, m.name): m.value for s in log.results.scores for m in s.metrics.values()}
    rewards = [value(s)["reward"] for s in log.samples]
    assert metrics[("reward", "mean")] == pytest.approx(sum(rewards) / len(rewards))
    assert math.isfinite(metrics[("reward", "bootstrap_stderr")])
    assert math.isnan(metrics[("reward", "ci_low")]) and math.isnan(metrics[("reward", "ci_high")])  # 3 notes: none
    assert [v for (name, _), v in metrics.items() if name == "unjudged"] == [0.0]
    assert {d for d in DIMENSIONS} <= {name for name, _ in metrics}


def test_the_judges_usage_is_inspects_per_model(run: tuple[EvalLog, JudgeServer]) -> None:
    log, _ = run
    usage = log.stats.model_usage
    assert {"openai-api/loop/m", "openai-api/judge/a", "openai-api/judge/b"} <= set(usage)
    assert all(usage[m].total_tokens > 0 for m in ("openai-api/judge/a", "openai-api/judge/b"))


def test_a_note_no_judge_scored_is_left_out_of_the_means_not_counted_as_0(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    done, log, _ = inspect_eval(synthetic_notes, tmp_path, {"b": "lost_some"}, "-T", "max_unjudged=0.5")
    assert done.returncode == 0 and log is not None and log.samples and log.results, done.stderr[-3000:]
    lost = log.samples[LOST_NOTE]
    assert panel_score(lost).reason == "unjudged" and math.isnan(value(lost)["reward"])
    judged = [value(s)["reward"] for i, s in enumerate(log.samples) if i != LOST_NOTE]
    metrics = {(s.name, m.name): m.value for s in log.results.scores for m in s.metrics.values()}
    assert metrics[("reward", "mean")] == pytest.approx(sum(judged) / len(judged))
    assert [v for (name, _), v in metrics.items() if name == "unjudged"] == [pytest.approx(1 / LIMIT)]


def test_more_unjudged_notes_than_max_unjudged_fail_the_eval_in_one_line(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """As HELM's metric fails the run: a mean over the notes judged would hide a broken panel. The log says the
    eval failed, and why; ``inspect eval`` exits 1 with that line last (test_void_result.py: every display)."""
    done, log, _ = inspect_eval(synthetic_notes, tmp_path, {"b": "lost_some"})
    assert log is not None and log.status == "error" and log.error is not None
    assert "33% of the notes were judged by no judge (max_unjudged=0)" in log.error.message
    assert done.returncode == 1 and "33% of the notes were judged by no judge" in done.stderr.splitlines()[-1]


def test_the_judges_are_asked_for_the_verdict_schema(run: tuple[EvalLog, JudgeServer]) -> None:
    _, judges = run
    assert {r.response_format for r in judges.requests} == {"json_schema"}


def test_a_reply_without_a_verdict_gets_one_repair_turn_then_stops_on_the_same_reply(
    run: tuple[EvalLog, JudgeServer],
) -> None:
    """As HELM's path (judges/helm_calls/call.py): up to two repair turns, none once the judge repeats its bad reply."""
    _, judges = run
    lost = [r for r in judges.requests if r.model == "b" and MARKER in r.prompt]
    assert sorted(r.turns for r in lost) == [1, 2]  # the prompt; then prompt, reply, REPAIR_INSTRUCTION


def test_a_judge_refusing_response_formats_is_asked_without_one(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """``judge_structured=auto``: json_schema, then llama.cpp's json_object, then none, each dropped only when the
    server's refusal names it; the verdicts then count as any other."""
    done, log, judges = inspect_eval(synthetic_notes, tmp_path, {"a": "format_refuser"})
    assert log is not None and log.status == "success" and log.samples, done.stderr[-3000:]
    assert all(not (panel_score(s).metadata or {})["failures"] for s in log.samples)
    order = ["json_schema", "json_object", None]
    for prompt in {r.prompt for r in judges.requests}:
        tried = [r.response_format for r in judges.requests if r.prompt == prompt]
        assert tried == order[len(order) - len(tried) :]  # from where the judge's memory stood, down to none


def test_a_judge_refusing_the_schema_with_a_500_is_asked_in_the_next_form_without_retrying(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """llama-cpp-python's server (the README's key-free judge) answers a json_schema response_format with HTTP 500
    (pydantic's literal_error). Inspect retries a 500, with a backoff that doubles up to ``judge_max_wait``; a
    refusal naming the format, with another form left to try, goes to the next form at once instead."""
    done, log, judges = inspect_eval(synthetic_notes, tmp_path, {"a": "schema_refuser"}, "-T", "judge_max_wait=60")
    assert log is not None and log.status == "success" and log.samples, done.stderr[-3000:]
    assert all(not (panel_score(s).metadata or {})["failures"] for s in log.samples)
    for prompt in {r.prompt for r in judges.requests}:  # notes judged at once may each meet the refusal, once
        tried = [r.response_format for r in judges.requests if r.prompt == prompt]
        assert tried in (["json_schema", "json_object"], ["json_object"]), tried


def test_a_judge_url_that_could_carry_a_key_is_refused_before_any_log_holds_it(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """The log stores the task's arguments: a URL with user:password@ is refused in HELM's words, and no log is
    written."""
    command = [
        str(Path(sys.executable).parent / "inspect"), "eval", "helm_mtsamples_ext/mtsamples_procedures",
        "--model", "openai-api/loop/m", "--display", "none", "--log-dir", str(tmp_path / "logs"),
        "-T", "judges=a", "-T", "judge_base_url=http://me:hunter2@127.0.0.1:9/v1",
    ]  # fmt: skip
    env = {**os.environ, **synthetic_notes.env(), "LOOP_BASE_URL": "http://127.0.0.1:9/v1", "LOOP_API_KEY": "EMPTY"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "judge_base_url must not carry user:password@" in done.stderr and "hunter2" not in done.stderr
    assert not list((tmp_path / "logs").glob("*.eval"))


GONE_WAIT = 8.0
"""judge_max_wait for the judge whose connection drops: long enough for a dropped connection to be seen and retried
even on a loaded machine (with none seen before the deadline, "timed out" would be the right name, and the test
would fail)."""


def test_a_judge_failing_at_the_wire_is_named_in_the_cores_kinds(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """A failure is named as HELM's path names it (common/failure_kinds.py), never in Inspect's or tenacity's
    words: a client error, a prompt over the judge's context (Inspect turns it into a reply stopped for
    "model_length"), a tool call, an empty reply, a server that drops every chat call's connection (given up at
    judge_max_wait while Inspect still retries it, or, once its breaker opened, as the judge unavailable with the
    connection's failure, as on HELM's path)."""
    judges: dict[str, str | Behaviour] = {
        "reject": "reject",
        "small": Behaviour("context_limit", context_words=10),
        "tools": "tool_caller",
        "empty": "empty",
        "gone": "hangup",
    }
    done, log, server = inspect_eval(
        synthetic_notes, tmp_path, judges, "-T", "max_unjudged=1", "-T", f"judge_max_wait={GONE_WAIT:g}"
    )
    assert log is not None and log.status == "success" and log.samples, done.stderr[-3000:]
    expected = {
        "reject": REQUEST_REFUSED,
        "small": CONTEXT_FAILURE,
        "tools": "no text",
        "empty": "empty reply",
    }
    for sample in log.samples:
        failures = (panel_score(sample).metadata or {})["failures"]
        gone = failures.pop("gone")
        assert {j: failure_kind(f) for j, f in failures.items()} == expected, failures
        assert failure_kind(gone) in (CONNECTION_FAILED, JUDGE_UNAVAILABLE) and CONNECTION_FAILED in gone, gone
        assert failures["reject"].startswith(f"{REQUEST_REFUSED}: HTTP 400")
    assert server.count("small") == LIMIT  # no repair turn and no retry: a larger budget would not fit either
    # A client error is not the format's fault (Inspect's error text repeats the request, response_format and all)
    assert [r.response_format for r in server.requests if r.model == "reject"] == ["json_schema"] * LIMIT


@pytest.mark.parametrize(
    ("task_args", "notes_url", "said"),
    [
        (["-T", "judge_prompt=helm"], None, "judge_prompt=helm needs HELM's own template"),
        (["-T", "judges=a+a"], None, "judges must name different judges"),
        ([], "closed", "cannot be reached"),
        (
            ["-T", "judges=a", "-T", f"judge_base_url={closed_port_url()}"],
            None,
            "cannot be reached (connection refused): start the server or fix judge_base_url",
        ),
    ],
    ids=["helm prompt", "same judge twice", "notes unreachable", "judge unreachable"],
)
def test_a_mistake_the_user_fixes_is_one_last_line_and_no_traceback(
    synthetic_notes: SyntheticNotes, tmp_path: Path, task_args: list[str], notes_url: str | None, said: str
) -> None:
    """A wrong argument, notes or a judge out of reach end the eval with exit 1 and one line, last, naming the cause
    and the fix, before the model under test is asked anything: no traceback, no line broken at the terminal's
    width, no log."""
    env = {
        **os.environ,
        **synthetic_notes.env(closed_port_url().removesuffix("/v1") + "/" if notes_url else None),
        "MTSAMPLES_PROCEDURES_CACHE_DIR": str(tmp_path / "notes"),
        "LOOP_BASE_URL": "http://127.0.0.1:9/v1",
        "LOOP_API_KEY": "EMPTY",
    }
    command = [
        str(Path(sys.executable).parent / "inspect"), "eval", "helm_mtsamples_ext/mtsamples_procedures",
        "--model", "openai-api/loop/m", "--display", "none", "--log-dir", str(tmp_path / "logs"), *task_args,
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("mtsamples_procedures: ") and said in last, done.stderr[-2000:]
    assert "Traceback" not in done.stderr + done.stdout
    assert not list((tmp_path / "logs").glob("*.eval"))


SECRET = "sk-judge-0123456789abcdef"
"""A provider-shaped judge key, which the judges below repeat word for word."""


def test_a_judge_echoing_its_key_never_gets_it_into_the_log_or_the_output(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """In an explanation, as a score, in an error's text with any status: the key is in no file the eval wrote
    (the log holds every judge call's reply) nor in its output, and a score the judge gave as the key is no score."""
    judges = {"echo": "key_echo", "score": "key_score", "e401": "leaky", "e500": "leaky_500", "e200": "leaky_200"}
    done, log, server = inspect_eval(
        synthetic_notes, tmp_path, judges, "-T", "max_unjudged=1", "-T", "judge_max_wait=5", judge_key=SECRET
    )
    assert log is not None and log.samples, done.stderr[-3000:]
    assert {r.authorization for r in server.requests} == {f"Bearer {SECRET}"}
    written = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in _unpacked(p)]
    assert written == [] and SECRET not in done.stdout + done.stderr
    for sample in log.samples:
        recorded = (panel_score(sample).metadata or {})["judges"]
        assert all("***" in recorded["echo"][d]["explanation"] for d in DIMENSIONS)
        assert recorded["score"]["clarity"]["score"] is None, "the key is no score"
        assert all(recorded[j]["status"] == "failed" for j in ("e401", "e500", "e200"))


def test_each_judge_endpoint_takes_its_own_numbered_key_as_on_helms_path(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """``JUDGE_API_KEY_<n>`` for the n-th ``judge_base_url``, the rule of HELM's path: two servers that each take
    only their own key judge every note, each saw only its key, and neither key is in a file the eval wrote."""
    keys = ("sk-first-endpoint-0123456789", "sk-second-endpoint-9876543210")
    with (
        synthetic_notes.mirror() as mirror,
        ModelServer(default_answer) as model,
        JudgeServer({"a": "steady"}, api_key=keys[0]) as first,
        JudgeServer({"b": "steady"}, api_key=keys[1]) as second,
    ):
        env = eval_env(mirror.env, tmp_path, model.base_url) | {"JUDGE_API_KEY_1": keys[0], "JUDGE_API_KEY_2": keys[1]}
        command = eval_command(
            tmp_path, "--limit", "2", "-T", "judges=a+b", "-T", f"judge_base_url={first.base_url}+{second.base_url}"
        )
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.samples and len(log.samples) == 2, done.stderr[-3000:]
    assert {r.authorization for r in first.requests} == {f"Bearer {keys[0]}"}
    assert {r.authorization for r in second.requests} == {f"Bearer {keys[1]}"}
    for sample in log.samples:
        recorded = (panel_score(sample).metadata or {})["judges"]
        assert all(recorded[j][d]["score"] is not None for j in ("a", "b") for d in DIMENSIONS), recorded
    for key in keys:
        assert [p for p in tmp_path.rglob("*") if p.is_file() and key.encode() in _unpacked(p)] == []
        assert key not in done.stdout + done.stderr


def test_a_judge_that_died_fails_its_next_calls_at_once_as_on_helms_path(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """A judge whose server closes every chat call: once three notes' calls to it are lost, its breaker declines
    the retries Inspect would make until judge_max_wait and names the judge unavailable; the steady judge's
    verdicts still make every reward."""
    done, log, server = inspect_eval(
        synthetic_notes, tmp_path, {"a": "steady", "h": "hangup"}, "-T", "judge_max_wait=120"
    )
    assert log is not None and log.status == "success" and log.samples, done.stderr[-3000:]
    failures = [(panel_score(s).metadata or {})["failures"]["h"] for s in log.samples]
    assert all(CONNECTION_FAILED in f for f in failures), failures
    assert any(failure_kind(f) == JUDGE_UNAVAILABLE for f in failures), failures
    assert server.counts["h"] <= 2 * LIMIT, "without the breaker Inspect retries each note until judge_max_wait"
    for sample in log.samples:
        assert set((panel_score(sample).metadata or {})["judge_rewards"]) == {"a", "h"}
        assert value(sample)["reward"] == (panel_score(sample).metadata or {})["judge_rewards"]["a"]


def _unpacked(path: Path) -> bytes:
    """The file's bytes, and each member's for a zip (an Inspect ``.eval`` log is one, its members compressed)."""
    raw = path.read_bytes()
    if not zipfile.is_zipfile(path):
        return raw
    with zipfile.ZipFile(path) as archive:
        return raw + b"".join(archive.read(name) for name in archive.namelist())
