"""The golden set through HELM's door: the real ``helm-run`` (``medhelm-run`` on medhelm) on the ten synthetic
notes gives, per note, the reward, each judge's scores and each failed judge's failure kind that tests/golden.py
writes out by hand; and ``helm-mtsamples-report --export medmarks`` carries the same into Medmarks' files.

Why: the Inspect and verifiers doors check the same table in their own venvs; equal to the table, the doors are
equal to each other. One run serves the module: the model under test is a loopback OpenAI-compatible server
(``ModelServer(golden.answer_for)``) registered in ``prod_env`` as a user registers a local model, through HELM's
own OpenAI client; the judges ``gold-a``, ``gold-b`` and ``gold-c`` are the loopback golden judges, reached with
``judge_base_url``, under the golden set's ``judge_timeout`` and ``judge_max_wait``.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.common.failure_kinds import KINDS, failure_kind
from tests import golden
from tests.e2e.helm_tools import (
    RUN_TOOL,
    P,
    helm_tool,
    register_loopback_model,
    request_states,
    run_dir,
    stat,
    user_env,
)
from tests.servers.judge import JudgeServer
from tests.servers.mirror import NoteMirror
from tests.servers.model import ModelServer

pytestmark = pytest.mark.e2e

SUITE = "golden"
PANEL = "+".join(golden.JUDGES)
MAX_UNJUDGED = 1 / len(golden.CASES)
"""The golden set has one note no judge can score: the run must report it, not fail on it (the default is 0)."""


@dataclass
class GoldenRun:
    root: Path  # helm-run's working directory
    run: Path  # the run's output directory
    env: dict[str, str]
    log: str  # helm-run's stdout + stderr
    states: dict[str, dict[str, Any]]  # golden note name -> its request state
    instance_stats: dict[str, dict[str, float]]  # golden note name -> per-instance stat name -> its mean


def _note(state: dict[str, Any]) -> str:
    name = golden.note_of(state["instance"]["input"]["text"])
    assert name is not None, f"instance {state['instance']['id']} is not a golden note"
    return name


@pytest.fixture(scope="module")
def golden_run(mirror: NoteMirror, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GoldenRun]:
    root = tmp_path_factory.mktemp("golden")
    judges = dict.fromkeys(golden.JUDGES, "golden")
    with (
        ModelServer(golden.answer_for) as model,
        JudgeServer(judges, hold_seconds=golden.JUDGE_MAX_WAIT + 15, max_lifetime=900) as judge,
    ):
        name = register_loopback_model(root / "prod_env", model.base_url, "golden")
        entry = (
            f"{P}:model={name},judges={PANEL},judge_base_url={judge.base_url},"
            f"judge_timeout={golden.JUDGE_TIMEOUT:g},judge_max_wait={golden.JUDGE_MAX_WAIT:g},"
            f"max_unjudged={MAX_UNJUDGED:g}"
        )
        env = user_env(**mirror.env)
        args = ["--run-entries", entry, "--suite", SUITE, "-m", str(len(golden.CASES)), "--local-path", "prod_env"]
        log = helm_tool(RUN_TOOL, *args, cwd=root, env=env)
        sent = sorted(filter(None, map(golden.note_of, model.prompts)))
    assert sent == sorted(golden.CASES), "the model under test was asked about each golden note once"

    run = run_dir(root / "benchmark_output", SUITE)
    states = {_note(s): s for s in request_states(run)}
    assert sorted(states) == sorted(golden.CASES), "all ten instances ran"
    by_id = {s["instance"]["id"]: name for name, s in states.items()}
    per_instance = json.loads((run / "per_instance_stats.json").read_text())
    instance_stats = {
        by_id[entry["instance_id"]]: {s["name"]["name"]: s["mean"] for s in entry["stats"] if "mean" in s}
        for entry in per_instance
    }
    yield GoldenRun(root, run, env, log, states, instance_stats)


def _record(run: GoldenRun, name: str) -> dict[str, Any]:
    record = run.states[name]["annotations"][P]
    assert isinstance(record, dict)
    return record


def _scores(entry: dict[str, Any]) -> golden.Scores | None:
    if entry.get("status") == "failed":
        return None
    accuracy, completeness, clarity = (entry[dim]["score"] for dim in golden.DIMENSIONS)
    return (accuracy, completeness, clarity)


@pytest.mark.parametrize("name", sorted(golden.CASES))
def test_each_notes_record_holds_the_golden_scores_and_failure_kinds(golden_run: GoldenRun, name: str) -> None:
    expected, record = golden.EXPECTED[name], _record(golden_run, name)
    if not expected.scores:  # the empty answer: no judge asked
        assert record.get("answer") == "empty" and not (set(record) & set(golden.JUDGES)), record
        return
    assert {judge: _scores(record[judge]) for judge in golden.JUDGES} == expected.scores
    failures = {judge: failure_kind(record[judge]["failure"]) for judge in golden.JUDGES if judge in expected.failures}
    assert failures == expected.failures, {judge: record[judge].get("failure") for judge in golden.JUDGES}
    stored = {judge: record[judge].get("failure_kind") for judge in golden.JUDGES}
    assert stored == {judge: expected.failures.get(judge) for judge in golden.JUDGES}, "each kind beside its text"
    assert set(expected.failures.values()) <= set(KINDS)
    assert sorted(record["failed_judges"]) == sorted(expected.failures)


@pytest.mark.parametrize("name", sorted(golden.CASES))
def test_each_notes_reward_stat_is_the_golden_reward(golden_run: GoldenRun, name: str) -> None:
    """A note no judge scored has no reward stat and is counted unjudged; the empty answer's reward is 0."""
    expected, stats = golden.EXPECTED[name], golden_run.instance_stats[name]
    if expected.reward is None:
        assert f"{P}_reward" not in stats, stats
        assert stats[f"{P}_unjudged"] == 1
    else:
        assert stats[f"{P}_reward"] == pytest.approx(expected.reward, abs=1e-12)
        assert stats[f"{P}_unjudged"] == 0
    assert stats[f"{P}_empty_answer"] == (golden.CASES[name] == "empty")
    assert stats[f"{P}_judge_failures"] == len(expected.failures)


