"""The clinicians' ceiling at scale: 2,000 raters x 4 answers through `helm-mtsamples-report --ratings`.

A rated suite (tests/report/rated.py's: one model, two judges, eight notes) and a ratings file in which each of
--raters raters rates the same --answers answers (scores drawn around a shared truth, seeded). Measured: the
whole report's wall time (CLI in-process, --bootstrap resamples), then the ceiling alone (ceiling.ceiling_stats).
For scale, the rater-by-rater computation it replaced (tests/report/ceiling_reference.py) on --old-raters
raters, and its time extrapolated to --raters (it grows with the square of the raters). The goal is the issue's:
the report with 2,000 raters within a minute.

    python benchmarks/bench_ceiling.py [--raters 2000] [--answers 4] [--bootstrap 2000] [--old-raters 100]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import parse_args  # noqa: E402

GOAL_SECONDS = 60.0


def _ratings(raters: int, answers: int, seed: int) -> dict[str, dict[int, tuple[int, int, int]]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    truth = rng.normal(size=answers)
    found: dict[str, dict[int, tuple[int, int, int]]] = {}
    for rater in range(raters):
        scores = np.clip(np.round(3 + truth[:, None] + rng.normal(scale=0.8, size=(answers, 3))), 1, 5).astype(int)
        found[f"rater-{rater:05d}"] = {n + 1: tuple(int(s) for s in scores[n]) for n in range(answers)}  # type: ignore[misc]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raters", type=int, default=2000)
    parser.add_argument("--answers", type=int, default=4)
    parser.add_argument("--bootstrap", type=int, default=2000)
    parser.add_argument("--old-raters", type=int, default=100)
    args = parse_args(parser, raters=20, answers=4, bootstrap=50, old_raters=5)

    import numpy as np

    from helm_mtsamples_ext.report.cli import main as report
    from helm_mtsamples_ext.report.ratings import human_reward, read_ratings
    from helm_mtsamples_ext.stats.agreement import icc_3_1, resampled
    from helm_mtsamples_ext.stats.ceiling import ceiling_stats
    from helm_mtsamples_ext.stats.intervals import BootstrapSettings
    from tests.report import ceiling_reference, rated

    settings = BootstrapSettings(n_resamples=args.bootstrap)
    with tempfile.TemporaryDirectory() as tmp:
        output = Path(tmp)
        run = rated.build(output)
        path = rated.write_ratings(output / "ratings.csv", run, _ratings(args.raters, args.answers, 0))
        size = path.stat().st_size / 1e6
        start = time.perf_counter()
        argv = ["--suite", "v1", "-o", str(output), "--out", str(output / "out"), "--bootstrap", str(args.bootstrap)]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = report([*argv, "--ratings", str(path)])
        whole = time.perf_counter() - start
        table = read_ratings([path])
        shared = table.assign(human_reward=human_reward(table))
        start = time.perf_counter()
        ceiling_stats(shared, settings)
        alone = time.perf_counter() - start

    small = _ratings(args.old_raters, args.answers, 0)
    rewards = np.array([[np.mean(by[n + 1]) / 5 for by in small.values()] for n in range(args.answers)])
    start = time.perf_counter()
    resampled(lambda pick: ceiling_reference.averaged(icc_3_1, rewards[pick]), len(rewards), settings)
    old = time.perf_counter() - start
    old_at_scale = old * (args.raters / args.old_raters) ** 2

    print(f"ratings: {args.raters} raters x {args.answers} answers ({size:.1f} MB), {args.bootstrap} resamples")
    ratio = whole / GOAL_SECONDS
    print(f"report, end to end (exit {code}): {whole:.1f} s; goal {GOAL_SECONDS:.0f} s; ratio {ratio:.2f}")
    print(f"ceiling alone (Spearman, ICC, kappas; MedHELM's pairs apart): {alone:.1f} s")
    print(f"old ceiling, ICC only: {old:.1f} s at {args.old_raters} raters, ~{old_at_scale:.0f} s at {args.raters}")


if __name__ == "__main__":
    main()
