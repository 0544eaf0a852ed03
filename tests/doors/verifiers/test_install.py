"""`pip install -e '.[verifiers]'` beside MedARC's harness, as the README's set-up line runs it: no file of verifiers,
medarc-verifiers or datasets changes, their versions stay, and no HELM distribution comes with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installed_files import unchanged_after_install, versions

pytestmark = pytest.mark.verifiers

REPO = Path(__file__).resolve().parents[3]
HARNESS = ("verifiers", "medarc-verifiers", "datasets")


def test_installing_the_verifiers_extra_leaves_the_harness_as_installed_and_brings_no_helm() -> None:
    assert set(versions(HARNESS)) == set(HARNESS), "the harness is installed"
    assert unchanged_after_install(REPO, "verifiers", HARNESS) == []
