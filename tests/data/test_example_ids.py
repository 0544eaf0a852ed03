"""example_ids: a note's Medmarks example_id is its index in the manifest, whatever else changes."""

from __future__ import annotations

from helm_mtsamples_ext.data.example_ids import example_ids
from helm_mtsamples_ext.data.notes import ManifestEntry, load_manifest


def test_pinned_notes_are_numbered_in_the_manifests_order() -> None:
    ids = example_ids(load_manifest())
    assert sorted(ids.values()) == list(range(429))
    assert ids["AC Separation Revision & Hardware Removal.txt"] == 0 and ids["Abscess Excision.txt"] == 1


def test_the_order_is_the_manifests_not_the_names() -> None:
    manifest = [ManifestEntry(name, 1, "0" * 64) for name in ("b.txt", "a.txt")]
    assert example_ids(manifest) == {"b.txt": 0, "a.txt": 1}
