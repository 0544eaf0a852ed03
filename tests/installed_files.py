"""What pip installed, read back from its RECORD: for the tests that install our package beside a harness (HELM,
Inspect, verifiers) and must show that no file of that harness changed and no HELM came with it.

Pure metadata (importlib.metadata), no HELM import: every venv's tests use it."""

from __future__ import annotations

import base64
import hashlib
from importlib import metadata
from pathlib import Path

HELMS = ("crfm-helm", "medhelm")


def changed_files(distribution: metadata.Distribution) -> list[str]:
    """Files of the distribution whose bytes differ from its RECORD (what pip installed)."""
    changed = []
    for file in distribution.files or []:
        if file.hash is None:
            continue
        path = Path(str(file.locate()))
        if not path.exists():
            changed.append(f"{file} (missing)")
            continue
        digest = hashlib.new(file.hash.mode, path.read_bytes()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != file.hash.value:
            changed.append(str(file))
    return changed


def versions(names: tuple[str, ...]) -> dict[str, str]:
    """The installed versions of those of ``names`` that are installed."""
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found
