"""The audit's blind-judge warning at its evidence minimum, on simulated judges with known truth (seeded, small).

At MINIMUMS.notes_for_audit notes a blind judge (reference and shuffled answers scored alike) is warned in at
least 90% of suites and a decent one (true AUROC about 0.8) in at most 5%: the minimum was measured so
(benchmarks/bench_verdicts.py). The former rule (point AUROC below 0.6) warned the blind judge in about 88% at 25.
"""

from __future__ import annotations

import numpy as np

from helm_mtsamples_ext.report.audit import judge_audit, shown_blind
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from tests.report.simulated_agreement import PANEL, audit_draw

SETTINGS = BootstrapSettings(n_resamples=1000, seed=0)
DRAWS = 40


def warned(blind: bool, n: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    count = 0
    for _ in range(DRAWS):
        table = judge_audit(audit_draw(rng, n, blind), SETTINGS)
        count += shown_blind(table[table["judge"] == PANEL].iloc[0].to_dict())
    return count


def test_a_blind_judge_at_the_minimum_is_warned_in_nine_suites_of_ten() -> None:
    assert warned(blind=True, n=MINIMUMS.notes_for_audit, seed=11) >= 0.9 * DRAWS


def test_a_decent_judge_at_the_minimum_is_wrongly_warned_in_at_most_one_suite_of_twenty() -> None:
    assert warned(blind=False, n=MINIMUMS.notes_for_audit, seed=12) <= 0.05 * DRAWS


def test_below_the_minimum_no_judge_is_warned_by_its_auroc() -> None:
    """Too few notes is "too few notes to tell", never a warning: at 5 notes a decent judge was warned in 1 of 10."""
    assert warned(blind=True, n=MINIMUMS.notes_for_audit - 1, seed=13) == 0
