"""The tests on a clean machine: a checkout with no ``../shared`` beside it and no note host reachable.

Two real-data test files run by pytest in a subprocess, from a copy of the checkout in a fresh directory,
with ``MTSAMPLES_PROCEDURES_BASE_URL`` pointing at a closed loopback port (nothing reaches GitHub): the
tests that need the pinned notes skip with one line saying how to supply them, everything else passes,
nothing errors. Under ``CI=true`` the same line fails the run, so CI never passes without the real data.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helm_tools import user_env
from tests.servers.loopback import closed_port_url

REPO = Path(__file__).resolve().parents[2]
REAL_DATA_FILES = ["tests/test_scenario.py", "tests/data/test_notes.py"]
REAL_DATA_TESTS = 3  # the 131 instances (test_scenario), the shipped manifest and the 429 through a mirror (test_data)
HOW = "set MTSAMPLES_PROCEDURES_BASE_URL to a mirror URL, a file:// URL or a directory holding the 429 pinned notes"


@pytest.fixture(scope="module")
def clean_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package, its tests and their configuration, in a directory with nothing beside it."""
    checkout = tmp_path_factory.mktemp("clean") / "helm-mtsamples-ext"
    for part in ("helm_mtsamples_ext", "tests"):
        shutil.copytree(REPO / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(REPO / "pyproject.toml", checkout / "pyproject.toml")
    assert not (checkout.parent / "shared").exists()
    return checkout


def run_pytest(checkout: Path, **env: str) -> tuple[int, str]:
    base = {k: v for k, v in user_env().items() if k not in ("CI", "PYTHONPATH")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *REAL_DATA_FILES],
        cwd=checkout,
        env={**base, "PYTHONPATH": str(checkout), "MTSAMPLES_PROCEDURES_BASE_URL": closed_port_url("/notes/"), **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_real_data_tests_skip_with_one_line_saying_how_to_supply_the_notes(clean_checkout: Path) -> None:
    code, output = run_pytest(clean_checkout)
    assert code == 0, output[-4000:]
    summary = output.strip().splitlines()[-1]
    assert re.search(rf"\d+ passed, {REAL_DATA_TESTS} skipped in ", summary) and "error" not in summary, summary
    skipped = [line for line in output.splitlines() if line.startswith("SKIPPED [1] tests/")]
    reasons = {line.split(": ", 1)[1] for line in skipped}  # pytest names each skipped test, then the reason
    assert len(skipped) == REAL_DATA_TESTS and len(reasons) == 1, skipped
    (reason,) = reasons
    assert "MTSAMPLES_PROCEDURES_BASE_URL=http://127.0.0.1:" in reason and "cannot be reached" in reason
    assert HOW in reason and f"or put them in {clean_checkout.parent / 'shared'}/" in reason


def test_under_ci_the_same_line_fails_the_run(clean_checkout: Path) -> None:
    code, output = run_pytest(clean_checkout, CI="true")
    assert code == 1, output[-4000:]
    summary = output.strip().splitlines()[-1]
    assert re.search(rf"\d+ passed, {REAL_DATA_TESTS} errors? in ", summary) and "skipped" not in summary, summary
    errors = [line for line in output.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == REAL_DATA_TESTS and all(HOW in line for line in errors), errors
