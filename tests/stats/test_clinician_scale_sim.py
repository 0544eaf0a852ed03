"""The clinician scale on simulated rating rounds with known truth (tests/stats/clinician_sim.py): ratings drawn by
the product's own rating sample, judges kinder by 0.1, monotone-distorted, or kinder to one model. Seeded; the
full tables (more rounds, every share) are benchmarks/sim_calibration.py's, in docs/report.md."""

from __future__ import annotations

import numpy as np
import pytest

from helm_mtsamples_ext.stats.clinician_scale import TRANSPORT_ALPHA, estimate, transport_panel
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from tests.stats.clinician_sim import DISTORTIONS, raw_covers, simulate

SHARES = (0.10, 0.20)
ROUNDS = 60


@pytest.fixture(scope="module")
def coverage() -> dict[tuple[str, float], tuple[list[bool], list[bool]]]:
    """Per distortion and share rated (10%: about 13 answers per model; 20%: 26), over 60 rounds x 4 models: does
    the clinician-scale interval cover the clinicians' mean, and does the judges' raw interval."""
    found = {}
    for name in DISTORTIONS:
        for share in SHARES:
            rng = np.random.default_rng(11)
            covered, raw = [], []
            for _ in range(ROUNDS):
                simulated = simulate(name, share, 0.1, rng)
                for k, (_, rows) in enumerate(simulated.table.groupby("model", sort=True)):
                    e = estimate(rows)
                    assert e.n_rated >= MINIMUMS.rated_for_clinician_scale
                    covered.append(bool(e.low <= simulated.truth[k] <= e.high))
                    raw.append(raw_covers(rows["f"].to_numpy(float), float(simulated.truth[k])))
            found[(name, share)] = (covered, raw)
    return found


def test_the_clinician_interval_covers_the_clinicians_mean_at_the_stated_rate(
    coverage: dict[tuple[str, float], tuple[list[bool], list[bool]]],
) -> None:
    """93-97% over the 1,440 intervals; each cell (240 intervals, a standard error of 1.4 points) at least 91%."""
    every = [c for covered, _ in coverage.values() for c in covered]
    assert 0.93 <= np.mean(every) <= 0.97
    for cell, (covered, _) in coverage.items():
        assert np.mean(covered) >= 0.91, cell


def test_the_judges_raw_interval_almost_never_does(
    coverage: dict[tuple[str, float], tuple[list[bool], list[bool]]],
) -> None:
    for cell, (_, raw) in coverage.items():
        assert np.mean(raw) <= 0.05, cell


def test_the_interval_narrows_as_the_judges_agree_more_with_the_clinicians() -> None:
    widths = []
    for judge_sd in (0.05, 0.4):
        rng = np.random.default_rng(5)
        found = [estimate(rows) for _ in range(25) for _, rows in simulate("kinder by 0.1", 0.2, judge_sd, rng)
                 .table.groupby("model")]  # fmt: skip
        widths.append(np.mean([e.high - e.low for e in found]))
    assert widths[0] < 0.8 * widths[1]


def flag_rate(name: str, per_model: int, rounds: int = 100) -> float:
    rng = np.random.default_rng(3)
    p = [transport_panel(simulate(name, 0.0, 0.1, rng, per_model).table)["m0"][2] for _ in range(rounds)]
    return float(np.mean(np.array(p) < TRANSPORT_ALPHA))


def test_a_model_specific_bias_of_0_1_is_flagged_at_the_transport_floor_and_an_even_one_seldom() -> None:
    floor = MINIMUMS.rated_for_transport
    assert flag_rate("one model kinder by 0.1 more", floor) >= 0.80
    assert flag_rate("kinder by 0.1", floor) <= 0.10
