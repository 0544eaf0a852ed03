"""The verifiers environment end to end: verifiers loads it by its module path, asks a loopback model under test
about notes served by a loopback mirror, and our panel (a loopback judge server) scores the answers with our
rules. The rewards are recomputed here from the judges' scores, by the formula the README states."""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import verifiers as vf

from helm_mtsamples_ext.common.failure_kinds import CONNECTION_FAILED, JUDGE_UNAVAILABLE
from helm_mtsamples_ext.common.rubric import DIMENSIONS
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
    scores_of,
)
from tests.readme_blocks import block_running
from tests.servers.judge import JudgeServer
from tests.servers.model import ModelServer

pytestmark = pytest.mark.verifiers

HELM_INSTRUCTIONS = "Here are information about a patient, return a reasonable treatment plan for the patient."


class RecordingModel(ModelServer):
    """The shared model under test answering by ``answer_for``, keeping each request's body: what the door sends
    the model besides the prompt (the messages, temperature and token limit)."""

    def __init__(self) -> None:
        super().__init__(answer_for)
        self.requests: list[dict[str, Any]] = []

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        return super().completion(body)


def evaluate(
    judges: dict[str, str], n: int = 3, judge_key: str = "judge-key", **env_args: Any
) -> tuple[list[dict[str, Any]], JudgeServer, RecordingModel]:
    model_server = RecordingModel()
    with JudgeServer(judges) as judge_server, model_server:
        env = vf.load_environment(
            ENV_ID,
            judge_model=list(judges),
            judge_base_url=judge_server.base_url,
            judge_api_key=judge_key,
            **env_args,
        )
        client = vf.ClientConfig(api_key_var=KEY_VAR, api_base_url=model_server.base_url, timeout=60, max_retries=0)
        results = env.evaluate_sync(client=client, model="alpha", num_examples=n, rollouts_per_example=1)
        return list(results["outputs"]), judge_server, model_server


def test_the_rewards_are_our_scoring_of_the_judges_verdicts_and_a_failed_judge_counts_for_nothing(
    notes_env: dict[str, str],
) -> None:
    outputs, judges, _ = evaluate({"ja": "steady", "jb": "lost_some"})
    assert len(outputs) == 3
    failing = [o for o in outputs if FAIL_MARKER in completion_text(o)]
    assert len(failing) == 1, "the synthetic notes put one Obstetrics note among the first three"
    for output in outputs:
        prompt = judge_prompt(output)
        feedback = judges_of(output)
        ja = judges.scores_for("ja", prompt)
        assert scores_of(feedback["ja"]) == ja and feedback["ja"]["error"] is None
        if output in failing:
            assert scores_of(feedback["jb"]) == {} and feedback["jb"]["score"] is None
            assert feedback["jb"]["error"].startswith("no verdict in reply")
            assert output["reward"] == pytest.approx(judge_reward(ja))
        else:
            jb = judges.scores_for("jb", prompt)
            assert scores_of(feedback["jb"]) == jb and feedback["jb"]["error"] is None
            assert output["reward"] == pytest.approx((judge_reward(ja) + judge_reward(jb)) / 2)
        assert evaluation(output)["score"] == pytest.approx(output["reward"])


def test_the_model_gets_helms_prompt_and_the_judges_our_schema(notes_env: dict[str, str]) -> None:
    outputs, judges, model = evaluate({"ja": "steady"}, n=2)
    notes = {o["info"]["procedure_note"] for o in outputs}
    sent = [r["messages"] for r in model.requests]
    assert sorted(m[0]["content"] for m in sent) == sorted(
        f"{HELM_INSTRUCTIONS}\n\nPatient Notes: {note}\nAnswer:" for note in notes
    )
    assert all(len(m) == 1 and m[0]["role"] == "user" for m in sent), "one user message, no system prompt: HELM's"
    assert {(r["temperature"], r["max_completion_tokens"]) for r in model.requests} == {(0.0, 512)}
    assert {r.response_format for r in judges.requests} == {"json_schema"}
    assert {completion_text(o) for o in outputs} == {answer_for(m[0]["content"]) for m in sent}


