"""`helm-mtsamples-report --export medmarks`: the parquet `medarc-eval winrate` reads and MedARC's result records.

The suite is tests/report/medmarks_suite.py (its docstring derives every reward by hand).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.common.outside_text import REPLACEMENT
from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV
from helm_mtsamples_ext.report.medmarks_export import ModelExport, slug, write_export
from tests.report.medmarks_export import export_suite
from tests.report.medmarks_suite import ALPHA, BETA, HOSTILE, MANIFEST_ORDER, build_medmarks_suite
from tests.report.reports import run_report
from tests.report.suites import NOTES, Run, build_suite, control_run, ok

REQUIRED = ["env_id", "example_id", "model_id", "reward", "rollout_index"]
"""What medarc-verifiers' win rate reads (its ValueError names them when one is missing)."""


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_suite(tmp_path_factory.mktemp("medmarks"))


def _parquet(export: Path, model: str) -> pd.DataFrame:
    return pd.read_parquet(export / slug(model) / "mtsamples_procedures.parquet")


def _records(export: Path, model: str) -> list[dict[str, Any]]:
    lines = (export / slug(model) / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_parquet_has_the_columns_winrate_reads(export: Path) -> None:
    table = _parquet(export, ALPHA)
    assert list(table.columns[:5]) == REQUIRED
    assert str(table["example_id"].dtype) == "Int64" and str(table["reward"].dtype) == "Float64"
    assert set(table["env_id"]) == {"mtsamples_procedures"} and set(table["model_id"]) == {ALPHA}
    assert set(table["rollout_index"]) == {0}


def test_example_id_is_the_manifest_index_for_every_model(export: Path) -> None:
    """n3 is first in the manifest: id 0, for both models; not the file names' order nor the run's."""
    expected = {name: index for index, name in enumerate(MANIFEST_ORDER)}
    for model in (ALPHA, BETA):
        table = _parquet(export, model)
        by_note = dict(zip((r["info"]["filename"] for r in _records(export, model)), table["example_id"], strict=True))
        assert by_note == expected, model


def test_rewards_are_the_reports(export: Path) -> None:
    alpha = _parquet(export, ALPHA).set_index("example_id")["reward"]
    assert [round(float(r), 9) for r in alpha] == [1.0, 0.9, 0.8, 1.0]


def test_unjudged_note_is_a_missing_reward_not_zero(export: Path) -> None:
    beta = _parquet(export, BETA).set_index("example_id")
    n2 = MANIFEST_ORDER.index("n2.txt")
    assert pd.isna(beta.loc[n2, "reward"]) and beta.loc[n2, "status"] == "unjudged"
    assert beta.loc[n2, "error"] == "judge-one: call error: HTTP 500; judge-two: no verdict in reply"
    judged = beta.drop(index=n2)
    assert [round(float(r), 9) for r in judged["reward"]] == [0.6, 0.4, 0.7] and set(judged["status"]) == {"judged"}
    assert pd.isna(judged["error"]).all()
    record = next(r for r in _records(export, BETA) if r["info"]["filename"] == "n2.txt")
    assert record["reward"] is None and record["info"]["judge_feedback"][0]["score"] is None


def test_result_records_follow_medarcs_structure(export: Path) -> None:
    records = _records(export, BETA)
    assert [r["info"]["filename"] for r in records] == MANIFEST_ORDER  # in example_id order
    record = records[MANIFEST_ORDER.index("n4.txt")]
    assert set(record) == {"prompt", "completion", "reward", "info"}
    assert set(record["info"]) == {
        "filename",
        "extracted_section",
        "procedure_note",
        "reference_plan",
        "judge_feedback",
    }
    assert record["prompt"] == [
        {"role": "user", "content": "Medical Specialty:Orthopedic\nSample Name: n4\nPROCEDURE: something."}
    ]
    assert record["completion"] == [{"role": "assistant", "content": "Plan: rest and follow up."}]
    assert (
        record["info"]["extracted_section"] == "PLAN" and record["info"]["reference_plan"] == "Follow up in two weeks."
    )
    assert math.isclose(record["reward"], 0.7)


def test_judge_feedback_holds_each_judges_scores_explanations_and_failure(export: Path) -> None:
    records = {r["info"]["filename"]: r for r in _records(export, BETA)}
    (feedback,) = records["n4.txt"]["info"]["judge_feedback"]
    one, two = feedback["judges"]
    assert one["judge"] == "judge-one" and one["status"] == "ok" and one["error"] is None
    assert one["scores"]["accuracy"] == {"score": 4, "explanation": "accuracy reasoning"}
    assert math.isclose(one["score"], 0.8) and math.isclose(two["score"], 0.6) and math.isclose(feedback["score"], 0.7)
    failed = records["n2.txt"]["info"]["judge_feedback"][0]["judges"]
    assert [(j["status"], j["error"], j["score"]) for j in failed] == [
        ("failed", "call error: HTTP 500", None),
        ("failed", "no verdict in reply", None),
    ]
    assert all(j["scores"]["accuracy"]["score"] is None for j in failed)


def test_hostile_answer_stays_one_string_of_data(export: Path) -> None:
    """HTML, a forged JSON line and a line separator are the answer's text, on the record's one line; the escape
    character is replaced as everywhere in the report (outside_text.py)."""
    path = export / slug(ALPHA) / "results.jsonl"
    raw = path.read_text(encoding="utf-8")
    assert len(raw.splitlines()) == 4 and "\u2028" not in raw and "<script>" in raw
    (record,) = (r for r in _records(export, ALPHA) if r["info"]["filename"] == "n1.txt")
    assert record["completion"][0]["content"] == HOSTILE.replace("\x1b", REPLACEMENT)
    assert math.isclose(record["reward"], 0.9)


def test_env_index_lists_every_models_parquet(export: Path) -> None:
    index = json.loads((export / "env_index.json").read_text(encoding="utf-8"))
    assert index["version"] == 2 and index["panel"] == "judge-one+judge-two"
    assert index["files"] == {
        f"{slug(m)}/mtsamples_procedures.parquet": {"env_id": "mtsamples_procedures", "model_id": m, "row_count": 4}
        for m in (ALPHA, BETA)
    }


def test_note_outside_the_manifest_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without the manifest the suite was run with, a note has no id: one line with the fix, nothing written."""
    build_medmarks_suite(tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(MANIFEST_ENV, raising=False)
        assert run_report(tmp_path, tmp_path / "report", "--export", "medmarks") == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("error: --export medmarks: note 'n1.txt' of acme/alpha is not in the manifest")
    assert error.endswith("set MTSAMPLES_PROCEDURES_MANIFEST to the manifest the suite was run with")
    assert not (tmp_path / "report").exists()


def test_a_report_without_export_drops_a_stale_one(tmp_path: Path) -> None:
    export = export_suite(tmp_path)
    assert export.is_dir()
    assert run_report(tmp_path, tmp_path / "report") == 0
    assert not (tmp_path / "report" / "medmarks").exists() and (tmp_path / "report" / "report.md").is_file()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("acme/alpha", "acme_alpha"),
        ("..", "model"),
        ("../../etc", "_.._etc"),
        ("a b [extraction=helm]", "a_b_extraction_helm_"),
    ],
)
def test_slug_is_a_plain_directory_name(name: str, expected: str) -> None:
    assert slug(name) == expected


def test_models_whose_names_slug_alike_get_their_own_directories(tmp_path: Path) -> None:
    rows = pd.DataFrame({"example_id": pd.array([0], dtype="Int64")})
    exports = [ModelExport("j", model, rows) for model in ("acme/x", "acme_x")]
    (panel,) = write_export(exports, tmp_path)
    files = json.loads((panel / "env_index.json").read_text(encoding="utf-8"))["files"]
    assert len(files) == 2 and {entry["model_id"] for entry in files.values()} == {"acme/x", "acme_x"}
    assert all((panel / path).is_file() for path in files)


def test_each_panel_has_its_own_export_and_controls_are_left_out(tmp_path: Path) -> None:
    """A second panel's run of alpha goes to its own directory and env_index.json (rewards of two juries are
    never ranked together); a control run of the judge audit is no model to rank."""
    manifest = build_medmarks_suite(tmp_path)
    other = Run(ALPHA, ["judge-three"], {"n1.txt": {"judge-three": ok(3, 3, 3)}}, extra_args="judges=judge-three")
    control = control_run("reference", {"n1.txt": {"judge-one": 1.0, "judge-two": 1.0}})
    build_suite(tmp_path, [other, control], notes=NOTES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MANIFEST_ENV, str(manifest))
        assert run_report(tmp_path, tmp_path / "report", "--export", "medmarks") == 0
    export = tmp_path / "report" / "medmarks"
    assert sorted(p.name for p in export.iterdir()) == ["judge-one_judge-two", "judge-three"]
    index = json.loads((export / "judge-three" / "env_index.json").read_text(encoding="utf-8"))
    assert index["panel"] == "judge-three" and [e["model_id"] for e in index["files"].values()] == [ALPHA]
    assert math.isclose(_parquet(export / "judge-three", ALPHA)["reward"].iloc[0], 0.6)
    index = json.loads((export / "judge-one_judge-two" / "env_index.json").read_text(encoding="utf-8"))
    assert sorted(e["model_id"] for e in index["files"].values()) == [ALPHA, BETA]