def test_failures_per_judge_and_kind_are_the_golden_counts(golden_run: GoldenRun) -> None:
    counted: dict[str, Counter[str]] = {judge: Counter() for judge in golden.JUDGES}
    for name in golden.CASES:
        record = _record(golden_run, name)
        for judge in golden.JUDGES:
            entry = record.get(judge)
            if isinstance(entry, dict) and entry.get("status") == "failed":
                counted[judge][failure_kind(entry["failure"])] += 1
    assert {judge: dict(kinds) for judge, kinds in counted.items()} == golden.FAILURE_COUNTS


def test_the_runs_mean_reward_leaves_the_unjudged_note_out_and_counts_the_empty_answer_0(golden_run: GoldenRun) -> None:
    """HELM's stats.json: the mean of the nine per-note rewards, and the unjudged note's share of the ten."""
    rewarded = [name for name, stats in golden_run.instance_stats.items() if f"{P}_reward" in stats]
    assert sorted(rewarded) == sorted(name for name, e in golden.EXPECTED.items() if e.reward is not None)
    assert stat(golden_run.run, f"{P}_reward")["mean"] == pytest.approx(golden.MEAN_REWARD, abs=1e-12)
    assert stat(golden_run.run, f"{P}_unjudged")["mean"] == pytest.approx(1 / len(golden.CASES))


def test_the_runs_last_lines_count_the_golden_failures_and_the_unjudged_note(golden_run: GoldenRun) -> None:
    judged = [e for e in golden.EXPECTED.values() if e.scores]  # the empty answer asks no judge
    failed = sum(len(e.failures) for e in judged)
    timed_out = sum(kinds.get(golden.TIMED_OUT, 0) for kinds in golden.FAILURE_COUNTS.values())
    assert f"{failed} of {len(golden.JUDGES) * len(judged)} judge calls failed" in golden_run.log
    assert f"{timed_out} {golden.TIMED_OUT} (raise judge_timeout" in golden_run.log
    assert f"1 of {len(golden.CASES)} notes have no reward" in golden_run.log
    assert "Traceback" not in golden_run.log


@dataclass
class Export:
    rewards: dict[str, float | None]  # golden note name -> the parquet's reward
    records: dict[str, dict[str, Any]]  # golden note name -> its result record


