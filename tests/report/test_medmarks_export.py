"""`helm-mtsamples-report --export medmarks`: Medmarks' processed parquet, MedARC's result records, strict JSON, and
what the export can rank.

The suite is tests/report/medmarks_suite.py (its docstring derives every reward by hand).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from helm_mtsamples_ext.common.outside_text import REPLACEMENT
from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV
from helm_mtsamples_ext.report.medmarks_export import ModelExport, slug, strict_json, write_export
from helm_mtsamples_ext.report.medmarks_schema import medmarks_table
from tests.report.medmarks_export import expected_ids, export_suite
from tests.report.medmarks_suite import (
    ALPHA,
    BETA,
    HOSTILE,
    MANIFEST_ORDER,
    PANEL_DIR,
    TOKENS_IN,
    TOKENS_OUT,
    build_medmarks_suite,
    note_env,
)
from tests.report.reports import run_report
from tests.report.suites import NOTES, Run, build_suite, control_run, ok

S, F, I64 = pa.large_string(), pa.float64(), pa.int64()
MEDMARKS_COLUMNS = [
    ("env_id", S), ("error", S), ("example_id", S), ("answer", S), ("extras", S), ("generation_ms", F),
    ("job_run_id", S), ("judge_cost", F), ("judge_token_completion", F), ("judge_token_prompt", F),
    ("judge_token_total", F), ("model_cost", F), ("model_id", S), ("version_info", S),
    ("model_token_completion", F), ("model_token_prompt", F), ("model_token_total", F), ("reward", F),
    ("rollout_index", I64), ("run_id", S), ("scoring_ms", F), ("status", S), ("task", S), ("total_ms", F),
]  # fmt: skip
"""Medmarks' processed columns in order with their Arrow types, copied from ``EXPECTED_ARROW_SCHEMA`` of
medarc_verifiers/cli/process/writer.py (med-lm-envs 0847c7b = medarc-verifiers 0.1.0) but ``example_id``, a string
as issue 45 describes Medmarks PR #131 (whose text could not be read: medmarks_schema.py)."""
PRICES = "judges:\n  judge-one: {input: 1.0, output: 2.0}\n  judge-two: {input: 3.0, output: 0.5}\n"
"""USD per million tokens: a judge that scored (100 in, 20 out) costs 140e-6 (judge-one) or 310e-6 (judge-two)."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict(text: str) -> Any:
    """``text`` parsed as jq and every strict JSON parser would: NaN, Infinity and -Infinity refused."""
    return json.loads(text, parse_constant=_no_constant)


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The suite, exported with judge prices; the panel's export directory."""
    output = tmp_path_factory.mktemp("medmarks")
    prices = output / "prices.yaml"
    prices.write_text(PRICES, encoding="utf-8")
    return export_suite(output, "--judge-prices", str(prices))


@pytest.fixture(scope="module")
def export(suite_dir: Path) -> Path:
    return suite_dir


@pytest.fixture(scope="module")
def ids(suite_dir: Path) -> dict[str, str]:
    return expected_ids(suite_dir.parents[2])


def _table(export: Path, model: str) -> pa.Table:
    return pq.read_table(export / slug(model) / "mtsamples_procedures.parquet")


def _rows(export: Path, model: str) -> dict[str, dict[str, Any]]:
    """The model's parquet rows by example_id."""
    return {row["example_id"]: row for row in _table(export, model).to_pylist()}