def test_the_same_note_carries_the_same_example_id_whatever_the_model(notes_env: dict[str, str]) -> None:
    first, _, _ = evaluate({"ja": "steady"}, n=3)
    again, _, _ = evaluate({"ja": "steady"}, n=3, judge_prompt="ours")
    assert [(o["example_id"], o["info"]["filename"]) for o in first] == [
        (o["example_id"], o["info"]["filename"]) for o in again
    ]
    assert len({o["example_id"] for o in first}) == 3


def test_a_note_no_judge_scored_has_a_missing_reward_never_0(notes_env: dict[str, str]) -> None:
    outputs, _, _ = evaluate({"jr": "reject"}, n=2)
    for output in outputs:
        assert math.isnan(output["reward"])
        (feedback,) = evaluation(output)["judges"]
        assert feedback["score"] is None and "HTTP 400" in feedback["error"]
        assert evaluation(output)["score"] is None


def test_a_judge_that_times_out_is_excluded_with_its_reason(notes_env: dict[str, str]) -> None:
    outputs, judges, _ = evaluate({"ja": "steady", "js": "slow"}, n=1, judge_timeout=1)
    feedback = judges_of(outputs[0])
    assert (feedback["js"]["error"], feedback["js"]["score"]) == ("timed out", None)
    assert outputs[0]["reward"] == pytest.approx(judge_reward(judges.scores_for("ja", judge_prompt(outputs[0]))))


def test_a_judge_that_died_costs_each_note_no_wait_once_three_were_lost(notes_env: dict[str, str]) -> None:
    """A judge whose server closes every chat call (it died after answering /models): once three notes' calls to
    it are lost, its breaker fails the rest at once as the judge unavailable, instead of each note retrying until
    judge_max_wait; the other judge's verdicts still make every reward."""
    n = 8
    outputs, judges, _ = evaluate({"ja": "steady", "jh": "hangup"}, n=n, judge_max_wait=60)
    errors = [judges_of(o)["jh"]["error"] for o in outputs]
    assert all(CONNECTION_FAILED in e for e in errors), errors
    assert sum(e.startswith(f"{JUDGE_UNAVAILABLE}: ") for e in errors) >= n - 3, errors
    assert judges.counts["jh"] <= 2 * n, "without the breaker each note retries until judge_max_wait"
    for output in outputs:
        assert output["reward"] == pytest.approx(judge_reward(judges.scores_for("ja", judge_prompt(output))))


@pytest.mark.parametrize(
    ("behaviour", "tried"),
    [("format_refuser", ["json_schema", "json_object", None]), ("schema_refuser", ["json_schema", "json_object"])],
    ids=["400 to any format", "llama-cpp-python's 500 to json_schema"],
)
def test_a_judge_refusing_the_schema_is_asked_in_the_next_form_at_once(
    notes_env: dict[str, str], behaviour: str, tried: list[str | None]
) -> None:
    """A refusal naming the format, even as a 500 (llama-cpp-python, the README's key-free judge), is not retried:
    the next form is asked at once."""
    outputs, judges, _ = evaluate({"jf": behaviour}, n=1, judge_max_wait=60)
    assert not math.isnan(outputs[0]["reward"])
    assert [r.response_format for r in judges.requests] == tried


# verifiers wraps a load error as "Failed to load environment '<id>': <our line>" (RuntimeError), one line still.
@pytest.mark.parametrize(
    ("args", "line"),
    [
        ({"judges": "ja"}, "judges: HELM's runner's argument(s), not the verifiers environment's; give the panel as "
         "judge_model (a string or a list)"),
        ({"judge_promt": "ours"}, "unknown argument(s) judge_promt (did you mean judge_prompt?); "),
        ({"judge_base_url": ["http://a/v1", "http://b/v1"], "judge_model": ["x", "y", "z"]},
         "judge_base_url has 2 values for 3 judge_model values: give one value (for every judge) or one per judge, "
         "in judge_model's order"),
        ({"judge_api_key": "env:AWS_SECRET_ACCESS_KEY"}, "judge_api_key names the variable AWS_SECRET_ACCESS_KEY, "
         "which this environment did not set for verifiers' env server: give the key itself, or set JUDGE_API_KEY"),
        ({"judge_api_key": "env:MTSAMPLES_JUDGE_API_KEY_9"}, "judge_api_key names the variable "
         "MTSAMPLES_JUDGE_API_KEY_9, which this environment did not set for verifiers' env server"),
        ({"judge_base_url": "http://127.0.0.1:9/v1"}, "judge endpoint http://127.0.0.1:9/v1 cannot be reached "
         "(connection refused): start the server or fix judge_base_url"),
        ({"judge_prompt": "helm_fenced"}, "judge_prompt=helm_fenced fills HELM's template, and HELM is not installed "
         "here: use judge_prompt=prefix (the default) or ours"),
    ],
    ids=["helm-only argument", "typo", "list length", "another variable", "unset handoff", "judge unreachable",
         "helm template"],
)  # fmt: skip
def test_a_wrong_argument_is_one_line_naming_it_and_the_fix(
    notes_env: dict[str, str], args: dict[str, Any], line: str
) -> None:
    with pytest.raises(RuntimeError) as raised:
        vf.load_environment(ENV_ID, **{"judge_model": "ja", "judge_api_key": "k", **args})
    said = str(raised.value).removeprefix(f"Failed to load environment '{ENV_ID}': ")
    assert said.startswith(line) and "\n" not in said


