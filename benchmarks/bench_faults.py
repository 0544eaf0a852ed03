"""What each fault of a real judge server costs: our JudgeAnnotator against HELM's built-in annotator.

One loopback judge server per fault (tests/servers/judge.py), one judge, default settings but
``judge_timeout``; ours annotates ``--notes`` notes, HELM's ``MTSamplesProceduresAnnotator`` one note
(its retry policy, 5 attempts 10+20+40+80 s apart, makes every failing call cost minutes), each through
HELM's AutoClient with a fresh cache. HELM's side uses HELM's own ``OpenAIClient`` and gets at most
``--cap`` seconds per fault (it runs in a daemon thread; past the cap it is reported as still going).

    python benchmarks/bench_faults.py [--notes 5] [--timeout 5] [--cap 240]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from helm.benchmark.annotation.model_as_judge import AnnotatorModelInfo  # noqa: E402
from helm.benchmark.annotation.mtsamples_procedures_annotator import MTSamplesProceduresAnnotator  # noqa: E402
from helm.benchmark.model_deployment_registry import ClientSpec, ModelDeployment, register_model_deployment  # noqa: E402

from benchmarks import parse_args  # noqa: E402
from benchmarks.bench_judges import fresh_auto_client, make_states  # noqa: E402
from helm_mtsamples_ext.annotator import JudgeAnnotator  # noqa: E402
from helm_mtsamples_ext.judges.helm_calls.call import JudgeAccessError  # noqa: E402
from helm_mtsamples_ext.judges.helm_calls.exchange import quiet_client_errors  # noqa: E402
from tests.servers.judge import Behaviour, JudgeServer  # noqa: E402

FAULTS: dict[str, dict[str, Any]] = {
    "HTML page at the URL (HTTP 200)": {"judges": {"j": "steady"}, "html_page": True},
    "repeatable HTTP 500 on every note": {"judges": {"j": Behaviour("fail_some", fail_marker="OPERATIVE")}},
    "slow drip (1 byte/s after the headers)": {"judges": {"j": "drip"}, "drip_seconds": 1.0},
    "400 context_length_exceeded": {"judges": {"j": Behaviour("context_limit", context_words=3)}},
    "10 MB reply": {"judges": {"j": "huge"}},
}


def cache_bytes(auto_client: Any) -> int:
    root = Path(auto_client.file_storage_path)
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def ours(server: JudgeServer, notes: int, timeout: float) -> tuple[float, int, str, int]:
    auto_client = fresh_auto_client()
    judges = [{"name": "j", "model": "j", "model_deployment": None, "base_url": server.base_url}]
    annotator = JudgeAnnotator(auto_client=auto_client, judges=judges, judge_timeout=timeout)
    start, before = time.perf_counter(), server.count()
    outcome = ""
    try:
        records = [annotator.annotate(state) for state in make_states(notes)]
        outcome = records[-1]["j"].get("failure") or "ok"
    except JudgeAccessError as e:
        outcome = f"run stopped: {str(e)[:60]}…"
    return time.perf_counter() - start, server.count() - before, outcome, cache_bytes(auto_client)


def helms(server: JudgeServer, timeout: float, cap: float) -> tuple[str, int, int]:
    name = f"helmjudge-{server.base_url.rsplit(':', 1)[1].split('/')[0]}/j"
    spec = ClientSpec(
        class_name="helm.clients.openai_client.OpenAIClient",
        args={"base_url": server.base_url, "openai_model_name": "j", "timeout": timeout, "max_retries": 0},
    )
    register_model_deployment(ModelDeployment(name=name, client_spec=spec, model_name=name))
    auto_client = fresh_auto_client({f"{name.split('/')[0]}ApiKey": "EMPTY"})
    annotator = MTSamplesProceduresAnnotator(
        auto_client=auto_client, annotator_models={"j": AnnotatorModelInfo(model_name=name, model_deployment=name)}
    )
    done: list[float] = []
    before = server.count()

    def run() -> None:
        start = time.perf_counter()
        try:
            with quiet_client_errors():  # HELM logs each client error with a traceback; its wall and calls count
                annotator.annotate(make_states(1)[0])
        except Exception:  # HELM's annotator gives up by raising
            pass
        done.append(time.perf_counter() - start)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(cap)
    wall = f"{done[0]:.1f} s" if done else f"> {cap:.0f} s (still going)"
    return wall, server.count() - before, cache_bytes(auto_client)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=5.0, help="judge_timeout (both sides)")
    parser.add_argument("--cap", type=float, default=240.0, help="seconds HELM's annotator gets per fault")
    args = parse_args(parser, notes=1, timeout=1.0, cap=5.0)

    rows: dict[str, list[Any]] = {}
    threads = []
    servers = []
    for fault, options in FAULTS.items():
        options = {k: v for k, v in options.items() if k != "judges"}
        server = JudgeServer(FAULTS[fault]["judges"], max_lifetime=args.cap + 600, **options).__enter__()
        servers.append(server)
        helm_server = JudgeServer(FAULTS[fault]["judges"], max_lifetime=args.cap + 600, **options).__enter__()
        servers.append(helm_server)
        rows[fault] = []

        def measure_helm(fault: str = fault, server: JudgeServer = helm_server) -> None:
            rows[fault].append(helms(server, args.timeout, args.cap))

        threads.append(threading.Thread(target=measure_helm, daemon=True))
        threads[-1].start()
        rows[fault].insert(0, ours(server, args.notes, args.timeout))
    for thread in threads:
        thread.join(args.cap + 30)
    for server in servers:
        server.stop()

    print(f"one judge, judge_timeout={args.timeout:g}; ours over {args.notes} notes, HELM's built-in over 1 note")
    columns = ["fault", "ours: wall", "ours: calls", "ours: outcome", "ours: cache", "HELM: wall (1 note)"]
    print("| " + " | ".join([*columns, "HELM: calls", "HELM: cache"]) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for fault, row in rows.items():
        (wall, calls, outcome, cache), *helm = row
        h_wall, h_calls, h_cache = helm[0] if helm else ("?", 0, 0)
        print(
            f"| {fault} | {wall:.1f} s | {calls} | {outcome[:70]} | {cache / 1e6:.2f} MB | {h_wall} | {h_calls} | "
            f"{h_cache / 1e6:.2f} MB |"
        )


if __name__ == "__main__":
    main()