@pytest.fixture(scope="module")
def export(golden_run: GoldenRun) -> Export:
    root, env = golden_run.root, golden_run.env
    helm_tool("helm-mtsamples-report", "--suite", SUITE, "--export", "medmarks", cwd=root, env=env)
    medmarks = root / "benchmark_output" / "mtsamples_report" / SUITE / "medmarks"
    (parquet,) = medmarks.glob(f"*/*/{P}.parquet")
    rows = pd.read_parquet(parquet).to_dict("records")
    lines = (parquet.parent / "results.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    names = [_named(golden.note_of(r["info"]["procedure_note"])) for r in records]
    assert sorted(names) == sorted(golden.CASES), "one row and one record per note"
    # The parquet's rows and the records are written in the same order (example_id's).
    rewards = [None if pd.isna(row["reward"]) else float(row["reward"]) for row in rows]
    return Export(dict(zip(names, rewards, strict=True)), dict(zip(names, records, strict=True)))


def _named(name: str | None) -> str:
    assert name is not None, "a record of no golden note"
    return name


@pytest.mark.parametrize("name", sorted(golden.CASES))
def test_the_medmarks_export_gives_each_note_its_golden_reward_and_verdicts(export: Export, name: str) -> None:
    expected, record = golden.EXPECTED[name], export.records[name]
    if expected.reward is None:
        assert export.rewards[name] is None and record["reward"] is None, "unjudged: null, never 0"
    else:
        assert export.rewards[name] == pytest.approx(expected.reward, abs=1e-12)
        assert record["reward"] == pytest.approx(expected.reward, abs=1e-12)
    (feedback,) = record["info"]["judge_feedback"]
    judges = {j["judge"]: j for j in feedback["judges"]}
    assert list(judges) == list(golden.JUDGES)
    if not expected.scores:  # the empty answer: no judge asked, none failed, none scored
        assert all(j["error"] is None and j["scores"]["accuracy"]["score"] is None for j in judges.values())
        return
    scores = {
        judge: None if j["status"] == "failed" else tuple(j["scores"][dim]["score"] for dim in golden.DIMENSIONS)
        for judge, j in judges.items()
    }
    assert scores == expected.scores
    failures = {judge: failure_kind(j["error"]) for judge, j in judges.items() if j["status"] == "failed"}
    assert failures == expected.failures


def test_clinicians_ratings_reach_the_leaderboard_report_and_page_of_a_real_run(
    golden_run: GoldenRun, tmp_path: Path
) -> None:
    """Ratings files of the real run's answers through the real ``helm-mtsamples-report --ratings``: one file as the
    rating mode exports it now (a flagged reference, inclusion probabilities), one as older releases wrote it (eight
    columns). Both read; with 9 judged answers, under the floor of 10, leaderboard.csv has the clinician columns but
    no figure, and report.md and report.html say how many more to rate; the flagged note is listed."""
    ids = {name: state["instance"]["id"] for name, state in golden_run.states.items()}
    names = sorted(ids)
    run = golden_run.run.name  # HELM's run name holds commas: the files are written as CSV writes them
    header = ["run", "instance_id", "model", "rater", "accuracy", "completeness", "clarity", "comment"]
    rows_new = [[run, ids[n], "", "Dr A", 4, 3, 5, "", int(n == names[0]), 1] for n in names]
    rows_old = [[run, ids[n], "", "Dr B", 3, 3, 4, "older file"] for n in names[:4]]
    for path, head, rows in (
        (tmp_path / "new.csv", [*header, "bad_reference", "inclusion_probability"], rows_new),
        (tmp_path / "old.csv", header, rows_old),
    ):
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows([head, *rows])
    out = tmp_path / "report"
    args = ["--suite", SUITE, "--out", str(out), "--ratings", str(tmp_path / "new.csv")]
    log = helm_tool("helm-mtsamples-report", *args, "--ratings", str(tmp_path / "old.csv"),
                    cwd=golden_run.root, env=golden_run.env)  # fmt: skip
    assert "Traceback" not in log
    (row,) = pd.read_csv(out / "leaderboard.csv").to_dict("records")
    judged = int(row["n_judged"])
    assert {"clinician_reward", "clinician_ci_low", "clinician_ci_high", "n_rated", "calibration"} <= set(row)
    assert row["n_rated"] == judged == 9, "every judged answer rated; the unjudged one has nothing to correct"
    assert (
        pd.isna(row["clinician_reward"])
        and row["calibration"] == "none: 9 rated, 10 needed (rate 1 more of its answers)"
    )
    report_md = (out / "report.md").read_text(encoding="utf-8")
    assert "9 rated, 10 needed" in report_md and "Bad references" in report_md
    (flagged,) = pd.read_csv(out / "flagged_references.csv").to_dict("records")
    assert (flagged["n_flagged_notes"], flagged["n_unflagged_notes"]) == (1, 8)
    listed = report_md.split("Flagged notes", 1)[1].splitlines()[0]
    assert listed.count(".txt (") == 1 and "(1 of 2 raters)" in listed, "listed; Dr B of the older file rated it too"
    assert "9 rated, 10 needed" in (out / "report.html").read_text(encoding="utf-8")
