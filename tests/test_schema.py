"""The leaderboard schema: HELM reads and validates it, and it names every stat our metric emits."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from helm.benchmark.presentation.schema import Schema, read_schema, validate_schema

from helm_mtsamples_ext.metric import metric_metadata
from helm_mtsamples_ext.run_spec import resolve_judges
from helm_mtsamples_ext.scenario import MTSamplesProceduresScenario
from helm_mtsamples_ext.schema import SCHEMA_PATH
from helm_mtsamples_ext.scoring import REWARD, instance_stat_names, run_stat_names

# MedHELM's three-vendor jury, read from the file HELM itself ships.
HELM_JURY = str(resources.files("helm.benchmark.scenarios.medhelm").joinpath("judges.yaml"))


@pytest.fixture(scope="module")
def schema() -> Schema:
    return read_schema(SCHEMA_PATH)


def default_panel() -> list[str]:
    return [j.name for j in resolve_judges(None, None, None)]


def medhelm_jury() -> list[str]:
    return [j.name for j in resolve_judges(None, HELM_JURY, None)]


def group_metric_names(schema: Schema, run_group: str) -> set[str]:
    """Metric names a run group's tables show, with ${main_name}-style variables substituted."""
    group = schema.name_to_run_group[run_group]
    return {
        matcher.substitute(group.environment).name
        for metric_group in group.metric_groups
        for matcher in schema.name_to_metric_group[metric_group].metrics
    }


def test_schema_passes_helm_validation_without_errors_or_warnings(schema: Schema) -> None:
    """`helm-summarize --schema-validation error` accepts the schema (strict mode raises on any error)."""
    messages = validate_schema(
        schema, schema_path=SCHEMA_PATH, strict=True, check_parent_child_partition=True, check_orphan_children=True
    )
    assert messages == []


def test_main_metric_is_the_reward_on_the_test_split(schema: Schema) -> None:
    """The leaderboard ranks by the 0-1 reward on split test."""
    environment = schema.name_to_run_group["mtsamples_procedures"].environment
    assert environment == {"main_name": REWARD, "main_split": "test"}


def test_every_stat_of_the_default_panel_and_medhelm_jury_is_defined_and_shown(schema: Schema) -> None:
    """Each stat the metric can emit for the default panel (and MedHELM's jury) has a schema entry and a column."""
    assert default_panel() == ["gpt-4o-mini"]
    for panel in (default_panel(), medhelm_jury()):
        names = set(instance_stat_names(panel)) | set(run_stat_names())
        assert names <= set(schema.name_to_metric), names - set(schema.name_to_metric)
        assert names <= group_metric_names(schema, "mtsamples_procedures")


def test_reward_comes_first_with_the_three_dimensions_beside_it(schema: Schema) -> None:
    """The first table of the run group is the reward followed by accuracy, completeness, clarity."""
    group = schema.name_to_run_group["mtsamples_procedures"]
    first = schema.name_to_metric_group[group.metric_groups[0]]
    names = [m.substitute(group.environment).name for m in first.metrics]
    assert names == [REWARD] + [f"mtsamples_procedures_judge_{d}" for d in ("accuracy", "completeness", "clarity")]


def test_schema_texts_match_the_metric_metadata(schema: Schema) -> None:
    """Static schema and --auto-generate-schema label our metrics identically (the YAML copies get_metadata)."""
    for metadata in metric_metadata(default_panel() + medhelm_jury()):
        field = schema.name_to_metric[metadata.name]
        assert (field.display_name, field.short_display_name, field.description, field.lower_is_better) == (
            metadata.display_name,
            metadata.short_display_name,
            metadata.description,
            metadata.lower_is_better,
        ), metadata.name


def test_run_group_taxonomy_matches_the_scenario_metadata(schema: Schema) -> None:
    """The static run group and the scenario's own metadata (used by --auto-generate-schema) agree."""
    scenario_metadata = MTSamplesProceduresScenario().get_metadata()
    group = schema.name_to_run_group[scenario_metadata.name]
    assert group.taxonomy == scenario_metadata.taxonomy
    assert group.environment["main_name"] == scenario_metadata.main_metric


def test_schema_module_prints_the_installed_schema_path() -> None:
    """`python -m helm_mtsamples_ext.schema` prints an absolute path to the packaged YAML."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-m", "helm_mtsamples_ext.schema"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    printed = out.stdout.strip()
    assert printed == SCHEMA_PATH and os.path.isabs(printed) and Path(printed).is_file()
    assert Path(printed).parent == Path(sys.modules["helm_mtsamples_ext.schema"].__file__ or "").parent