def _records(export: Path, model: str) -> list[dict[str, Any]]:
    lines = (export / slug(model) / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [strict(line) for line in lines]


def test_parquet_has_exactly_medmarks_columns_and_types(export: Path) -> None:
    for model in (ALPHA, BETA):
        schema = _table(export, model).schema
        assert [(f.name, f.type) for f in schema] == MEDMARKS_COLUMNS, model


def test_the_schema_refuses_a_column_medmarks_has_not(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not Medmarks columns: \\['note'\\]"):
        medmarks_table([{"env_id": "x", "note": "n1.txt"}])


def test_example_id_is_the_id_rules_string_for_every_model(export: Path, ids: dict[str, str]) -> None:
    """Both models carry the same id for the same note: the one data/example_ids.py gives it, as a string: MedARC's
    row index, the notes in name order (n1 first), not the manifest's (n3 first)."""
    assert ids == {"n1.txt": "0", "n2.txt": "1", "n3.txt": "2", "n4.txt": "3"}
    for model in (ALPHA, BETA):
        records = _records(export, model)
        by_note = {r["info"]["filename"]: r["example_id"] for r in records}
        assert by_note == {name: ids[name] for name in MANIFEST_ORDER}, model
        assert [row["example_id"] for row in _table(export, model).to_pylist()] == [r["example_id"] for r in records]


def test_rewards_tokens_and_costs_are_the_reports(export: Path, ids: dict[str, str]) -> None:
    alpha = _rows(export, ALPHA)
    rewards = {"n3.txt": 1.0, "n1.txt": 0.9, "n2.txt": 0.8, "n4.txt": 1.0}
    for name, reward in rewards.items():
        row = alpha[ids[name]]
        assert math.isclose(row["reward"], reward), name
        assert (row["judge_token_prompt"], row["judge_token_completion"]) == (2 * TOKENS_IN, 2 * TOKENS_OUT)
        assert row["judge_token_total"] == 2 * (TOKENS_IN + TOKENS_OUT)
        assert math.isclose(row["judge_cost"], 140e-6 + 310e-6)
        assert (row["env_id"], row["model_id"], row["rollout_index"], row["status"]) == (
            "mtsamples_procedures",
            ALPHA,
            0,
            "judged",
        )
        assert row["answer"] == "Follow up in two weeks."  # verifiers' `answer`: the reference
        assert row["run_id"] == "mtsamples_procedures:model=acme_alpha"  # HELM's run directory
        assert strict(row["version_info"])["rules_version"] is None
    unmeasured = ["extras", "generation_ms", "job_run_id", "model_cost", "model_token_completion"]
    unmeasured += ["model_token_prompt", "model_token_total", "scoring_ms", "task", "total_ms"]
    assert all(row[column] is None for row in alpha.values() for column in unmeasured)


def test_unjudged_note_is_a_missing_reward_not_zero(export: Path, ids: dict[str, str]) -> None:
    beta = _rows(export, BETA)
    n2 = beta[ids["n2.txt"]]
    assert n2["reward"] is None and n2["status"] == "unjudged"
    assert n2["error"] == "judge-one: call error: HTTP 500; judge-two: no verdict in reply"
    assert n2["judge_token_total"] == 0 and n2["judge_cost"] == 0  # no judge counted a token
    judged = [beta[ids[name]] for name in ("n3.txt", "n1.txt", "n4.txt")]
    assert [round(row["reward"], 9) for row in judged] == [0.6, 0.4, 0.7]
    assert {row["status"] for row in judged} == {"judged"} and all(row["error"] is None for row in judged)
    record = next(r for r in _records(export, BETA) if r["info"]["filename"] == "n2.txt")
    assert record["reward"] is None and record["info"]["judge_feedback"][0]["score"] is None


def test_every_json_file_of_the_export_parses_strictly(export: Path, ids: dict[str, str]) -> None:
    """results.jsonl and env_index.json, line by line, with NaN and Infinity refused: a missing reward is null."""
    written = sorted(p for p in export.rglob("*") if p.suffix in {".json", ".jsonl"})
    assert [p.relative_to(export).as_posix() for p in written] == [
        "acme_alpha/results.jsonl",
        "acme_beta/results.jsonl",
        "env_index.json",
    ]
    for path in written:
        text = path.read_text(encoding="utf-8")
        for line in text.splitlines() if path.suffix == ".jsonl" else [text]:
            strict(line)
    unjudged = next(
        line
        for line in (export / "acme_beta" / "results.jsonl").read_text(encoding="utf-8").splitlines()
        if f'"example_id": "{ids["n2.txt"]}"' in line
    )
    assert '"reward": null' in unjudged and "NaN" not in unjudged


def test_strict_json_refuses_a_nan_instead_of_writing_it() -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        strict_json({"reward": math.nan})


def test_result_records_follow_medarcs_structure(export: Path, ids: dict[str, str]) -> None:
    records = _records(export, BETA)
    assert [r["example_id"] for r in records] == sorted((ids[n] for n in MANIFEST_ORDER), key=int)
    record = next(r for r in records if r["info"]["filename"] == "n4.txt")
    assert set(record) == {"example_id", "prompt", "completion", "reward", "info"}
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


def test_judge_feedback_reads_by_medarcs_field_paths(export: Path) -> None:
    """MedARC's readers take ``judge_feedback[-1]["judges"]`` and each judge's ``model``, ``raw``, ``error``,
    ``scores[dim]["score"]`` and ``score``; ours (``judge``, ``status``, ``invalid``) sit beside them."""
    records = {r["info"]["filename"]: r for r in _records(export, BETA)}
    feedback = records["n4.txt"]["info"]["judge_feedback"][-1]
    one, two = feedback["judges"]
    assert set(one) == {"model", "raw", "error", "scores", "score", "judge", "status", "invalid"}
    assert one["model"] == "fake/judge" and one["raw"] is None and one["error"] is None
    assert one["judge"] == "judge-one" and one["status"] == "ok"
    assert one["scores"]["accuracy"] == {"score": 4, "explanation": "accuracy reasoning"}
    assert math.isclose(one["score"], 0.8) and math.isclose(two["score"], 0.6) and math.isclose(feedback["score"], 0.7)
    failed = records["n2.txt"]["info"]["judge_feedback"][-1]["judges"]
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
    index = strict((export / "env_index.json").read_text(encoding="utf-8"))
    assert index["version"] == 2 and index["panel"] == "judge-one+judge-two"
    assert index["files"] == {
        f"{slug(m)}/mtsamples_procedures.parquet": {"env_id": "mtsamples_procedures", "model_id": m, "row_count": 4}
        for m in (ALPHA, BETA)
    }


def test_readme_and_report_name_the_panel_directory_to_rank(export: Path) -> None:
    """Pointed at medmarks/ itself medarc-eval stops with a traceback: the export's README and report.md give the
    panel's directory, and a panel of two models gets no "cannot rank" line."""
    readme = (export.parent / "README.md").read_text(encoding="utf-8")
    command = f"medarc-eval winrate --processed-dir medmarks/{PANEL_DIR}"
    assert f"```bash\n{command}\n```" in readme and "not at medmarks/ itself" in readme
    report = (export.parents[1] / "report.md").read_text(encoding="utf-8")
    assert f"`{command}`" in report and "model to rank" not in report + readme


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
    report = tmp_path / "report"
    assert not (report / "medmarks").exists() and "## Medmarks export" not in (report / "report.md").read_text()


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
    rows = medmarks_table([{"example_id": "0"}])
    exports = [ModelExport("j", model, rows) for model in ("acme/x", "acme_x")]
    (panel,) = write_export(exports, tmp_path)
    files = strict((panel / "env_index.json").read_text(encoding="utf-8"))["files"]
    assert len(files) == 2 and {entry["model_id"] for entry in files.values()} == {"acme/x", "acme_x"}
    assert all((panel / path).is_file() for path in files)


def test_each_panel_has_its_own_export_and_says_what_it_cannot_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second panel's run of alpha goes to its own directory and env_index.json (rewards of two juries are never
    ranked together); a control run of the judge audit is no model to rank. The panel with one model gets one line,
    on stderr, in report.md and in the export's README; a panel of control runs alone gets its line too."""
    build_medmarks_suite(tmp_path)
    other = Run(ALPHA, ["judge-three"], {"n1.txt": {"judge-three": ok(3, 3, 3)}}, extra_args="judges=judge-three")
    control = control_run("reference", {"n1.txt": {"judge-one": 1.0, "judge-two": 1.0}})
    lone = control_run("reference", {"n1.txt": {"judge-four": 1.0}}, judges=["judge-four"])
    lone.extra_args = "judges=judge-four"
    build_suite(tmp_path, [other, control, lone], notes=NOTES)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in note_env(tmp_path).items():
            patch.setenv(name, value)
        assert run_report(tmp_path, tmp_path / "report", "--export", "medmarks") == 0
    export = tmp_path / "report" / "medmarks"
    assert sorted(p.name for p in export.iterdir()) == ["README.md", "judge-one_judge-two", "judge-three"]
    index = strict((export / "judge-three" / "env_index.json").read_text(encoding="utf-8"))
    assert index["panel"] == "judge-three" and [e["model_id"] for e in index["files"].values()] == [ALPHA]
    assert math.isclose(_table(export / "judge-three", ALPHA).to_pylist()[0]["reward"], 0.6)
    index = strict((export / "judge-one_judge-two" / "env_index.json").read_text(encoding="utf-8"))
    assert sorted(e["model_id"] for e in index["files"].values()) == [ALPHA, BETA]

    err = capsys.readouterr().err
    one = (
        "Medmarks export: panel judge-three has one model to rank (acme/alpha) and medarc-eval winrate needs two "
        "(it shows dashes): run more models with this panel's judges"
    )
    none = "Medmarks export: panel judge-four has no model to rank (only control runs, which are not ranked)"
    lines = [line for line in err.splitlines() if line.startswith("Medmarks export: panel")]
    assert len(lines) == 2 and lines[0].startswith(none) and lines[1].startswith(one)
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    readme = (export / "README.md").read_text(encoding="utf-8")
    for text in (report, readme):
        assert "panel judge-three has one model to rank (acme/alpha)" in text
        assert "--processed-dir medmarks/judge-three" in text
    assert none in report and "judge-one+judge-two has" not in report
