"""The clinician-scale estimate (stats/clinician_scale.py) on small known inputs: the point estimate against
ppi-python and against the formula written out, the design weights, the floor, the transport words and the pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.stats.clinician_scale import (
    CONTROL_LINE,
    OWN,
    UNIFORM,
    calibration,
    clinician_board,
    needed_line,
    ppi_mean,
    transport_warnings,
    transport_word,
    with_clinician_pairs,
    with_clinician_scale,
)
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings


def uniform_round(seed: int, n_all: int = 131, n: int = 30) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    f_all = np.clip(rng.normal(0.7, 0.12, n_all), 0, 1)
    rated = rng.choice(n_all, n, replace=False)
    y = np.clip(f_all[rated] - 0.1 + rng.normal(0, 0.06, n), 0, 1)
    return f_all, rated, y


def by_formula(f_all: np.ndarray, f: np.ndarray, y: np.ndarray) -> float:
    """PPI++ under uniform sampling, written out: lambda = cov(y, f) / var(f) on the rated answers, in [0, 1]."""
    lam = float(np.clip(np.cov(y, f)[0, 1] / np.var(f, ddof=1), 0, 1))
    return lam * float(np.mean(f_all)) + float(np.mean(y - lam * f))


@pytest.mark.parametrize("seed", range(5))
def test_the_point_estimate_is_ppi_python_s_and_the_formula_s_under_uniform_sampling(seed: int) -> None:
    f_all, rated, y = uniform_round(seed)
    found = ppi_mean(f_all, f_all[rated], y, np.full(y.size, np.nan))
    assert found.value == pytest.approx(by_formula(f_all, f_all[rated], y), abs=1e-9)
    assert found.uniform
    ppi_py = pytest.importorskip("ppi_py", reason="the test-only extra: pip install -e .[ppi]")
    theirs = ppi_py.ppi_mean_pointestimate(y, f_all[rated], f_all, lam=found.lam)
    assert found.value == pytest.approx(float(np.squeeze(theirs)), abs=1e-9)


def test_lambda_is_0_when_the_judges_say_nothing_and_the_estimate_is_then_the_rated_mean() -> None:
    rng = np.random.default_rng(0)
    f_all = rng.random(100)
    y = rng.random(40) * 0.01 + 0.5 - 0.2 * f_all[:40]  # anti-correlated: lambda clipped at 0
    found = ppi_mean(f_all, f_all[:40], y, np.full(40, np.nan))
    assert found.lam == 0.0 and found.value == pytest.approx(y.mean(), abs=1e-12)


def test_recorded_inclusion_probabilities_remove_the_bias_of_a_sample_drawn_toward_some_answers() -> None:
    """Poisson sampling, answers with a large judge error 5x as likely: weighting by 1/pi covers the truth at the
    stated rate; taking the same ratings as a uniform sample does not."""
    rng = np.random.default_rng(7)
    weighted: list[bool] = []
    as_uniform: list[bool] = []
    target = float(np.mean(np.clip(0.6 + rng.normal(0, 0.15, 400_000), 0, 1)))
    for _ in range(400):
        y_all = np.clip(0.6 + rng.normal(0, 0.15, 131), 0, 1)
        error = rng.random(131) < 0.3
        f_all = np.clip(y_all + 0.05 + 0.2 * error, 0, 1)  # judges much kinder on 30% of answers
        pi = np.where(error, 0.5, 0.1)
        rated = rng.random(131) < pi
        for probabilities, bucket in ((pi[rated], weighted), (np.full(rated.sum(), np.nan), as_uniform)):
            e = ppi_mean(f_all, f_all[rated], y_all[rated], probabilities)
            bucket.append(e.low <= target <= e.high)
    assert 0.93 <= np.mean(weighted) <= 0.98
    assert np.mean(as_uniform) < 0.7


def answers_frame(n_rated: dict[str, int], bias: dict[str, float], seed: int = 0) -> pd.DataFrame:
    """instances-like rows (one judge) and ratings for models with the given rated counts and judge biases."""
    rng = np.random.default_rng(seed)
    rows, ratings = [], []
    for model, n in n_rated.items():
        for j in range(40):
            y = float(np.clip(0.6 + rng.normal(0, 0.1), 0, 1))
            f = float(np.clip(y + bias[model] + rng.normal(0, 0.03), 0, 1))
            rows.append({"panel": "p", "model": model, "run": f"r-{model}", "note_id": f"id{j}", "note_reward": f})
            if j < n:
                ratings.append({"run": f"r-{model}", "instance_id": f"id{j}", "rater": "a", "human_reward": y})
    return pd.DataFrame(rows), pd.DataFrame(ratings)


def test_below_the_floor_no_figure_and_the_line_saying_how_many_more() -> None:
    floor = MINIMUMS.rated_for_clinician_scale
    instances, ratings = answers_frame({"a": floor - 1, "b": floor}, {"a": 0.1, "b": 0.1})
    board = clinician_board(instances, ratings).set_index("model")
    assert board.loc["a", ["clinician_reward", "clinician_ci_low", "clinician_ci_high"]].isna().all()
    assert board.loc["a", "calibration"] == needed_line(floor - 1) == f"none: {floor - 1} rated, {floor} needed " \
        "(rate 1 more of its answers)"  # fmt: skip
    assert board.loc["b", ["clinician_reward", "clinician_ci_low", "clinician_ci_high"]].notna().all()
    assert board.loc["b", "calibration"].startswith(OWN + UNIFORM)


def test_the_transport_words_flag_a_model_the_judges_err_on_differently_and_say_when_no_flag_means_little() -> None:
    instances, ratings = answers_frame({"a": 30, "b": 30, "c": 30}, {"a": 0.25, "b": 0.05, "c": 0.05})
    board = clinician_board(instances, ratings).set_index("model")
    assert "judges err differently on this model" in board.loc["a", "calibration"]
    assert board.loc["a", "transport_p"] < 0.001
    assert board["transport_p"].idxmin() == "a"
    warned = transport_warnings(board.reset_index())
    assert len(warned) == 1 and warned[0].startswith("WARNING: a under panel p: judges err differently on this model")
    alike, rated = answers_frame({"a": 30, "b": 30, "c": 30}, {"a": 0.05, "b": 0.05, "c": 0.05})
    assert not clinician_board(alike, rated)["calibration"].str.contains("judges err differently").any()
    few = transport_word(0.0, 0.0, 0.5, MINIMUMS.rated_for_transport - 1)
    assert few == f"; transport not yet checkable ({MINIMUMS.rated_for_transport - 1} rated, 20 needed)"
    assert transport_word(0.0, 0.0, 0.5, MINIMUMS.rated_for_transport) == ""
    assert transport_word(0.0, 0.0, np.nan, 30).startswith("; transport not checked")


def test_clinician_pairs_give_the_difference_its_welch_interval_and_holm() -> None:
    found = pd.DataFrame({
        "panel": "p", "model": ["a", "b", "c"], "clinician_reward": [0.8, 0.6, np.nan], "se": [0.02, 0.02, np.nan],
        "df": [28, 28, 4],
    })  # fmt: skip
    pairs = pd.DataFrame({"panel": "p", "model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"]})
    out = with_clinician_pairs(pairs, found)
    ab = out.iloc[0]
    assert ab["clinician_diff"] == pytest.approx(0.2)
    half = 0.2 - ab["clinician_ci_low"]
    from scipy import stats

    assert half == pytest.approx(stats.t.ppf(0.975, 56) * np.sqrt(0.0008), rel=1e-9)
    assert ab["separated_clinician"] == "yes"
    assert out.iloc[1]["separated_clinician"] == "" and np.isnan(out.iloc[1]["clinician_diff"])


def test_a_control_run_is_not_asked_for_ratings() -> None:
    instances, ratings = answers_frame({"a": 12, "b": 12}, {"a": 0.1, "b": 0.1})
    control = instances[instances["model"] == "a"].assign(model="mtsamples-control/reference", run="r-control")
    instances = pd.concat([instances, control], ignore_index=True)
    found = clinician_board(instances, ratings)
    board = found[["panel", "model"]].assign(reward_ci_high=0.0, rank=1)
    out = with_clinician_scale(board, found, BootstrapSettings(n_resamples=200)).set_index("model")
    assert out.loc["mtsamples-control/reference", "calibration"] == CONTROL_LINE
    assert out.loc["a", "clinician_rank_low"] >= 1 and out.loc["a", "n_rated"] == 12


def test_ratings_some_without_a_recorded_probability_are_all_taken_as_uniform_and_the_column_says_how_many() -> None:
    f_all, rated, y = uniform_round(3)
    pi = np.full(y.size, 0.3)
    pi[:4] = np.nan
    found = ppi_mean(f_all, f_all[rated], y, pi)
    assert found.uniform and found.missing == 4
    assert found.value == pytest.approx(by_formula(f_all, f_all[rated], y), abs=1e-9)
    said = calibration(found, "")
    assert (
        said == OWN + "; no inclusion probability recorded for 4 of its 30 rated answers: all taken as a uniform sample"
    )
