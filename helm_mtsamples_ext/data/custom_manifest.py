"""Other notes than the pinned 429: ``MTSAMPLES_PROCEDURES_MANIFEST`` names a TSV that replaces the list.

The shipped manifest is what makes a score comparable with MedHELM's: the same 429 files, byte for
byte. Someone with other notes (a private mirror of other transcripts, a corrected set, a test's few
synthetic notes) still wants every byte checked, so rather than switching verification off they name a
manifest of the same shape (``name``, ``bytes``, ``sha256``, tab-separated, with that header); the notes
are fetched from ``MTSAMPLES_PROCEDURES_BASE_URL`` and verified against it, and every load warns that
the results are not the pinned benchmark's. ``python -m helm_mtsamples_ext.custom_manifest`` writes one
(``manifest_for``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from helm_mtsamples_ext.common.log import hwarn
from helm_mtsamples_ext.data.notes import DataError, ManifestEntry, load_manifest, parse_manifest

MANIFEST_ENV = "MTSAMPLES_PROCEDURES_MANIFEST"


class ManifestUnusable(DataError):
    """``MTSAMPLES_PROCEDURES_MANIFEST`` names no readable, well-formed manifest: one line says which and how."""


def resolve_manifest() -> list[ManifestEntry]:
    """The notes to load: the TSV ``MTSAMPLES_PROCEDURES_MANIFEST`` names (read now, not at import), else the
    pinned 429 shipped in the package."""
    value = os.environ.get(MANIFEST_ENV)
    if not value:
        return load_manifest()
    path = Path(value).expanduser()
    fix = f"point {MANIFEST_ENV} to a TSV with the header name<TAB>bytes<TAB>sha256, or unset it for the pinned notes"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else type(e).__name__
        raise ManifestUnusable(f"{MANIFEST_ENV}={value} cannot be read ({reason}): {fix}") from None
    try:
        entries = parse_manifest(text)
    except DataError as e:
        raise ManifestUnusable(f"{MANIFEST_ENV}={value}: {e}: {fix}") from None
    if not entries:
        raise ManifestUnusable(f"{MANIFEST_ENV}={value} lists no notes: {fix}")
    hwarn(
        f"{MANIFEST_ENV} is set: loading the {len(entries)} notes listed in {path} instead of the pinned 429; "
        "results are not comparable with the pinned MTSamples Procedures benchmark"
    )
    return entries


def manifest_for(directory: Path) -> str:
    """The manifest of the ``.txt`` notes in ``directory``, sorted by name, in the shape ``resolve_manifest``
    reads: what a private mirror's owner (or a test) points ``MTSAMPLES_PROCEDURES_MANIFEST`` to."""
    rows = ["name\tbytes\tsha256"]
    for path in sorted(directory.glob("*.txt")):
        data = path.read_bytes()
        rows.append(f"{path.name}\t{len(data)}\t{hashlib.sha256(data).hexdigest()}")
    return "\n".join(rows) + "\n"
