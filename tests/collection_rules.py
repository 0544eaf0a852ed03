"""The rules that decide where a test runs, checked when pytest collects (tests/conftest.py loads the hook).

The suite runs on two HELMs, but most of it never touches a difference between them: the README's medhelm line
runs only ``-m "helm or e2e"``. So the markers must be true, and they are computed rather than trusted:

- ``helm``: a test module that imports ``helm``, or a module of the package that needs HELM (at any depth,
  lazily or not: tests/import_graph.py), carries ``pytestmark = pytest.mark.helm``; one that needs nothing of
  HELM does not (it would run twice for nothing). The package is read, not the helpers of tests/: a helper that
  builds HELM's objects writes what the code under test reads, and the e2e tests read HELM's real output on
  both HELMs.
- ``e2e``: the folder tests/e2e/. Every test in it is marked ``e2e`` and ``helm`` here; a test elsewhere
  marked ``e2e`` is in the wrong place.
- ``tests/doors/<door>/``: a door's tests, run in that door's own venv, where HELM is not installed (each folder's
  conftest leaves them out of every other venv's run; their marker is the door's). The helm marker's rule does not
  apply there: what they import of ours may reach HELM only on paths the door never takes (a HELM-only prompt style).
- A test module never imports another test module (``test_*.py``): what tests share lives in helper modules,
  so running or deleting one file never changes another.

A broken rule fails collection with one line per module, naming it and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.import_graph import ROOT, Graph, module_name

E2E_DIR = ROOT / "tests" / "e2e"
DOORS_DIR = ROOT / "tests" / "doors"
HELM_MARK = "pytestmark = pytest.mark.helm"


@dataclass
class CollectedModule:
    """What collection found in one test file."""

    path: Path
    tests: int = 0
    marked_helm: int = 0  # tests marked helm or e2e by the file itself
    marked_e2e: list[str] = field(default_factory=list)  # names of the tests the file marks e2e


def shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def imports_of(path: Path, graph: Graph) -> frozenset[str]:
    name = module_name(path, graph.root) if path.resolve().is_relative_to(graph.root) else path.stem
    if name in graph.imports:
        return graph.imports[name]
    return graph.read(path.read_text(encoding="utf-8"), name)


def is_test_module(name: str) -> bool:
    return name.rpartition(".")[2].startswith("test_")


def rule_breaks(
    module: CollectedModule, graph: Graph, e2e_dir: Path = E2E_DIR, doors_dir: Path = DOORS_DIR
) -> list[str]:
    """One line per broken rule of one test file; none when it keeps them all."""
    where = shown(module.path)
    imports = imports_of(module.path, graph)
    breaks = [
        f"{where} imports the test module {other}: move what they share into a helper module of tests/ (a name "
        "not starting with test_) and import it from both"
        for other in sorted(imports)
        if is_test_module(other)
    ]
    if module.path.resolve().is_relative_to(e2e_dir.resolve()):
        return breaks
    breaks += [
        f"{where}::{name} is marked e2e outside tests/e2e/: move it into a file under tests/e2e/ (the folder is "
        "the marker)"
        for name in module.marked_e2e
    ]
    if module.path.resolve().is_relative_to(doors_dir.resolve()):
        return breaks
    chain = graph.helm_chain(imports)
    if chain and module.marked_helm < module.tests:
        breaks.append(
            f"{where} imports {' -> '.join(chain)} without the helm marker: add `{HELM_MARK}` below its imports "
            "(it then runs on both HELMs)"
        )
    elif not chain and module.marked_helm:
        breaks.append(
            f"{where} is marked helm but imports nothing that needs HELM: drop the marker so it runs once (a test "
            "that runs HELM's binaries belongs under tests/e2e/)"
        )
    return breaks


def helper_breaks(graph: Graph) -> list[str]:
    """A helper module of tests/ (or a conftest) that imports a test module."""
    return [
        f"{shown(graph.paths[name])} imports the test module {other}: move what it needs into a helper module"
        for name in sorted(graph.paths)
        if name.split(".")[0] == "tests" and not is_test_module(name)
        for other in sorted(graph.imports[name])
        if is_test_module(other)
    ]


def collected(items: Iterable[pytest.Item]) -> list[CollectedModule]:
    """The test files behind the items, with the markers each gives its tests (before the e2e folder adds any)."""
    modules: dict[Path, CollectedModule] = {}
    for item in items:
        module = modules.setdefault(item.path, CollectedModule(item.path))
        module.tests += 1
        marks = {mark.name for mark in item.iter_markers()}
        module.marked_helm += bool(marks & {"helm", "e2e"})
        if "e2e" in marks:
            module.marked_e2e.append(item.name)
    return list(modules.values())


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Check the rules on everything collected, then mark tests/e2e/ (before ``-m`` deselects anything)."""
    graph = Graph()
    breaks = helper_breaks(graph)
    for module in collected(items):
        breaks += rule_breaks(module, graph)
    if breaks:
        raise pytest.UsageError(*breaks)
    for item in items:
        if item.path.resolve().is_relative_to(E2E_DIR):
            item.add_marker(pytest.mark.e2e)
            item.add_marker(pytest.mark.helm)
