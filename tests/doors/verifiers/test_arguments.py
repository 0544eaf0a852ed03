"""``load_environment``'s signature, which verifiers logs and ``medarc-eval`` reads for its ``--env-arg`` flags:
MedARC's arguments in MedARC's order, then the run entry's this door honours, each with ``RunEntryArgs``' name,
default and type (built from it, never typed again)."""

from __future__ import annotations

import inspect
import typing

import pytest
from medarc_verifiers.cli.utils.env_args import gather_env_cli_metadata

from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.verifiers_env import PANEL, load_environment

pytestmark = pytest.mark.verifiers

MEDARC = ["use_think", "cache_dir", "judge_model", "judge_base_url", "judge_api_key"]


def test_the_run_entry_arguments_are_run_entry_args_own() -> None:
    parameters = inspect.signature(load_environment).parameters
    assert list(parameters)[:5] == MEDARC and parameters["judge_model"].default == "gpt-5-mini"
    hints, types = typing.get_type_hints(load_environment), typing.get_type_hints(RunEntryArgs)
    taken = [name for name in list(parameters)[:-1] if name not in (*PANEL, "cache_dir")]
    assert taken == [
        "use_think",
        "extraction",
        "judge_prompt",
        "judge_timeout",
        "judge_max_wait",
        "judge_structured",
        "answer_cap",
        "explanation_cap",
    ]
    for name in taken:
        assert parameters[name].default == getattr(RunEntryArgs(), name) and hints[name] == types[name], name


def test_medarc_eval_reads_a_flag_per_argument_with_its_type() -> None:
    flags = {p.name: p for p in gather_env_cli_metadata("helm_mtsamples_ext.verifiers_env")}
    assert list(flags) == [name for name in inspect.signature(load_environment).parameters if name != "kwargs"]
    assert flags["judge_model"].is_list and flags["judge_timeout"].argparse_type is float
    assert flags["use_think"].default is False and flags["answer_cap"].default == RunEntryArgs.answer_cap
