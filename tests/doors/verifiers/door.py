"""What the verifiers door's tests share: the environment's id, the model under test and the README's reward
formula, recomputed from the judges' scores (the notes' fixture, ``notes_env``, is conftest.py's)."""

from __future__ import annotations

from typing import Any

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.core.prompt import build_prompt
from tests.servers.judge import Behaviour
from tests.servers.model import default_answer
from tests.synthetic_notes import OBGYN

ENV_ID = "helm_mtsamples_ext.verifiers_env"
KEY_VAR = "MTSAMPLES_TEST_MODEL_KEY"
FAIL_MARKER = Behaviour("lost_some").fail_marker
"""What a plan carries for the judge server's ``lost_some`` judge to give no verdict on it."""


def answer_for(prompt: str) -> str:
    """The model under test: the shared plan naming the prompt's hash; for an Obstetrics note, with the marker."""
    return f"{default_answer(prompt)} {FAIL_MARKER}" if OBGYN in prompt else default_answer(prompt)


def completion_text(output: dict[str, Any]) -> str:
    return str(output["completion"][-1]["content"])


def judge_prompt(output: dict[str, Any]) -> str:
    info = output["info"]
    return build_prompt(info["procedure_note"], completion_text(output), info["reference_plan"], "prefix")


def judge_reward(scores: dict[str, int]) -> float:
    """The README's formula: a judge's reward is the mean of score/5 over its dimensions."""
    return sum(scores[d] / 5 for d in DIMENSIONS) / len(DIMENSIONS)


def evaluation(output: dict[str, Any]) -> dict[str, Any]:
    """The rollout's last ``judge_feedback`` evaluation, read as MedARC's readers read it: ``[-1]``."""
    feedback = output["info"]["judge_feedback"]
    assert isinstance(feedback, list), "MedARC's shape: a list of evaluations"
    return dict(feedback[-1])


def judges_of(output: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each judge's entry of the last evaluation, by its name in our panel (``judge``, beside MedARC's ``model``)."""
    return {judge["judge"]: judge for judge in evaluation(output)["judges"]}


def scores_of(judge: dict[str, Any]) -> dict[str, int]:
    """A judge entry's scores that count, by dimension (MedARC's ``scores[dim]["score"]``; None left out)."""
    return {dim: value["score"] for dim, value in judge["scores"].items() if value["score"] is not None}


def explanations_of(judge: dict[str, Any]) -> dict[str, str | None]:
    return {dim: value["explanation"] for dim, value in judge["scores"].items()}
