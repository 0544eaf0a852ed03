"""The judge side never imports the metric side: the judges read the rubric from rubric.py.

A judge's prompt and the reading of its verdict must not depend on how the reward is computed, and the
metric must stay free to change without touching the judges. Read from the source (ast), so an import inside
a function counts too, and followed through the package's other modules, so no detour hides one.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import helm_mtsamples_ext

PACKAGE_DIR = Path(helm_mtsamples_ext.__file__).parent
PACKAGE = PACKAGE_DIR.name
METRIC_SIDE = (f"{PACKAGE}.scoring.reward", f"{PACKAGE}.metric")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}
JUDGES = sorted(name for name in MODULES if name.startswith(f"{PACKAGE}.judges"))


@cache
def imported_by(module: str) -> frozenset[str]:
    """The package's modules that ``module`` imports anywhere in its source (``from x import y`` counts as x and,
    when y is a module, as x.y)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(name for name in found if name in MODULES)


def chain_to_metric_side(start: str) -> list[str] | None:
    """The import chain from ``start`` to scoring or metric, or None when there is none."""
    came_from: dict[str, str] = {}
    todo, seen = [start], {start}
    while todo:
        module = todo.pop()
        for imported in sorted(imported_by(module)):
            if imported in seen:
                continue
            came_from[imported] = module
            if imported in METRIC_SIDE:
                chain = [imported]
                while chain[-1] != start:
                    chain.append(came_from[chain[-1]])
                return chain[::-1]
            seen.add(imported)
            todo.append(imported)
    return None


def test_the_judges_wing_is_found() -> None:
    assert f"{PACKAGE}.judges.prompt" in JUDGES and f"{PACKAGE}.judges.formats" in JUDGES
    assert all(side in MODULES for side in METRIC_SIDE)


@pytest.mark.parametrize("module", JUDGES)
def test_no_judges_module_imports_scoring_or_metric(module: str) -> None:
    assert not set(imported_by(module)) & set(METRIC_SIDE), f"{module} imports the metric side"


@pytest.mark.parametrize("module", JUDGES)
def test_no_judges_module_reaches_scoring_or_metric_through_another_module(module: str) -> None:
    chain = chain_to_metric_side(module)
    assert chain is None, " imports ".join(chain)


def test_the_check_sees_an_import_of_the_metric_side() -> None:
    """The checker itself: the metric module imports scoring, so a chain from it is found."""
    assert chain_to_metric_side(f"{PACKAGE}.metric") == [f"{PACKAGE}.metric", f"{PACKAGE}.scoring.reward"]
    assert f"{PACKAGE}.scoring.reward" in imported_by(f"{PACKAGE}.metric")
