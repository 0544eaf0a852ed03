"""pairwise.py: every pair of a panel bootstrapped at once gives each pair's own bootstrap, and at leaderboard scale
pairwise.csv keeps every pair while report.md shows adjacent ranks.

The reference below is the straightforward way, written out: for each pair, the notes judged for both (in note
order), their differences on settled rewards, and `stats.paired_difference` (one scipy bootstrap per pair).
"""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.stats.intervals import BootstrapSettings, paired_difference
from helm_mtsamples_ext.stats.pairwise import COLUMNS, pairwise
from helm_mtsamples_ext.stats.ties import rounded_for_ranks
from tests.report.reports import run_report
from tests.report.suites import JUDGES, NOTES, Run, build_suite, ok, read

SETTINGS = BootstrapSettings(n_resamples=300, seed=7)
NUMBERS = ["n_notes", "reward_a", "reward_b", "difference", "ci_low", "ci_high", "share_resamples_a_ahead"]


def _reference(notes: pd.DataFrame, board: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Per pair, on the notes judged for both among the panel's ranking notes: the notes judged for every model
    judged on 5 notes or more (here: all but m/gamma's two unjudged notes)."""
    rows = []
    for panel, ranks in board.groupby("panel", sort=False):
        models = ranks.sort_values("rank")["model"].tolist()
        judged = notes[(notes["panel"] == panel) & notes["reward"].notna()]
        counts = judged.groupby("model")["note"].nunique()
        broad = counts[counts >= 5].index
        shared = judged[judged["model"].isin(broad)].groupby("note")["model"].nunique()
        judged = judged[judged["note"].isin(shared[shared == len(broad)].index)]
        for a, b in itertools.combinations(models, 2):
            both = judged[judged["model"] == a].merge(judged[judged["model"] == b], on="note").sort_values("note")
            diffs = (rounded_for_ranks(both["reward_x"]) - rounded_for_ranks(both["reward_y"])).to_numpy()
            mean, low, high, share = paired_difference(diffs, settings)
            rewards = (both["reward_x"].mean(), both["reward_y"].mean()) if len(both) else (np.nan, np.nan)
            rows.append([panel, a, b, len(both), *rewards, mean, low, high, share])
    return pd.DataFrame(rows, columns=["panel", "model_a", "model_b", *NUMBERS])


def _small_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two panels. In the first, five models over 12 notes: one unjudged on two notes (a note set of its own),
    one equal to another on every note (all resamples tie), one judged on 3 notes only (too few, and too few to
    narrow the notes the others are compared on), one judged on none; the second panel has two models."""
    rng = np.random.default_rng(3)
    notes = [f"note{i:02d}.txt" for i in range(12)]
    rewards = {
        "m/alpha": rng.integers(5, 16, 12) / 15,
        "m/beta": rng.integers(3, 14, 12) / 15,
        "m/gamma": np.where(np.arange(12) < 2, np.nan, rng.integers(3, 14, 12) / 15),
        "m/few": np.where(np.arange(12) < 3, 0.6, np.nan),
        "m/none": np.full(12, np.nan),
    }
    rewards["m/tied"] = (rewards["m/beta"] * 15 * 3) / 45  # the same rewards reached in another float order
    rows = [("p1", model, note, r) for model, values in rewards.items() for note, r in zip(notes, values, strict=True)]
    rows += [("p2", model, note, rng.integers(3, 16) / 15) for model in ("m/x", "m/y") for note in notes]
    table = pd.DataFrame(rows, columns=["panel", "model", "note", "reward"])
    board = table.groupby(["panel", "model"], as_index=False)["reward"].mean()
    board = board.sort_values(["panel", "reward", "model"], ascending=[True, False, True], na_position="last")
    board["rank"] = board.groupby("panel").cumcount() + 1
    return table.sample(frac=1, random_state=0), board.reset_index(drop=True)  # notes in no particular order


def test_every_pair_at_once_equals_a_bootstrap_per_pair() -> None:
    notes, board = _small_case()
    ours, reference = pairwise(notes, board, SETTINGS), _reference(notes, board, SETTINGS)
    keys = ["panel", "model_a", "model_b"]
    assert ours[keys].values.tolist() == reference[keys].values.tolist()
    for column in NUMBERS:
        np.testing.assert_allclose(ours[column], reference[column], rtol=0, atol=1e-12, err_msg=column)
    # The case holds what it is meant to: an interval, a tie, too few notes, no notes.
    by_pair = ours.set_index(["model_a", "model_b"])
    assert by_pair["ci_low"].notna().any()
    tie = by_pair.loc[[p for p in by_pair.index if set(p) == {"m/beta", "m/tied"}][0]]
    assert tie["share_resamples_a_ahead"] == 0.5 and math.isnan(tie["ci_low"])
    assert tie["separated"] == "" and tie["separated_holm"] == ""
    assert ours.loc[ours["n_notes"] == 1, "share_resamples_a_ahead"].isna().all()
    assert set(ours.loc[ours["panel"] == "p1", "n_notes"]) == {0, 1, 10}  # m/few has note 2 only among the ten
    assert (ours["n_notes"] == 0).any() and ours.loc[ours["n_notes"] == 0, "difference"].isna().all()


def test_a_panel_of_one_model_has_no_pairs() -> None:
    notes = pd.DataFrame({"panel": "p", "model": "m/solo", "note": ["a", "b"], "reward": [0.4, 0.6]})
    board = pd.DataFrame({"panel": ["p"], "model": ["m/solo"], "rank": [1]})
    pairs = pairwise(notes, board, SETTINGS)
    assert pairs.empty and list(pairs.columns) == COLUMNS


def _score(rng: random.Random) -> dict[str, object]:
    accuracy, completeness, clarity = (rng.randint(1, 5) for _ in range(3))
    return ok(accuracy, completeness, clarity)


def test_report_md_shows_adjacent_ranks_at_64_models_and_pairwise_csv_every_pair(tmp_path: Path) -> None:
    models = [f"acme/model-{k:02d}" for k in range(64)]
    runs = []
    for k, model in enumerate(models):
        rng = random.Random(k)
        runs.append(Run(model, JUDGES, {note.filename: {j: _score(rng) for j in JUDGES} for note in NOTES}))
    build_suite(tmp_path, runs)
    assert run_report(tmp_path, tmp_path / "r") == 0

    pairs = read(tmp_path / "r", "pairwise")
    assert len(pairs) == 64 * 63 // 2 == 2016
    assert {frozenset(p) for p in pairs[["model_a", "model_b"]].values} == {
        frozenset(p) for p in itertools.combinations(models, 2)
    }

    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    section = md[md.index("## Pairwise comparisons") : md.index("\n## ", md.index("## Pairwise comparisons") + 1)]
    lines = section.strip().splitlines()
    table = [line for line in lines if line.startswith("| judge-one+judge-two |")]
    ranks = [line.split(" | ")[1] for line in table]
    assert ranks == [f"#{k} vs #{k + 1}" for k in range(1, 64)]  # adjacent ranks only, each once, in rank order
    assert len(lines) <= len(table) + 10  # a bounded summary beside them
    assert "2,016 pairs in `pairwise.csv`" in section
    board = read(tmp_path / "r", "leaderboard")
    third, fourth = board.loc[board["rank"] == 3, "model"].item(), board.loc[board["rank"] == 4, "model"].item()
    assert f"| #3 vs #4 | {third} | {fourth} |" in section
    assert len(section.encode()) < 20_000  # was 2,016 rows


@pytest.mark.parametrize(("n_models", "rows"), [(8, 28), (9, 8)])
def test_every_pair_up_to_8_models_adjacent_ranks_past_it(tmp_path: Path, n_models: int, rows: int) -> None:
    notes = NOTES[:5]
    runs = [
        Run(f"acme/m{k}", JUDGES, {n.filename: {j: ok(1 + k % 5, 3, 3) for j in JUDGES} for n in notes})
        for k in range(n_models)
    ]
    build_suite(tmp_path, runs, notes=notes)
    assert run_report(tmp_path, tmp_path / "r") == 0
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    section = md[md.index("## Pairwise comparisons") : md.index("\n## ", md.index("## Pairwise comparisons") + 1)]
    assert sum(line.startswith("| judge-one+judge-two |") for line in section.splitlines()) == rows
    assert len(read(tmp_path / "r", "pairwise")) == n_models * (n_models - 1) // 2
