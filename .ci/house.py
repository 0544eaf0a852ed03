"""The house drawn from its imports: the package's modules, their sizes, and the import edges between them.

    python3 .ci/house.py            # modules, lines, largest module and class, arrows, floors, cycle
    python3 .ci/house.py --floors   # also the modules on each floor, top first
    python3 .ci/house.py --arrows   # also every arrow, importer -> imported, one a line

Only imports within ``helm_mtsamples_ext`` count (absolute or relative, at module level or inside a function),
read with ``ast``: nothing is imported, so it runs with the system's python3 and no venv. A module is any .py file
under the package, ``__init__`` and ``__main__`` included. Floors are the nodes on the longest import path (a
module importing nothing of ours is on floor 1). docs/development.md quotes this output, and
tests/test_development_doc.py uses ``house()`` to keep the graph free of cycles and of upward imports.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "helm_mtsamples_ext"


@dataclass
class House:
    lines: dict[str, int] = field(default_factory=dict)  # dotted module name -> lines in its file
    paths: dict[str, Path] = field(default_factory=dict)  # dotted module name -> file, relative to the checkout
    classes: dict[str, int] = field(default_factory=dict)  # module.Class -> lines of its body, decorators included
    arrows: set[tuple[str, str]] = field(default_factory=set)  # (importer, imported)

    def imported_by(self, module: str) -> set[str]:
        return {b for a, b in self.arrows if a == module}


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.AST, importer: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules of ours one import statement names: ``from pkg import mod`` names mod, else pkg."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return {_deepest_module(name, modules) for name in names if name.split(".")[0] == PACKAGE} - {""}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level:
        base = importer.split(".") if is_package else importer.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    if source.split(".")[0] != PACKAGE:
        return set()
    found = set()
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        found.add(sub if sub in modules else _deepest_module(source, modules))
    return found - {""}


def _deepest_module(name: str, modules: set[str]) -> str:
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts)


def house(root: Path = ROOT) -> House:
    files = sorted((root / PACKAGE).rglob("*.py"))
    result = House()
    modules = {module_name(f, root) for f in files}
    for path in files:
        name = module_name(path, root)
        text = path.read_text(encoding="utf-8")
        result.lines[name] = len(text.splitlines())
        result.paths[name] = path.relative_to(root)
        tree = ast.parse(text, filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                result.classes[f"{name}.{node.name}"] = (node.end_lineno or node.lineno) - first + 1
            for target in _targets(node, name, path.name == "__init__.py", modules):
                if target != name:
                    result.arrows.add((name, target))
    return result


def cycle(h: House) -> list[str]:
    """One import cycle as a list of modules (first repeated last), or [] when the graph is a DAG."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(h.imported_by(node)):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for start in sorted(h.lines):
        if start not in state and (found := visit(start)):
            return found
    return []


def floor_of(h: House) -> dict[str, int]:
    """Each module's floor: 1 + the highest floor it imports (the graph must have no cycle)."""
    memo: dict[str, int] = {}

    def height(node: str) -> int:
        if node not in memo:
            memo[node] = 1 + max((height(n) for n in h.imported_by(node)), default=0)
        return memo[node]

    return {m: height(m) for m in h.lines}


def floors(h: House) -> int:
    """Nodes on the longest import path."""
    return max(floor_of(h).values(), default=0)


def report(h: House) -> list[str]:
    biggest = max(h.lines, key=lambda m: h.lines[m])
    klass = max(h.classes, key=lambda c: h.classes[c])
    loop = cycle(h)
    return [
        f"modules: {len(h.lines)} ({PACKAGE}/, subpackages included, __init__ and __main__ counted)",
        f"lines: {sum(h.lines.values())}",
        f"largest module: {h.paths[biggest].as_posix()} ({h.lines[biggest]} lines)",
        f"largest class: {klass} ({h.classes[klass]} lines)",
        f"arrows: {len(h.arrows)}",
        f"floors: {floors(h) if not loop else 'undefined (cycle)'}",
        f"cycle: {' -> '.join(loop) if loop else 'none'}",
    ]


def by_floor(h: House) -> list[str]:
    """One line per floor, top first: the modules on it, short names (package prefix dropped)."""
    floor = floor_of(h)
    short = {m: m.removeprefix(PACKAGE).lstrip(".") or "__init__" for m in h.lines}
    return [
        f"floor {n:>2}: " + " ".join(sorted(short[m] for m in floor if floor[m] == n))
        for n in sorted(set(floor.values()), reverse=True)
    ]


if __name__ == "__main__":
    options = sys.argv[1:]
    if not set(options) <= {"--arrows", "--floors"}:
        raise SystemExit("usage: python3 .ci/house.py [--floors] [--arrows]")
    found = house()
    print("\n".join(report(found)))
    if "--floors" in options and not cycle(found):
        print("\n".join(by_floor(found)))
    if "--arrows" in options:
        print("\n".join(f"{a} -> {b}" for a, b in sorted(found.arrows)))
