"""rows.py: one row per panel judge per note, scored as the metric scores it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.rows import judge_rows
from helm_mtsamples_ext.scoring.reward import score_note
from tests.report.reports import run_report
from tests.report.suites import (
    JUDGES,
    NOTES,
    STRONG_RUN,
    WEAK_RUN,
    Run,
    ok,
    read,
    run_name,
    write_run,
)


def test_judge_marked_failed_counts_for_nothing(tmp_path: Path) -> None:
    """A judge marked failed (status or failed_judges) is left out even if a score survived in its record."""
    leftover = {**ok(1, 1, 1), "status": "failed", "failure": "no verdict in reply"}
    listed = ok(1, 1, 1)  # status ok, but named in failed_judges below
    run = Run("acme/m", ["a", "b", "c"], {"n1.txt": {"a": ok(5, 5, 5), "b": leftover, "c": listed}, "n2.txt": {}})
    path = write_run(tmp_path / "runs" / "v1", run, NOTES)
    state_file = path / "scenario_state.json"
    state = json.loads(state_file.read_text())
    state["request_states"][0]["annotations"]["mtsamples_procedures"]["failed_judges"] = ["b", "c"]
    del state["request_states"][1]["annotations"]  # n2 was never annotated: unjudged, its judges failed
    state_file.write_text(json.dumps(state))
    assert run_report(tmp_path, tmp_path / "r") == 0
    board = read(tmp_path / "r", "leaderboard").iloc[0]
    # only judge a counts: 15/15 = 1.0 (counting b and c would give (1 + .2 + .2)/3)
    assert (board["reward"], board["accuracy"], board["n_unjudged"]) == (pytest.approx(1.0), 5.0, 1)
    assert (board["judge_calls"], board["judge_failures"]) == (6, 2 + 3)


def test_rewards_agree_with_scoring_module(main_report: tuple[Path, str]) -> None:
    """The report's note rewards equal scoring.score_note's on the same records, so report.md and stats agree.

    The mean of the per-judge rewards is checked, not the note reward the report copies from score_note, so
    this also guards that the per-judge rows are the ones score_note counted.
    """

    out, _ = main_report
    suite = out.parent / "runs" / "v1"
    inst = read(out, "instances")
    for run in (STRONG_RUN, WEAK_RUN):
        state_file = suite / run_name(run).replace("/", "_") / "scenario_state.json"
        states = json.loads(state_file.read_text())["request_states"]
        for state in states:
            expected = score_note(state["annotations"]["mtsamples_procedures"], JUDGES).reward
            note = inst[(inst["model"] == run.model) & (inst["note"] == state["instance"]["extra_data"]["filename"])]
            got = note["judge_reward"].mean()
            assert (math.isnan(got) and expected is None) or got == pytest.approx(expected)


def test_valid_scores_only_integers_one_to_five() -> None:
    """Only integer scores 1-5 count (int-like floats and numeric strings too); bools and 4.5 do not."""
    raw = [4, "4", 3.0, "5.0", 4.5, 0, 6, True, None, "four"]
    record = {f"j{i}": {"accuracy": {"score": value}, "status": "ok"} for i, value in enumerate(raw)}
    rows = judge_rows({**record, "failed_judges": []}, list(record))
    accuracy = pd.Series([r["accuracy"] for r in rows], dtype=float)
    assert accuracy.tolist()[:4] == [4.0, 4.0, 3.0, 5.0]
    assert accuracy[4:].isna().all()
    assert [r["status"] for r in rows] == ["ok"] * 4 + ["failed"] * 6


def test_a_note_whose_model_was_never_asked_is_not_run_rather_than_missing_its_annotation() -> None:
    """A dry run's states hold no result and no annotation: each judge's row says "not run"; a note that was
    answered but has no record still says "no annotation" (the run stopped: re-running makes the missing calls)."""
    from helm_mtsamples_ext.report.rows import state_rows

    instance = {"id": "id1", "input": {"text": "NOTE"}, "references": [], "extra_data": {}}
    dry = state_rows({"instance": instance}, ["a", "b"])
    assert [(r["status"], r["failure"]) for r in dry] == [("failed", "not run")] * 2
    answered = {"instance": instance, "result": {"completions": [{"text": "a plan"}]}}
    assert [r["failure"] for r in state_rows(answered, ["a"])] == ["no annotation"]