def test_a_judge_without_a_key_is_refused_at_load(notes_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(RuntimeError, match=r"judge 'ja' has no API key: pass judge_api_key or set JUDGE_API_KEY$"):
        vf.load_environment(ENV_ID, judge_model="ja")


def test_a_reply_without_a_verdict_gets_a_repair_turn(notes_env: dict[str, str]) -> None:
    outputs, judges, _ = evaluate({"jr": "repairable"}, n=1)
    (feedback,) = evaluation(outputs[0])["judges"]
    assert feedback["error"] is None and outputs[0]["reward"] == pytest.approx(judge_reward(scores_of(feedback)))
    assert [r.turns for r in judges.requests] == [1, 2]


def readme_vf_eval() -> list[str]:
    """The docs' vf-eval command line (docs/verifiers.md, moved from the README), split as the shell would."""
    (line,) = block_running(".venv-verifiers/bin/vf-eval ", skip_prefix="python3 -m venv")
    return shlex.split(line)


def test_the_readmes_vf_eval_command_runs_the_environment(
    notes_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The docs' command with its placeholders filled (the model, its URL and key variable; the judges' URL): it saves
    what the docs describe, and prints the unjudged share beside the average."""
    command = readme_vf_eval()
    option = {flag: i + 1 for i, flag in enumerate(command) if flag.startswith("-")}
    env_args = json.loads(command[option["-a"]])
    with JudgeServer(dict.fromkeys(env_args["judge_model"], "steady")) as judges, ModelServer(answer_for) as model:
        command[0] = str(Path(sys.executable).with_name("vf-eval"))
        command[option["-m"]], command[option["-b"]] = "alpha", model.base_url
        monkeypatch.setenv(command[option["-k"]], "model-key")
        env_args.update(judge_base_url=judges.base_url, judge_api_key="judge-key")
        command[option["-a"]], command[option["-n"]] = json.dumps(env_args), "2"
        # verifiers 0.1.11 picks its env server's ports by binding and letting go (get_free_port_pair), then binds
        # them again: with CI's other suites opening loopback servers beside it, a port taken in between left vf-eval
        # waiting for its server until the test's 300 s ran out. In-process, the command is the docs' otherwise.
        command.append("--disable-env-server")
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert len(model.prompts) == 2 and judges.count() == 2
    assert "reward: avg" in done.stdout and "unjudged: avg - 0.000" in done.stdout
    assert "-s" in command, "the docs describe results.jsonl and metadata.json: -s saves them"
    (results,) = tmp_path.glob("outputs/evals/*/*/results.jsonl")
    assert results.with_name("metadata.json").is_file() and len(results.read_text().splitlines()) == 2


def test_medarc_eval_takes_medarcs_arguments_and_ours_by_name(notes_env: dict[str, str], tmp_path: Path) -> None:
    """medarc-eval accepts only parameters load_environment names (no **kwargs): ours are named, so it takes them.
    A key given as an argument reaches the judge from verifiers' env server (a process of its own, loading the
    environment again from the arguments verifiers keeps), and is in none of the files the run writes (metadata.json
    names the variable holding it) nor in its output, though the judge echoes it."""
    with JudgeServer({"ja": "key_echo"}, api_key=SECRET) as judges, ModelServer(answer_for) as model:
        command = [str(Path(sys.executable).with_name("medarc-eval")), ENV_ID, "-m", "alpha", "-b", model.base_url]
        command += ["-k", KEY_VAR, "-n", "1", "-r", "1", "--judge-model", "ja", "--judge-base-url", judges.base_url]
        command += ["--judge-api-key", SECRET, "--env-arg", "judge_prompt=ours", "--env-arg", "answer_cap=5000"]
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert len(model.prompts) == 1 and [r.authorization for r in judges.requests] == [f"Bearer {SECRET}"]
    written = [p for p in tmp_path.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
    assert written == [] and SECRET not in done.stdout + done.stderr, "verifiers writes its arguments and logs"
    (metadata,) = tmp_path.glob("outputs/evals/*/*/metadata.json")
    assert json.loads(metadata.read_text())["env_args"]["judge_api_key"] == ["env:MTSAMPLES_JUDGE_API_KEY_1"]


def test_this_venv_has_no_helm_and_the_environment_needs_none() -> None:
    """The door's promise (its own venv, no HELM): these tests ran the environment without HELM installed."""
    import helm_mtsamples_ext.verifiers_env  # noqa: F401

    assert importlib.util.find_spec("helm") is None and "helm" not in sys.modules


