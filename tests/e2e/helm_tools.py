"""HELM's real binaries as a user runs them, for the end-to-end tests: run a tool, read what it wrote.

One place for the helpers every end-to-end test shares (the loopback servers are in tests/servers/), so
each test file reads as a user's session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

from helm_mtsamples_ext.helm_host.compat import check_distribution
from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium  # noqa: F401 (the e2e tests' names)

BIN = Path(sys.executable).parent
SECRET = "sk-e2e-SECRET-never-written-7f3a"
P = "mtsamples_procedures"
RUN_TOOL = "medhelm-run" if check_distribution().is_medhelm else "helm-run"
"""What a user of the installed HELM types: medhelm ships its own ``medhelm-run`` (the same entry point)."""


def helm_tool(name: str, *args: str, cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    """Run one of HELM's binaries from this interpreter's environment; fail with its output if it fails."""
    proc = subprocess.run(
        [str(BIN / name), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{name} {' '.join(args)} exited {proc.returncode}:\n{output[-4000:]}"
    return output


def peak_memory_of_tool(
    name: str, *args: str, cwd: Path, env: dict[str, str], limit_gb: int = 8, timeout: float = 900
) -> tuple[int, str]:
    """Run one of HELM's binaries as ``helm_tool`` does, in a fresh interpreter that waits for it: its peak
    resident memory in KB (the largest of its process tree's, as ``getrusage(RUSAGE_CHILDREN)`` reports) and output.
    Its address space is limited to ``limit_gb`` (``RLIMIT_AS``), so a run that would exhaust a shared machine's
    memory fails instead."""
    measure = (
        "import resource, subprocess, sys; "
        f"resource.setrlimit(resource.RLIMIT_AS, ({limit_gb} << 30, {limit_gb} << 30)); "
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "sys.stdout.write(p.stdout + p.stderr); "
        "print(f'\\nPEAK_KB={resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss} RC={p.returncode}')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", measure, str(BIN / name), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    output, _, last = proc.stdout.rpartition("\nPEAK_KB=")
    peak, rc = last.split()
    assert rc == "RC=0", f"{name} {' '.join(args)} exited {rc}:\n{output[-4000:]}{proc.stderr[-2000:]}"
    return int(peak), output


def register_loopback_model(prod_env: Path, base_url: str, served: str) -> str:
    """A model at ``base_url`` as a user registers a local model in prod_env; its HELM name."""
    name = f"loopback/{served}"
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_metadata.yaml").write_text(
        f"""model_metadata:
  - name: {name}
    display_name: Loopback {served}
    description: A loopback model under test.
    creator_organization_name: Loopback
    access: open
    release_date: 2024-01-01
    tags: [TEXT_MODEL_TAG, FULL_FUNCTIONALITY_TEXT_MODEL_TAG]
"""
    )
    (prod_env / "model_deployments.yaml").write_text(
        f"""model_deployments:
  - name: {name}
    model_name: {name}
    tokenizer_name: simple/tokenizer1
    max_sequence_length: 1000000
    client_spec:
      class_name: "helm.clients.openai_client.OpenAIClient"
      args:
        base_url: "{base_url}"
        openai_model_name: {served}
        api_key: EMPTY
"""
    )
    return name


def kill_helm_run_once(args: list[str], cwd: Path, env: dict[str, str], reached: Callable[[], bool], what: str) -> None:
    """Start helm-run and kill it (SIGKILL, as a crash or an OOM kill would) once ``reached()`` says it got to
    the point under test; ``reached`` waits with its own bound. In its own session, so the kill reaches
    helm-run and nothing else."""
    proc = subprocess.Popen(
        [str(BIN / "helm-run"), *args], cwd=cwd, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert reached(), f"helm-run never {what}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)


HELM_SITE = Path(__file__).resolve().parent / "helm_site"
"""On the PYTHONPATH of every HELM binary the tests run: HELM's prompt truncation for the offline ``simple/model1``
in log time instead of quadratic (helm_site/sitecustomize.py says why; test_helm_site.py checks it cuts as HELM)."""


def user_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MTSAMPLES_", "OPENAI_", "JUDGE_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HELM_SITE), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def run_dir(out: Path, suite: str) -> Path:
    (found,) = [p for p in (out / "runs" / suite).iterdir() if p.name.startswith(f"{P}:")]
    return found


def request_states(run: Path) -> list[dict[str, Any]]:
    return json.loads((run / "scenario_state.json").read_text())["request_states"]


def stat(run: Path, name: str) -> dict[str, Any]:
    for s in json.loads((run / "stats.json").read_text()):
        n = s["name"]
        if n["name"] == name and n.get("split") == "test" and not n.get("perturbation"):
            return s
    raise AssertionError(f"no test-split stat {name} in {run / 'stats.json'}")


OWN = {"accuracy": 2, "completeness": 2, "clarity": 3}
"""A judge's own verdict, which no verdict planted in an answer may replace."""


def scores_of(entry: dict[str, Any]) -> dict[str, Any]:
    """The three scores of one judge's record entry."""
    return {dim: entry[dim]["score"] for dim in OWN}


def files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def wait_until_serving(url: str, server: subprocess.Popen[bytes], attempts: int = 300) -> None:
    """Poll the server's front page, bounded; fail at once if the server process died."""
    for _ in range(attempts):
        assert server.poll() is None, "helm-server exited early"
        try:
            if requests.get(url, timeout=1).status_code == 200:
                return
        except requests.ConnectionError:
            time.sleep(0.1)
    raise AssertionError(f"helm-server did not answer at {url}")
