"""Ranks, rank intervals and pairs corrected for many comparisons (ranks.py, pairwise.py), on suites with known
truth: equal models must not be told apart, and a model must be ranked on the notes its pair rows compare."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.report.pairwise_render import pairwise_markdown
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from helm_mtsamples_ext.stats.pairwise import CONTROL, holm, pairwise
from helm_mtsamples_ext.stats.ranks import with_ranks
from tests.report.simulated import board_of, equal_models_notes

SETTINGS = BootstrapSettings(n_resamples=500, seed=0)


def test_holm_multiplies_the_smallest_p_by_the_number_of_comparisons_and_steps_down() -> None:
    adjusted = holm(np.array([0.01, 0.04, np.nan, 0.03, 0.2]))
    # sorted .01, .03, .04, .2 (m = 4): 4 x .01, max(.04, 3 x .03), max(.09, 2 x .04), max(.09, .2)
    np.testing.assert_allclose(adjusted, [0.04, 0.09, np.nan, 0.09, 0.2])


def test_identical_models_are_separated_in_at_most_5_percent_of_suites_after_correction() -> None:
    """16 equal models, 120 pairs, 131 notes. One 95% interval per pair separated some pair in ~90% of suites;
    after Holm's correction, the family-wise rate is under 5%, while the uncorrected column still shows it."""
    rng = np.random.default_rng(11)
    any_holm, any_own = [], []
    for _ in range(40):
        notes = equal_models_notes(16, 131, rng)
        pairs = pairwise(notes, board_of(notes), SETTINGS)
        any_holm.append((pairs["separated_holm"] == "yes").any())
        any_own.append((pairs["separated"] == "yes").any())
    assert np.mean(any_holm) <= 0.05
    assert np.mean(any_own) >= 0.5  # the per-pair verdict still separates by chance, as it should per pair


def test_a_better_model_is_separated_from_every_other_after_correction_and_ranked_first_for_sure() -> None:
    notes = equal_models_notes(8, 131, np.random.default_rng(2), gap=0.1)
    board = with_ranks(board_of(notes), notes, SETTINGS)
    pairs = pairwise(notes, board, SETTINGS)
    best = board.iloc[0]
    assert (best["model"], best["rank_low"], best["rank_high"]) == ("org/model-00", 1, 1)
    assert (pairs.loc[pairs["model_a"] == "org/model-00", "separated_holm"] == "yes").all()


def test_equal_models_show_overlapping_ranks() -> None:
    notes = equal_models_notes(16, 131, np.random.default_rng(4))
    board = with_ranks(board_of(notes), notes, SETTINGS)
    assert board["rank_low"].max() <= board["rank_high"].min()
    assert (board["rank_high"] - board["rank_low"] >= 5).all()


def test_a_model_unjudged_on_the_hard_notes_is_ranked_on_the_notes_its_pair_row_compares() -> None:
    """b is worse than a on every note both were judged on, but its judge failed on the five hard notes: on its
    own notes its mean is higher (0.65 against a's 0.567), and the old ranking put it first while its pair row said
    it was worse. Ranked on the notes judged for both, a is first and the pair row agrees."""
    rows = [("p", "org/a", f"n{i}", 0.7 if i < 10 else 0.3) for i in range(15)]
    rows += [("p", "org/b", f"n{i}", 0.65 if i < 10 else np.nan) for i in range(15)]
    notes = pd.DataFrame(rows, columns=["panel", "model", "note", "reward"])
    board = with_ranks(board_of(notes.dropna()), notes, SETTINGS)
    assert board["model"].tolist() == ["org/a", "org/b"]
    assert board["ranked_reward"].tolist() == pytest.approx([0.7, 0.65]) and (board["n_ranked_notes"] == 10).all()
    assert board["reward"].tolist() == pytest.approx([8.5 / 15, 0.65])  # each model's own mean stays
    (pair,) = pairwise(notes, board, SETTINGS).to_dict("records")
    assert (pair["model_a"], pair["difference"], pair["n_notes"]) == ("org/a", pytest.approx(0.05), 10)


def test_controls_are_out_of_the_corrected_family_and_the_counts() -> None:
    notes = equal_models_notes(4, 40, np.random.default_rng(5))
    notes.loc[notes["model"] == "org/model-03", "model"] = "mtsamples-control/reference"
    pairs = pairwise(notes, with_ranks(board_of(notes), notes, SETTINGS), SETTINGS)
    control = (pairs["model_a"] == "mtsamples-control/reference") | (pairs["model_b"] == "mtsamples-control/reference")
    assert (pairs.loc[control, "separated_holm"] == CONTROL).all() and pairs.loc[control, "p_holm"].isna().all()
    assert pairs.loc[~control, "p_holm"].notna().all()


def test_report_md_counts_pairs_after_correction_without_the_controls() -> None:
    """A control far below every model is "separated" from each of them; report.md's count leaves those pairs out
    and says the verdict is after Holm's correction."""
    notes = equal_models_notes(4, 40, np.random.default_rng(6))
    notes.loc[notes["model"] == "org/model-03", "reward"] -= 0.5
    notes.loc[notes["model"] == "org/model-03", "model"] = "mtsamples-control/shuffled"
    board = with_ranks(board_of(notes), notes, SETTINGS)
    pairs = pairwise(notes, board, SETTINGS)
    assert (pairs["separated"] == "yes").sum() >= 3  # the control's three pairs, by their own intervals
    text = "\n".join(pairwise_markdown(pairs, board))
    assert "of its 3 pairs of models under test (controls left out), 0 separated after Holm's correction" in text
    assert "| separated (Holm) |" in text and "not counted (control)" in text
