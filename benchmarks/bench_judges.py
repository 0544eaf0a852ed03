"""Time the judge panel: our JudgeAnnotator against HELM's built-in MTSamplesProceduresAnnotator.

Both annotate the same plans with the same judges on one loopback judge server that answers every call
after a fixed latency, through HELM's AutoClient with a fresh cache each (so every call is real), with
HELM's ``parallel_map`` over ``--num-threads`` threads as HELM's AnnotationExecutor does. The lower bound
for ours is ``latency × ceil(calls / (num_threads × judges))``: every judge of every in-flight note
waiting at once.

    python benchmarks/bench_judges.py [--notes 131] [--judges 3] [--latency 0.3] [--num-threads 4]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
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

from helm_mtsamples_ext.annotator import JudgeAnnotator  # noqa: E402
from helm_mtsamples_ext.endpoints import (  # noqa: E402
    credentials_with_keys,
    register_endpoint_deployment,
    resolve_endpoint_keys,
)
from tests.judge_server import JudgeServer  # noqa: E402


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
    start = time.perf_counter()
    annotations = parallel_map(annotator.annotate, states, parallelism=num_threads)
    return time.perf_counter() - start, annotations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=131)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the server takes per call")
    parser.add_argument("--num-threads", type=int, default=4)
    args = parser.parse_args()

    models = [f"judge{i}" for i in range(args.judges)]
    states = make_states(args.notes)
    with JudgeServer(dict.fromkeys(models, "steady"), latency=args.latency, max_lifetime=3600) as server:
        judges = [{"name": m, "model": m, "model_deployment": None, "base_url": server.base_url} for m in models]
        ours = JudgeAnnotator(auto_client=fresh_auto_client(), judges=judges, judge_timeout=60.0)
        ours_time, ours_records = timed(ours, states, args.num_threads)
        ours_calls = server.count()

        deployments = {m: register_endpoint_deployment(server.base_url, m, 60.0) for m in models}
        helm_models = {m: AnnotatorModelInfo(model_name=d, model_deployment=d) for m, d in deployments.items()}
        # HELM's annotator reads the (placeholder) key the usual HELM way, from credentials.
        keyless = resolve_endpoint_keys([(1, server.base_url)], credentials={}, environ={})
        credentials = credentials_with_keys({}, keyless.values())
        helm = MTSamplesProceduresAnnotator(auto_client=fresh_auto_client(credentials), annotator_models=helm_models)
        helm_time, helm_records = timed(helm, states, args.num_threads)
        helm_calls = server.count() - ours_calls

    expected_calls = args.notes * args.judges
    assert ours_calls == helm_calls == expected_calls, (ours_calls, helm_calls, expected_calls)
    assert all(r["failed_judges"] == [] for r in ours_records), "a judge failed in the benchmark"
    assert all(all(m in r for m in models) for r in helm_records), "HELM's annotator lost a judge"

    concurrency = args.num_threads * args.judges
    bound = args.latency * math.ceil(expected_calls / concurrency)
    print(
        f"{args.notes} plans x {args.judges} judges = {expected_calls} calls, {args.latency * 1000:.0f} ms each, "
        f"--num-threads {args.num_threads} (our calls in flight: up to {concurrency})"
    )
    print(f"HELM MTSamplesProceduresAnnotator: {helm_time:7.2f} s")
    print(f"ours (JudgeAnnotator):             {ours_time:7.2f} s")
    print(f"speed-up over HELM:                {helm_time / ours_time:7.2f}x  (goal >= 2.5x)")
    print(f"lower bound for ours:              {bound:7.2f} s  (ours / bound = {ours_time / bound:.2f}, goal <= 1.3)")


if __name__ == "__main__":
    main()
