"""HELM's prompt truncation for the tests' offline model, done in log time instead of quadratic time: loaded into
every HELM binary the end-to-end tests run (``user_env`` in tests/e2e/helm_tools.py puts this folder on
PYTHONPATH, and Python imports ``sitecustomize`` at start-up).

Why: the tests' model under test is HELM's offline ``simple/model1``, whose tokenizer (``simple/tokenizer1``) makes
one token of each character, in a 2,048-token window. Most notes' prompts are longer, and HELM's
``LocalWindowService.truncate_from_right`` drops one character at a time, tokenizing the whole prompt again each
time: about 7 s of CPU per note and run, most of an end-to-end test's time (CI's two cores spent most of their
time there). Here the same prefix is found by bisection with HELM's own predicate, ``fits_within_context_window``:
both return the longest prefix that fits, because with a character tokenizer a prefix fits exactly when it is short
enough. Every other tokenizer keeps HELM's loop. tests/e2e/test_helm_site.py checks, on both HELMs, that the cut is
HELM's own on every synthetic note and a pinned one, and that a HELM binary run by the tests loads this.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

MODULE = "helm.benchmark.window_services.local_window_service"
BISECTED_TOKENIZERS = frozenset({"simple/tokenizer1"})
"""Tokenizers of one token per character, where fitting is monotone in a prefix's length."""

Truncate = Callable[[Any, str, int], str]


def bisected(original: Truncate) -> Truncate:
    """HELM's ``truncate_from_right``, the character-by-character loop replaced by bisection for ``simple/``."""

    def truncate_from_right(self: Any, text: str, expected_completion_token_length: int = 0) -> str:
        if self.tokenizer_name not in BISECTED_TOKENIZERS:
            return original(self, text, expected_completion_token_length)
        max_length = self.max_request_length - expected_completion_token_length
        result: str = self.decode(self.encode(text, truncation=True, max_length=max_length).tokens)
        if self.fits_within_context_window(result, expected_completion_token_length):
            return result
        fits, too_long = 0, len(result)  # the empty prefix fits (HELM's loop would not end otherwise)
        while too_long - fits > 1:
            middle = (fits + too_long) // 2
            if self.fits_within_context_window(result[:middle], expected_completion_token_length):
                fits = middle
            else:
                too_long = middle
        return result[:fits]

    truncate_from_right.__wrapped__ = original  # type: ignore[attr-defined]
    return truncate_from_right


def patch(module: ModuleType) -> None:
    window_service = module.LocalWindowService
    if not hasattr(window_service.truncate_from_right, "__wrapped__"):
        window_service.truncate_from_right = bisected(window_service.truncate_from_right)


class PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches HELM's module when it is first imported, and imports nothing of HELM before that."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module: ModuleType) -> None:
            exec_module(module)
            patch(module)

        loader.exec_module = exec_and_patch  # type: ignore[method-assign]
        return spec


if __name__ == "sitecustomize":  # Python's start-up (PYTHONPATH), not a test importing bisected()
    if MODULE in sys.modules:  # pragma: no cover - nothing imports HELM before sitecustomize
        patch(sys.modules[MODULE])
    else:
        sys.meta_path.insert(0, PatchOnImport())
