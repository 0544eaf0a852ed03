"""A note's ``example_id`` for Medmarks: the id MedARC's own ``mtsamples_procedures`` environment gives the same note.

Why: ``medarc-eval winrate`` pairs two models' rewards by ``example_id``. MedARC's environment (med-lm-envs,
``environments/mtsamples_procedures``, commit 3b9f18f) lists the notes of the pinned commit by name (GitHub's
contents listing: git's tree order, which for these flat ``.txt`` names is Python's ``sorted``), keeps a note only
when a ``PLAN:``, ``SUMMARY:`` or ``FINDINGS:`` header (found case-insensitively) has a non-empty first line after
it (``medarc_keeps``), and verifiers numbers the kept rows 0..n-1. Any other id (ours used to be the manifest
position) pairs a note of our run with *another* note of theirs, without a word.

So the id depends on which notes are present: the pinned 429 give MedARC's 0..130. A note MedARC does not keep (our
``sections`` extraction keeps a few more) gets ``len(manifest) + its manifest position``: never below
``len(manifest)``, which no MedARC id reaches (MedARC keeps at most every note). The note's place in the manifest
stays available as ``manifest_index``.

The pinned notes' verdicts ship here (``PINNED_KEPT``, checked against MedARC's rule on the pinned notes by a
real-data test), so the report's export needs no note text; a note the pinned manifest lacks (a custom
``MTSAMPLES_PROCEDURES_MANIFEST``) is judged from its text: given, or read (verified, cached) where the doors read
notes. Runs compared with Medmarks' must use the same manifest as theirs: the pinned one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from helm_mtsamples_ext.data.instances import decode_note
from helm_mtsamples_ext.data.notes import DataError, ManifestEntry, door_cache_dir, ensure_notes, load_manifest

MEDARC_HEADERS = ("PLAN:", "SUMMARY:", "FINDINGS:")
"""The headers MedARC's ``_extract_sections`` looks for, in its order of preference."""

PINNED_KEPT = (
    *(0, 1, 8, 9, 10, 11, 15, 31, 36, 38, 39, 45, 46, 48, 49, 50, 51, 54, 60, 64, 65, 67, 68, 70, 72, 80, 81),
    *(84, 85, 89, 90, 100, 106, 114, 124, 132, 133, 136, 140, 141, 142, 144, 151, 153, 154, 155, 156, 157, 159),
    *(165, 167, 170, 172, 173, 174, 175, 186, 188, 189, 193, 201, 204, 210, 213, 216, 217, 220, 222, 226, 233),
    *(234, 235, 236, 239, 246, 249, 250, 253, 254, 256, 264, 266, 269, 270, 271, 276, 279, 282, 283, 284, 286),
    *(289, 292, 293, 296, 298, 300, 303, 306, 312, 317, 318, 320, 321, 345, 347, 350, 353, 354, 355, 358, 360),
    *(361, 362, 367, 371, 381, 385, 387, 388, 400, 402, 403, 406, 409, 410, 412, 415, 416, 417, 418),
)
"""The pinned manifest's positions of the 131 notes MedARC keeps (tests/data/test_example_ids.py recomputes them
with ``medarc_keeps`` from the pinned notes)."""


def medarc_keeps(text: str) -> bool:
    """MedARC's rule, as its ``_extract_sections`` and ``_load_dataset`` apply it to a note read as
    ``Path.read_text(encoding="utf-8")`` reads it (``decode_note``): some header's first line is non-empty. Its
    index arithmetic (found in ``text.upper()``, cut from ``text``) is kept as it is."""
    upper = text.upper()
    for header in MEDARC_HEADERS:
        if header in upper:
            at = upper.find(header)
            if text[at + len(header) :].split("\n", 1)[0].strip():
                return True
    return False


def medarc_keeps_note(name: str, raw: bytes) -> bool:
    """Whether MedARC's environment has a row for this file: a ``.txt`` name (its listing's filter), UTF-8 (else its
    ``read_text`` raises and it loads nothing), and ``medarc_keeps``."""
    text = decode_note(raw) if name.endswith(".txt") else None
    return text is not None and medarc_keeps(text)


def manifest_index(manifest: Sequence[ManifestEntry]) -> dict[str, int]:
    """File name -> its 0-based position in ``manifest`` (what ``example_id`` was before it was MedARC's)."""
    return {entry.name: index for index, entry in enumerate(manifest)}


@lru_cache(maxsize=1)
def _pinned_verdicts() -> dict[str, bool]:
    """sha256 -> whether MedARC keeps the pinned note with it."""
    kept = set(PINNED_KEPT)
    return {entry.sha256: index in kept for index, entry in enumerate(load_manifest())}


def example_ids(manifest: Sequence[ManifestEntry], texts: Mapping[str, bytes] | None = None) -> dict[str, int]:
    """File name -> MedARC's ``example_id`` for it: its row among the notes MedARC keeps, in name order; for a note
    MedARC does not keep, ``len(manifest) + manifest_index``. ``texts`` (file name -> the note's bytes) decides the
    notes the pinned manifest lacks; without it they are read where the doors keep notes (``unpinned_texts``)."""
    verdicts = _pinned_verdicts()
    given = dict(texts or {})
    missing = [entry for entry in manifest if entry.sha256 not in verdicts and entry.name not in given]
    if missing:
        given.update(unpinned_texts(missing))

    def keeps(entry: ManifestEntry) -> bool:
        if entry.sha256 in verdicts:
            return verdicts[entry.sha256] and entry.name.endswith(".txt")
        return medarc_keeps_note(entry.name, given[entry.name])

    kept = sorted(entry.name for entry in manifest if keeps(entry))
    positions = manifest_index(manifest)
    ids = {name: len(manifest) + position for name, position in positions.items()}
    ids.update({name: row for row, name in enumerate(kept)})
    return ids


def unpinned_texts(entries: Sequence[ManifestEntry]) -> dict[str, bytes]:
    """The bytes of notes the pinned manifest lacks, verified against ``entries``: from the doors' note cache
    (``MTSAMPLES_PROCEDURES_CACHE_DIR``, else ``~/.cache/helm_mtsamples_ext/notes``), fetched from
    ``MTSAMPLES_PROCEDURES_BASE_URL`` into it when missing. A note that cannot be had is a ``DataError``."""
    try:
        paths = ensure_notes(door_cache_dir(None), manifest=list(entries), progress=False)
    except DataError as error:
        first = str(error).splitlines()[0]
        raise DataError(
            f"MedARC's example_id of a note outside the pinned manifest depends on its text, and {first}"
        ) from None
    return {name: path.read_bytes() for name, path in paths.items()}


__all__ = ["PINNED_KEPT", "example_ids", "manifest_index", "medarc_keeps", "medarc_keeps_note", "unpinned_texts"]
