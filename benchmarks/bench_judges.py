"""Time the judge panel: our JudgeAnnotator against HELM's built-in MTSamplesProceduresAnnotator.

Both annotate the same plans with the same judges on one loopback judge server that answers every call
after a fixed latency, through HELM's AutoClient with a fresh cache each (so every call is real), driven
as HELM's AnnotationExecutor drives them: ``annotate_all`` for an annotator that sets
``use_global_metric`` (ours), else ``parallel_map`` over ``--num-threads`` threads (HELM's).

Two cases:
- against HELM, at our default ``judge_max_concurrency`` (16): the bound for ours is
  ``latency × ceil(calls / 16)``;
- the fan-out: an endpoint that takes 48 calls at once, ``judge_max_concurrency=48``, with
  ``--num-threads`` 1 and 4, against the bound ``latency × ceil(calls / 48)`` and the client's own floor:
  the same calls made 48 at a time with the ``openai`` SDK alone, in the same run.

Goals, stated at the end of what it prints, met or not: ours within 1.3x its bound, the fan-out within 1.3x the
SDK's floor.

    python benchmarks/bench_judges.py [--notes 131] [--judges 3] [--latency 0.3] [--num-threads 4]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from helm.benchmark.adaptation.request_state import RequestState  # noqa: E402
from helm.benchmark.annotation.annotator import Annotator  # noqa: E402
from helm.benchmark.annotation.model_as_judge import AnnotatorModelInfo  # noqa: E402
from helm.benchmark.annotation.mtsamples_procedures_annotator import MTSamplesProceduresAnnotator  # noqa: E402
from helm.benchmark.scenarios.scenario import CORRECT_TAG, TEST_SPLIT, Input, Instance, Output, Reference  # noqa: E402
from helm.clients.auto_client import AutoClient  # noqa: E402

# Imported up front: the first client either annotator builds would otherwise pay ~1 s of importing the
# OpenAI SDK inside its timing, and only the first annotator timed would pay it.
from helm.clients.openai_client import OpenAIClient  # noqa: E402, F401
from helm.common.cache_backend_config import SqliteCacheBackendConfig  # noqa: E402
from helm.common.general import parallel_map  # noqa: E402
from helm.common.request import GeneratedOutput, Request, RequestResult  # noqa: E402

from benchmarks import parse_args  # noqa: E402
from helm_mtsamples_ext.annotator import JudgeAnnotator  # noqa: E402
from helm_mtsamples_ext.judges.helm_calls.endpoints import register_endpoint_deployment  # noqa: E402
from helm_mtsamples_ext.judges.helm_calls.keys import credentials_with_keys, resolve_endpoint_keys  # noqa: E402
from tests.servers.judge import JudgeServer  # noqa: E402

FANOUT_CONCURRENCY = 48
GOAL = 1.3
"""Both goals: the annotator within 1.3x its bound, the fan-out within 1.3x the bare SDK's time in the same run."""


def make_states(n: int) -> list[RequestState]:
    states = []
    for i in range(n):
        instance = Instance(
            Input(text=f"OPERATIVE NOTE {i}: laparoscopic cholecystectomy, uneventful."),
            references=[Reference(Output(text=f"Discharge home, follow up in {i % 4 + 1} weeks."), tags=[CORRECT_TAG])],
            split=TEST_SPLIT,
            id=f"note{i}",
        )
        result = RequestResult(
            success=True,
            embedding=[],
            completions=[GeneratedOutput(f"Plan {i}: analgesia, early mobilisation, clinic in 2 weeks.", 0, [])],
            cached=False,
        )
        states.append(RequestState(instance, None, None, 0, None, Request(), result, 0, False))
    return states


def fresh_auto_client(credentials: dict[str, Any] | None = None) -> AutoClient:
    path = tempfile.mkdtemp(prefix="bench_judges_")
    return AutoClient(
        credentials=credentials or {}, file_storage_path=path, cache_backend_config=SqliteCacheBackendConfig(path)
    )


def timed(annotator: Annotator, states: list[RequestState], num_threads: int) -> tuple[float, list[Any]]:
    """As HELM's AnnotationExecutor: the whole run at once when the annotator asks for it, else per note."""
    start = time.perf_counter()
    if getattr(annotator, "use_global_metric", False):
        annotations = [a[annotator.name] for a in annotator.annotate_all(states)]
    else:
        annotations = parallel_map(annotator.annotate, states, parallelism=num_threads)
    return time.perf_counter() - start, annotations


