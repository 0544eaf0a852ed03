"""A dozen synthetic operative notes, written by the test session, for every test that does not check the
real data: runs of the real downloader, scenario and helm-run need notes, not the pinned 429 (which a clone
with no ``../shared`` and no network cannot get).

They are shaped like the MTSamples notes where our rules look: the ``Medical Specialty:`` line, ALL-CAPS
headers, one-line PLAN / SUMMARY / FINDINGS sections (HELM's rule takes the rest of the line), odd file
names (``#``, ``&``, non-ASCII) the mirror must quote. What the tests count on:

- ``helm`` extraction: 10 instances (PLAN 4, SUMMARY 2, FINDINGS 4); ``sections``: 9 (``TREATMENT PLAN:`` is
  a PLAN to HELM only); 2 notes have no target header at all;
- 3 notes are ``Medical Specialty:Obstetrics / Gynecology`` (a judge can be told to fail on those);
- 3 notes are long (over 700 words of input, past a small judge context), the others short (under 200);
- every reference is longer than the review page's fold, and every note's text differs throughout, so
  HELM's ``simple/model1`` (it answers the prompt's last word, cut at 1536 characters) gives different answers.

The notes are served through ``MTSAMPLES_PROCEDURES_BASE_URL`` with ``MTSAMPLES_PROCEDURES_MANIFEST`` naming
their manifest: the package's own, supported way to load notes other than the pinned ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV, manifest_for
from helm_mtsamples_ext.data.notes import BASE_URL_ENV
from tests.servers.mirror import NoteMirror

OBGYN = "Medical Specialty:Obstetrics / Gynecology"
LONG_INPUT_WORDS = 700


@dataclass(frozen=True)
class _Note:
    name: str
    specialty: str
    procedure: str
    organ: str
    tool: str
    sections: tuple[tuple[str, str], ...]  # (header, one-line body), in the note's order
    long: bool = False


_PLAN = "PLAN"
_FINDINGS = "FINDINGS"
_SUMMARY = "SUMMARY"

NOTES = (
    _Note("Appendectomy - Laparoscopic.txt", "General Medicine", "laparoscopic appendectomy", "appendix",
          "harmonic scalpel", ((_FINDINGS, "an inflamed, nonperforated appendix"), (_PLAN, "clear liquids tonight"))),
    _Note("Cesarean Section #2.txt", "Obstetrics / Gynecology", "repeat low transverse cesarean section", "uterus",
          "bandage scissors", ((_PLAN, "ambulate early and start routine postpartum care"),)),
    _Note("Cholecystectomy.txt", "Gastroenterology", "laparoscopic cholecystectomy", "gallbladder", "clip applier",
          ((_FINDINGS, "a distended gallbladder with multiple stones"),), long=True),
    _Note("Colonoscopy & Biopsy.txt", "Gastroenterology", "colonoscopy with cold biopsy", "sigmoid colon",
          "video colonoscope", ((_FINDINGS, "two small sessile polyps in the sigmoid colon"),)),
    _Note("Cystoscopy.txt", "Urology", "flexible cystoscopy", "bladder", "flexible cystoscope",
          ((_SUMMARY, "no tumor, stone or diverticulum was seen in the bladder"),), long=True),
    _Note("Hysteroscopy - Diagnostic.txt", "Obstetrics / Gynecology", "diagnostic hysteroscopy and dilation",
          "endometrial cavity", "rigid hysteroscope",
          ((_FINDINGS, "a small endometrial polyp on the posterior wall"),)),
    _Note("Knee Arthroscopy.txt", "Orthopedic", "arthroscopic partial medial meniscectomy", "medial meniscus",
          "arthroscopic shaver", ((_FINDINGS, "a complex tear of the posterior horn of the medial meniscus"),),
          long=True),
    _Note("Ostéotomie tibiale – Genou.txt", "Orthopedic", "high tibial osteotomy", "proximal tibia",
          "oscillating saw", ((_FINDINGS, "medial compartment arthrosis"), (_PLAN, "toe-touch weight bearing"))),
    _Note("Salpingectomy - Bilateral.txt", "Obstetrics / Gynecology", "laparoscopic bilateral salpingectomy",
          "fallopian tubes", "bipolar forceps", ((_SUMMARY, "both tubes were removed without complication"),)),
    _Note("Thyroidectomy.txt", "ENT - Otolaryngology", "total thyroidectomy", "thyroid gland", "nerve monitor",
          (("TREATMENT PLAN", "check calcium levels every eight hours overnight"),)),
    _Note("Tonsillectomy.txt", "ENT - Otolaryngology", "tonsillectomy and adenoidectomy", "palatine tonsils",
          "suction cautery", ()),
    _Note("Vasectomy.txt", "Urology", "bilateral vasectomy", "vas deferens", "no-scalpel forceps", ()),
)  # fmt: skip

HELM_INSTANCES = 10
SECTIONS_INSTANCES = 9
OBGYN_NOTES = 3
LONG_NOTES = 3

_FOLLOW_UP = (
    "Follow-up in the surgical clinic in two weeks for a wound check and review of any pathology; the patient "
    "and family were given written instructions on wound care, bathing, activity and diet, on which pain "
    "medication to take and for how long, and on the signs of infection, bleeding or fever that should "
    "prompt a call to the on-call surgeon or a visit to the emergency department; the operative findings and "
    "the plan were discussed with the referring physician; "
)


def _sentences(note: _Note, count: int) -> str:
    """Operative prose that differs from note to note at every point (its own organ, tool and step number)."""
    words = [
        f"Step {i}: the {note.organ} was inspected again with the {note.tool}, hemostasis was confirmed at "
        f"site {i} of the {note.procedure}, and the field was irrigated with warm saline number {i}."
        for i in range(1, count + 1)
    ]
    return " ".join(words)


def note_text(note: _Note) -> str:
    body = _sentences(note, 24 if note.long else 6)
    lines = [
        f"Medical Specialty:{note.specialty}",
        f"Sample Name: {note.name[:-4]}",
        f"Description: {note.procedure.capitalize()}.",
        "(Medical Transcription Sample Report)",
        "",
        f"PREOPERATIVE DIAGNOSIS: Disease of the {note.organ}.",
        f"PROCEDURE PERFORMED: {note.procedure.capitalize()}.",
        "ANESTHESIA: General endotracheal anesthesia.",
        f"INDICATIONS: The patient has symptoms referable to the {note.organ} and consented to a {note.procedure}.",
        f"DESCRIPTION OF PROCEDURE: The patient was brought to the operating room and placed supine. {body} "
        f"Sponge and needle counts were correct at the end of the {note.procedure}.",
    ]
    lines += [f"{header}: {text.capitalize()}. {_FOLLOW_UP}{note.procedure} done." for header, text in note.sections]
    lines += ["", f"Keywords: {note.specialty.lower()}, {note.procedure}, {note.organ}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SyntheticNotes:
    directory: Path
    """Only the notes, under their file names (a mirror's directory)."""
    manifest: Path
    """Their manifest (name, bytes, sha256), for ``MTSAMPLES_PROCEDURES_MANIFEST``."""

    @property
    def names(self) -> list[str]:
        return sorted(p.name for p in self.directory.iterdir())

    def env(self, base_url: str | None = None) -> dict[str, str]:
        """The variables a user sets to load these notes: from ``base_url``, or from the directory itself."""
        return {BASE_URL_ENV: base_url or str(self.directory), MANIFEST_ENV: str(self.manifest)}

    def mirror(self, max_lifetime: float = 1200.0) -> NoteMirror:
        """A loopback mirror of the notes whose ``env`` names their manifest."""
        return NoteMirror(self.directory, manifest=self.manifest, max_lifetime=max_lifetime)


def notes_in(directory: Path) -> dict[str, bytes]:
    """The notes of a directory (synthetic or pinned) as the scenario reads them: file name to bytes."""
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.txt"))}


def write_synthetic_notes(root: Path) -> SyntheticNotes:
    directory = root / "notes"
    directory.mkdir(parents=True)
    for note in NOTES:
        (directory / note.name).write_text(note_text(note), encoding="utf-8")
    manifest = root / "manifest.tsv"
    manifest.write_text(manifest_for(directory), encoding="utf-8")
    return SyntheticNotes(directory, manifest)
