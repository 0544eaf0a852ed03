"""common/log.py: the core's log lines go through HELM's logger when HELM is there, through logging when not."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helm_mtsamples_ext.common import log

pytestmark = pytest.mark.helm

REPO = Path(__file__).resolve().parents[2]


def test_with_helm_the_lines_go_through_helms_logger(monkeypatch: pytest.MonkeyPatch) -> None:
    from helm.common import hierarchical_logger

    assert log._helm_or_logging() == (hierarchical_logger.hlog, hierarchical_logger.hwarn)
    said: list[tuple[str, object]] = []
    monkeypatch.setattr(log, "_LOG", lambda x, **kw: said.append(("log", x)))
    monkeypatch.setattr(log, "_WARN", lambda x, **kw: said.append(("warn", x)))
    log.hlog("fetching")
    log.hwarn("careful")
    assert said == [("log", "fetching"), ("warn", "careful")]


def test_without_helm_a_log_call_works_through_pythons_logging() -> None:
    code = textwrap.dedent(
        """
        import logging, sys

        class BlockHelm:
            def find_spec(self, name, path=None, target=None):
                if name == "helm" or name.startswith("helm."):
                    raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
                return None

        sys.meta_path.insert(0, BlockHelm())
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s", stream=sys.stdout)
        from helm_mtsamples_ext.common.log import hlog, hwarn
        hlog("fetching 3 notes")
        hwarn("a custom manifest is set")
        print("helm" in sys.modules)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "INFO helm_mtsamples_ext fetching 3 notes",
        "WARNING helm_mtsamples_ext a custom manifest is set",
        "False",
    ]


def test_the_fallback_logger_is_the_packages() -> None:
    assert logging.getLogger("helm_mtsamples_ext") is log._FALLBACK
