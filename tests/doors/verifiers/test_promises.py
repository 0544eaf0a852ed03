"""The verifiers door keeps HELM's door's promises (issue 42): no lost judgment scored 0, a one-slot judge paced,
a keyless local judge accepted, failures named in the core's words and shown beside the reward, runs that end.

In process (``evaluate_sync``) unless the promise is the command's: then ``medarc-eval`` or ``vf-eval`` itself,
with verifiers' env server, as a user runs them."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import pytest
import verifiers as vf
from verifiers.utils.worker_utils import msgpack_encoder

from helm_mtsamples_ext import verifiers_env
from helm_mtsamples_ext.common.failure_kinds import DOOR_FAILED, reply_too_long
from helm_mtsamples_ext.common.outside_text import REPLACEMENT
from helm_mtsamples_ext.judges.core.reply.shape import completion_failure
from helm_mtsamples_ext.judges.core.settings import REPLY_CAP
from helm_mtsamples_ext.judges.openai_calls import judge as async_openai
from helm_mtsamples_ext.scoring.reward import FLOOR_REWARD
from tests.doors.verifiers.door import (
    ENV_ID,
    FAIL_MARKER,
    KEY_VAR,
    answer_for,
    completion_text,
    evaluation,
    explanations_of,
    judge_prompt,
    judge_reward,
    judges_of,
)
from tests.servers.judge import UNENCODABLE_ANSWER, JudgeServer
from tests.servers.model import ModelServer

pytestmark = [pytest.mark.verifiers, pytest.mark.usefixtures("notes_env")]

KEY = "sk-judge-0123456789abcdef"
HUGE = 5_000_000


def run(
    server: JudgeServer, n: int = 2, key: str | None = KEY, model: ModelServer | None = None, **env_args: Any
) -> list[dict[str, Any]]:
    """``n`` notes through the environment in process, judged by every judge ``server`` plays."""
    with model or ModelServer(answer_for) as model_server:
        env = vf.load_environment(
            ENV_ID, judge_model=list(server.judges), judge_base_url=server.base_url, judge_api_key=key, **env_args
        )
        client = vf.ClientConfig(api_key_var=KEY_VAR, api_base_url=model_server.base_url, timeout=60, max_retries=0)
        return list(env.evaluate_sync(client=client, model="alpha", num_examples=n)["outputs"])


feedback_of = judges_of


def test_each_reply_shape_is_named_as_the_core_names_it() -> None:
    """An HTML page, a 200 with only an error, an error beside choices, a choice with no message, a 5 MB reply:
    each judge's failure is ``completion_failure``'s (or the core's ``reply too long``) word for word, never an
    exception's text; the steady judge's verdict still makes the reward."""
    shapes = ["html", "leaky_200", "error_beside", "no_message", "huge"]
    with JudgeServer({"ja": "steady", **{s: s for s in shapes}}, huge_bytes=HUGE) as server:
        outputs = run(server, n=1, judge_max_wait=10)
    masked = "upstream refused Authorization: Bearer ***"
    expected = {
        "html": completion_failure(None),
        "leaky_200": completion_failure({"error": {"message": masked}}),
        "error_beside": completion_failure(
            {"choices": [{"message": {}}], "error": {"message": "upstream model failed"}}
        ),
        "no_message": completion_failure({"choices": [{"finish_reason": "stop"}]}),
        "huge": reply_too_long(HUGE, REPLY_CAP),
    }
    feedback = feedback_of(outputs[0])
    assert {s: feedback[s]["error"] for s in shapes} == expected
    assert outputs[0]["reward"] == pytest.approx(judge_reward(server.scores_for("ja", judge_prompt(outputs[0]))))
    assert len(feedback["huge"]["raw"]) <= REPLY_CAP, "kept clipped"
    assert server.counts["huge"] == 1, "a reply over the cap is never sent back in a repair turn"


@pytest.mark.parametrize("body", ["<html><body>Sign in</body></html>", '["not", "a", "completion"]', b"\x00\xff"])
def test_a_body_the_sdk_hands_back_unparsed_is_a_named_failure(body: str | bytes) -> None:
    """The openai SDK returns a 200's body as a str when it is not JSON; a model it could not dump raises."""
    exchange = async_openai._read(body, "json_schema")
    assert exchange.failure is not None and exchange.failure.startswith("not a chat completion: ")

    class Broken:
        def model_dump(self) -> dict[str, Any]:
            raise ValueError("1 validation error for ChatCompletion")

    assert async_openai._read(Broken(), "off").failure == completion_failure({})


def test_a_judges_exception_is_its_named_failure_and_the_others_still_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """verifiers scores a reward function's exception 0: here an exception in one judge's call is that judge's
    failure, named, and the other judge's verdict makes the reward."""
    judge = async_openai.AsyncJudge.judge

    async def raising(self: async_openai.AsyncJudge, *args: Any, **kwargs: Any) -> Any:
        if self.model == "jx":
            raise KeyError("choices")
        return await judge(self, *args, **kwargs)

    monkeypatch.setattr(async_openai.AsyncJudge, "judge", raising)
    with JudgeServer({"ja": "steady", "jx": "steady"}) as server:
        outputs = run(server)
    for output in outputs:
        feedback = feedback_of(output)
        assert feedback["jx"]["error"] == "failed in the door: the verifiers environment: KeyError: 'choices'"
        assert feedback["jx"]["failure_kind"] == DOOR_FAILED == output["info"]["record"]["jx"]["failure_kind"]
        assert output["reward"] == pytest.approx(judge_reward(server.scores_for("ja", judge_prompt(output))))
        assert output["judge_failed_jx"] == 1.0 and output["judge_failed_ja"] == 0.0


def test_an_exception_outside_the_judges_leaves_the_note_unjudged_and_named_never_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(verifiers_env, "score_note", broken)
    with JudgeServer({"ja": "steady"}) as server:
        outputs = run(server)
    for output in outputs:
        assert math.isnan(output["reward"]) and math.isnan(output["reward_mtsamples"])
        failure = "failed in the door: the verifiers environment: ZeroDivisionError: division by zero"
        assert evaluation(output)["error"] == failure and feedback_of(output)["ja"]["error"] == failure
        assert feedback_of(output)["ja"]["failure_kind"] == DOOR_FAILED, "the kind beside the text, no record here"
        assert output["reward_failed_at_min"] == FLOOR_REWARD


def test_each_judges_failed_share_and_the_reward_failed_at_min_are_shown() -> None:
    """Zero-weight metrics beside the reward: ``judge_failed_<judge>`` (1.0 on a note the judge failed) and
    ``reward_failed_at_min`` (each failed judgment at the scale's minimum, 1/5), as HELM's report shows them."""
    with JudgeServer({"ja": "steady", "jb": "lost_some"}) as server:
        outputs = run(server, n=3)
    for output in outputs:
        ja = judge_reward(server.scores_for("ja", judge_prompt(output)))
        if FAIL_MARKER in completion_text(output):
            assert (output["judge_failed_ja"], output["judge_failed_jb"]) == (0.0, 1.0)
            assert output["reward"] == pytest.approx(ja)
            assert output["reward_failed_at_min"] == pytest.approx((ja + FLOOR_REWARD) / 2)
        else:
            assert (output["judge_failed_ja"], output["judge_failed_jb"]) == (0.0, 0.0)
            assert output["reward_failed_at_min"] == pytest.approx(output["reward"])
    assert sum(o["judge_failed_jb"] for o in outputs) == 1


def test_a_one_slot_judge_gets_one_call_at_a_time_in_every_loop() -> None:
    """llama-cpp-python's server (``owned_by: "me"``) takes one call at a time: two judges on it, four notes at
    once, and never two calls in flight; a second ``evaluate_sync`` (a new event loop) is paced as well."""
    with JudgeServer({"ja": "steady", "jb": "steady"}, one_at_a_time=0.05, owned_by="me") as server:
        with ModelServer(answer_for) as model:
            env = vf.load_environment(ENV_ID, judge_model=["ja", "jb"], judge_base_url=server.base_url)
            client = vf.ClientConfig(api_key_var=KEY_VAR, api_base_url=model.base_url, timeout=60, max_retries=0)
            runs = [env.evaluate_sync(client=client, model="alpha", num_examples=4)["outputs"] for _ in range(2)]
    assert server.max_in_flight == 1 and server.count() == 16
    assert all(not math.isnan(o["reward"]) and o["judge_failed_ja"] == 0.0 for outputs in runs for o in outputs)


def test_a_keyless_local_judge_is_accepted_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with JudgeServer({"ja": "steady"}) as server:
        outputs = run(server, n=1, key=None)
    (line,) = [r.getMessage() for r in caplog.records if "has no API key" in r.getMessage()]
    assert not [r for r in caplog.records if "refused as a key" in r.getMessage()], "no key is no short key"
    assert line.startswith("judge ja at http://127.0.0.1:") and line.endswith("it is sent without one, as to a "
                                                                               "keyless local server")  # fmt: skip
    assert {r.authorization for r in server.requests} == {"Bearer EMPTY"}, "the placeholder the other doors send"
    assert not math.isnan(outputs[0]["reward"])


def medarc_eval(model: ModelServer, judges: JudgeServer, cwd: Path, *more: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("medarc-eval")), ENV_ID, "-m", "alpha", "-b", model.base_url]
    command += ["-k", KEY_VAR, "-r", "1", "--judge-model", *judges.judges, "--judge-base-url", judges.base_url, *more]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def results(cwd: Path) -> list[dict[str, Any]]:
    (path,) = cwd.glob("outputs/evals/*/*/results.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.timeout(300)
def test_the_readmes_medarc_eval_line_judges_every_note_on_a_one_slot_keyless_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/verifiers.md's line (``--judge-model``, ``--judge-base-url``, ``--env-arg judge_prompt=ours``,
    ``-n 3``) against llama-cpp-python's server as the README starts it: no key, one call at a time, HTTP 500 to
    ``json_schema``.
    Every note judged, none 0; before issue 42 each scored 0.0 ('unreachable: the last format's failure is
    returned') and a keyless judge was refused with a traceback."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with JudgeServer({"smollm2": "schema_refuser"}, one_at_a_time=0.3, owned_by="me") as judges:
        with ModelServer(answer_for) as model:
            done = medarc_eval(model, judges, tmp_path, "--env-arg", "judge_prompt=ours", "-n", "3")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "judge smollm2 at " in done.stderr and "it is sent without one" in done.stderr
    rewards = [o["reward"] for o in results(tmp_path)]
    assert len(rewards) == 3 and all(not math.isnan(r) and r > 0 for r in rewards), rewards
    assert judges.max_in_flight == 1, "paced: the server never held two calls"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("tool", ["vf-eval", "medarc-eval"])
@pytest.mark.parametrize(
    ("args", "line"),
    [
        ({"judge_promt": "ours"}, "unknown argument(s) judge_promt (did you mean judge_prompt?); "),
        ({"judge_base_url": "http://127.0.0.1:9/v1"}, "judge endpoint http://127.0.0.1:9/v1 cannot be reached"),
        ({"judge_base_url": None}, "judge 'ja' has no API key: pass judge_api_key or set JUDGE_API_KEY"),
    ],
    ids=["typo", "unreachable", "hosted without a key"],
)
def test_a_mistake_ends_in_one_line_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, args: dict[str, Any],
    line: str,
) -> None:  # fmt: skip
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with JudgeServer({"ja": "steady"}) as judges, ModelServer(answer_for) as model:
        env_args = {"judge_model": ["ja"], "judge_base_url": judges.base_url, **args}
        env_args = {k: v for k, v in env_args.items() if v is not None}
        if tool == "vf-eval":
            command = [str(Path(sys.executable).with_name("vf-eval")), ENV_ID, "-m", "alpha", "-b", model.base_url]
            command += ["-k", KEY_VAR, "-n", "1", "-a", json.dumps(env_args)]
        else:
            command = [str(Path(sys.executable).with_name("medarc-eval")), ENV_ID, "-m", "alpha", "-b", model.base_url]
            command += ["-k", KEY_VAR, "-n", "1", "--judge-model", "ja"]
            if "judge_base_url" in env_args:
                command += ["--judge-base-url", env_args["judge_base_url"]]
            command += [f"--env-arg={k}={v}" for k, v in args.items() if not k.startswith("judge_base")]
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    said = [text for text in done.stderr.splitlines() if text.strip()]
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    if tool == "medarc-eval" and "judge_promt" in args:  # medarc-eval checks --env-arg names before we load
        line = f"Environment '{ENV_ID}' env_args contain unknown parameters: judge_promt. Valid parameters: "
    assert line in said[-1] and said[-1].startswith(("Failed to load environment", "Evaluation failed", line)), said


