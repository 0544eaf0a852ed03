"""The model under test through the real helm-run: an unknown model, or a real run without its key, stops
helm-run with one line before any run starts (the rules: tests/helm_host/test_model_check.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helm_mtsamples_ext.helm_host.compat import check_distribution
from helm_mtsamples_ext.helm_host.model_check import LIST_MODELS
from tests.e2e.helm_tools import BIN, P, user_env

HELM = str(check_distribution())
KEY_LINE = (
    "set openaiApiKey in prod_env/credentials.conf or the OPENAI_API_KEY environment variable "
    "(or try the run with --dry-run, which calls no model)"
)


def helm_run_fails(cwd: Path, *args: str) -> str:
    """helm-run as a user runs it (no key in the environment); it must fail, with no traceback: its last stderr line."""
    proc = subprocess.run(
        [str(BIN / "helm-run"), *args, "--suite", "s", "-m", "2"],
        cwd=cwd, env=user_env(), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (cwd / "benchmark_output" / "runs" / "s").exists() or not any(
        (cwd / "benchmark_output" / "runs" / "s").glob(f"{P}*")
    ), "stopped before any run started"
    return proc.stderr.strip().splitlines()[-1]


def test_helm_run_with_an_unknown_model_stops_with_one_line(tmp_path: Path) -> None:
    last = helm_run_fails(tmp_path, "--run-entries", f"{P}:model=opneai/gpt-4o-mini")
    assert last.startswith(f"{P}: HELM ({HELM}) knows no model 'opneai/gpt-4o-mini' (close matches: openai/gpt-4o-mini")
    assert last.endswith(f"; list the models it knows: {LIST_MODELS}")


def test_helm_run_without_the_model_under_tests_key_stops_with_one_line(tmp_path: Path) -> None:
    """The README's quick conf with no key: one line naming both settings, before any note is fetched."""
    conf = Path(__file__).resolve().parents[2] / "run_specs" / "mtsamples_procedures_quick.conf"
    last = helm_run_fails(tmp_path, "--conf-paths", str(conf))
    assert last.startswith(f"{P}: the model under test 'openai/gpt-4o-mini' cannot be used (")
    assert last.endswith(KEY_LINE)
