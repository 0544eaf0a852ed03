"""A run entry without judge_prompt: new suites get the ``prefix`` style, a stored suite keeps the style its runs
stored (so a re-run replays HELM's cache), and the run's name never changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helm_mtsamples_ext.helm_host.model_check import BuildingCommand
from helm_mtsamples_ext.helm_host.prompt_default import stored_prompt_style, with_stored_prompt_style
from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec

pytestmark = pytest.mark.helm

ENTRY = {"judges": "a+b", "judge_base_url": "http://127.0.0.1:9/v1"}


def store(out: Path, suite: str, run: str, style: object) -> None:
    folder = out / "runs" / suite / run
    folder.mkdir(parents=True)
    spec = {"name": run, "annotators": [{"class_name": "x", "args": {"judge_prompt": style}}]}
    (folder / "run_spec.json").write_text(json.dumps(spec))


def styles(spec) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.args["judge_prompt"] for a in spec.annotators]


def test_a_new_run_gets_the_prefix_style() -> None:
    assert styles(get_mtsamples_procedures_spec(**ENTRY)) == ["prefix"]


def test_a_suite_that_stored_ours_keeps_it_for_every_model_and_the_name_stays(tmp_path: Path) -> None:
    spec = get_mtsamples_procedures_spec(**ENTRY)
    store(tmp_path, "old", f"{spec.name},model=simple_model1", "ours")
    command = BuildingCommand("openai/gpt-4o", output_path=str(tmp_path), suite="old", in_helm_run=True)
    kept = with_stored_prompt_style(spec, command, named=False)
    assert styles(kept) == ["ours"] and kept.name == spec.name
    other = BuildingCommand("openai/gpt-4o", output_path=str(tmp_path), suite="new", in_helm_run=True)
    assert styles(with_stored_prompt_style(spec, other, named=False)) == ["prefix"]


def test_a_run_entry_that_names_the_style_gets_what_it_names(tmp_path: Path) -> None:
    spec = get_mtsamples_procedures_spec(judge_prompt="prefix", **ENTRY)
    store(tmp_path, "old", f"{spec.name},model=simple_model1", "ours")
    command = BuildingCommand(None, output_path=str(tmp_path), suite="old", in_helm_run=True)
    assert styles(with_stored_prompt_style(spec, command, named=True)) == ["prefix"]


def test_only_runs_of_the_same_entry_count(tmp_path: Path) -> None:
    """Another panel's run, or one of another argument, says nothing of this entry's style."""
    base = "mtsamples_procedures:judges=a+b"
    store(tmp_path, "s", "mtsamples_procedures:judges=c,model=simple_model1", "ours")
    store(tmp_path, "s", f"{base},use_think=true,model=simple_model1", "helm")
    assert stored_prompt_style(str(tmp_path), "s", base) is None
    store(tmp_path, "s", f"{base},model=x_y,stop=hash", "helm")
    assert stored_prompt_style(str(tmp_path), "s", base) == "helm"


def test_an_unreadable_or_unknown_stored_style_is_ignored(tmp_path: Path) -> None:
    base = "mtsamples_procedures:judges=a"
    store(tmp_path, "s", f"{base},model=m1", "custom")
    (tmp_path / "runs" / "s" / f"{base},model=m2").mkdir()
    assert stored_prompt_style(str(tmp_path), "s", base) is None
    assert stored_prompt_style(str(tmp_path / "missing"), "s", base) is None


def test_judge_prompt_helm_is_stored_fenced_and_a_suite_judged_unfenced_keeps_its_bytes(tmp_path: Path) -> None:
    """A new run of judge_prompt=helm stores the fenced template; a suite whose runs stored ``helm`` (judged before
    the fence) keeps the unfenced one when re-run with the same command, so HELM's cache answers it. The name is
    the same either way."""
    spec = get_mtsamples_procedures_spec(judge_prompt="helm", **ENTRY)
    assert styles(spec) == ["helm_fenced"] and "judge_prompt=helm" in spec.name
    store(tmp_path, "old", f"{spec.name},model=simple_model1", "helm")
    old = BuildingCommand(None, output_path=str(tmp_path), suite="old", in_helm_run=True)
    kept = with_stored_prompt_style(spec, old, named=True)
    assert styles(kept) == ["helm"] and kept.name == spec.name
    new = BuildingCommand(None, output_path=str(tmp_path), suite="new", in_helm_run=True)
    assert styles(with_stored_prompt_style(spec, new, named=True)) == ["helm_fenced"]
    store(tmp_path, "fenced", f"{spec.name},model=simple_model1", "helm_fenced")
    again = BuildingCommand(None, output_path=str(tmp_path), suite="fenced", in_helm_run=True)
    assert styles(with_stored_prompt_style(spec, again, named=True)) == ["helm_fenced"]


def test_a_run_entry_cannot_name_a_stored_style_that_is_not_offered() -> None:
    """``helm_fenced`` is what run_spec.json stores; a run entry names ``helm``. The parser takes the stored value
    back (the annotator and the report read it) without listing it as a choice."""
    from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs

    assert RunEntryArgs.parse(judge_prompt="helm_fenced").judge_prompt == "helm_fenced"
    try:
        RunEntryArgs.parse(judge_prompt="fenced")
    except ValueError as e:
        assert "helm_fenced" not in str(e) and "ours, helm, prefix" in str(e)
    else:
        raise AssertionError("an unknown style was accepted")
