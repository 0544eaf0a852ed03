"""The end-to-end tests' shared fixture: a loopback mirror of the session's synthetic notes, one per test file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.mirror import NoteMirror
from tests.synthetic_notes import SyntheticNotes


@pytest.fixture(scope="module")
def mirror(synthetic_notes: SyntheticNotes) -> Iterator[NoteMirror]:
    with synthetic_notes.mirror() as m:
        yield m
