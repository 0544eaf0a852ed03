"""What a module imports and which of the package's modules need HELM, read from the source with ``ast``.

Nothing is imported, so the answer is the same on every HELM and costs a parse of each file. Every import
statement counts, at module level or inside a function, with two exceptions that describe code which runs
the same without the imported module:

- an import in a ``try`` whose handler catches ``ImportError`` (or ``ModuleNotFoundError``) is optional: the
  module works without it (a logger that falls back to Python's logging);
- an import under ``if "helm..." in sys.modules`` runs only when HELM is already loaded, so it adds nothing.

Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so those count as imported too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "helm_mtsamples_ext"
HELM = "helm"
OPTIONAL_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def module_name(path: Path, root: Path = ROOT) -> str:
    """``tests/judges/helm_calls/test_call.py`` -> ``tests.judges.helm_calls.test_call``; a package's ``__init__`` is
    the package."""
    parts = list(path.resolve().relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_optional(handlers: list[ast.ExceptHandler]) -> bool:
    names: set[str] = set()
    for handler in handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names.update(kind.id for kind in kinds if isinstance(kind, ast.Name))
    return bool(names & OPTIONAL_IMPORT_ERRORS)


def _only_when_helm_is_loaded(test: ast.expr) -> bool:
    """``"helm.x" in sys.modules``."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Constant)
        and isinstance(test.left.value, str)
        and test.left.value.split(".")[0] == HELM
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In)
        and ast.unparse(test.comparators[0]) == "sys.modules"
    )


def _import_statements(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node`` that runs whatever is installed."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
        return
    if isinstance(node, ast.Try) and _is_optional(node.handlers):
        children: list[ast.AST] = [*node.handlers, *node.orelse, *node.finalbody]
    elif isinstance(node, ast.If) and _only_when_helm_is_loaded(node.test):
        children = list(node.orelse)
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from _import_statements(child)


def imported_names(source: str, name: str, is_package: bool) -> set[str]:
    """The absolute dotted names a module's imports name: ``from a.b import c`` names both ``a.b`` and ``a.b.c``
    (c may be a module or a name in a.b; the graph keeps what exists)."""
    found: set[str] = set()
    for node in _import_statements(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = name.split(".") if is_package else name.split(".")[:-1]
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        found.add(base)
        found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _is_helper(name: str) -> bool:
    """A module of tests/ that is neither a test module nor a conftest: what test modules share."""
    parts = name.split(".")
    return parts[0] == "tests" and not parts[-1].startswith("test_") and parts[-1] != "conftest"


@dataclass
class Graph:
    """The modules under ``roots`` (each a top-level package of the checkout) and what each imports: modules of
    the graph by dotted name, anything else by its top-level name (``helm``)."""

    root: Path = ROOT
    roots: tuple[str, ...] = (PACKAGE, "tests")
    paths: dict[str, Path] = field(default_factory=dict)
    imports: dict[str, frozenset[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        files = [p for top in self.roots for p in sorted((self.root / top).rglob("*.py"))]
        self.paths = {module_name(p, self.root): p for p in files}
        for name, path in self.paths.items():
            self.imports[name] = self.read(path.read_text(encoding="utf-8"), name, path.name == "__init__.py")

    def read(self, source: str, name: str, is_package: bool = False) -> frozenset[str]:
        """What a module of this source imports, resolved against the graph's modules."""
        resolved: set[str] = set()
        for dotted in imported_names(source, name, is_package):
            parts = dotted.split(".")
            if parts[0] not in self.roots:
                resolved.add(parts[0])
                continue
            resolved.update(".".join(parts[:n]) for n in range(1, len(parts) + 1) if ".".join(parts[:n]) in self.paths)
        return frozenset(resolved - {name})

    @cached_property
    def helm_via(self) -> dict[str, str]:
        """Each module of the package that needs HELM, and the import through which it does (``helm`` itself
        or another module of the package in this map): the fixpoint, so an import cycle hides nothing."""
        via: dict[str, str] = {}
        package = [m for m in self.paths if m.split(".")[0] == PACKAGE or _is_helper(m)]
        changed = True
        while changed:
            changed = False
            for module in package:
                if module in via:
                    continue
                imported = sorted(self.imports[module])
                reason = HELM if HELM in imported else next((m for m in imported if m in via), None)
                if reason:
                    via[module] = reason
                    changed = True
        return via

    def helm_chain(self, imports: frozenset[str]) -> list[str] | None:
        """How a module with these imports reaches HELM: ``["helm"]`` or ``[our module, ..., "helm"]``; None when
        it does not. The package's modules are followed, and the helper modules of tests/ (a test that builds its
        suite with HELM's classes through a helper meets HELM's differences as surely as one importing them)."""
        if HELM in imports:
            return [HELM]
        start = next((m for m in sorted(imports) if m in self.helm_via), None)
        if start is None:
            return None
        chain = [start]
        while chain[-1] != HELM:
            chain.append(self.helm_via[chain[-1]])
        return chain
