"""The core's log lines: through HELM's hierarchical logger when HELM is installed, so they sit indented among
helm-run's own, and through Python's logging otherwise, so data/, scoring/, report/ and common/ run without HELM.

The one module of the core that imports ``helm`` (the import-linter contract "core-without-helm" names it as its
only exception); everything else logs through ``hlog`` and ``hwarn`` here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["hlog", "hwarn"]

_FALLBACK = logging.getLogger("helm_mtsamples_ext")


def _helm_or_logging() -> tuple[Callable[..., None], Callable[..., None]]:
    try:
        from helm.common import hierarchical_logger
    except ImportError:
        return _FALLBACK.info, _FALLBACK.warning
    return hierarchical_logger.hlog, hierarchical_logger.hwarn


_LOG, _WARN = _helm_or_logging()


def hlog(message: Any) -> None:
    """An information line: HELM's ``hlog`` when HELM is installed, else ``logging.info``."""
    _LOG(message, stacklevel=2)


def hwarn(message: Any) -> None:
    """A warning line: HELM's ``hwarn`` when HELM is installed, else ``logging.warning``."""
    _WARN(message, stacklevel=2)
