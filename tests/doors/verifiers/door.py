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
