"""How often the report's verdicts are right, on simulated suites with known truth: self-preference warnings,
pairwise separation after Holm's correction, and the recheck's drift reading.

Each row prints the share of simulated suites (seeded) in which the verdict said what it printed; the goal column
is the rate the verdict is built for (issue's targets: an unbiased judge warned in at most 5% of suites, equal
models separated in at most 5% of suites after correction). The suites are tests/report/simulated.py's, the same
the tests draw; the functions are the report's own.

    python benchmarks/sim_verdicts.py [--suites 200] [--bootstrap 500]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import parse_args  # noqa: E402
from helm_mtsamples_ext.report.drift import drift  # noqa: E402
from helm_mtsamples_ext.stats.intervals import BootstrapSettings  # noqa: E402
from helm_mtsamples_ext.stats.pairwise import pairwise  # noqa: E402
from helm_mtsamples_ext.stats.self_preference import FAVOURS, self_preference  # noqa: E402
from tests.report.simulated import (  # noqa: E402
    Panel,
    board_of,
    equal_models_notes,
    noisy_rechecks,
    self_preference_suite,
)


def self_preference_rows(suites: int, settings: BootstrapSettings) -> list[tuple[str, float, str]]:
    rows = []
    cases = [
        ("k=2 judges, 3 families", Panel(judges=2, lean=0.2, models_per_family=(2, 2, 2))),
        ("k=3 judges", Panel(judges=3, lean=0.2)),
        ("k=5 judges", Panel(judges=5, lean=0.2, models_per_family=(2, 2, 2, 2, 2))),
    ]
    for name, panel in cases:
        rng = np.random.default_rng(0)
        warned = np.zeros(panel.judges)
        for _ in range(suites):
            warned += (self_preference(self_preference_suite(panel, rng), settings)["reading"] == FAVOURS).to_numpy()
        rows.append((f"self-preference, {name}: the leaning judge warned", warned[0] / suites, ">= 90%"))
        rows.append((f"self-preference, {name}: an unbiased judge warned", warned[1:].mean() / suites, "<= 5%"))
    for affinity in (0.02, 0.04):
        rng = np.random.default_rng(1)
        panel = Panel(judges=3, affinity=affinity)
        warned = sum(
            (self_preference(self_preference_suite(panel, rng), settings)["reading"] == FAVOURS).mean()
            for _ in range(suites)
        )
        name = f"self-preference, judge-by-model taste sd {affinity} and no family bias: a judge warned"
        rows.append((name, warned / suites, "<= 5%"))
    return rows


def pairwise_rows(suites: int, settings: BootstrapSettings) -> list[tuple[str, float, str]]:
    rows = []
    for models, count in ((16, suites), (64, max(10, suites // 10))):
        rng = np.random.default_rng(2)
        own, corrected = [], []
        for _ in range(count):
            notes = equal_models_notes(models, 131, rng)
            pairs = pairwise(notes, board_of(notes), settings)
            own.append((pairs["separated"] == "yes").any())
            corrected.append((pairs["separated_holm"] == "yes").any())
        rows.append((f"{models} equal models: some pair separated by its own 95% interval", float(np.mean(own)), "-"))
        rows.append((f"{models} equal models: some pair separated after Holm", float(np.mean(corrected)), "<= 5%"))
    rng = np.random.default_rng(3)
    found = []
    for _ in range(max(10, suites // 4)):
        notes = equal_models_notes(8, 131, rng, gap=0.05)
        pairs = pairwise(notes, board_of(notes), settings)
        found.append((pairs.loc[pairs["model_a"] == "org/model-00", "separated_holm"] == "yes").mean())
    rows.append(("8 models, one better by 0.05: its pairs separated after Holm", float(np.mean(found)), "power"))
    return rows


def drift_rows(suites: int, settings: BootstrapSettings) -> list[tuple[str, float, str]]:
    rng = np.random.default_rng(4)
    steady = [drift(noisy_rechecks(rng, 20), settings)[0] for _ in range(suites)]
    harsher = [drift(noisy_rechecks(rng, 20, shift=-1), settings)[0] for _ in range(suites)]
    same = float(np.mean([r.same_verdict_rate for r in steady]))
    changed = float(np.mean([r.reading in ("kinder now", "harsher now") for r in steady]))
    caught = float(np.mean([r.reading == "harsher now" for r in harsher]))
    return [
        ("drift, noisy judge unchanged (20 answers): same verdict then and now", same, "-"),
        ("drift, noisy judge unchanged (20 answers): called kinder or harsher", changed, "~5%"),
        ("drift, a point harsher on accuracy (20 answers): called harsher", caught, ">= 90%"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suites", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=500)
    args = parse_args(parser, suites=2, bootstrap=50)
    settings = BootstrapSettings(n_resamples=args.bootstrap, seed=0)
    rows = self_preference_rows(args.suites, settings) + pairwise_rows(args.suites, settings)
    rows += drift_rows(args.suites, settings)
    print(f"| verdict ({args.suites} simulated suites) | rate | goal |")
    print("|---|---|---|")
    for name, rate, goal in rows:
        print(f"| {name} | {100 * rate:.1f}% | {goal} |")


if __name__ == "__main__":
    main()
