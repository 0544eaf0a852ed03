"""panel.py: the judge panel as run_spec.json carries it, written and read in one place."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.panel import OUR_ANNOTATOR, JudgeSpec, panel_of
from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec


@pytest.mark.parametrize(
    "spec",
    [
        JudgeSpec("gpt-4o-mini", "openai/gpt-4o-mini", "openai/gpt-4o-mini"),
        JudgeSpec("qwen", "qwen", None, "http://127.0.0.1:8000/v1", 2),
    ],
    ids=["hosted", "endpoint"],
)
def test_a_judge_spec_round_trips_through_its_run_spec_form(spec: JudgeSpec) -> None:
    assert JudgeSpec.from_arg(spec.as_arg()) == spec


def test_the_hosted_form_carries_no_endpoint_index() -> None:
    """Run specs of hosted panels stay what earlier versions wrote."""
    assert "endpoint_index" not in JudgeSpec("m", "x/m", "x/m").as_arg()


def test_the_panel_of_a_run_spec_is_its_judges_in_order() -> None:
    spec = get_mtsamples_procedures_spec(judges="b+a", judge_base_url="http://127.0.0.1:1/v1")
    run_spec = {"annotators": [{"class_name": OUR_ANNOTATOR, "args": spec.annotators[0].args}]}
    assert panel_of(run_spec) == ["b", "a"]


def test_helms_builtin_jury_is_read_too_and_no_panel_is_none() -> None:
    helms = {"annotators": [{"class_name": "x", "args": {"annotator_models": {"gpt": {}, "claude": {}}}}]}
    assert panel_of(helms) == ["gpt", "claude"]
    assert panel_of({"annotators": []}) is None
