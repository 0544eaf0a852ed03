"""A note's ``example_id`` for Medmarks: its index in the manifest's order (the pinned 429, sorted by name).

Why: MedARC's win rates (``medarc-eval winrate``) pair two models' rewards by ``example_id``; the same note must
carry the same id for every model, every door and every extraction mode, or each pair compares against a missing
reward. An index among the notes a run kept would shift when the extraction keeps other notes; an index in the
manifest never does. A suite run on other notes (``MTSAMPLES_PROCEDURES_MANIFEST``) numbers them in that
manifest's order when the variable names it again.
"""

from __future__ import annotations

from collections.abc import Sequence

from helm_mtsamples_ext.data.notes import ManifestEntry


def example_ids(manifest: Sequence[ManifestEntry]) -> dict[str, int]:
    """File name -> its 0-based index in ``manifest`` (resolve_manifest's order)."""
    return {entry.name: index for index, entry in enumerate(manifest)}


__all__ = ["example_ids"]
