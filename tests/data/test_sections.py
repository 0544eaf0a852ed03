"""The extraction rules, one test per rule, on small notes written here (docs/extraction.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.data.sections import (
    EXTRACTION_MODES,
    NO_HEADER,
    NO_INPUT,
    TARGET_SECTIONS,
    Extraction,
    Skip,
    empty_section_reason,
    extract,
)


def ok(text: str, mode: str) -> Extraction:
    result = extract(text, mode)
    assert isinstance(result, Extraction), result
    return result


# --- both modes ----------------------------------------------------------------------------------


def test_unknown_mode_is_rejected() -> None:
    """A typo in the run entry's `extraction=` must fail loudly, not fall back to a mode."""
    with pytest.raises(ValueError, match="sectoins"):
        extract("PLAN: Rest.", "sectoins")


@pytest.mark.parametrize("mode", EXTRACTION_MODES)
def test_helm_is_the_default_and_modes_are_named(mode: str) -> None:
    """The run entry's default is HELM's rule, and its two values are the two modes."""
    assert EXTRACTION_MODES == ("helm", "sections")
    assert TARGET_SECTIONS == ("PLAN", "SUMMARY", "FINDINGS")
    assert RunEntryArgs().extraction == "helm"
    assert ok("HISTORY: Fall.\nPLAN: Rest.", mode) == Extraction("HISTORY: Fall.", "Rest.", "PLAN")


@pytest.mark.parametrize("mode", EXTRACTION_MODES)
@pytest.mark.parametrize("text", ["", "   \n", "HISTORY: Fall.\nPROCEDURE: Cast applied.", "plain prose, no headers"])
def test_no_target_header_is_skipped(mode: str, text: str) -> None:
    """A note without PLAN/SUMMARY/FINDINGS has no reference: skipped with the stable reason."""
    assert extract(text, mode) == Skip(NO_HEADER)


@pytest.mark.parametrize("mode", EXTRACTION_MODES)
def test_skip_reasons_are_distinct_and_short(mode: str) -> None:
    """The scenario counts skipped notes by reason, so each reason names one cause, briefly."""
    reasons = {NO_HEADER, NO_INPUT} | {empty_section_reason(h) for h in TARGET_SECTIONS}
    assert len(reasons) == 5 and all(len(r) <= 50 for r in reasons)
    assert extract("HISTORY: Fall.\nSUMMARY:\nFINDINGS:", mode) == Skip("SUMMARY header with empty section")


# --- helm mode: HELM's rule ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("note", "section", "reference"),
    [
        ("HISTORY: x\nFINDINGS: Spur.\nSUMMARY: Done.\nPLAN: Rest.", "PLAN", "Rest."),
        ("HISTORY: x\nFINDINGS: Spur.\nSUMMARY: Done.", "SUMMARY", "Done."),
        ("HISTORY: x\nFINDINGS: Spur.", "FINDINGS", "Spur."),
    ],
)
def test_helm_plan_beats_summary_beats_findings(note: str, section: str, reference: str) -> None:
    """HELM's `plan or summary or findings`, whatever order the headers come in."""
    result = ok(note, "helm")
    assert (result.section, result.reference) == (section, reference)


def test_helm_reference_is_the_rest_of_the_line_only() -> None:
    """HELM keeps only the header's line: later lines are lost, run-on sections on it are swallowed."""
    note = "HISTORY: x\nPLAN: Rest.ACTIVITY: Walk.\nFollow up in 2 weeks."
    assert ok(note, "helm").reference == "Rest.ACTIVITY: Walk."


def test_helm_reference_stops_at_the_headers_second_occurrence() -> None:
    """HELM takes `text.split("PLAN:")[1]`: the piece before a second `PLAN:` on the same line."""
    assert ok("HISTORY: x\nPLAN: Rest. PLAN: Ice.", "helm").reference == "Rest."


def test_helm_header_inside_a_longer_header_counts() -> None:
    """HELM matches the substring: `TREATMENT PLAN:` is a PLAN (byte-compatibility over taste)."""
    result = ok("HISTORY: x\nTREATMENT PLAN: Rest.", "helm")
    assert (result.section, result.reference, result.input) == ("PLAN", "Rest.", "HISTORY: x\nTREATMENT")


def test_helm_input_is_cut_at_the_earliest_header() -> None:
    """HELM's input ends at the first of the three headers, even one before the chosen header."""
    note = "  HISTORY: x\nFINDINGS: Spur.\nPROCEDURE: Shaved.\nPLAN: Rest.  "
    result = ok(note, "helm")
    assert (result.input, result.reference) == ("HISTORY: x", "Rest.")


