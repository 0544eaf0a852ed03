"""`pip install -e '.[inspect]'` beside Inspect, as the README's set-up line runs it: no file of inspect-ai (or of
the openai SDK its provider uses) changes, their versions stay, and no HELM distribution comes with it."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.installed_files import HELMS, changed_files, versions

pytestmark = pytest.mark.inspect

REPO = Path(__file__).resolve().parents[3]
HARNESS = ("inspect_ai", "openai")


def test_installing_the_inspect_extra_leaves_inspect_as_installed_and_brings_no_helm() -> None:
    before = versions(HARNESS)
    assert set(before) == set(HARNESS) and versions(HELMS) == {}
    assert [f for name in HARNESS for f in changed_files(metadata.distribution(name))] == []
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "-e", f"{REPO}[inspect]"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert versions(HARNESS) == before
    assert [f for name in HARNESS for f in changed_files(metadata.distribution(name))] == []
    assert versions(HELMS) == {}, "the Inspect door needs no HELM"
