"""The notes as task samples, in no harness's types: an id, the input, the reference and what HELM keeps in
``extra_data``.

Why apart from HELM's Scenario: the same samples are what any front door gives the model under test (HELM's
``Instance``, an Inspect ``Sample``, a verifiers dataset row), so the rules that make them (decoding as HELM
reads a note, the notes left out and why, the section extraction, a stable id) live once, here. Pure; the
door logs what was left out.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from helm_mtsamples_ext.data.sections import NO_HEADER, Extraction, extract, specialty_of

MAX_NOTE_BYTES = 1_000_000
"""The largest pinned note is ~15 KB; anything near a megabyte is not an operative note, and
would blow the model's context window and the judges' budget."""


@dataclass(frozen=True)
class NoteSample:
    """One note as the model under test sees it, with the reference cut from it."""

    id: str
    input: str
    reference: str
    filename: str
    extracted_section: str
    specialty: str | None
    extraction: str

    @property
    def extra_data(self) -> dict[str, Any]:
        """What HELM's instance keeps beside the text (the report and the controls read it back)."""
        return {
            "filename": self.filename,
            "extracted_section": self.extracted_section,
            "specialty": self.specialty,
            "extraction": self.extraction,
        }


@dataclass
class SampleBatch:
    """The samples built from a set of notes, and each note left out with why (``NO_HEADER`` is the data set's
    ordinary case: most notes have no target section; any other reason is worth a warning)."""

    samples: list[NoteSample] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (filename, reason)

    @property
    def skipped(self) -> Counter[str]:
        return Counter(reason for _, reason in self.left_out)


def instance_id(filename: str) -> str:
    """A stable, file-system- and URL-safe id: readable slug plus a hash so distinct names never collide."""
    stem = filename[:-4] if filename.lower().endswith(".txt") else filename
    slug = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")[:48] or "note"
    digest = hashlib.sha256(filename.encode("utf-8")).hexdigest()[:8]
    return f"{slug}_{digest}"


def decode_note(raw: bytes) -> str | None:
    """Decode as HELM reads a note (UTF-8, universal newlines); None when it is not UTF-8."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _skip_reason_for_raw(raw: bytes) -> str | None:
    if not raw.strip():
        return "empty file"
    if len(raw) > MAX_NOTE_BYTES:
        return f"larger than {MAX_NOTE_BYTES} bytes"
    if b"\x00" in raw:
        return "binary file"
    return None


def build_samples(notes: Mapping[str, bytes], extraction: str) -> SampleBatch:
    """Turn raw notes into samples, in the notes' order; every note left out is listed with its reason."""
    batch = SampleBatch()
    for filename, raw in notes.items():
        reason = _skip_reason_for_raw(raw)
        text = None if reason else decode_note(raw)
        result = extract(text, extraction) if text is not None else None
        if not isinstance(result, Extraction):
            batch.left_out.append((filename, reason or (result.reason if result is not None else "not UTF-8 text")))
            continue
        batch.samples.append(
            NoteSample(
                id=instance_id(filename),
                input=result.input,
                reference=result.reference,
                filename=filename,
                extracted_section=result.section,
                specialty=specialty_of(text or ""),  # text is set whenever result is an Extraction
                extraction=extraction,
            )
        )
    return batch


__all__ = ["MAX_NOTE_BYTES", "NO_HEADER", "NoteSample", "SampleBatch", "build_samples", "decode_note", "instance_id"]
