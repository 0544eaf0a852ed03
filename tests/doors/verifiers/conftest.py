"""The verifiers door's tests run only where verifiers is installed (its own venv: `.[verifiers,test]`); the HELM
venvs' runs do not collect them (verifiers and a HELM cannot share a venv: docs in README). ``notes_env``: the
synthetic notes every test of the door loads."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doors.verifiers.door import KEY_VAR
from tests.synthetic_notes import SyntheticNotes

collect_ignore_glob = [] if importlib.util.find_spec("verifiers") else ["test_*.py"]


@pytest.fixture
def notes_env(
    synthetic_notes: SyntheticNotes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dict[str, str]]:
    """The synthetic notes through a loopback mirror, cached in a fresh directory; the model's key variable set."""
    with synthetic_notes.mirror(max_lifetime=300) as mirror:
        for name, value in mirror.env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("MTSAMPLES_PROCEDURES_CACHE_DIR", str(tmp_path / "notes"))
        monkeypatch.setenv(KEY_VAR, "model-key")
        monkeypatch.delenv("JUDGE_API_KEY", raising=False)
        yield mirror.env
