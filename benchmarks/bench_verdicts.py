"""How often the report's verdicts are right, on simulated suites with known truth (tests/report/simulated_agreement).

Two tables, each rate over --draws seeded suites, through the report's own functions:

- The agreement verdict (human_agreement.agreement_table): a judge half as good as the clinicians (ICC 0.33 vs
  0.65) and one as good as they are, at 12, 30, 60 and 120 shared answers (two clinicians rate every answer):
  the share of "about as well", "less", "more" and "cannot tell yet". Before the paired difference, the verdict
  read overlapping intervals as "about as well": 93% / 83% / 50% for the half-as-good judge at 12 / 30 / 60.
- The audit's blind-judge warning (audit.judge_audit): a blind judge (reference and shuffled answers scored
  alike) and a decent one (true AUROC about 0.8) on n notes: the share warned under today's rule (AUROC below
  0.6 or its interval reaching 0.5; the report applies it from MINIMUMS.notes_for_audit notes) and the former
  one (point AUROC below 0.6, from 5 notes). The minimum is the smallest n at which the blind judge is warned
  in at least 90% of suites and the decent one in at most 5%.

    python benchmarks/bench_verdicts.py [--draws 200] [--bootstrap 300] [--skip-agreement] [--skip-audit]
                                        [--judge-icc 0.33 0.65] [--answers 12 30 60 120]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import parse_args  # noqa: E402

AGREEMENT_ANSWERS = (12, 30, 60, 120)
AUDIT_NOTES = (5, 10, 15, 20, 25, 30)
KINDS = {"about as well": "about as well", "less than": "less", "more than": "more", "cannot tell yet": "cannot tell"}


def agreement_rates(draws: int, bootstrap: int, judges: list[float], answers: list[int]) -> None:
    import numpy as np

    from helm_mtsamples_ext.stats.human_agreement import agreement_table
    from helm_mtsamples_ext.stats.intervals import BootstrapSettings
    from tests.report.simulated_agreement import PANEL, agreement_draw

    settings = BootstrapSettings(n_resamples=bootstrap)
    print("| judge ICC vs clinicians' 0.65 | shared answers | about as well | less | more | cannot tell yet |")
    print("|---|---|---|---|---|---|")
    for judge_icc in judges:
        for n in answers:
            rng = np.random.default_rng(n)
            said: Counter[str] = Counter()
            for _ in range(draws):
                table = agreement_table(*agreement_draw(rng, n, judge_icc=judge_icc), settings)
                text = str(table.loc[table["judge"] == PANEL, "verdict"].iloc[0])
                said[next((short for key, short in KINDS.items() if key in text), "none")] += 1
            shares = " | ".join(f"{said[short] / draws:.0%}" for short in KINDS.values())
            print(f"| {judge_icc:.2f} | {n} | {shares} |", flush=True)


def audit_rates(draws: int, bootstrap: int) -> None:
    import numpy as np

    from helm_mtsamples_ext.report.audit import AUROC_BLIND, COIN_TOSS, judge_audit
    from helm_mtsamples_ext.stats.evidence import MINIMUMS
    from helm_mtsamples_ext.stats.intervals import BootstrapSettings
    from tests.report.simulated_agreement import PANEL, audit_draw

    settings = BootstrapSettings(n_resamples=bootstrap)
    print(f"\nminimum: {MINIMUMS.notes_for_audit} notes; goal: blind warned >= 90%, decent warned <= 5%")
    print("| notes | blind judge warned | decent judge warned | former rule: blind | former rule: decent |")
    print("|---|---|---|---|---|")
    for n in sorted({*AUDIT_NOTES, MINIMUMS.notes_for_audit}):
        rng = np.random.default_rng(n)
        now, before = Counter[bool](), Counter[bool]()
        for blind in (True, False):
            for _ in range(draws):
                table = judge_audit(audit_draw(rng, n, blind), settings)
                found = table[table["judge"] == PANEL].iloc[0].to_dict()
                low = found["auroc_ci_low"]
                now[blind] += bool(found["auroc"] < AUROC_BLIND or (low == low and low <= COIN_TOSS))
                before[blind] += bool(found["auroc"] < AUROC_BLIND and n >= 5)
        rates = [now[True], now[False], before[True], before[False]]
        print(f"| {n} | " + " | ".join(f"{count / draws:.1%}" for count in rates) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--bootstrap", type=int, default=300)
    parser.add_argument("--skip-agreement", action="store_true")
    parser.add_argument("--skip-audit", action="store_true")
    parser.add_argument("--judge-icc", type=float, nargs="+", default=[0.33, 0.65], help="the judges' true ICC")
    parser.add_argument("--answers", type=int, nargs="+", default=list(AGREEMENT_ANSWERS), help="shared answers")
    args = parse_args(parser, draws=2, bootstrap=50, judge_icc=[0.33], answers=[12])
    if not args.skip_agreement:
        agreement_rates(args.draws, args.bootstrap, args.judge_icc, args.answers)
    if not args.skip_audit:
        audit_rates(args.draws, args.bootstrap)


if __name__ == "__main__":
    main()
