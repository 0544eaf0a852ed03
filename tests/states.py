"""Hand-built HELM RequestStates, as HELM's runner hands them to annotators and metrics."""

from __future__ import annotations

from typing import Any

from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.scenarios.scenario import CORRECT_TAG, TEST_SPLIT, Input, Instance, Output, Reference
from helm.common.request import GeneratedOutput, Request, RequestResult


def request_state(
    note: str = "note",
    answer: str = "plan",
    reference: str | None = None,
    instance_id: str = "n1",
    model: str = "m/m",
    annotations: dict[str, Any] | None = None,
) -> RequestState:
    references = [Reference(Output(text=reference), tags=[CORRECT_TAG])] if reference is not None else []
    instance = Instance(Input(text=note), references=references, split=TEST_SPLIT, id=instance_id)
    return RequestState(
        instance=instance,
        reference_index=None,
        request_mode=None,
        train_trial_index=0,
        output_mapping=None,
        request=Request(model=model, model_deployment=model, prompt=note),
        result=RequestResult(
            success=True, embedding=[], completions=[GeneratedOutput(text=answer, logprob=0.0, tokens=[])], cached=False
        ),
        num_train_instances=0,
        prompt_truncated=False,
        annotations=annotations,
    )
