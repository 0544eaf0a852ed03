"""Every ``benchmarks/*.py`` runs as the docs write it, in a fresh clone: each script at its smallest size
(``--smallest``, the convention ``benchmarks/__init__.py`` states), found by listing the folder so a new script
joins without a change here.

The clone is the checkout's files (tracked and new, none ignored) copied to a directory with nothing beside it (no
``../shared``), the package imported from there as an editable install would, and no network: the notes are the
session's synthetic ones, through ``MTSAMPLES_PROCEDURES_BASE_URL`` and ``MTSAMPLES_PROCEDURES_MANIFEST``. A script
fails the test on a non-zero exit, a traceback, a ``nan`` in what it prints or a file it could not find; its numbers
are not checked (at this size they mean nothing, and tests never time things).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helm_tools import BIN, user_env
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (REPO / "benchmarks").glob("*.py") if not p.name.startswith("_"))
BROKEN = re.compile(r"Traceback \(most recent call last\)|(?<![\w.])nan(?![\w.])|No such file|FileNotFoundError", re.I)


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's files as a clone would have them (ignored ones left out), in a directory with nothing beside."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    clone = tmp_path_factory.mktemp("fresh") / "helm-mtsamples-ext"
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    assert not (clone.parent / "shared").exists()
    return clone


def test_every_benchmark_script_is_listed_here() -> None:
    assert SCRIPTS, "benchmarks/ holds no script"
    assert {"bench_judges.py", "bench_report.py", "bench_scenario.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_runs_at_its_smallest_size_in_a_fresh_clone(
    script: str, fresh_clone: Path, synthetic_notes: SyntheticNotes
) -> None:
    env = user_env(**synthetic_notes.env(), PYTHONPATH=str(fresh_clone), PATH=f"{BIN}:{user_env().get('PATH', '')}")
    usage = subprocess.run(
        [sys.executable, f"benchmarks/{script}", "--help"], cwd=fresh_clone, env=env,
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "--smallest" in usage.stdout, (
        f"benchmarks/{script} has no --smallest: parse its arguments with benchmarks.parse_args (see "
        f"benchmarks/__init__.py)\n{usage.stdout[-1000:]}{usage.stderr[-2000:]}"
    )
    proc = subprocess.run(
        [sys.executable, f"benchmarks/{script}", "--smallest"], cwd=fresh_clone, env=env,
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"benchmarks/{script} --smallest exited {proc.returncode}:\n{output[-4000:]}"
    broken = BROKEN.search(output)
    assert broken is None, f"benchmarks/{script} --smallest printed {broken[0]!r}:\n{output[-4000:]}"
    assert proc.stdout.strip(), f"benchmarks/{script} --smallest printed no result"
