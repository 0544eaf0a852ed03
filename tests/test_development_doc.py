"""docs/development.md keeps up with the house: its module map names every module and only those, its
measurements are the ones .ci/house.py prints, the imports have no cycle and the wings never import a front
door. And the README says why each dependency is there."""

from __future__ import annotations

import configparser
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "development.md"
FRONT_DOORS = ("annotator", "metric", "run_spec", "scenario", "plugin")
WINGS = ("judges", "report")


def _house_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("house", REPO / ".ci" / "house.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("house", module)
    spec.loader.exec_module(module)
    return module


house = _house_module()


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


def test_the_imports_have_no_cycle() -> None:
    loop = house.cycle(house.house())
    assert not loop, f"import cycle: {' -> '.join(loop)}"


def test_the_wings_never_import_a_front_door() -> None:
    """judges/ and report/ sit behind the doors: the doors import them, never the other way round."""
    doors = {f"{house.PACKAGE}.{name}" for name in FRONT_DOORS}
    wings = tuple(f"{house.PACKAGE}.{wing}." for wing in WINGS)
    upward = sorted(f"{a} -> {b}" for a, b in house.house().arrows if a.startswith(wings) and b in doors)
    assert not upward, f"a wing imports a front door: {'; '.join(upward)}"


def test_the_quoted_measurement_is_what_house_py_prints_now() -> None:
    """Modules, floors, the modules on each floor and the cycle line; lines, arrows and the largest units drift
    with every edit, and the page says to re-run the command for them."""
    (quoted,) = re.findall(r"```\n\$ python3 \.ci/house\.py --floors\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    found = house.house()
    fresh = house.report(found) + house.by_floor(found)

    def kept(lines: list[str]) -> list[str]:
        return [line for line in lines if line.startswith(("modules:", "floors:", "cycle:", "floor "))]

    paste = "paste `python3 .ci/house.py --floors` into docs/development.md:\n" + "\n".join(fresh)
    assert kept(quoted.splitlines()) == kept(fresh), paste


def test_house_py_sees_relative_imports_and_finds_a_cycle(tmp_path: Path) -> None:
    """The two rules above rest on house.py reading every import form: absolute, relative, inside a function."""
    package = tmp_path / house.PACKAGE
    (package / "judges").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "judges" / "__init__.py").write_text("")
    (package / "metric.py").write_text("from helm_mtsamples_ext.judges import call\n")
    (package / "judges" / "call.py").write_text("from . import prompt\n")
    (package / "judges" / "prompt.py").write_text("def f():\n    from .. import metric\n")
    found = house.house(tmp_path)
    assert found.arrows == {
        ("helm_mtsamples_ext.metric", "helm_mtsamples_ext.judges.call"),
        ("helm_mtsamples_ext.judges.call", "helm_mtsamples_ext.judges.prompt"),
        ("helm_mtsamples_ext.judges.prompt", "helm_mtsamples_ext.metric"),
    }
    assert len(house.cycle(found)) == 4
    (package / "judges" / "prompt.py").write_text("")
    assert house.cycle(house.house(tmp_path)) == [] and house.floors(house.house(tmp_path)) == 3


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
def test_the_readme_says_why_each_dependency_is_there(package: str) -> None:
    table = section((REPO / "README.md").read_text(encoding="utf-8"), "## Dependencies")
    assert re.search(rf"^\|[^|\n]*`{re.escape(package)}(\[\w+\])?`", table, re.M), (
        f"README.md's Dependencies table does not say why {package} is there"
    )