def unencodable_servers() -> tuple[JudgeServer, ModelServer]:
    """A judge whose accuracy explanation holds a lone surrogate and an escape, and a model whose answer holds a
    lone surrogate and a NUL (tests/servers)."""
    judges = JudgeServer({"ja": "unencodable_judge"})
    return judges, ModelServer(lambda prompt: UNENCODABLE_ANSWER)


def test_what_the_door_keeps_of_an_unencodable_answer_and_explanation_is_msgpack() -> None:
    """verifiers' env server sends each output as msgpack, which raises on a lone surrogate where nothing catches
    it: the rollout's answer never came. Everything an output holds is encodable now; the judges' verdict stands."""
    judges, model = unencodable_servers()
    with judges:
        outputs = run(judges, n=1, model=model)
    msgpack.packb(outputs, default=msgpack_encoder, use_bin_type=True)
    (output,) = outputs
    assert completion_text(output) == UNENCODABLE_ANSWER.replace("\ud800", REPLACEMENT).replace("\x00", REPLACEMENT)
    assert output["info"]["answer_replaced_characters"] == 2
    assert explanations_of(feedback_of(output)["ja"])["accuracy"] == f"accurate {REPLACEMENT} plan{REPLACEMENT}[2J"


@pytest.mark.timeout(240)
def test_a_run_with_an_unencodable_answer_and_explanation_ends_through_the_env_server(tmp_path: Path) -> None:
    """``vf-eval`` with verifiers' env server (the default): the run ends, each note judged and named. Before,
    it waited for the env server's answer (msgpack had raised on the lone surrogate) until killed."""
    judges, model = unencodable_servers()
    with judges, model:
        command = [str(Path(sys.executable).with_name("vf-eval")), ENV_ID, "-m", "alpha", "-b", model.base_url]
        env_args = {"judge_model": ["ja"], "judge_base_url": judges.base_url, "judge_api_key": KEY}
        command += ["-k", KEY_VAR, "-n", "2", "-r", "1", "-s", "-a", json.dumps(env_args)]
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    outputs = results(tmp_path)
    assert len(outputs) == 2 and all(o["info"]["filename"] and not math.isnan(o["reward"]) for o in outputs)
    assert all(REPLACEMENT in o["completion"][-1]["content"] for o in outputs)


