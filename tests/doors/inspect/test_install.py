"""`pip install -e '.[inspect]'` beside Inspect, as the README's set-up line runs it: no file of inspect-ai (or of
the openai SDK its provider uses) changes, their versions stay, and no HELM distribution comes with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installed_files import unchanged_after_install, versions

pytestmark = pytest.mark.inspect

REPO = Path(__file__).resolve().parents[3]
HARNESS = ("inspect_ai", "openai")


def test_installing_the_inspect_extra_leaves_inspect_as_installed_and_brings_no_helm() -> None:
    assert set(versions(HARNESS)) == set(HARNESS), "the harness is installed"
    assert unchanged_after_install(REPO, "inspect", HARNESS) == []
