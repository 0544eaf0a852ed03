"""`helm-mtsamples-report --export eee`: Every Eval Ever's records, valid against EEE 0.3.0's JSON schemas and its
repository checks, strict JSON, with the rewards of tests/report/eee_suite.py (derived there by hand).

The schemas are copies in tests/report/eee_schemas/ (tests/report/eee_schema.py says why); one test checks they are
the PyPI wheel's, byte for byte.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.common.outside_text import REPLACEMENT
from helm_mtsamples_ext.report.cli import _exports, _parser
from helm_mtsamples_ext.report.eee_export import REWARD_ID, UNJUDGED_ID
from tests.report.eee_schema import (
    SCHEMA_DIR,
    SCHEMAS,
    WheelUnavailable,
    datastore_problems,
    eee_validate,
    validators,
    wheel_schemas,
)
from tests.report.eee_suite import ALPHA, BETA, PANEL, SERVED, build_eee_suite
from tests.report.medmarks_export import export_suite
from tests.report.medmarks_suite import HOSTILE
from tests.report.reports import BOOT, run_report

PANEL_DIR, SOLO_DIR = "judge-one_judge-two", "judge-three"


def _report(output: Path, *extra: str) -> Path:
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_report(output, output / "report", *extra) == 0
    return output / "report"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("eee")
    build_eee_suite(output)
    return _report(output, "--export", "eee")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _strict(text: str) -> Any:
    return json.loads(text, parse_constant=_no_constant)


def _model_dir(report: Path, panel_dir: str, model: str) -> Path:
    developer, name = model.split("/")
    return report / "eee" / panel_dir / "data" / "mtsamples_procedures" / developer / name


def _files(report: Path, panel_dir: str, model: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the aggregate, its instance records) of one model under one panel."""
    (aggregate,) = _model_dir(report, panel_dir, model).glob("*[0-9a-f].json")
    samples = aggregate.with_name(aggregate.stem + "_samples.jsonl")
    return _strict(aggregate.read_text("utf-8")), [_strict(line) for line in samples.read_text("utf-8").splitlines()]


def _result(aggregate: dict[str, Any], result_id: str) -> dict[str, Any]:
    (result,) = [r for r in aggregate["evaluation_results"] if r["evaluation_result_id"] == result_id]
    return result


def _records(records: list[dict[str, Any]], note: str) -> dict[str, dict[str, Any]]:
    """{evaluation_result_id: record} of one note."""
    return {r["evaluation_result_id"]: r for r in records if r["metadata"]["note"] == note}


def _every_file(report: Path) -> Iterator[Path]:
    return (p for p in sorted((report / "eee").rglob("*")) if p.is_file())


def test_every_file_is_strict_json(report: Path) -> None:
    """No NaN, Infinity or -Infinity anywhere (json.loads would take them); one record per line."""
    files = list(_every_file(report))
    assert len(files) == 6  # alpha and beta under the panel, alpha under judge-three: an aggregate and a JSONL each
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "NaN" not in text and "Infinity" not in text, path
        if path.suffix == ".jsonl":
            assert all(isinstance(_strict(line), dict) for line in text.splitlines()), path
        else:
            assert isinstance(_strict(text), dict), path


def test_every_record_is_valid_against_eees_schemas(report: Path) -> None:
    aggregate_schema, instance_schema = validators()
    for path in _every_file(report):
        schema = instance_schema if path.suffix == ".jsonl" else aggregate_schema
        for line in path.read_text(encoding="utf-8").splitlines() if path.suffix == ".jsonl" else [path.read_text()]:
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in schema.iter_errors(_strict(line))]
            assert not errors, f"{path}: {errors[:3]}"


def test_the_panels_directories_pass_eees_repository_checks(report: Path) -> None:
    """Paths as EEE's datastore lays them out, each aggregate pointing at its samples (checksum, rows, ids)."""
    panels = sorted(p.name for p in (report / "eee").iterdir())
    assert panels == [PANEL_DIR, SOLO_DIR]
    for panel in panels:
        assert datastore_problems(report / "eee" / panel) == []


