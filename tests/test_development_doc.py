"""docs/development.md keeps up with the package: its module map names every module and only those. And
docs/dependencies.md says why each dependency is there. (The layers and the import cycles are import-linter's:
tests/test_layers.py.)"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "development.md"


def section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def mapped_modules() -> list[str]:
    """The first cell of each row of the map's tables: `helm_mtsamples_ext/...py`."""
    text = section(DOC.read_text(encoding="utf-8"), "## Module map")
    return re.findall(r"^\| `(helm_mtsamples_ext/[\w/]+\.py)` \|", text, re.M)


def package_modules() -> set[str]:
    return {
        p.relative_to(REPO).as_posix()
        for p in (REPO / "helm_mtsamples_ext").rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    }


def test_every_module_of_the_package_has_its_line_in_the_map() -> None:
    missing = sorted(package_modules() - set(mapped_modules()))
    assert not missing, f"docs/development.md's module map lacks {', '.join(missing)}: add `| `path` | what it holds |`"


def test_the_map_names_no_module_that_is_gone() -> None:
    gone = sorted(set(mapped_modules()) - package_modules())
    assert not gone, f"docs/development.md's module map names {', '.join(gone)}, which no longer exist: drop the line"


def test_the_map_names_each_module_once() -> None:
    names = mapped_modules()
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"docs/development.md's module map names {', '.join(twice)} more than once"


def dependencies() -> list[str]:
    """Every package setup.cfg names: install_requires and the extras (type stubs aside)."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    specs = config["options"]["install_requires"].split() + [
        spec for extra in config["options.extras_require"].values() for spec in extra.split()
    ]
    names = {re.split(r"[\[<>=~!;]", spec, maxsplit=1)[0] for spec in specs}
    return sorted(name for name in names if not name.startswith(("types-", "#")))


@pytest.mark.parametrize("package", dependencies())
def test_the_docs_say_why_each_dependency_is_there(package: str) -> None:
    table = (REPO / "docs" / "dependencies.md").read_text(encoding="utf-8")
    assert re.search(rf"^\|[^|\n]*`{re.escape(package)}(\[\w+\])?`", table, re.M), (
        f"docs/dependencies.md's table does not say why {package} is there"
    )
