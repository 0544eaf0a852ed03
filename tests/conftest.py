"""Shared fixtures.

The pinned notes come from `../shared` when the checkout sits beside it (CI, developers); a
user's clone has no `../shared`, so there the notes are fetched the way a user gets them, with
the package's own downloader. Never a silent skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helm_mtsamples_ext.data import DEFAULT_BASE_URL, PINNED_COMMIT, ensure_notes

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_NOTES = REPO_ROOT.parent / "shared" / "data" / "mtsamples_procedures" / PINNED_COMMIT


@pytest.fixture(scope="session")
def pinned_notes_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the 429 pinned notes under their original file names."""
    if SHARED_NOTES.is_dir():
        return SHARED_NOTES
    cache = tmp_path_factory.mktemp("pinned_notes")
    ensure_notes(cache, base_url=DEFAULT_BASE_URL)
    return cache
