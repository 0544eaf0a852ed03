"""What pip installed, read back from its RECORD: for the tests that install our package beside a harness (HELM,
Inspect, verifiers) and must show that no file of that harness changed and no HELM came with it.

Pure metadata (importlib.metadata), no HELM import: every venv's tests use it."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
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


def unchanged_after_install(repo: Path, extra: str, harness: tuple[str, ...]) -> list[str]:
    """`pip install -e 'repo[extra]'` in this venv, as the README's set-up line runs it; what it changed of
    ``harness`` (its files against pip's RECORD, its versions) and whether a HELM came with it, as lines (none: all
    as installed). A failed install is one line too."""
    before = versions(harness)
    problems = [
        f"{f} changed before the install" for name in before for f in changed_files(metadata.distribution(name))
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "-e", f"{repo}[{extra}]"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        return [*problems, f"pip install failed: {done.stderr[-2000:]}"]
    after = versions(harness)
    problems += [
        f"{name} {before.get(name)} became {after.get(name)}" for name in harness if after.get(name) != before.get(name)
    ]
    problems += [f"{f} changed by the install" for name in after for f in changed_files(metadata.distribution(name))]
    problems += [f"{name} {version} came with it" for name, version in versions(HELMS).items()]
    return problems
