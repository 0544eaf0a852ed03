"""data/instances.py: the notes as harness-neutral samples; HELM's scenario is a thin adapter over them."""

from __future__ import annotations

from helm_mtsamples_ext.data.instances import MAX_NOTE_BYTES, NO_HEADER, build_samples, instance_id

NOTE = b"PREOPERATIVE DIAGNOSIS: Hernia.\nPROCEDURE: Repair.\nPLAN: Follow up in two weeks.\n"


def test_a_note_with_a_plan_is_a_sample_with_its_reference_cut_away() -> None:
    (sample,) = build_samples({"Hernia Repair.txt": NOTE}, "helm").samples
    assert sample.id == instance_id("Hernia Repair.txt")
    assert "Follow up in two weeks" in sample.reference and "Follow up" not in sample.input
    assert sample.extra_data == {
        "filename": "Hernia Repair.txt",
        "extracted_section": sample.extracted_section,
        "specialty": sample.specialty,
        "extraction": "helm",
    }


def test_every_note_left_out_is_listed_with_its_reason_and_the_rest_keep_their_order() -> None:
    notes = {
        "a.txt": NOTE,
        "empty.txt": b"  ",
        "binary.txt": b"PLAN: x\x00",
        "latin1.txt": "PLAN: caf\u00e9".encode("latin-1"),
        "huge.txt": b"x" * (MAX_NOTE_BYTES + 1),
        "no plan.txt": b"PROCEDURE: Repair.\n",
        "b.txt": NOTE,
    }
    batch = build_samples(notes, "helm")
    assert [s.filename for s in batch.samples] == ["a.txt", "b.txt"]
    assert dict(batch.left_out) == {
        "empty.txt": "empty file",
        "binary.txt": "binary file",
        "latin1.txt": "not UTF-8 text",
        "huge.txt": f"larger than {MAX_NOTE_BYTES} bytes",
        "no plan.txt": NO_HEADER,
    }
    assert sum(batch.skipped.values()) == 5
