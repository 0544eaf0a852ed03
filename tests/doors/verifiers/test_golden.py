"""The golden set through the verifiers door: the environment loaded as verifiers loads it, all ten synthetic notes
answered by the golden model under test and judged by the golden panel (tests/golden.py), with the timeouts every
door is given. Each rollout must carry the table's reward (NaN for the unjudged note, never 0; 0 for the empty
answer), each judge's scores and each failed judge's failure kind; the failures per judge and kind and the mean
reward over the notes that have one must be the table's. One evaluation serves the module."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import verifiers as vf

from helm_mtsamples_ext.common.failure_kinds import KINDS, failure_kind
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from tests import golden
from tests.doors.verifiers.door import evaluation as last_evaluation
from tests.doors.verifiers.door import judges_of
from tests.doors.verifiers.door import scores_of as counted
from tests.servers.judge import JudgeServer, RecordedRequest
from tests.servers.model import ModelServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.verifiers

ENV_ID = "helm_mtsamples_ext.verifiers_env"
KEY_VAR = "MTSAMPLES_TEST_MODEL_KEY"


@dataclass(frozen=True)
class Evaluation:
    rollouts: dict[str, dict[str, Any]]
    """Each golden note's rollout, by its Sample Name."""
    judge_requests: list[RecordedRequest]


@pytest.fixture(scope="module")
def evaluation(synthetic_notes: SyntheticNotes, tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    """The one evaluation of the module; the judges' server is stopped (its held calls released) before the tests
    read it."""
    cache = tmp_path_factory.mktemp("notes")
    with pytest.MonkeyPatch.context() as env, synthetic_notes.mirror(max_lifetime=300) as mirror:
        for name, value in {**mirror.env, "MTSAMPLES_PROCEDURES_CACHE_DIR": str(cache), KEY_VAR: "model-key"}.items():
            env.setenv(name, value)
        env.delenv("JUDGE_API_KEY", raising=False)
        judges = dict.fromkeys(golden.JUDGES, "golden")
        hold = golden.JUDGE_MAX_WAIT + 15
        with JudgeServer(judges, hold_seconds=hold) as judge_server, ModelServer(golden.answer_for) as model:
            environment = vf.load_environment(
                ENV_ID,
                judge_model=list(golden.JUDGES),
                judge_base_url=judge_server.base_url,
                judge_api_key="judge-key",
                judge_timeout=golden.JUDGE_TIMEOUT,
                judge_max_wait=golden.JUDGE_MAX_WAIT,
            )
            client = vf.ClientConfig(api_key_var=KEY_VAR, api_base_url=model.base_url, timeout=60, max_retries=0)
            results = environment.evaluate_sync(client=client, model="golden", num_examples=-1)
    by_note = {note_of(output): output for output in results["outputs"]}
    assert sorted(by_note) == sorted(golden.CASES), "one rollout per golden note"
    return Evaluation(by_note, list(judge_server.requests))


@pytest.fixture(scope="module")
def rollouts(evaluation: Evaluation) -> dict[str, dict[str, Any]]:
    return evaluation.rollouts


def note_of(output: dict[str, Any]) -> str:
    """The golden note a rollout is about: its file name without ``.txt`` (the note's Sample Name)."""
    return Path(output["info"]["filename"]).stem


def feedback_of(output: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return judges_of(output)


def scores_of(judge: dict[str, Any]) -> golden.Scores | None:
    """A judge's scores as the table writes them, None when it gave none (MedARC's ``scores[dim]["score"]``)."""
    scores = counted(judge)
    return None if not scores else (scores[DIMENSIONS[0]], scores[DIMENSIONS[1]], scores[DIMENSIONS[2]])


@pytest.mark.parametrize("note", sorted(golden.CASES))
def test_each_note_gets_the_tables_reward(rollouts: dict[str, dict[str, Any]], note: str) -> None:
    reward, expected = rollouts[note]["reward"], golden.EXPECTED[note].reward
    if expected is None:
        assert math.isnan(reward), f"{note}: no judge scored it, so its reward is missing (NaN), not {reward}"
        assert last_evaluation(rollouts[note])["score"] is None
    else:
        assert reward == pytest.approx(expected, abs=1e-9), note
        assert last_evaluation(rollouts[note])["score"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("note", sorted(golden.CASES))
def test_each_judge_gives_the_tables_scores_or_fails_with_its_kind(
    rollouts: dict[str, dict[str, Any]], note: str
) -> None:
    expected, feedback = golden.EXPECTED[note], feedback_of(rollouts[note])
    if golden.CASES[note] == "empty":  # no judge asked: none scored, none failed
        assert all(not counted(j) and j["error"] is None for j in feedback.values())
        assert last_evaluation(rollouts[note])["empty_answer"] is True
        return
    assert sorted(feedback) == sorted(golden.JUDGES)
    assert {name: scores_of(j) for name, j in feedback.items()} == expected.scores
    failed = {name: failure_kind(j["error"]) for name, j in feedback.items() if j["error"] is not None}
    assert failed == expected.failures, {name: j["error"] for name, j in feedback.items()}
    stored = {name: j["failure_kind"] for name, j in feedback.items() if j["error"] is not None}
    assert stored == expected.failures and set(stored.values()) <= set(KINDS), "each kind beside its text"
    record = rollouts[note]["info"]["record"]
    assert {name: record[name].get("failure_kind") for name in stored} == expected.failures, "in info's record too"
    assert last_evaluation(rollouts[note])["failures"] == len(expected.failures)


def test_the_failures_per_judge_and_kind_are_the_tables(rollouts: dict[str, dict[str, Any]]) -> None:
    counted: dict[str, Counter[str]] = {judge: Counter() for judge in golden.JUDGES}
    for output in rollouts.values():
        for name, judge in feedback_of(output).items():
            if judge["error"] is not None:
                counted[name][failure_kind(judge["error"])] += 1
    assert {judge: dict(kinds) for judge, kinds in counted.items()} == golden.FAILURE_COUNTS


def test_the_mean_over_the_notes_with_a_reward_is_the_tables(rollouts: dict[str, dict[str, Any]]) -> None:
    rewards = [output["reward"] for output in rollouts.values()]
    kept = [reward for reward in rewards if not math.isnan(reward)]
    assert len(kept) == len(rewards) - 1, "only the unjudged note has no reward"
    assert sum(kept) / len(kept) == pytest.approx(golden.MEAN_REWARD, abs=1e-9)


def test_a_silent_judge_is_asked_once_more_then_failed(evaluation: Evaluation) -> None:
    """docs/judging.md: a timeout is retried once, so the silent judge costs two timeouts per note (not the SDK's
    four, nor judge_max_wait)."""
    silent = [case for case, said in golden.VERDICTS.items() if said["gold-b"] == golden.TIMEOUT]
    asked = Counter(
        case
        for request in evaluation.judge_requests
        if request.model == "gold-b"
        for case in silent
        if f"GOLDEN-{case}:" in request.prompt
    )
    assert asked == dict.fromkeys(silent, 2)