def test_helm_empty_section_falls_through() -> None:
    """An empty PLAN line is falsy in `plan or summary or findings`: FINDINGS is used."""
    result = ok("HISTORY: x\nFINDINGS: Spur.\nPLAN:\nRest.", "helm")
    assert (result.section, result.reference) == ("FINDINGS", "Spur.")


def test_helm_all_sections_empty_is_skipped() -> None:
    """Headers with nothing on their line leave no reference; the reason names the preferred header."""
    assert extract("HISTORY: x\nFINDINGS:\nPLAN:   \n", "helm") == Skip(empty_section_reason("PLAN"))


@pytest.mark.parametrize(
    ("note", "section", "reference", "note_input"),
    [
        ("HISTORY: x\nPlan: Rest.", "PLAN", "Rest.", "HISTORY: x"),
        ("HISTORY: x\nSUMMARY: Done.\nfindings: Spur.", "SUMMARY", "Done.", "HISTORY: x"),
        ("HISTORY: x\nSummary: Done.\nFINDINGS: Spur.", "SUMMARY", "Done.", "HISTORY: x"),
    ],
)
def test_helm_lower_case_only_header_is_kept(note: str, section: str, reference: str, note_input: str) -> None:
    """HELM raises IndexError on these (upper() finds the header, split() cannot) and loses the note;
    we read the header case-insensitively and cut the input there too, so the reference never leaks."""
    assert ok(note, "helm") == Extraction(note_input, reference, section)


def test_helm_upper_case_header_wins_over_an_earlier_lower_case_one() -> None:
    """Where HELM succeeds we slice exactly where it does, ignoring a lower-case look-alike."""
    result = ok("HISTORY: the plan: rest\nPLAN: Surgery.", "helm")
    assert (result.reference, result.input) == ("Surgery.", "HISTORY: the plan: rest")


# --- sections mode: header-aware -----------------------------------------------------------------


@pytest.mark.parametrize(
    "note",
    [
        "INDICATIONS: He was agreeable to surgery.FINDINGS: The spur.DESCRIPTION OF PROCEDURE: Shaved.",
        "INDICATIONS: He was agreeable to surgery. FINDINGS: The spur. DESCRIPTION OF PROCEDURE: Shaved.",
        "INDICATIONS: He was agreeable to surgeryFINDINGS: The spur.DESCRIPTION OF PROCEDURE: Shaved.",
        "INDICATIONS: He was agreeable to surgery.\nFINDINGS:\tThe spur.\nDESCRIPTION OF PROCEDURE: Shaved.",
    ],
)
def test_sections_header_glued_to_the_previous_sentence_ends_the_section(note: str) -> None:
    """Run-on notes: a section stops at the next ALL-CAPS header, even glued to the sentence before."""
    result = ok(note, "sections")
    assert (result.section, result.reference) == ("FINDINGS", "The spur.")
    assert "DESCRIPTION OF PROCEDURE: Shaved." in result.input and "The spur" not in result.input


def test_sections_glued_numbering_stays_in_the_section() -> None:
    """`1.`/`2.` glued to sentences are list items, not headers; the next header ends the list."""
    note = "HISTORY: x\nPLAN:1. Rest.2. Ice.3. Follow up at 10:30 AM.ACTIVITY: Walk."
    assert ok(note, "sections").reference == "1. Rest.2. Ice.3. Follow up at 10:30 AM."


def test_sections_section_spans_several_lines() -> None:
    """The reference is the whole section up to the next header, not only the header's line."""
    note = "HISTORY: x\nPLAN: Rest.\nIce twice a day.\nFollow up in 2 weeks.\nKeywords: knee, spur"
    result = ok(note, "sections")
    assert result.reference == "Rest.\nIce twice a day.\nFollow up in 2 weeks."
    assert result.input == "HISTORY: x\nKeywords: knee, spur"


@pytest.mark.parametrize(
    "header", ["TREATMENT PLAN", "EXPLAN", "ASSESSMENT AND PLAN", "POST-OP PLAN", "GROSS FINDINGS", "DISCHARGE SUMMARY"]
)
def test_sections_target_must_be_the_whole_header(header: str) -> None:
    """`PLAN` inside a longer header is another section, which also ends a real target section."""
    assert extract(f"HISTORY: x\n{header}: Rest.", "sections") == Skip(NO_HEADER)
    result = ok(f"HISTORY: x\nFINDINGS: Spur.{header}: Rest.", "sections")
    assert (result.section, result.reference) == ("FINDINGS", "Spur.")
    assert f"{header}: Rest." in result.input