@pytest.mark.timeout(60)
def test_a_judgment_ends_at_judge_max_wait_with_its_failure_named() -> None:
    """A judge that holds every call (``slow``) with ``judge_timeout`` far above ``judge_max_wait``: the judgment
    ends at ``judge_max_wait``, named, and the other judge's verdict makes the reward."""
    with JudgeServer({"ja": "steady", "js": "slow"}, hold_seconds=50) as server:
        outputs = run(server, n=1, judge_timeout=45, judge_max_wait=1)
    assert feedback_of(outputs[0])["js"]["error"] == "gave up waiting for the endpoint within judge_max_wait (1 s): " \
        "no verdict by then"  # fmt: skip
    assert outputs[0]["reward"] == pytest.approx(judge_reward(server.scores_for("ja", judge_prompt(outputs[0]))))


def test_info_is_bounded_and_encodable() -> None:
    kept = verifiers_env.kept({"raw": "x" * (2 * REPLY_CAP), "e": ["a\ud800\x00b"], "n": 1.5})
    assert kept == {"raw": "x" * REPLY_CAP, "e": [f"a{REPLACEMENT}{REPLACEMENT}b"], "n": 1.5}


def test_no_metric_is_ever_nan_so_a_zero_weight_never_moves_the_reward() -> None:
    """verifiers adds each function's value times its weight: 0 x NaN is NaN."""
    for feedback in [None, {}, {"judges": [{"judge": "a", "score": None}]}, {"empty_answer": True, "judges": []}]:
        assert not math.isnan(verifiers_env.reward_failed_at_min(feedback))
        assert not math.isnan(verifiers_env.judge_failed(feedback, "a"))
        assert verifiers_env.note_unjudged(feedback) == (0.0 if feedback and feedback.get("empty_answer") else 1.0)
    assert verifiers_env.reward_failed_at_min({"empty_answer": True}) == 0.0
