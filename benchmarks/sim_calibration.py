"""How often the clinician-scale interval covers the clinicians' mean, how wide it is, and how the transport check
fares, on simulated rating rounds with known truth (tests/stats/clinician_sim.py: 4 models, 131 notes, two judges,
ratings drawn by the product's own rating sample with its inclusion probabilities).

Three tables, printed as markdown (docs/report.md has them):
- share rated x distortion: the clinician-scale interval's coverage and mean width over the models given a figure
  (at least `evidence.MINIMUMS.rated_for_clinician_scale` rated answers), the share of models given one, and the
  judges' raw reward interval's coverage of the same clinicians' mean; at a share below the floor, the coverage the
  interval would have had without the floor;
- the judges' noise: the judge-clinician correlation and the interval's width (it narrows as rho grows);
- the transport check at 10, 15 and 20 rated answers per model: how often a model whose judges are kinder to it by
  0.1 more is flagged, and how often a model is flagged when the judges are kinder to all alike.

    python benchmarks/sim_calibration.py [--draws 400]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import parse_args  # noqa: E402
from helm_mtsamples_ext.stats.clinician_scale import TRANSPORT_ALPHA, estimate, transport_panel  # noqa: E402
from helm_mtsamples_ext.stats.evidence import MINIMUMS  # noqa: E402
from tests.stats.clinician_sim import DISTORTIONS, raw_covers, records_probabilities, simulate  # noqa: E402

SHARES = (0.05, 0.077, 0.10, 0.20)
"""The issue's 5, 10 and 20% of answers rated, and 7.7%: about 10 rated answers a model, the floor."""
JUDGE_SD = 0.1


def share(values: list[bool] | list[float]) -> str:
    return "-" if not values else f"{100 * float(np.mean(values)):.1f}%"


def mean(values: list[float]) -> str:
    return "-" if not values else f"{float(np.mean(values)):.3f}"


def coverage_rows(draws: int) -> list[str]:
    rows = ["| distortion | share rated | rated per model | given a figure | coverage | mean width | raw coverage |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name in DISTORTIONS:
        for rated_share in SHARES:
            rng = np.random.default_rng(1)
            covered, widths, raw, given, n_rated, unfloored, unfloored_widths = [], [], [], [], [], [], []
            for _ in range(draws):
                found = simulate(name, rated_share, JUDGE_SD, rng)
                for k, (_, rows_of) in enumerate(found.table.groupby("model", sort=True)):
                    e = estimate(rows_of)
                    target = float(found.truth[k])
                    enough = e.n_rated >= MINIMUMS.rated_for_clinician_scale
                    n_rated.append(e.n_rated)
                    given.append(enough)
                    raw.append(raw_covers(rows_of["f"].to_numpy(float), target))
                    if e.n_rated >= 3:
                        unfloored.append(bool(e.low <= target <= e.high))
                        unfloored_widths.append(e.high - e.low)
                    if enough:
                        covered.append(bool(e.low <= target <= e.high))
                        widths.append(e.high - e.low)
            cover = share(covered) if covered else f"({share(unfloored)} without the floor)"
            width = mean(widths) if covered else f"({mean(unfloored_widths)})"
            rows.append(f"| {name} | {100 * rated_share:g}% | {np.mean(n_rated):.1f} | {share(given)} | {cover} | "
                        f"{width} | {share(raw)} |")  # fmt: skip
    return rows


def rho_rows(draws: int) -> list[str]:
    rows = ["| judges' noise (sd per judge) | judge-clinician correlation | coverage | mean width |"]
    rows.append("|---|---|---|---|")
    for judge_sd in (0.05, 0.10, 0.20, 0.40):
        rng = np.random.default_rng(2)
        rhos, covered, widths = [], [], []
        for _ in range(draws):
            found = simulate("kinder by 0.1", 0.20, judge_sd, rng)
            for k, (_, rows_of) in enumerate(found.table.groupby("model", sort=True)):
                rated = rows_of.dropna(subset=["y"])
                rhos.append(float(np.corrcoef(rated["f"], rated["y"])[0, 1]))
                e = estimate(rows_of)
                covered.append(bool(e.low <= found.truth[k] <= e.high))
                widths.append(e.high - e.low)
        rows.append(f"| {judge_sd:.2f} | {np.nanmean(rhos):.2f} | {share(covered)} | {mean(widths)} |")
    return rows


def transport_rows(draws: int) -> list[str]:
    rows = ["| rated per model | one model's judges kinder by 0.1 more: flagged | all alike: a model flagged |",
            "|---|---|---|"]  # fmt: skip
    for per_model in (10, 15, 20):
        flagged: dict[str, list[bool]] = {}
        for name in ("one model kinder by 0.1 more", "kinder by 0.1"):
            rng = np.random.default_rng(3)
            flagged[name] = []
            for _ in range(draws):
                found = simulate(name, 0.0, JUDGE_SD, rng, per_model)
                flagged[name].append(bool(transport_panel(found.table)["m0"][2] < TRANSPORT_ALPHA))
        rows.append(f"| {per_model} | {share(flagged['one model kinder by 0.1 more'])} | "
                    f"{share(flagged['kinder by 0.1'])} |")  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=400, help="simulated rating rounds per row")
    args = parse_args(parser, draws=3)
    design = "recorded" if records_probabilities() else "not recorded (taken as uniform)"
    print(f"{args.draws} rounds per row; inclusion probabilities {design}; judges' noise sd {JUDGE_SD}\n")
    print("\n".join(coverage_rows(args.draws)), end="\n\n")
    print("\n".join(rho_rows(args.draws)), end="\n\n")
    print("\n".join(transport_rows(args.draws)))


if __name__ == "__main__":
    main()
