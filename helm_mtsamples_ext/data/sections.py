"""Cut an operative note into (input, reference): the model reads the input, the judges compare its
plan with the reference.

Two modes (rules and counts on the pinned data in docs/extraction.md):

- ``helm`` reproduces HELM 0.5.16's ``MTSamplesProceduresScenario`` byte for byte wherever HELM
  produces an instance, so our scores are comparable with MedHELM's. It keeps HELM's defects: the
  reference is only the rest of the header's line (sections that run on in that line come along),
  and the input ends at the earliest of the three headers even when that is not the chosen one. It
  drops one: HELM detects headers in ``text.upper()`` but splits the original text, so a note whose
  header is only in lower case (``Plan:``) raises IndexError and is lost; here it is kept.
- ``sections`` is header-aware: a section runs to the next ALL-CAPS header (``...surgery.FINDINGS:``
  glued to the sentence counts), so references are whole sections and nothing else, and the input
  is the note with every PLAN/SUMMARY/FINDINGS section taken out.

Pure: no I/O and no HELM import, so it can be tested exhaustively and fast.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from helm_mtsamples_ext.common.choices import EXTRACTION_MODES

TARGET_SECTIONS = ("PLAN", "SUMMARY", "FINDINGS")
"""In order of preference: the reference is the first of these that is present and non-empty."""

NO_HEADER = "no PLAN/SUMMARY/FINDINGS header"
NO_INPUT = "nothing left besides the target sections"


@dataclass(frozen=True)
class Extraction:
    input: str
    reference: str
    section: str
    """Which of TARGET_SECTIONS the reference was cut from."""


@dataclass(frozen=True)
class Skip:
    reason: str
    """Short and stable: the scenario counts notes by it."""


def empty_section_reason(header: str) -> str:
    """The skip reason for a note whose target headers all have empty sections (names the preferred one)."""
    return f"{header} header with empty section"


def extract(text: str, mode: str) -> Extraction | Skip:
    """Cut ``text`` (decoded, newlines normalised to ``\\n``) into input and reference, or say why not; ``mode`` is
    the run entry's ``extraction`` (its default is RunEntryArgs').

    Never raises on any string; raises ValueError only for an unknown ``mode``.
    """
    if mode == "helm":
        return _extract_helm(text)
    if mode == "sections":
        return _extract_sections(text)
    raise ValueError(f"unknown extraction mode {mode!r}; expected one of {EXTRACTION_MODES}")


# --- helm mode -----------------------------------------------------------------------------------


def _helm_occurrences(text: str, upper: str, token: str) -> list[int]:
    """Where HELM's split would cut ``text`` for ``token``.

    The exact (upper-case) token when present, as HELM's ``text.split(token)``. Otherwise the places
    HELM's ``token in text.upper()`` sees it but its split cannot (``Plan:``, ``ſummary:``): a window
    whose ``upper()`` is the token. That fallback fires exactly where HELM raises IndexError.
    """
    first = text.find(token)
    if first >= 0:  # HELM uses only the first piece after the token: two positions are all we need
        second = text.find(token, first + len(token))
        return [first] if second < 0 else [first, second]
    if token not in upper:  # HELM's own test; most notes stop here, cheaply
        return []
    return [m.start() for m in re.finditer(re.escape(token), text, re.IGNORECASE) if m.group().upper() == token]


def _extract_helm(text: str) -> Extraction | Skip:
    text = text.strip()  # HELM: f.read().strip()
    upper = text.upper()
    values: dict[str, str] = {}
    first_pos: dict[str, int] = {}
    for header in TARGET_SECTIONS:
        token = header + ":"
        where = _helm_occurrences(text, upper, token)
        if not where:
            continue
        first_pos[header] = where[0]
        # HELM: text.split(token)[1].split("\n", 1)[0].strip() -- the piece up to the token's next
        # occurrence, then the rest of that line.
        end = where[1] if len(where) > 1 else len(text)
        values[header] = text[where[0] + len(token) : end].split("\n", 1)[0].strip()
    if not first_pos:
        return Skip(NO_HEADER)
    chosen = next((h for h in TARGET_SECTIONS if values.get(h)), None)  # HELM: plan or summary or findings
    if chosen is None:
        return Skip(empty_section_reason(next(h for h in TARGET_SECTIONS if h in first_pos)))
    # HELM's remove_sections splits on each token in turn and strips: that is the text before the
    # earliest header. Fallback (lower-case) headers cut too, so a reference never leaks into the input.
    return Extraction(input=text[: min(first_pos.values())].strip(), reference=values[chosen], section=chosen)


# --- sections mode -------------------------------------------------------------------------------

_CAPS_HEADER = re.compile(
    r"(?<![A-Z0-9])"  # not inside a capitalised word: "surgery.FINDINGS:" and "roomPROCEDURE:" are glued headers
    r"(?P<name>[A-Z][A-Z0-9 /&,()'#-]{0,80}[A-Z)])"  # 2+ chars ending in a letter or ")": not "AT 10:30"
    r"[ \t]*:"
)
SPECIALTY = re.compile(r"^\s*Medical Specialty:\s*(.+?)\s*$", re.MULTILINE)


def specialty_of(text: str) -> str | None:
    """The note's ``Medical Specialty:`` line (MTSamples metadata), for grouping results by specialty."""
    match = SPECIALTY.search(text)
    return match.group(1) if match else None


