"""Self-preference (self_preference.py, self_preference_fit.py): each judge's lean toward its own family from one
fixed-effects fit, an interval over models resampled within families, and words where the suite cannot tell.

Seeded simulations with known truth (tests/report/simulated.py): judge 0 adds `lean` to its own family's
answers, the other judges add nothing; with `affinity`, each judge likes some models more than others, with no
family in it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from helm_mtsamples_ext.stats.self_preference import (
    COLUMNS,
    FAVOURS,
    NOT_SEPARABLE,
    self_preference,
    self_preference_markdown,
    warning_lines,
)
from tests.report.simulated import Panel, self_preference_suite

SETTINGS = BootstrapSettings(n_resamples=300, seed=0)


def warned_share(panel: Panel, suites: int, seed: int = 0) -> np.ndarray:
    """Per judge: the share of simulated suites in which it is warned."""
    rng = np.random.default_rng(seed)
    warned = np.zeros(panel.judges)
    for _ in range(suites):
        table = self_preference(self_preference_suite(panel, rng), SETTINGS)
        warned += (table["reading"] == FAVOURS).to_numpy()
    return warned / suites


@pytest.mark.parametrize(
    "panel",
    [
        Panel(judges=2, lean=0.2, models_per_family=(2, 2, 2)),
        Panel(judges=3, lean=0.2),
        Panel(judges=5, lean=0.2, models_per_family=(2, 2, 2, 2, 2)),
    ],
    ids=["k2", "k3", "k5"],
)
def test_the_judge_leaning_a_point_toward_its_family_is_warned_and_the_unbiased_ones_are_not(panel: Panel) -> None:
    """The old estimator (a judge minus the others' mean) warned the unbiased judge in 100% of suites at k=2 and 3
    (31.5% at k=5): judge 0's lean leaked into the others' baseline."""
    shares = warned_share(panel, suites=40)
    assert shares[0] >= 0.9
    assert (shares[1:] <= 0.05).all(), shares


def test_noise_free_suite_gives_the_lean_to_the_judge_that_has_it_and_zero_to_the_others() -> None:
    table = self_preference(
        self_preference_suite(Panel(judges=3, lean=0.2, noise=0.0), np.random.default_rng(1)), SETTINGS
    )
    assert table["self_preference"].tolist() == pytest.approx([0.2, 0.0, 0.0], abs=1e-9)


def test_judges_liking_particular_models_without_a_family_bias_are_warned_in_at_most_5_percent() -> None:
    """A judge-by-model taste of 0.04 reward (0.2 points) and no family bias: the old answer-level interval warned
    16-30% of judges; resampling models within families keeps it near the nominal rate."""
    shares = warned_share(Panel(judges=3, affinity=0.04), suites=100, seed=3)
    assert shares.mean() <= 0.05, shares


def test_two_judges_and_no_model_of_a_third_family_cannot_tell_and_warn_no_one() -> None:
    """Only the sum of the two leanings is seen: with the old estimator both figures were one number, both warned."""
    suite = self_preference_suite(Panel(judges=2, lean=0.2, models_per_family=(2, 2)), np.random.default_rng(0))
    table = self_preference(suite, SETTINGS)
    assert table["reading"].tolist() == [NOT_SEPARABLE, NOT_SEPARABLE]
    assert table[["self_preference", "ci_low", "ci_high"]].isna().all().all()
    assert warning_lines(table) == []


def test_one_model_per_family_cannot_tell_a_taste_for_a_model_from_a_family_bias() -> None:
    suite = self_preference_suite(Panel(judges=3, lean=0.2, models_per_family=(1, 1, 1)), np.random.default_rng(0))
    table = self_preference(suite, SETTINGS)
    assert table["reading"].str.startswith("cannot tell: one model on a side").all()
    assert table["ci_low"].isna().all() and warning_lines(table) == []
    assert "cannot tell: one model on a side" in "\n".join(self_preference_markdown(table))


def test_the_warning_names_the_judge_its_figure_and_its_models() -> None:
    suite = self_preference_suite(Panel(judges=3, lean=0.2, notes=20), np.random.default_rng(0))
    table = self_preference(suite, SETTINGS)
    assert list(table.columns) == COLUMNS
    (line,) = warning_lines(table)
    assert line.startswith("WARNING: judge j0 (family OpenAI) favours its own family's answers in panel j0+j1+j2:")
    assert "40 answers of 2 models of its family, 80 others of 4 models" in line


def test_controls_failed_judges_and_unknown_families_are_left_out() -> None:
    """A control's answers, a failed judge's rows and a model of unknown family change nothing."""
    suite = self_preference_suite(Panel(judges=3, lean=0.2, notes=20), np.random.default_rng(0))
    base = self_preference(suite, SETTINGS)
    extra = suite[suite["model"] == "openai/m0"].copy()
    control = extra.assign(model="mtsamples-control/reference", model_family="mtsamples-control", judge_reward=1.0)
    unknown = extra.assign(model="local/m", model_family=None, judge_reward=1.0)
    failed = extra.assign(model="meta/mx", model_family="Meta", status="failed", judge_reward=math.nan)
    more = pd.concat([suite, control, unknown, failed], ignore_index=True)
    pd.testing.assert_frame_equal(self_preference(more, SETTINGS), base)


def test_a_judge_of_unknown_family_or_without_its_family_under_test_says_why() -> None:
    suite = self_preference_suite(Panel(judges=3, models_per_family=(2, 2), notes=20), np.random.default_rng(0))
    suite.loc[suite["judge"] == "j1", "judge_family"] = None
    found = dict(zip(*self_preference(suite, SETTINGS)[["judge", "reading"]].to_numpy().T, strict=True))
    assert found["j1"] == "cannot tell: its family is unknown"
    assert found["j2"] == "cannot tell: no model of its family under test"


def test_a_panel_of_one_judge_has_no_row_and_a_suite_without_families_an_empty_table() -> None:
    suite = self_preference_suite(Panel(judges=3, notes=5), np.random.default_rng(0))
    assert self_preference(suite[suite["judge"] == "j0"].assign(panel="j0"), SETTINGS).empty
    table = self_preference(suite.drop(columns=["judge_family", "model_family"]), SETTINGS)
    assert table.empty and list(table.columns) == COLUMNS
