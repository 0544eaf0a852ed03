"""Extraction on the 429 pinned notes: `helm` mode is HELM's own logic byte for byte, `sections` mode
gives the counts docs/extraction.md documents. Also a differential check against HELM on generated notes."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from helm.benchmark.scenarios.mtsamples_procedures_scenario import MTSamplesProceduresScenario
from hypothesis import given, settings
from hypothesis import strategies as st

from helm_mtsamples_ext.data.sections import NO_HEADER, TARGET_SECTIONS, Extraction, Skip, empty_section_reason, extract

pytestmark = pytest.mark.helm

HELM = MTSamplesProceduresScenario()
HELM_CRASHED = "HELM raised"

# The numbers docs/extraction.md shows.
HELM_INSTANCES = 131
SECTIONS_BY_SECTION = {"PLAN": 19, "SUMMARY": 5, "FINDINGS": 50}
SECTIONS_SKIPS = {NO_HEADER: 351, empty_section_reason("FINDINGS"): 4}
HELM_SWALLOWING_REFERENCES = 66
HELM_INPUTS_CUT_BEFORE_CHOSEN_HEADER = 12
RUN_ON_NOTES = 387
ALL_CAPS_HEADER = re.compile(r"[A-Z][A-Z /&,()-]*:")  # the plain definition, independent of sections.py


def helm_extract(text: str) -> tuple[str, str] | None | str:
    """What HELM 0.5.16's get_instances yields for a stripped note: (input, reference), None when it
    skips the note, or HELM_CRASHED when its `except Exception` swallows the note."""
    try:
        plan, summary, findings = HELM.extract_sections(text)
        reference = plan or summary or findings
        if not reference:
            return None
        return HELM.remove_sections(text), reference
    except Exception:
        return HELM_CRASHED


def scenario_text(path: Path) -> str:
    """The note as our scenario hands it to `extract`: UTF-8, newlines normalised."""
    return path.read_bytes().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


@pytest.fixture(scope="module")
def notes(pinned_notes_dir: Path) -> dict[Path, str]:
    paths = sorted(pinned_notes_dir.glob("*.txt"))
    assert len(paths) == 429
    return {path: scenario_text(path) for path in paths}


def test_helm_mode_reproduces_helm_on_every_pinned_note(notes: dict[Path, str]) -> None:
    """Scores in helm mode are comparable with MedHELM's only if every instance is HELM's, byte for byte."""
    instances = 0
    for path, text in notes.items():
        expected = helm_extract(open(path, encoding="utf-8").read().strip())  # as HELM reads it
        result = extract(text, "helm")
        assert expected != HELM_CRASHED, path.name  # no pinned note hits HELM's crash
        if expected is None:
            assert isinstance(result, Skip), path.name
            continue
        assert isinstance(result, Extraction), path.name
        assert (result.input, result.reference) == expected, path.name
        instances += 1
    assert instances == HELM_INSTANCES


def test_sections_mode_counts_on_the_pinned_notes(notes: dict[Path, str]) -> None:
    """The documented instance and skip counts of sections mode (a change to the rules shows up here)."""
    by_section: Counter[str] = Counter()
    skips: Counter[str] = Counter()
    for text in notes.values():
        result = extract(text, "sections")
        if isinstance(result, Extraction):
            by_section[result.section] += 1
        else:
            skips[result.reason] += 1
    assert dict(by_section) == SECTIONS_BY_SECTION
    assert dict(skips) == SECTIONS_SKIPS


def test_helm_mode_defects_on_the_pinned_notes(notes: dict[Path, str]) -> None:
    """The two defects sections mode exists to fix, as documented: run-on references and inputs that
    lose the text between an earlier header and the chosen one."""
    run_on = sum(any(len(ALL_CAPS_HEADER.findall(line)) >= 2 for line in text.split("\n")) for text in notes.values())
    swallowing = cut_short = 0
    for text in notes.values():
        result = extract(text, "helm")
        if not isinstance(result, Extraction):
            continue
        swallowing += bool(ALL_CAPS_HEADER.search(result.reference))
        before_chosen = text.strip().split(f"{result.section}:")[0].strip()
        cut_short += len(result.input) < len(before_chosen)
    assert (run_on, swallowing, cut_short) == (
        RUN_ON_NOTES,
        HELM_SWALLOWING_REFERENCES,
        HELM_INPUTS_CUT_BEFORE_CHOSEN_HEADER,
    )


def test_sections_mode_references_hold_no_header(notes: dict[Path, str]) -> None:
    """The point of sections mode: no reference swallows a later section."""
    for path, text in notes.items():
        result = extract(text, "sections")
        if isinstance(result, Extraction):
            assert not re.search(r"(?<![A-Z])[A-Z][A-Z /&,()-]+:", result.reference), path.name


_BITS = st.sampled_from(
    [
        "PLAN:",
        "Plan:",
        "plan:",
        "SUMMARY:",
        "summary:",
        "FINDINGS:",
        "Findings:",
        "ſummary:",
        "FİNDINGS:",
        "HISTORY: ",
        "x",
        "Rest.",
        " ",
        "\n",
        "\t",
        ":",
    ]
)  # upper() keeps the length of every bit, so positions in text and text.upper() agree


@settings(max_examples=400, deadline=None)
@given(st.lists(_BITS, max_size=12).map("".join))
def test_helm_mode_matches_helm_wherever_helm_does_not_crash(text: str) -> None:
    """Byte-identical to HELM on any note HELM handles. Where HELM crashes because every header is in
    lower case, we cut where HELM would cut the upper-cased note: the note is kept, never lost."""
    expected = helm_extract(text.strip())
    result = extract(text, "helm")
    if expected is None:
        assert isinstance(result, Skip)
    elif expected != HELM_CRASHED:
        assert isinstance(result, Extraction)
        assert (result.input, result.reference) == expected
    elif not any(f"{h}:" in text for h in TARGET_SECTIONS):
        upper = helm_extract(text.strip().upper())
        assert upper != HELM_CRASHED
        if upper is None:
            assert isinstance(result, Skip)
        else:
            assert isinstance(result, Extraction)
            assert (result.input.upper(), result.reference.upper()) == upper
    else:  # mixed: an upper-case header is used as HELM would, a lower-case one is the fallback
        assert isinstance(result, (Extraction, Skip))
