"""The agreement verdict on simulated suites with known truth (tests/report/simulated_agreement.py), seeded and small.

A judge whose ICC with clinicians is half theirs (0.33 vs 0.65) is not "about as well": overlapping intervals
called it so in most draws at 12-60 shared answers; the paired difference never does, and says "less" or
"cannot tell yet" with how many more answers would decide. benchmarks/bench_verdicts.py prints the rates.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from helm_mtsamples_ext.stats.human_agreement import agreement_table
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from tests.report.simulated_agreement import PANEL, agreement_draw

SETTINGS = BootstrapSettings(n_resamples=100, seed=0)


def verdicts(n: int, draws: int, seed: int, judge_icc: float = 0.33) -> list[str]:
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(draws):
        table = agreement_table(*agreement_draw(rng, n, judge_icc=judge_icc), SETTINGS)
        found.append(str(table.loc[table["judge"] == PANEL, "verdict"].iloc[0]))
    return found


def test_a_judge_half_as_good_as_clinicians_is_never_called_about_as_good() -> None:
    said = verdicts(30, draws=12, seed=1)
    kinds = Counter(text.split(":")[0].split(" (")[0] for text in said)
    assert not any("about as well" in text for text in said), kinds
    assert kinds["agrees with clinicians less than clinicians agree with each other"] >= 3, kinds
    undecided = [text for text in said if text.startswith("cannot tell yet")]
    assert all("more shared answers would decide (estimated)" in text for text in undecided)


def test_the_difference_is_in_the_csv_with_its_interval_and_the_answers_to_decide() -> None:
    table = agreement_table(*agreement_draw(np.random.default_rng(5), 12), SETTINGS)
    judge = table.loc[table["judge"] == PANEL].iloc[0]
    assert judge["icc_vs_ceiling"] == judge["icc_in_place"] - table.iloc[-1]["icc"]
    assert judge["icc_vs_ceiling_ci_low"] < judge["icc_vs_ceiling"] < judge["icc_vs_ceiling_ci_high"]
    if str(judge["verdict"]).startswith("cannot tell yet"):
        assert judge["answers_to_decide"] >= 1
        assert f"about {int(judge['answers_to_decide'])} more shared answers" in judge["verdict"]