def test_a_broken_record_fails_the_checks(report: Path, tmp_path: Path) -> None:
    """The checks above can fail: a NaN score, a wrong checksum and a missing field are each caught."""
    aggregate_schema, _ = validators()
    aggregate, _ = _files(report, PANEL_DIR, ALPHA)
    broken = json.loads(json.dumps(aggregate))
    del broken["model_info"]["additional_details"]["deployment_type"]
    assert list(aggregate_schema.iter_errors(broken))
    copy = tmp_path / "panel"
    for path in (report / "eee" / PANEL_DIR).rglob("*.jsonl"):
        target = copy / path.relative_to(report / "eee" / PANEL_DIR)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text("utf-8") + path.read_text("utf-8").splitlines()[0] + "\n", "utf-8")
        source = path.with_name(path.name.removesuffix("_samples.jsonl") + ".json")
        target.with_name(source.name).write_text(source.read_text("utf-8"), "utf-8")
    problems = datastore_problems(copy)
    assert any("checksum" in p for p in problems) and any("total_rows" in p for p in problems)
    with pytest.raises(ValueError, match="NaN is not JSON"):
        _strict('{"score": NaN}')


def _unavailable(unavailable: WheelUnavailable) -> None:
    """Skip with the one line; under CI, fail with it (CI reaches PyPI)."""
    if os.environ.get("CI", "").strip().lower() in ("true", "1"):
        pytest.fail(str(unavailable), pytrace=False)
    pytest.skip(str(unavailable))


def test_schema_copies_are_the_wheels() -> None:
    """tests/report/eee_schemas/ holds every-eval-ever 0.3.0's schemas byte for byte (the wheel from PyPI)."""
    try:
        shipped = wheel_schemas()
    except WheelUnavailable as unavailable:
        _unavailable(unavailable)
    for name in SCHEMAS:
        assert (SCHEMA_DIR / name).read_bytes() == shipped[name], name


def test_eees_own_validator_passes_every_file_and_refuses_a_broken_one(report: Path, tmp_path: Path) -> None:
    """The wheel's validator (its pydantic models and the CLI's repository checks): no error, no warning."""
    panels = sorted((report / "eee").iterdir())
    try:
        assert eee_validate(panels) == []
    except WheelUnavailable as unavailable:
        _unavailable(unavailable)
    broken = tmp_path / PANEL_DIR
    shutil.copytree(report / "eee" / PANEL_DIR, broken)
    (samples,) = (broken / "data" / "mtsamples_procedures" / "acme" / "alpha").glob("*.jsonl")
    samples.write_text(samples.read_text("utf-8").replace('"score": 0.9', '"score": NaN'), "utf-8")
    assert any("NaN" in problem or "checksum" in problem for problem in eee_validate([broken]))


def test_reward_is_the_leaderboards_with_its_interval(report: Path) -> None:
    aggregate, _ = _files(report, PANEL_DIR, ALPHA)
    board = pd.read_csv(report / "leaderboard.csv").set_index(["panel", "model"]).loc[(PANEL, ALPHA)]
    details = _result(aggregate, REWARD_ID)["score_details"]
    assert math.isclose(details["score"], 0.58) and math.isclose(details["score"], board["reward"])
    uncertainty = details["uncertainty"]
    interval = uncertainty["confidence_interval"]
    assert math.isclose(interval["lower"], board["reward_ci_low"]) and math.isclose(
        interval["upper"], board["reward_ci_high"]
    )
    assert interval["confidence_level"] == 0.95 and interval["method"].startswith("percentile bootstrap over notes")
    assert interval["method"].endswith("seed 0")
    assert uncertainty["num_bootstrap_samples"] == int(BOOT[1]) and uncertainty["num_samples"] == 5
    assert math.isclose(uncertainty["standard_deviation"], pd.Series([0.9, 0.8, 0.0, 0.6, 0.6]).std())
    assert details["details"]["n_unjudged"] == "1" and details["details"]["n_empty_answers"] == "1"


def test_too_few_notes_leave_the_interval_out_and_say_why(report: Path) -> None:
    aggregate, _ = _files(report, SOLO_DIR, ALPHA)
    details = _result(aggregate, REWARD_ID)["score_details"]
    assert math.isclose(details["score"], 0.9) and "confidence_interval" not in details["uncertainty"]
    assert details["details"]["confidence_interval"].startswith("none: fewer than 5 judged notes")
    assert details["uncertainty"]["num_samples"] == 2