_METADATA_HEADER = re.compile(r"^(?P<name>Medical Specialty|Sample Name|Description|Keywords)[ \t]*:", re.MULTILINE)
"""MTSamples' own labels, so e.g. the closing ``Keywords:`` line never ends up in a reference."""


_ALIASES = {"PLANS": "PLAN"}
"""Header spellings that mean a target section. Only whole headers: ``TREATMENT PLAN`` and
``ASSESSMENT AND PLAN`` are other sections, as are ``GROSS FINDINGS`` and ``DISCHARGE SUMMARY``."""


@dataclass(frozen=True)
class _Section:
    name: str
    start: int  # where the header begins
    body_start: int
    end: int  # where the next header begins


def _split_sections(text: str) -> list[_Section]:
    """The note's headed sections in order; text before the first header belongs to none."""
    found = sorted(
        (m.start(), m.end(), m.group("name").strip())
        for rx in (_CAPS_HEADER, _METADATA_HEADER)
        for m in rx.finditer(text)
    )
    heads: list[tuple[int, int, str]] = []
    for start, body_start, name in found:
        if heads and start < heads[-1][1]:
            continue  # inside the previous header
        heads.append((start, body_start, _ALIASES.get(name, name)))
    return [
        _Section(name, start, body_start, heads[i + 1][0] if i + 1 < len(heads) else len(text))
        for i, (start, body_start, name) in enumerate(heads)
    ]


def _without(text: str, cut: list[_Section]) -> str:
    """``text`` with the ``cut`` sections taken out, keeping a line break that ended one."""
    kept: list[str] = []
    cursor = 0
    for s in cut:
        kept.append(text[cursor : s.start])
        section = text[s.start : s.end]
        trailing = section[len(section.rstrip()) :]
        if "\n" in trailing and kept[-1] and not kept[-1].endswith("\n"):
            kept.append("\n")  # "...(290.0).PLAN: ...\nKeywords:" must not become "(290.0).Keywords:"
        cursor = s.end
    kept.append(text[cursor:])
    return "".join(kept).strip()


def _extract_sections(text: str) -> Extraction | Skip:
    text = text.strip()
    targets = [s for s in _split_sections(text) if s.name in TARGET_SECTIONS]
    if not targets:
        return Skip(NO_HEADER)
    bodies = [(s.name, text[s.body_start : s.end].strip()) for s in targets]
    chosen = next(((h, b) for h in TARGET_SECTIONS for name, b in bodies if name == h and b), None)
    if chosen is None:
        present = {s.name for s in targets}
        return Skip(empty_section_reason(next(h for h in TARGET_SECTIONS if h in present)))
    note_input = _without(text, targets)
    if not note_input:
        return Skip(NO_INPUT)
    return Extraction(input=note_input, reference=chosen[1], section=chosen[0])
