"""Judging at a provider's limit: our JudgeAnnotator against HELM's built-in MTSamplesProceduresAnnotator.

Both annotate the same plans with the same judges, each on a fresh loopback endpoint that answers at most
``--limit`` calls per rolling ``--window`` seconds and then HTTP 429 with ``Retry-After`` (the time until a
slot frees, in whole seconds), through HELM's AutoClient with a fresh cache (every call is real) and
HELM's ``parallel_map`` over ``--num-threads`` threads, as HELM's AnnotationExecutor does. Printed:
judgments lost (goal 0), 429s received, and wall time over the bound ``(calls - limit) / limit x window``
(goal <= 1.2).

Then a dead judge: one judge of the panel never answers (each call times out after ``--timeout``). Ours
should cost the healthy run plus a few timeouts, whatever the number of notes; it is run at two sizes. Goal:
at most 5 timeouts over the healthy run (three prompts unanswered open the breaker, the first two retried once),
printed as the ratio extra / timeout.
HELM's built-in is not run on the dead judge: by its retry schedule (5 attempts, 5 s x 2^n waits) each
note would wait about 5 timeouts + 150 s for it.

    python benchmarks/bench_rate_limit.py [--notes 131] [--judges 3] [--limit 60] [--window 10] [--timeout 2]
        [--dead-judge-only]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from helm.benchmark.annotation.model_as_judge import AnnotatorModelInfo  # noqa: E402
from helm.benchmark.annotation.mtsamples_procedures_annotator import MTSamplesProceduresAnnotator  # noqa: E402

from benchmarks import parse_args  # noqa: E402
from benchmarks.bench_judges import fresh_auto_client, make_states, timed  # noqa: E402
from helm_mtsamples_ext.annotator import JudgeAnnotator  # noqa: E402
from helm_mtsamples_ext.judges.helm_calls.endpoints import register_endpoint_deployment  # noqa: E402
from helm_mtsamples_ext.judges.helm_calls.keys import credentials_with_keys, resolve_endpoint_keys  # noqa: E402
from tests.servers.judge import JudgeServer  # noqa: E402


def ours(server: JudgeServer, models: list[str], states: list[Any], threads: int, **kwargs: Any) -> tuple[float, int]:
    """(seconds, judgments lost) for our annotator."""
    judges = [{"name": m, "model": m, "model_deployment": None, "base_url": server.base_url} for m in models]
    annotator = JudgeAnnotator(auto_client=fresh_auto_client(), judges=judges, **kwargs)
    seconds, records = timed(annotator, states, threads)
    lost = sum(len(r.get("failed_judges", [])) for r in records)
    return seconds, lost


def helms(server: JudgeServer, models: list[str], states: list[Any], threads: int) -> tuple[float, int]:
    """(seconds, judgments lost) for HELM's built-in annotator (a judge missing from its record is lost)."""
    deployments = {m: register_endpoint_deployment(server.base_url, m) for m in models}
    infos = {m: AnnotatorModelInfo(model_name=d, model_deployment=d) for m, d in deployments.items()}
    keyless = resolve_endpoint_keys([(1, server.base_url)], credentials={}, environ={})
    client = fresh_auto_client(credentials_with_keys({}, keyless.values()))
    annotator = MTSamplesProceduresAnnotator(auto_client=client, annotator_models=infos)
    seconds, records = timed(annotator, states, threads)
    lost = sum(1 for r in records for m in models if m not in r)
    return seconds, lost


def rate_limited(args: argparse.Namespace) -> None:
    models = [f"judge{i}" for i in range(args.judges)]
    states = make_states(args.notes)
    calls = args.notes * args.judges
    bound = max(0.0, (calls - args.limit) / args.limit * args.window)
    print(
        f"{args.notes} notes x {args.judges} judges = {calls} calls; endpoint: {args.limit} calls per rolling "
        f"{args.window:g} s, then 429 + Retry-After; --num-threads {args.num_threads}; bound {bound:.1f} s"
    )
    print(f"{'':34} {'lost':>5} {'429s':>6} {'wall s':>8} {'wall/bound':>10}")
    results = {}
    names = ("HELM MTSamplesProceduresAnnotator", "ours (JudgeAnnotator)")
    for name in names[1:] if args.skip_helm else names:
        limit = (args.limit, args.window)
        with JudgeServer(dict.fromkeys(models, "steady"), rate_limit=limit, max_lifetime=7200) as server:
            if name.startswith("ours"):
                seconds, lost = ours(server, models, states, args.num_threads, judge_timeout=60.0)
            else:
                seconds, lost = helms(server, models, states, args.num_threads)
            results[name] = (seconds, lost, server.rejected_429)
        print(f"{name:34} {lost:5d} {server.rejected_429:6d} {seconds:8.1f} {seconds / bound if bound else 0:10.2f}")
    ours_s, ours_lost, _ = results[names[1]]
    print(f"ours lost {ours_lost} judgments (goal 0)")
    if names[0] in results:
        print(f"ours is {results[names[0]][0] / ours_s:.2f}x faster than HELM's built-in")


DEAD_JUDGE_GOAL = 5.0
"""Timeouts a dead judge may cost a run over the healthy one, whatever the notes."""


def dead_judge(args: argparse.Namespace) -> None:
    models = [f"judge{i}" for i in range(args.judges)]
    verdicts = []
    print(f"\nDead judge: 1 of {args.judges} judges never answers; judge_timeout={args.timeout:g} s")
    print(f"{'notes':>6} {'healthy s':>10} {'one dead s':>11} {'extra s':>8} {'extra / timeout':>16}")
    for notes in sorted({max(1, args.notes // 3), args.notes}):
        states = make_states(notes)
        with JudgeServer(dict.fromkeys(models, "steady"), latency=args.latency, max_lifetime=7200) as server:
            healthy, _ = ours(server, models, states, args.num_threads, judge_timeout=args.timeout)
        panel = {**dict.fromkeys(models[1:], "steady"), models[0]: "slow"}
        with JudgeServer(panel, latency=args.latency, hold_seconds=600, max_lifetime=7200) as server:
            dead, lost = ours(server, models, states, args.num_threads, judge_timeout=args.timeout)
        assert lost == notes, "the dead judge should have failed on every note, and only it"
        extra = dead - healthy
        print(f"{notes:6d} {healthy:10.1f} {dead:11.1f} {extra:8.1f} {extra / args.timeout:16.2f}")
        verdicts.append((notes, extra / args.timeout))
    print(f"goal: one dead judge costs at most {DEAD_JUDGE_GOAL:g} timeouts over the healthy run")
    for notes, ratio in verdicts:
        verdict = "met" if ratio <= DEAD_JUDGE_GOAL else "OVER"
        print(f"  {notes} notes: extra / timeout {ratio:5.2f}  {verdict} (goal <= {DEAD_JUDGE_GOAL:g})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=131)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--limit", type=int, default=60, help="calls the endpoint answers per window")
    parser.add_argument("--window", type=float, default=10.0, help="seconds of the rolling window")
    parser.add_argument("--num-threads", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=2.0, help="judge_timeout for the dead-judge run")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds a live judge takes per call")
    parser.add_argument("--skip-helm", action="store_true", help="only ours (HELM's built-in takes minutes)")
    parser.add_argument("--dead-judge-only", action="store_true", help="only the dead judge, not the rate limit")
    args = parse_args(parser, notes=4, judges=2, limit=4, window=1.0, timeout=0.5, latency=0.01, skip_helm=True)
    start = time.perf_counter()
    if not args.dead_judge_only:
        rate_limited(args)
    dead_judge(args)
    print(f"\n(total {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