def test_llm_scoring_names_the_judges_their_served_models_the_prompt_and_the_aggregation(report: Path) -> None:
    aggregate, _ = _files(report, PANEL_DIR, ALPHA)
    scoring = _result(aggregate, REWARD_ID)["metric_config"]["llm_scoring"]
    one, two = (judge["model_info"] for judge in scoring["judges"])
    assert (one["name"], one["id"], one["additional_details"]["model_deployment"]) == (
        "judge-one",
        "judge-one",
        "fake/judge-one",
    )
    assert json.loads(one["additional_details"]["served_models"]) == [SERVED]
    assert two["name"] == "judge-two" and json.loads(two["additional_details"]["served_models"]) == []
    assert scoring["aggregation_method"] == "average"
    assert "a failed judge counts for nothing" in scoring["additional_details"]["aggregation"]
    assert scoring["additional_details"]["prompt_style"] == "ours"
    prompt = scoring["input_prompt"]
    assert all(slot in prompt for slot in ("{note}", "{answer}", "{reference}", "<operative_note-{marker}>"))
    assert "Rate the candidate plan on three dimensions" in prompt


def test_per_note_rewards_and_each_judges_verdict_in_the_metadata(report: Path) -> None:
    _, records = _files(report, PANEL_DIR, ALPHA)
    rewards = {
        r["metadata"]["note"]: r["evaluation"]["score"] for r in records if r["evaluation_result_id"] == REWARD_ID
    }
    assert rewards.keys() == {"n1.txt", "n2.txt", "n4.txt", "n5.txt", "n6.txt"}
    assert [round(rewards[n], 9) for n in sorted(rewards)] == [0.9, 0.8, 0.0, 0.6, 0.6]
    n2 = _records(records, "n2.txt")[REWARD_ID]
    one, two = json.loads(n2["metadata"]["judges"])
    assert one["scores"] == {"accuracy": 4, "completeness": 4, "clarity": 4} and math.isclose(one["reward"], 0.8)
    assert one["served_model"] == SERVED and one["status"] == "ok" and one["failure"] is None
    assert one["tokens_in"] is None  # NaN in the report's table (a total, not in and out): null here, never NaN
    assert (two["status"], two["failure"], two["reward"]) == ("failed", "call error: HTTP 500", None)
    assert two["scores"] == {"accuracy": None, "completeness": None, "clarity": None}
    assert (n2["metadata"]["judges_scored"], n2["metadata"]["judges_failed"]) == ("1", "1") and n2["error"] is None
    n4 = _records(records, "n4.txt")[REWARD_ID]
    assert n4["evaluation"]["score"] == 0.0 and n4["metadata"]["empty_answer"] == "true"
    assert all(r["evaluation"]["is_correct"] is False for r in records)


def test_an_unjudged_note_is_an_error_never_a_score_of_0(report: Path) -> None:
    _, records = _files(report, PANEL_DIR, ALPHA)
    n3 = _records(records, "n3.txt")
    assert set(n3) == {UNJUDGED_ID}  # no reward record at all
    assert n3[UNJUDGED_ID]["evaluation"]["score"] == 1.0
    assert n3[UNJUDGED_ID]["error"] == (
        "unjudged: no judge of the panel scored this answer "
        "(judge-one: call error: timeout after 60s; judge-two: no verdict in reply)"
    )
    judged = [r for r in records if r["evaluation_result_id"] == UNJUDGED_ID and r["metadata"]["note"] != "n3.txt"]
    assert len(judged) == 5 and all(r["evaluation"]["score"] == 0.0 and r["error"] is None for r in judged)


def test_a_model_no_judge_scored_has_no_reward(report: Path) -> None:
    aggregate, records = _files(report, PANEL_DIR, BETA)
    assert [r["evaluation_result_id"] for r in aggregate["evaluation_results"]] == [UNJUDGED_ID]
    assert _result(aggregate, UNJUDGED_ID)["score_details"]["score"] == 1.0
    assert len(records) == 6 and {r["evaluation_result_id"] for r in records} == {UNJUDGED_ID}
    assert all(r["error"].startswith("unjudged: ") for r in records)