def sdk_floor(base_url: str, models: list[str], notes: int, concurrency: int) -> float:
    """The same number of calls made ``concurrency`` at a time with the openai SDK alone: the client's floor."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="floor", max_retries=0, timeout=60)
    client.with_options(max_retries=0).models  # noqa: B018 - build the SDK's lazy parts before timing

    def call(i: int) -> None:
        model = models[i % len(models)]
        client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": f"floor call {i}"}], temperature=0.0, max_tokens=1024
        )

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(call, range(notes * len(models))))
    return time.perf_counter() - start


def ours(base_url: str, models: list[str], **kwargs: Any) -> JudgeAnnotator:
    judges = [{"name": m, "model": m, "model_deployment": None, "base_url": base_url} for m in models]
    return JudgeAnnotator(auto_client=fresh_auto_client(), judges=judges, judge_timeout=60.0, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=131)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the server takes per call")
    parser.add_argument("--num-threads", type=int, default=4)
    args = parse_args(parser, notes=4, judges=2, latency=0.02, num_threads=2)

    models = [f"judge{i}" for i in range(args.judges)]
    states = make_states(args.notes)
    expected_calls = args.notes * args.judges
    with JudgeServer(dict.fromkeys(models, "steady"), latency=args.latency, max_lifetime=3600) as server:
        default = ours(server.base_url, models)
        ours_time, ours_records = timed(default, states, args.num_threads)
        ours_calls = server.count()

        deployments = {m: register_endpoint_deployment(server.base_url, m) for m in models}
        helm_models = {m: AnnotatorModelInfo(model_name=d, model_deployment=d) for m, d in deployments.items()}
        # HELM's annotator reads the (placeholder) key the usual HELM way, from credentials.
        keyless = resolve_endpoint_keys([(1, server.base_url)], credentials={}, environ={})
        credentials = credentials_with_keys({}, keyless.values())
        helm = MTSamplesProceduresAnnotator(auto_client=fresh_auto_client(credentials), annotator_models=helm_models)
        helm_time, helm_records = timed(helm, states, args.num_threads)
        helm_calls = server.count() - ours_calls

        fanout: dict[int, float] = {}
        for threads in (1, 4):
            before = server.count()
            annotator = ours(server.base_url, models, judge_max_concurrency=FANOUT_CONCURRENCY)
            fanout[threads], records = timed(annotator, states, threads)
            assert server.count() - before == expected_calls, "the fan-out case did not make every call"
            assert all(r["failed_judges"] == [] for r in records), "a judge failed in the fan-out case"
        floor = sdk_floor(server.base_url, models, args.notes, FANOUT_CONCURRENCY)

    assert ours_calls == helm_calls == expected_calls, (ours_calls, helm_calls, expected_calls)
    assert all(r["failed_judges"] == [] for r in ours_records), "a judge failed in the benchmark"
    assert all(all(m in r for m in models) for r in helm_records), "HELM's annotator lost a judge"

    bound = args.latency * math.ceil(expected_calls / 16)
    print(
        f"{args.notes} plans x {args.judges} judges = {expected_calls} calls, {args.latency * 1000:.0f} ms each, "
        f"--num-threads {args.num_threads}"
    )
    print(f"HELM MTSamplesProceduresAnnotator: {helm_time:7.2f} s")
    print(f"ours (JudgeAnnotator, 16 at once): {ours_time:7.2f} s")
    print(f"speed-up over HELM:                {helm_time / ours_time:7.2f}x  (goal >= 2.5x)")
    print(f"lower bound for ours:              {bound:7.2f} s  (ours / bound = {ours_time / bound:.2f}, goal <= 1.3)")
    verdicts = [("annotate / its bound", ours_time / bound)]
    fan_bound = args.latency * math.ceil(expected_calls / FANOUT_CONCURRENCY)
    n = FANOUT_CONCURRENCY
    print(f"\nfan-out: an endpoint taking {n} calls at once, judge_max_concurrency={n}")
    print(f"openai SDK alone, {FANOUT_CONCURRENCY} at a time (floor): {floor:7.2f} s  (bound {fan_bound:.2f} s)")
    for threads, seconds in fanout.items():
        print(
            f"ours, --num-threads {threads}:            {seconds:7.2f} s  "
            f"(/ bound = {seconds / fan_bound:.2f}, / floor = {seconds / floor:.2f}, goal <= {GOAL}; "
            f"{helm_time / seconds:.1f}x HELM's built-in)"
        )
        verdicts.append((f"fan-out / SDK floor, --num-threads {threads}", seconds / floor))
    print("\ngoals (ratios measured in this run; on a shared machine compare ratios, not seconds):")
    for name, ratio in verdicts:
        print(f"  {name:<36} {ratio:5.2f}  {'met' if ratio <= GOAL else 'OVER'} (goal <= {GOAL})")


if __name__ == "__main__":
    main()
