"""Shared fixtures: the notes; and the rules of the ``helm`` and ``e2e`` markers, checked at collection
(``tests/collection_rules.py``).

- ``pinned_notes_dir``: the 429 pinned notes, for the tests that check the real data only. Found as a user
  finds them (``tests/pinned_notes.py``: ``MTSAMPLES_PROCEDURES_BASE_URL``, else ``../shared``, else GitHub);
  when none is reachable the test skips with one line saying how to supply them, and under ``CI=true``
  fails with it, so CI always checks the real data.
- ``synthetic_notes`` / ``synthetic_notes_dir`` / ``synthetic_notes_env``: a dozen synthetic notes written by
  the session (``tests/synthetic_notes.py``), for everything else; ``synthetic_notes_env`` is what a user
  would set to load them from a loopback mirror (base URL and ``MTSAMPLES_PROCEDURES_MANIFEST``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from helm_mtsamples_ext.data.notes import DataError
from tests.collection_rules import pytest_collection_modifyitems  # noqa: F401  (the markers' rules, checked)
from tests.pinned_notes import NotesUnavailable, locate_pinned_notes
from tests.synthetic_notes import SyntheticNotes, write_synthetic_notes

settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")
"""Tests never time things: Hypothesis's per-example deadline (200 ms) failed a property test whose first example
took 1.06 s on a loaded 2-core CI machine. Each example's assertions are what a property test checks."""

SESSION_MIRROR_LIFETIME = 4 * 3600.0
"""A bound on the session mirror's serve loop, beyond any test session."""


@pytest.fixture(scope="session")
def pinned_notes_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the 429 pinned notes under their original file names."""
    try:
        return locate_pinned_notes(tmp_path_factory.mktemp("pinned_notes"))
    except DataError as e:
        pytest.fail(str(e), pytrace=False)
    except NotesUnavailable as e:
        if os.environ.get("CI", "").strip().lower() in ("true", "1"):
            pytest.fail(str(e), pytrace=False)
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def synthetic_notes(tmp_path_factory: pytest.TempPathFactory) -> SyntheticNotes:
    return write_synthetic_notes(tmp_path_factory.mktemp("synthetic_notes"))


@pytest.fixture(scope="session")
def synthetic_notes_dir(synthetic_notes: SyntheticNotes) -> Path:
    """Only the synthetic notes, under their file names (``synthetic_notes.manifest`` lists them)."""
    return synthetic_notes.directory


@pytest.fixture(scope="session")
def synthetic_notes_env(synthetic_notes: SyntheticNotes) -> Iterator[dict[str, str]]:
    """``MTSAMPLES_PROCEDURES_BASE_URL`` (a loopback mirror of the synthetic notes, for the session) and
    ``MTSAMPLES_PROCEDURES_MANIFEST``: pass to ``user_env(**...)`` or set them with monkeypatch."""
    with synthetic_notes.mirror(max_lifetime=SESSION_MIRROR_LIFETIME) as mirror:
        yield mirror.env
