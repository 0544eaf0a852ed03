"""model_prompt gives the model under test HELM's words: checked against HELM's own generation adapter, fed the run
spec's AdapterSpec, for both use_think values (the text every other door sends)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from helm.benchmark.adaptation.adapters.adapter_factory import AdapterFactory
from helm.benchmark.config_registry import register_builtin_configs_from_helm_package
from helm.benchmark.scenarios.scenario import CORRECT_TAG, TEST_SPLIT, Input, Instance, Output, Reference
from helm.benchmark.window_services.tokenizer_service import TokenizerService
from helm.common.cache_backend_config import BlackHoleCacheBackendConfig
from helm.common.local_context import LocalContext

from helm_mtsamples_ext.common.model_prompt import max_tokens, model_prompt
from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec

pytestmark = pytest.mark.helm

NOTE = "Medical Specialty:Urology\nPROCEDURE: Cystoscopy.\n\n  INDICATIONS:  hematuria \nPLAN"
"""Newlines, a blank line, doubled and trailing spaces: whatever HELM keeps, the door must keep."""


@pytest.mark.parametrize("use_think", [False, True])
def test_the_prompt_is_the_one_helms_adapter_writes(use_think: bool, tmp_path: Path) -> None:
    register_builtin_configs_from_helm_package()
    spec = get_mtsamples_procedures_spec(use_think=str(use_think).lower()).adapter_spec
    spec = dataclasses.replace(spec, model="simple/model1", model_deployment="simple/model1")
    tokenizers = TokenizerService(
        LocalContext(base_path=str(tmp_path), cache_backend_config=BlackHoleCacheBackendConfig())
    )
    instance = Instance(
        Input(text=NOTE), references=[Reference(Output(text="a plan"), tags=[CORRECT_TAG])], split=TEST_SPLIT, id="n1"
    )
    (state,) = AdapterFactory.get_adapter(spec, tokenizers).adapt([instance], parallelism=1)
    assert state.request.prompt == model_prompt(NOTE, use_think)
    assert state.request.max_tokens == max_tokens(use_think)
