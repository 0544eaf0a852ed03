"""The layers are import-linter's contracts (pyproject.toml, ``[tool.importlinter]``), checked by ``lint-imports``
in .ci/run. These tests show the contracts bite: on a copy of the package they pass as it is and fail, naming the
contract, on a planted wrong import; and the core modules they keep free of HELM import with HELM blocked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "helm_mtsamples_ext"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
HELM_FREE = ("common", "data", "scoring", "stats", "judges/core", "judges/openai_calls", "report")
"""The folders the "core-without-helm" contract names."""


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "400"}  # one contract line, one output line
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(root / "pyproject.toml")],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The package and its contracts, copied to ``tmp_path``."""
    shutil.copytree(REPO / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def plant(root: Path, module: str, line: str) -> None:
    path = root / PACKAGE / module
    path.write_text(f"{line}\n" + path.read_text(encoding="utf-8"), encoding="utf-8")


def test_the_contracts_hold_on_the_package_as_it_is(copy: Path) -> None:
    result = lint_imports(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_report_module_importing_the_judges_breaks_the_contracts(copy: Path) -> None:
    plant(copy, "report/tables.py", "import helm_mtsamples_ext.judges.helm_calls.call")
    result = lint_imports(copy)
    assert result.returncode != 0
    assert "the report reads suites, never calls a judge or HELM BROKEN" in result.stdout
    assert "the core runs without HELM installed BROKEN" in result.stdout, "judges.helm_calls.call imports helm"
    assert "helm_mtsamples_ext.report.tables -> helm_mtsamples_ext.judges.helm_calls.call" in result.stdout


def test_the_judging_core_importing_a_transport_or_a_harness_breaks_the_contracts(copy: Path) -> None:
    """The contracts name the core folder, so a module added to it is held to them without a word more."""
    plant(copy, "judges/core/turns.py", "import helm_mtsamples_ext.judges.helm_calls.outcome")
    (copy / PACKAGE / "judges/core/new_step.py").write_text("import inspect_ai\nimport helm.common.request\n")
    result = lint_imports(copy)
    assert result.returncode != 0
    assert "the judging core stands under every transport and imports none BROKEN" in result.stdout
    assert "helm_mtsamples_ext.judges.core.turns -> helm_mtsamples_ext.judges.helm_calls.outcome" in result.stdout
    assert "the judging core imports no harness and no SDK" in result.stdout
    assert "helm_mtsamples_ext.judges.core.new_step -> inspect_ai" in result.stdout
    assert "helm_mtsamples_ext.judges.core.new_step -> helm" in result.stdout


def test_the_statistics_doing_io_or_reading_a_suite_breaks_the_contracts(copy: Path) -> None:
    plant(copy, "stats/ties.py", "import pathlib")
    plant(copy, "stats/ranks.py", "import helm_mtsamples_ext.report.suite")
    (copy / PACKAGE / "stats/new_fit.py").write_text("import helm_mtsamples_ext.data.download\n")
    result = lint_imports(copy)
    assert result.returncode != 0
    assert "the statistics are pure: no I/O, no HELM, no reading of suites BROKEN" in result.stdout
    assert "helm_mtsamples_ext.stats.ties -> pathlib" in result.stdout
    assert "helm_mtsamples_ext.stats.new_fit -> helm_mtsamples_ext.data.download" in result.stdout
    assert "helm_mtsamples_ext.stats is not allowed to import helm_mtsamples_ext.report" in result.stdout


def test_common_importing_a_higher_layer_or_helm_breaks_the_contracts(copy: Path) -> None:
    plant(copy, "common/rubric.py", "import helm_mtsamples_ext.scoring.reward")
    plant(copy, "data/sections.py", "import helm.common.general")
    result = lint_imports(copy)
    assert result.returncode != 0
    assert "helm_mtsamples_ext.common is not allowed to import helm_mtsamples_ext.scoring" in result.stdout
    assert "helm_mtsamples_ext.data is not allowed to import helm" in result.stdout


def test_an_import_cycle_breaks_the_contracts(copy: Path) -> None:
    plant(copy, "stats/ties.py", "import helm_mtsamples_ext.stats.intervals")
    plant(copy, "stats/intervals.py", "import helm_mtsamples_ext.stats.ties")
    result = lint_imports(copy)
    assert result.returncode != 0
    assert "no import cycle between the modules of one package, at any depth BROKEN" in result.stdout


BLOCK_HELM = textwrap.dedent(
    """
    import importlib, pkgutil, sys

    class BlockHelm:
        def find_spec(self, name, path=None, target=None):
            if name == "helm" or name.startswith("helm."):
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
            return None

    sys.meta_path.insert(0, BlockHelm())
    import helm_mtsamples_ext
    for folder in sys.argv[1:]:
        package = importlib.import_module("helm_mtsamples_ext." + folder.replace("/", "."))
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    print("imported", len([m for m in sys.modules if m.startswith("helm_mtsamples_ext.")]))
    """
)


def test_the_core_imports_with_helm_missing() -> None:
    """What the contract says, run: every module of the HELM-free folders imports on a Python where ``helm`` is
    not importable at all."""
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_HELM, *HELM_FREE],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.split()[-1]) > 60


def test_the_contracts_name_every_door() -> None:
    """A new top-level module is a door: the contract keeping doors on top must name it, or nothing stops a
    layer below from importing it. ``names`` and ``_version`` are no doors: names and a version, importing nothing."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (doors_on_top,) = [c for c in config["contracts"] if c["id"] == "doors-on-top"]
    top = {
        f"{PACKAGE}.{p.stem}" for p in (REPO / PACKAGE).glob("*.py") if p.stem not in ("__init__", "names", "_version")
    }
    assert set(doors_on_top["forbidden_modules"]) == top