def test_results_are_the_means_of_their_records(report: Path) -> None:
    """A reader recomputing a result from its instance records gets the aggregate's score."""
    for panel, model in ((PANEL_DIR, ALPHA), (PANEL_DIR, BETA), (SOLO_DIR, ALPHA)):
        aggregate, records = _files(report, panel, model)
        for result in aggregate["evaluation_results"]:
            scores = [
                r["evaluation"]["score"] for r in records if r["evaluation_result_id"] == result["evaluation_result_id"]
            ]
            assert math.isclose(sum(scores) / len(scores), result["score_details"]["score"]), (panel, model)


def test_identity_and_layout(report: Path) -> None:
    aggregate, records = _files(report, PANEL_DIR, ALPHA)
    assert aggregate["model_info"]["id"] == ALPHA and aggregate["model_info"]["developer"] == "acme"
    assert aggregate["evaluation_id"] == f"mtsamples_procedures/v1/{PANEL}/{ALPHA}"
    assert aggregate["source_metadata"]["source_type"] == "evaluation_run"
    assert aggregate["evaluation_results"][0]["generation_config"]["generation_args"] == {
        "temperature": 0.0,
        "max_tokens": 512,
    }
    assert {r["sample_id"] for r in records} == {f"id_n{i}.txt" for i in range(1, 7)}
    assert not (report / "eee" / PANEL_DIR / "data" / "mtsamples_procedures" / "mtsamples-control").exists()
    solo, _ = _files(report, SOLO_DIR, ALPHA)
    assert solo["evaluation_id"] != aggregate["evaluation_id"]


def test_hostile_answer_stays_one_string_of_data(report: Path) -> None:
    _, records = _files(report, PANEL_DIR, ALPHA)
    (path,) = _model_dir(report, PANEL_DIR, ALPHA).glob("*.jsonl")
    raw = path.read_text(encoding="utf-8")
    assert "\u2028" not in raw and raw.isascii() and len(raw.splitlines()) == len(records) == 11
    n1 = _records(records, "n1.txt")[REWARD_ID]
    assert n1["output"]["raw"] == [HOSTILE.replace("\x1b", REPLACEMENT)]


def test_a_second_report_writes_the_same_files_and_one_without_export_drops_them(tmp_path: Path) -> None:
    build_eee_suite(tmp_path)
    first = sorted(p.relative_to(tmp_path).as_posix() for p in _every_file(_report(tmp_path, "--export", "eee")))
    second = sorted(p.relative_to(tmp_path).as_posix() for p in _every_file(_report(tmp_path, "--export", "eee")))
    assert first == second and len(first) == 6
    assert not (_report(tmp_path) / "eee").exists()


def test_export_takes_a_comma_list_or_repeats() -> None:
    parse = _parser().parse_args
    assert parse(["--suite", "v1", "--export", "medmarks"]).export == [["medmarks"]]  # as before
    assert _exports("medmarks,eee") == ["medmarks", "eee"] and _exports("eee,") == ["eee"]
    assert parse(["--suite", "v1", "--export", "eee", "--export", "medmarks"]).export == [["eee"], ["medmarks"]]
    for wrong in ("parquet", "", ",", "eee,csv"):
        with pytest.raises(argparse.ArgumentTypeError, match="takes medmarks or eee"):
            _exports(wrong)


def test_an_unknown_export_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_eee_suite(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        run_report(tmp_path, tmp_path / "report", "--export", "eee,parquet")
    assert stopped.value.code == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .endswith("argument --export: takes medmarks or eee (repeat --export, or a comma list)")
    )
    assert not (tmp_path / "report").exists()


def test_both_exports_in_one_report(tmp_path: Path) -> None:
    """``--export medmarks --export eee``: Medmarks' files as ever, and EEE's beside them."""
    medmarks = export_suite(tmp_path, "--export", "eee")
    assert (medmarks / "env_index.json").is_file()
    (panel,) = (tmp_path / "report" / "eee").iterdir()
    assert panel.name == medmarks.name and datastore_problems(panel) == []
    assert len(list(panel.rglob("*.json"))) == 2  # the suite's two models
