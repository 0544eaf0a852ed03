"""example_ids: a note's Medmarks ``example_id`` is the row MedARC's own environment gives it (its keep rule over the
notes in name order, numbered 0..n-1 by verifiers); a note MedARC does not keep gets an id no MedARC id reaches."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helm_mtsamples_ext.data.example_ids import (
    PINNED_KEPT,
    example_ids,
    manifest_index,
    medarc_keeps,
    medarc_keeps_note,
)
from helm_mtsamples_ext.data.instances import build_samples
from helm_mtsamples_ext.data.notes import DataError, ManifestEntry, load_manifest
from tests.medarc_rule import medarc_row


def entry(name: str, data: bytes) -> ManifestEntry:
    return ManifestEntry(name, len(data), hashlib.sha256(data).hexdigest())


def test_the_shipped_table_is_medarcs_rule_over_the_pinned_notes(pinned_notes_dir: Path) -> None:
    """Real data: the 131 positions shipped are the notes MedARC's rule keeps; its ids are 0..130 in name order,
    the same notes HELM's extraction keeps; every other note's id is 429 + its manifest position."""
    manifest = load_manifest()
    raw = {e.name: (pinned_notes_dir / e.name).read_bytes() for e in manifest}
    recomputed = tuple(i for i, e in enumerate(manifest) if medarc_row(raw[e.name].decode("utf-8")))
    assert recomputed == PINNED_KEPT and len(PINNED_KEPT) == 131
    ids = example_ids(manifest)
    kept_names = sorted(manifest[i].name for i in PINNED_KEPT)
    assert [ids[name] for name in kept_names] == list(range(131))
    assert {ids[name] for name in ids} - set(range(131)) == {429 + i for i in range(429) if i not in PINNED_KEPT}
    assert ids == example_ids(manifest, raw), "computed from the texts, the same ids"
    helm = build_samples(raw, "helm").samples
    assert sorted(s.filename for s in helm) == kept_names


def test_ids_are_medarcs_row_indices_not_manifest_positions() -> None:
    """The first pinned notes: 0 and 1 are kept (rows 0, 1), 2..7 are not, 8 is MedARC's row 2."""
    manifest = load_manifest()
    ids, positions = example_ids(manifest), manifest_index(manifest)
    assert [ids[manifest[i].name] for i in (0, 1, 8)] == [0, 1, 2]
    assert ids[manifest[2].name] == 429 + 2 and positions[manifest[8].name] == 8


PIECES = ["PLAN:", "plan:", "Summary:", "FINDINGS:", " ", "\n", "x", "ß", "ǅ", "\t"]
"""Headers in any case, blanks, and letters whose upper case is longer (``ß``: MedARC's index is then off)."""


@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_the_keep_rule_is_medarcs_on_any_text(parts: list[str]) -> None:
    text = "".join(parts)
    assert medarc_keeps(text) == medarc_row(text)


def test_a_custom_manifest_is_numbered_in_name_order_from_its_texts() -> None:
    """MedARC lists notes by name, whatever the manifest's order; a note it cannot read (not UTF-8) or would not
    list (not ``.txt``) or does not keep is numbered from ``len(manifest)`` by its manifest position."""
    texts = {
        "b.txt": b"Op.\nPLAN: rest.\n",
        "a.txt": b"Op.\nsummary: fine\n",
        "c.txt": b"Op.\nPLAN:\nnothing on the header's line\n",
        "d.txt": b"\xff\xfePLAN: x\n",
        "e.md": b"PLAN: listed, but not a .txt\n",
    }
    manifest = [entry(name, data) for name, data in texts.items()]
    ids = example_ids(manifest, texts)
    assert ids == {"a.txt": 0, "b.txt": 1, "c.txt": 5 + 2, "d.txt": 5 + 3, "e.md": 5 + 4}
    assert not medarc_keeps_note("d.txt", texts["d.txt"]) and not medarc_keeps_note("e.md", texts["e.md"])


def test_notes_outside_the_pinned_set_are_read_from_the_doors_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "z.txt").write_bytes(b"FINDINGS: normal\n")
    monkeypatch.setenv("MTSAMPLES_PROCEDURES_CACHE_DIR", str(cache))
    monkeypatch.setenv("MTSAMPLES_PROCEDURES_BASE_URL", (tmp_path / "empty").as_uri())
    pinned = load_manifest()[0]
    assert example_ids([entry("z.txt", b"FINDINGS: normal\n"), pinned]) == {pinned.name: 0, "z.txt": 1}
    with pytest.raises(DataError, match="outside the pinned manifest depends on its text") as raised:
        example_ids([entry("gone.txt", b"PLAN: x\n")])
    assert "\n" not in str(raised.value)
