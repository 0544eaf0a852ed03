"""The rules that decide where a test runs (tests/collection_rules.py): which modules need HELM, read from the
source, and the one-line errors that stop collection when a marker is missing, superfluous or misplaced, or a test
module imports another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.collection_rules import CollectedModule, rule_breaks, shown
from tests.import_graph import PACKAGE, ROOT, Graph


def plant(root: Path, files: dict[str, str]) -> Path:
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def graph() -> Graph:
    """This checkout's package and tests, read once."""
    return Graph()


@pytest.fixture
def package(tmp_path: Path) -> Graph:
    """A package of the same name with every way of reaching HELM, and the ways that do not."""
    plant(tmp_path / PACKAGE, {
        "__init__.py": 'import sys\nif "helm.benchmark.run_spec" in sys.modules:\n    from . import door\n',
        "door.py": "from helm.common.general import parse_hocon\n",
        "lazy.py": "def f():\n    from helm_mtsamples_ext import door\n",
        "deep.py": "from .lazy import f\n",
        "optional.py": "try:\n    from helm.common import hierarchical_logger\nexcept ImportError:\n    pass\n",
        "pure.py": "from helm_mtsamples_ext import optional, names\n",
        "names.py": "import json\n",
        "wing/__init__.py": "from helm_mtsamples_ext.wing import client\n",
        "wing/client.py": "import helm\n",
        "wing/reply.py": "import re\n",
    })  # fmt: skip
    return Graph(root=tmp_path)


def test_a_module_needs_helm_through_any_import_at_any_depth_lazily_or_not(package: Graph) -> None:
    via = package.helm_via
    assert via[f"{PACKAGE}.door"] == "helm"
    assert package.helm_chain(frozenset({f"{PACKAGE}.deep"})) == [
        f"{PACKAGE}.deep", f"{PACKAGE}.lazy", f"{PACKAGE}.door", "helm"
    ]  # fmt: skip


def test_an_optional_import_or_one_run_only_when_helm_is_loaded_does_not_count(package: Graph) -> None:
    for module in ("optional", "pure", "names", ""):
        assert f"{PACKAGE}.{module}".rstrip(".") not in package.helm_via


def test_a_submodule_needs_what_its_packages_init_imports(package: Graph) -> None:
    """Importing wing.reply runs wing/__init__.py first, which imports the HELM client."""
    imports = package.read(f"from {PACKAGE}.wing import reply\n", "test_x")
    assert package.helm_chain(imports) == [f"{PACKAGE}.wing", f"{PACKAGE}.wing.client", "helm"]


def test_on_this_package_the_doors_need_helm_and_names_does_not(graph: Graph) -> None:
    via = graph.helm_via
    assert {f"{PACKAGE}.{door}" for door in ("annotator", "metric", "scenario", "run_spec", "plugin")} <= set(via)
    assert f"{PACKAGE}.names" not in via and f"{PACKAGE}.common.rubric" not in via


def planted(tmp_path: Path, source: str, marked: bool = False, e2e: tuple[str, ...] = ()) -> CollectedModule:
    path = plant(tmp_path, {"test_planted.py": source}) / "test_planted.py"
    return CollectedModule(path, tests=2, marked_helm=2 if marked else 0, marked_e2e=list(e2e))


@pytest.mark.parametrize(
    ("source", "through"),
    [
        ("import helm\n", "helm"),
        ("def test():\n    from helm.common.request import Request\n", "helm"),
        (f"from {PACKAGE}.annotator import JudgeAnnotator\n", f"{PACKAGE}.annotator -> helm"),
    ],
    ids=["helm", "helm, lazily", "a module of ours that imports helm"],
)
def test_a_test_module_reaching_helm_without_the_marker_is_one_line_naming_it_and_the_fix(
    tmp_path: Path, source: str, through: str, graph: Graph
) -> None:
    (line,) = rule_breaks(planted(tmp_path, source), graph)
    assert line == (
        f"{shown(tmp_path / 'test_planted.py')} imports {through} without the helm marker: add "
        "`pytestmark = pytest.mark.helm` below its imports (it then runs on both HELMs)"
    )
    assert rule_breaks(planted(tmp_path, source, marked=True), graph) == []


