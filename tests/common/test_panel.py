"""panel.py: the judge panel as run_spec.json carries it, written and read in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common import panel
from helm_mtsamples_ext.common.panel import (
    JudgeSpec,
    JudgeTarget,
    judge_families,
    panel_from_args,
    panel_of,
)
from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec

pytestmark = pytest.mark.helm


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
    assert spec.annotators
    run_spec = {"annotators": [{"class_name": names.ANNOTATOR_CLASS, "args": spec.annotators[0].args}]}
    assert panel_of(run_spec) == ["b", "a"]


def test_helms_builtin_jury_is_read_too_and_no_panel_is_none() -> None:
    helms = {"annotators": [{"class_name": "x", "args": {"annotator_models": {"gpt": {}, "claude": {}}}}]}
    assert panel_of(helms) == ["gpt", "claude"]
    assert panel_of({"annotators": []}) is None


def test_a_judges_identity_lives_with_the_panel_which_imports_no_judge_call_code() -> None:
    """The judges wing imports the panel (JudgeTarget), never the other way round."""
    from helm_mtsamples_ext.judges.helm_calls import attempts, call

    assert attempts.JudgeTarget is call.JudgeTarget is JudgeTarget
    tree = ast.parse(Path(panel.__file__).read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m.startswith("helm_mtsamples_ext.judges")]


@pytest.mark.parametrize(
    "judges",
    [[], [{"name": "a", "model": "x/a"}, {"name": "a", "model": "y/a"}], [{"name": "failed_judges", "model": "x"}]],
    ids=["empty", "duplicate", "reserved"],
)
def test_a_panel_a_record_cannot_hold_is_refused(judges: list[dict[str, str]]) -> None:
    with pytest.raises(ValueError, match="panel is empty|must be unique"):
        panel_from_args(judges)


def test_a_judges_family_is_stored_only_when_known_and_read_back_per_judge() -> None:
    """A run_spec.json of an earlier release (no family) reads as unknown families, and says so."""
    known = JudgeSpec("qwen", "qwen", None, "http://127.0.0.1:8000/v1", 1, family="Alibaba")
    assert JudgeSpec.from_arg(known.as_arg()) == known
    assert "family" not in JudgeSpec("m", "x/m", "x/m").as_arg()
    for declared, found in (("Meta+Alibaba", {"a": "Meta", "b": "Alibaba"}), ("", {"a": None, "b": None})):
        spec = get_mtsamples_procedures_spec(
            judges="a+b", judge_base_url="http://127.0.0.1:1/v1", judge_family=declared
        )
        assert spec.annotators
        run_spec = {"annotators": [{"class_name": names.ANNOTATOR_CLASS, "args": spec.annotators[0].args}]}
        assert judge_families(run_spec) == found
    assert judge_families({"annotators": []}) == {}
