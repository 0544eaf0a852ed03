"""The rule of suite_name.py: ``--suite`` is a suite name, never a path, in every command of ours that takes one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helm_mtsamples_ext import schema as schema_module
from helm_mtsamples_ext.common.suite_name import suite_problem
from tests.report.suites import STRONG_RUN, build_suite

REPO = Path(__file__).resolve().parents[2]
REFUSED = ["../runs/v1", "/tmp/v1", "a/b", "a\\b", "..", "v1..old", ".", "", "  "]


@pytest.mark.parametrize("name", ["v1", "quickstart", "audit-2026_11", "v1.2", "MedHELM v1"])
def test_a_plain_name_is_a_suite(name: str) -> None:
    assert suite_problem(name) is None


@pytest.mark.parametrize("name", REFUSED)
def test_a_path_is_refused_in_one_line_that_says_what_a_suite_is(name: str) -> None:
    problem = suite_problem(name)
    assert problem is not None and "\n" not in problem
    assert problem.startswith(f"--suite {name!r} is not a suite name") and "-o/--output-path" in problem


def test_the_report_refuses_a_path_with_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """``--suite ../runs/v1`` reaches a real suite through the path, and would have written its report inside
    ``runs/``: refused before anything is read or written, one line on stderr, non-zero exit."""
    build_suite(tmp_path, [STRONG_RUN])
    before = sorted(tmp_path.rglob("*"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "helm_mtsamples_ext.report.cli", "--suite", "../runs/v1", "-o", str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {suite_problem('../runs/v1')}"]
    assert sorted(tmp_path.rglob("*")) == before


def test_the_schema_command_refuses_a_path_and_writes_nothing(tmp_path: Path) -> None:
    build_suite(tmp_path, [STRONG_RUN])
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(SystemExit) as refused:
        schema_module.main(["--suite", "../runs/v1", "-o", str(tmp_path)])
    assert refused.value.code == f"error: {suite_problem('../runs/v1')}"
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("v" * 300, "--suite is 300 characters long: a suite name takes at most 100"),
        ("v" * 101, "--suite is 101 characters long"),
        ("v1\x1b[2J", "holds a control character or line break"),
        ("v1\nv2", "holds a control character or line break"),
    ],
)
def test_an_over_long_name_or_a_control_character_is_refused_in_one_line(name: str, said: str) -> None:
    problem = suite_problem(name)
    assert problem is not None and said in problem and "\n" not in problem and "\x1b" not in problem
    assert suite_problem("v" * 100) is None


def test_the_report_refuses_a_300_character_suite_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from helm_mtsamples_ext.report.cli import main

    assert main(["--suite", "v" * 300, "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"error: --suite is 300 characters long: {err.split('long: ', 1)[1].strip()}"]
    assert "Traceback" not in err and not list(tmp_path.iterdir())