def test_sections_plural_plans_is_plan() -> None:
    """`PLANS:` heads the plan in some notes; it is the same section, unlike `TREATMENT PLAN`."""
    assert ok("HISTORY: x\nFINDINGS: Spur.\nPLANS: Rest.", "sections").section == "PLAN"


def test_sections_plan_beats_summary_beats_findings() -> None:
    """The same preference as HELM, applied to whole sections."""
    note = "HISTORY: x\nFINDINGS: Spur.\nSUMMARY: Done.\nPLAN: Rest.\nMore rest."
    assert ok(note, "sections").reference == "Rest.\nMore rest."
    assert ok("HISTORY: x\nFINDINGS: Spur.\nSUMMARY: Done.", "sections").section == "SUMMARY"


def test_sections_input_excludes_all_target_sections_and_keeps_the_rest_in_order() -> None:
    """No target section can leak into the input; everything else stays, in order."""
    note = (
        "HISTORY: Fall.FINDINGS: Spur.PROCEDURE: Shaved.\nSUMMARY: Went well.\n"
        "COMPLICATIONS: None.PLAN: Rest.\nKeywords: knee"
    )
    result = ok(note, "sections")
    assert result.reference == "Rest."
    assert result.input == "HISTORY: Fall.PROCEDURE: Shaved.\nCOMPLICATIONS: None.\nKeywords: knee"


def test_sections_metadata_labels_end_a_section() -> None:
    """MTSamples' `Keywords:` line closes the last section instead of joining the reference."""
    note = "Medical Specialty:Surgery\nSample Name: Knee\nHISTORY: x\nPLAN: Rest.\nKeywords: knee, plan"
    assert ok(note, "sections").reference == "Rest."


def test_sections_empty_section_falls_through() -> None:
    """An empty PLAN section (next header right after it) does not stop a non-empty FINDINGS."""
    result = ok("HISTORY: x\nFINDINGS: Spur.\nPLAN:\nACTIVITY: Walk.", "sections")
    assert (result.section, result.reference) == ("FINDINGS", "Spur.")


@pytest.mark.parametrize(
    ("note", "header"),
    [
        ("HISTORY: x\nPLAN:\nACTIVITY: Walk.", "PLAN"),
        ("HISTORY: x.FINDINGS:CALCIUM SCORE: 115.", "FINDINGS"),
        ("HISTORY: x\nFINDINGS:   \nSUMMARY:\n", "SUMMARY"),
    ],
)
def test_sections_only_empty_target_sections_is_skipped(note: str, header: str) -> None:
    """A target header whose section is empty (e.g. a parent of sub-headers) gives no reference."""
    assert extract(note, "sections") == Skip(empty_section_reason(header))


def test_sections_note_that_is_only_the_reference_is_skipped() -> None:
    """With nothing left to read there is no task for the model."""
    assert extract("PLAN: Rest.", "sections") == Skip(NO_INPUT)


# --- properties ----------------------------------------------------------------------------------

_NOTE_BITS = st.sampled_from(
    [
        "PLAN:",
        "Plan:",
        "plan:",
        "SUMMARY:",
        "summary:",
        "FINDINGS:",
        "FİNDINGS:",
        "ſummary:",
        "TREATMENT PLAN:",
        "Keywords:",
        "HISTORY:",
        "1.",
        ".",
        " ",
        "\n",
        "\t",
        "Rest",
        "x",
        ":",
        "AT 10:30",
        "ß",
        "\u2028",
        "\x00",
    ]
)
NOTES = st.one_of(st.text(), st.lists(st.one_of(_NOTE_BITS, st.text(max_size=5))).map("".join))


@settings(max_examples=300, deadline=None)
@given(text=NOTES)
def test_extract_never_raises_and_extractions_are_usable(text: str) -> None:
    """Arbitrary text never crashes the scenario; an Extraction always has a reference to judge
    against, and in helm mode its input holds none of the upper-case target headers."""
    for mode in EXTRACTION_MODES:
        result = extract(text, mode)
        assert isinstance(result, (Extraction, Skip))
        if isinstance(result, Skip):
            assert result.reason
            continue
        assert result.reference and result.reference == result.reference.strip()
        assert result.section in TARGET_SECTIONS
        if mode == "helm":
            assert "\n" not in result.reference
            assert not any(f"{h}:" in result.input for h in TARGET_SECTIONS)
        else:
            assert result.input and result.reference in text