def test_a_marker_on_a_module_that_needs_nothing_of_helm_is_one_line(graph: Graph) -> None:
    module = CollectedModule(ROOT / "tests" / "test_collection_rules.py", tests=3, marked_helm=1)
    (line,) = rule_breaks(module, graph)
    assert line.startswith("tests/test_collection_rules.py is marked helm but imports nothing that needs HELM: drop")


def test_e2e_is_the_folder(tmp_path: Path, graph: Graph) -> None:
    outside = planted(tmp_path, "import json\n", e2e=("test_runs_helm",))
    assert rule_breaks(outside, graph) == [
        f"{shown(tmp_path / 'test_planted.py')}::test_runs_helm is marked e2e outside tests/e2e/: move it into a file "
        "under tests/e2e/ (the folder is the marker)"
    ]
    assert rule_breaks(outside, graph, e2e_dir=tmp_path) == []


def test_a_doors_tests_keep_no_helm_marker_rule(tmp_path: Path, graph: Graph) -> None:
    """tests/doors/<door>/ runs in the door's venv, without HELM: a module of ours reaching HELM on a path the door
    never takes does not make its tests HELM tests."""
    module = planted(tmp_path, f"from {PACKAGE}.annotator import JudgeAnnotator\n")
    assert rule_breaks(module, graph, doors_dir=tmp_path) == []
    assert len(rule_breaks(module, graph)) == 1


def test_a_test_module_importing_another_is_one_line(tmp_path: Path, graph: Graph) -> None:
    (line,) = rule_breaks(planted(tmp_path, "from tests.judges.helm_calls.test_call import posts\n"), graph)
    planted_at = shown(tmp_path / "test_planted.py")
    assert line.startswith(f"{planted_at} imports the test module tests.judges.helm_calls.test_call: move")


def test_this_suites_helpers_import_no_test_module(graph: Graph) -> None:
    helpers = [name for name in graph.paths if name.startswith("tests.") and "test_" not in name.rpartition(".")[2]]
    assert "tests.judges.callers" in helpers
    assert not [(h, i) for h in helpers for i in graph.imports[h] if i.rpartition(".")[2].startswith("test_")]


def collect(directory: Path) -> subprocess.CompletedProcess[str]:
    """pytest collecting ``directory`` with only the rules' hook of this suite (its rootdir is the planted one)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.collection_rules", "--collect-only", "-q", "-p",
         "no:cacheprovider", str(directory)],
        cwd=directory, env={"PYTHONPATH": str(ROOT), "PATH": ""}, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


def test_a_planted_module_importing_helm_without_the_marker_fails_collection(tmp_path: Path) -> None:
    """Lazily, through a module of ours: nothing runs at collection, and the rule still sees it."""
    plant(
        tmp_path,
        {"test_planted.py": "def test_x():\n    from helm_mtsamples_ext.judges.helm_calls.call import JudgeCaller\n"},
    )
    failed = collect(tmp_path)
    assert failed.returncode == pytest.ExitCode.USAGE_ERROR, failed.stdout + failed.stderr
    (line,) = [line for line in failed.stderr.splitlines() if line.strip()]
    assert line.startswith(f"ERROR: {shown(tmp_path / 'test_planted.py')} imports {PACKAGE}.judges.helm_calls.call -> ")
    assert line.endswith("without the helm marker: add `pytestmark = pytest.mark.helm` below its imports (it then "
                         "runs on both HELMs)")  # fmt: skip

    source = (tmp_path / "test_planted.py").read_text()
    (tmp_path / "test_planted.py").write_text(f"import pytest\n{source}\npytestmark = pytest.mark.helm\n")
    passed = collect(tmp_path)
    assert passed.returncode == pytest.ExitCode.OK, passed.stdout + passed.stderr
    assert "1 test collected" in passed.stdout
