"""The leaderboard schema: HELM reads and validates it, and it names every stat our metric emits."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from helm.benchmark.presentation.schema import Schema, read_schema, validate_schema

from helm_mtsamples_ext import schema as schema_module
from helm_mtsamples_ext.names import METRIC_CLASS, SCENARIO_CLASS
from helm_mtsamples_ext.run_spec import resolve_judges
from helm_mtsamples_ext.scenario import MTSamplesProceduresScenario
from helm_mtsamples_ext.schema import SCHEMA_PATH
from helm_mtsamples_ext.scoring.reward import JURY_SCORE, REWARD, instance_stat_names, run_stat_names
from helm_mtsamples_ext.scoring.stat_metadata import metric_metadata

pytestmark = pytest.mark.helm

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


def metric_templates(schema: Schema) -> list[str]:
    return [t for g in schema.metric_groups for m in g.metrics for t in (m.name, m.split) if "$" in t]


def test_no_column_is_a_mako_expression_so_summarize_threads_compile_no_code(
    schema: Schema, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """helm-summarize renders every column with Mako in 8 threads, and a `${main_split}` there made CPython 3.11
    fail at random (gh-106905, "AST constructor recursion depth mismatch"; a CI run of the quickstart hit it).
    Literal columns compile no Python, in the shipped schema and in each suite's."""
    assert metric_templates(schema) == []
    write_run(tmp_path / "out" / "runs" / "s", "r1", ["one", "two"], emitted(["one", "two"]))
    suite, _ = generate(tmp_path, capsys)
    assert metric_templates(suite) == []
    splits = {m.split for g in suite.metric_groups for m in g.metrics}
    assert splits == {"test"}, "the run group's main split, written out"
    columns = {m.name for g in suite.metric_groups for m in g.metrics}
    assert {REWARD, f"{REWARD}_one", f"{REWARD}_two"} <= columns


def test_every_stat_of_the_default_panel_and_medhelm_jury_is_defined_and_shown(schema: Schema) -> None:
    """Each stat the metric can emit for the default panel (and MedHELM's jury) has a schema entry and a column."""
    assert default_panel() == ["gpt-4o-mini"]
    for panel in (default_panel(), medhelm_jury()):
        names = set(instance_stat_names(panel)) | set(run_stat_names())
        assert names <= set(schema.name_to_metric), names - set(schema.name_to_metric)
        assert names <= group_metric_names(schema, "mtsamples_procedures")


def test_reward_comes_first_with_the_three_dimensions_then_medhelms_jury_score_beside_it(schema: Schema) -> None:
    """The first table of the run group: the reward, accuracy, completeness, clarity, then MedHELM's jury score."""
    group = schema.name_to_run_group["mtsamples_procedures"]
    first = schema.name_to_metric_group[group.metric_groups[0]]
    names = [m.substitute(group.environment).name for m in first.metrics]
    dimensions = [f"mtsamples_procedures_judge_{d}" for d in ("accuracy", "completeness", "clarity")]
    assert names == [REWARD, *dimensions, JURY_SCORE]


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


# The schema written for a suite (`python -m helm_mtsamples_ext.schema --suite S`), from hand-made run files.


def write_run(suite_dir: Path, name: str, judges: list[str], stats: list[str], scenario: str = SCENARIO_CLASS) -> None:
    run = suite_dir / name
    run.mkdir(parents=True)
    spec = {
        "name": name,
        "scenario_spec": {"class_name": scenario, "args": {}},
        "metric_specs": [
            {"class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric", "args": {"names": []}},
            {"class_name": METRIC_CLASS, "args": {"judge_names": judges}},
        ],
    }
    (run / "run_spec.json").write_text(json.dumps(spec))
    rows = [{"name": {"name": s, "split": "test"}, "count": 1, "sum": 0.5, "mean": 0.5} for s in stats]
    (run / "stats.json").write_text(json.dumps(rows))


def emitted(judges: list[str], alphas: bool = True) -> list[str]:
    return instance_stat_names(judges) + (run_stat_names() if alphas else []) + ["max_prob", "logprob"]