SECRET = "sk-judge-0123456789abcdef"
"""A provider-shaped judge key, which the judges below repeat word for word."""


@pytest.mark.parametrize("behaviour", ["key_echo", "key_score", "leaky", "leaky_500", "leaky_200"])
def test_a_judge_echoing_its_key_never_gets_it_kept_or_logged(
    notes_env: dict[str, str], behaviour: str, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """In an explanation, as a score, in an error's text with any status: the key is not in the outputs vf-eval
    saves, nor in the logs, and a score the judge gave as the key is no score."""
    caplog.set_level(logging.DEBUG)
    outputs, judges, _ = evaluate({"ja": behaviour}, n=1, judge_key=SECRET, judge_max_wait=5)
    said = capfd.readouterr()
    import re

    for name, text in [
        ("out", json.dumps(outputs, default=str)),
        ("so", said.out),
        ("se", said.err),
        ("log", caplog.text),
    ]:
        for m in re.finditer(SECRET, text):
            print("LEAK", name, text[max(0, m.start() - 300) : m.end() + 50])
    assert SECRET not in json.dumps(outputs, default=str) + said.out + said.err + caplog.text
    assert judges.count() >= 1, "the judge was asked"
    (feedback,) = evaluation(outputs[0])["judges"]
    given = judges.scores_for("ja", judge_prompt(outputs[0]))
    if behaviour == "key_echo":
        assert scores_of(feedback) == given
        assert all("***" in (explanations_of(feedback)[d] or "") for d in DIMENSIONS)
    elif behaviour == "key_score":
        assert scores_of(feedback) == {d: s for d, s in given.items() if d != "clarity"}, "the key is no score"
    else:
        assert feedback["score"] is None and feedback["error"], "no score the judge did not give"


def test_environments_loaded_with_different_keys_each_keep_their_own(notes_env: dict[str, str]) -> None:
    """Each key given as ``judge_api_key`` waits in a variable of its own for verifiers' env server, which loads the
    environment again from the kept arguments: a second environment never takes the first one's variable."""
    keys = ["first-key-0123456789", "second-key-0123456789"]
    with JudgeServer({"ja": "steady"}) as judges:
        loaded = [
            vf.load_environment(ENV_ID, judge_model="ja", judge_base_url=judges.base_url, judge_api_key=key)
            for key in keys
        ]
        refs = [env.env_args["judge_api_key"] for env in loaded]
        try:
            assert all(ref.startswith("env:") for ref in refs) and refs[0] != refs[1]
            assert [os.environ[ref.removeprefix("env:")] for ref in refs] == keys
            again = vf.load_environment(ENV_ID, **loaded[0].env_args)  # as the env server loads it
            assert again.env_args["judge_api_key"] == refs[0]
        finally:
            for ref in refs:
                os.environ.pop(ref.removeprefix("env:"), None)
