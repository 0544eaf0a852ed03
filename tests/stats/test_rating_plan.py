"""The rating plan (stats/rating_plan.py): the number of ratings it asks for delivers what it promises, in seeded
simulations with known truth (judges' rewards f and clinicians' y of a known correlation)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helm_mtsamples_ext.stats.clinician_scale import ppi_mean
from helm_mtsamples_ext.stats.rating_plan import FLOOR, PRIOR_RHO, rating_plan

N = 400
TARGET = 0.04


def population(rng: np.random.Generator, shift: float, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """N answers: judges' rewards f and clinicians' y = f - 0.1 + shift + noise (the judges kinder by 0.1)."""
    f = rng.normal(0.6, 0.15, N)
    return f, f - 0.1 + shift + rng.normal(0, noise, N)


def answers(model: str, f: np.ndarray, y: np.ndarray, rated: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {"panel": "p", "model": model, "run": f"run:{model}", "note_id": np.arange(N), "f": f,
         "y": np.where(rated, y, np.nan)}
    )  # fmt: skip


def ppi(f: np.ndarray, y: np.ndarray, at: np.ndarray) -> tuple[float, float]:
    """PPI++'s mean and 95% half-width written out independently (Angelopoulos et al. 2023, the mean case):
    theta = lam mean_N(f) + mean_n(y - lam f), se^2 = var_n(y - lam f)/n + lam^2 var_N(f)/N, lam = cov/var clipped."""
    fr, yr = f[at], y[at]
    n = at.size
    lam = float(np.clip(np.cov(fr, yr)[0, 1] / np.var(fr, ddof=1), 0, 1))
    theta = lam * f.mean() + float(np.mean(yr - lam * fr))
    se = math.sqrt(np.var(yr - lam * fr, ddof=1) / n + lam**2 * np.var(f, ddof=1) / f.size)
    return theta, float(stats.t.ppf(0.975, n - 2)) * se


def realised(f: np.ndarray, y: np.ndarray, n: int, seed: int, draws: int = 300) -> tuple[float, float]:
    """(median half-width, coverage of the answers' clinician mean) over ``draws`` uniform samples of n rated."""
    rng = np.random.default_rng(seed)
    halves, covered = [], []
    for _ in range(draws):
        theta, half = ppi(f, y, rng.choice(N, n, replace=False))
        halves.append(half)
        covered.append(abs(theta - y.mean()) <= half)
    return float(np.median(halves)), float(np.mean(covered))


@pytest.mark.parametrize("noise", [0.05, 0.1, 0.2])
def test_the_planned_number_of_ratings_reaches_the_target_half_width(noise: float) -> None:
    """From 20 ratings seen so far, the plan names n; rating n answers gives a half-width within 12% of the target
    (median over 300 draws) and covers the truth; half as many leave it clearly wider. A weaker judge-clinician
    correlation (more noise) asks for more ratings."""
    rng = np.random.default_rng(int(noise * 100))
    f, y = population(rng, 0.0, noise)
    seen = np.zeros(N, dtype=bool)
    seen[rng.choice(N, 20, replace=False)] = True
    (row,) = rating_plan(answers("acme/a", f, y, seen), TARGET).itertuples(index=False)
    assert row.rho_from == "own ratings (n=20)" and row.n_rated == 20
    n = int(row.rated_for_target)
    assert row.more_for_target == max(n - 20, 0) and FLOOR <= n < N
    half, coverage = realised(f, y, n, seed=1)
    assert half == pytest.approx(TARGET, rel=0.12), (n, half)
    assert coverage >= 0.9
    if n >= 2 * FLOOR:
        assert realised(f, y, n // 2, seed=2)[0] > 1.2 * TARGET


def test_more_noise_asks_for_more_ratings() -> None:
    needed = []
    for noise in (0.05, 0.1, 0.2):
        rng = np.random.default_rng(7)
        f, y = population(rng, 0.0, noise)
        needed.append(rating_plan(answers("acme/a", f, y, np.arange(N) < 40), TARGET)["rated_for_target"].iloc[0])
    assert needed[0] < needed[1] < needed[2]


def test_without_ratings_the_plan_uses_the_stated_prior_and_is_right_when_the_truth_matches_it() -> None:
    """No ratings: rho = 0.5 and the clinicians' spread equal to the judges'. A population built that way reaches
    the target at the planned n."""
    rng = np.random.default_rng(3)
    f = rng.normal(0.6, 0.15, N)
    y = PRIOR_RHO * (f - f.mean()) + math.sqrt(1 - PRIOR_RHO**2) * 0.15 * rng.standard_normal(N) + 0.5
    (row,) = rating_plan(answers("acme/a", f, y, np.zeros(N, dtype=bool)), 0.06).itertuples(index=False)
    assert row.rho_from == f"prior rho = {PRIOR_RHO}, clinicians' spread = judges'" and row.rho == PRIOR_RHO
    assert math.isnan(row.halfwidth_now) and row.more_for_target == row.rated_for_target
    half, _ = realised(f, y, int(row.rated_for_target), seed=4)
    assert half == pytest.approx(0.06, rel=0.15)


def test_the_leading_pair_is_decided_by_the_planned_ratings() -> None:
    """Three models, the leading two 0.03 apart on the clinicians' scale, 30 answers of each rated. After the
    planned further ratings for each, their difference's 95% half-width is about the difference (median within
    15%): the interval then excludes 0 about as often as not, and more often with more; the third model has no pair
    figure."""
    rng = np.random.default_rng(11)
    truth = {"acme/a": 0.0, "acme/b": -0.03, "acme/c": -0.3}
    pops = {model: population(rng, shift, 0.1) for model, shift in truth.items()}
    seen = {model: np.isin(np.arange(N), rng.choice(N, 30, replace=False)) for model in truth}
    table = pd.concat([answers(m, *pops[m], seen[m]) for m in truth])
    plan = rating_plan(table, TARGET).set_index("model")
    assert plan.loc["acme/a", "pair_with"] == "acme/b" and plan.loc["acme/b", "pair_with"] == "acme/a"
    assert math.isnan(plan.loc["acme/c", "more_for_pair"]) and plan.loc["acme/c", "pair_with"] == ""
    k = int(plan.loc["acme/a", "more_for_pair"])
    difference = abs(plan.loc["acme/a", "difference"])
    assert k > 0 and plan.loc["acme/a", "quota"] >= k
    draw = np.random.default_rng(12)
    halves = []
    for _ in range(300):
        results = []
        for model in ("acme/a", "acme/b"):
            rated = np.flatnonzero(seen[model])
            unrated = np.flatnonzero(~seen[model])
            at = np.concatenate([rated, draw.choice(unrated, k, replace=False)])
            results.append(ppi(*pops[model], at))
        halves.append(math.hypot(results[0][1], results[1][1]))
    assert float(np.median(halves)) == pytest.approx(difference, rel=0.15)


def test_the_quota_is_the_larger_need_and_at_most_the_unrated_answers() -> None:
    rng = np.random.default_rng(5)
    f, y = population(rng, 0.0, 0.3)
    plan = rating_plan(answers("acme/a", f, y, np.arange(N) < 390), 0.001)  # unreachable: rate all that is left
    assert math.isnan(plan["more_for_target"].iloc[0]) and plan["quota"].iloc[0] == 10


def test_a_target_out_of_reach_still_draws_the_rest_when_the_pair_is_decided() -> None:
    """The leading pair is decided already (more_for_pair 0) but the target is out of reach: rating everything left
    comes closest to it, so the quota is every unrated answer, not 0."""
    rng = np.random.default_rng(9)
    f_a, y_a = population(rng, 0.0, 0.3)
    f_b, y_b = population(rng, -0.5, 0.3)
    rated = np.arange(N) < 390
    plan = rating_plan(pd.concat([answers("acme/a", f_a, y_a, rated), answers("acme/b", f_b, y_b, rated)]), 0.001)
    assert plan["more_for_pair"].tolist() == [0, 0] and plan["more_for_target"].isna().all()
    assert plan["quota"].tolist() == [10, 10]


def test_the_planned_n_gives_the_target_with_the_reports_own_estimator() -> None:
    """The same check against stats/clinician_scale.ppi_mean, the estimator behind clinician_reward (uniform draws:
    every inclusion probability n/N): median half-width at the planned n within 12% of the target."""
    rng = np.random.default_rng(21)
    f, y = population(rng, 0.0, 0.1)
    seen = np.zeros(N, dtype=bool)
    seen[rng.choice(N, 20, replace=False)] = True
    n = int(rating_plan(answers("acme/a", f, y, seen), TARGET)["rated_for_target"].iloc[0])
    draw = np.random.default_rng(22)
    halves = []
    for _ in range(300):
        at = draw.choice(N, n, replace=False)
        found = ppi_mean(f, f[at], y[at], np.full(n, n / N))
        halves.append((found.high - found.low) / 2)
    assert float(np.median(halves)) == pytest.approx(TARGET, rel=0.12), (n, np.median(halves))