def generate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Schema, str]:
    """Run the module's CLI in-process; return the schema it wrote (read by HELM) and its stderr."""
    schema_module.main(["--suite", "s", "-o", str(tmp_path / "out")])
    captured = capsys.readouterr()
    path = captured.out.strip()
    assert path == str((tmp_path / "out" / "runs" / "s" / "schema_mtsamples_procedures.yaml").resolve())
    return read_schema(path), captured.err


def shown(schema: Schema) -> list[str]:
    return [m.name for g in schema.metric_groups for m in g.metrics]


def test_suite_schema_shows_each_judge_of_the_suites_panel_and_passes_strict_validation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A panel the shipped schema does not know gets its per-judge columns, defined with the metric's own texts."""
    panel = ["acme/Judge.One", "judge-two"]
    write_run(tmp_path / "out" / "runs" / "s", "r1", panel, emitted(panel))
    schema, notes = generate(tmp_path, capsys)
    per_judge = [m.name for m in schema.name_to_metric_group["mtsamples_procedures_per_judge"].metrics]
    assert per_judge == [f"{REWARD}_acme_judge_one", f"{REWARD}_judge_two"]
    for metadata in metric_metadata(panel):
        assert schema.name_to_metric[metadata.name].display_name == metadata.display_name
    assert set(emitted(panel)) <= set(schema.name_to_metric), "every stat the runs emit is defined"
    assert set(run_stat_names()) <= set(shown(schema)) and notes == ""
    assert validate_schema(schema, schema_path="generated", strict=True) == []


def test_suite_schema_leaves_out_columns_some_run_does_not_emit_and_says_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mixed panels, a run without alphas: those columns would be blank for some run, so they are left out."""
    suite = tmp_path / "out" / "runs" / "s"
    write_run(suite, "r1", ["one", "two"], emitted(["one", "two"]))
    write_run(suite, "r2", ["two"], emitted(["two"], alphas=False))
    schema, notes = generate(tmp_path, capsys)
    assert [m.name for m in schema.name_to_metric_group["mtsamples_procedures_per_judge"].metrics] == [f"{REWARD}_two"]
    assert f"{REWARD}_one" in schema.name_to_metric, "still defined: it shows on r1's page"
    assert not set(run_stat_names()) & set(shown(schema))
    assert f"{REWARD}_one: column left out (on the run pages only), not emitted by 1 of 2 runs (e.g. r2)" in notes
    assert all(name in notes for name in run_stat_names())
    assert validate_schema(schema, schema_path="generated", strict=True) == []


def test_suite_schema_defines_a_stat_nobody_described_by_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stat a newer HELM adds is defined plainly (no "undefined" warning) and named on stderr."""
    write_run(tmp_path / "out" / "runs" / "s", "r1", ["one"], [*emitted(["one"]), "brand_new_stat"])
    schema, notes = generate(tmp_path, capsys)
    assert schema.name_to_metric["brand_new_stat"].display_name == "brand_new_stat"
    assert "brand_new_stat: a stat the shipped schema does not describe" in notes
    assert "max_prob" not in notes, "HELM's stats our runs emit are in the shipped schema"


def test_suite_schema_ignores_other_benchmarks_and_unfinished_runs(tmp_path: Path) -> None:
    """Only our finished runs decide the panels: another scenario's run or a run without stats.json does not."""
    suite = tmp_path / "s"
    write_run(suite, "ours", ["one"], emitted(["one"]))
    write_run(suite, "theirs", ["other"], ["exact_match"], scenario="helm.benchmark.scenarios.x.XScenario")
    write_run(suite, "unfinished", ["half"], [])
    (suite / "unfinished" / "stats.json").unlink()
    runs = schema_module.read_suite(suite, "test")
    assert [(r.name, r.judge_names) for r in runs] == [("ours", ("one",))]


def test_suite_without_our_runs_is_an_error_naming_the_directory(tmp_path: Path) -> None:
    """Nothing to describe: say so rather than write the shipped schema under a misleading name."""
    (tmp_path / "out" / "runs" / "s").mkdir(parents=True)
    with pytest.raises(SystemExit, match="no finished mtsamples_procedures run"):
        schema_module.main(["--suite", "s", "-o", str(tmp_path / "out")])


def test_a_suite_without_readable_records_keeps_the_shipped_descriptions() -> None:
    base = {"run_groups": [{"name": "mtsamples_procedures", "description": "A model reads a note."}]}
    assert schema_module.with_audit(copy.deepcopy(base), []) == base
