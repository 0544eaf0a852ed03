"""The control "models": fixed answers built from the notes themselves, to audit the judges.

A judge panel is only worth its scores if it can tell a right plan from a wrong one. Four controls
answer every note deterministically from the data, with no model and no key, and each makes a
promise a fair judge must honour:

- ``reference``: the clinician's own section. The ceiling: a judge should score it near 5.
- ``shuffled``: the section of a *different* note, of the same section kind where possible
  (see ``derangement``). Fluent, clinical and wrong for this patient: the floor.
- ``truncated``: the first third of the reference, cut at a word boundary. Completeness must drop.
- ``padded``: the reference followed by generic, clinically empty sentences until it is three times
  as long. Nothing was added, so a fair judge does not reward it (verbosity bias).

Pure: no I/O and no HELM import. The answers depend only on instance ids (stable hashes of file
names) and references, so they are the same on every run and every machine.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

CONTROL_ORGANIZATION = "mtsamples-control"
CONTROL_KINDS = ("reference", "shuffled", "truncated", "padded")

PADDING_FACTOR = 3
"""The padded answer is at least this many times as long as the reference (in characters)."""

PADDING_SENTENCES = (
    "The plan of care was discussed with the patient.",
    "All questions were answered to the patient's satisfaction.",
    "The patient will continue to be followed as clinically appropriate.",
    "Further management will depend on the clinical course.",
    "Any change in condition will be addressed accordingly.",
    "The care team remains available should any concerns arise.",
    "Documentation was completed in the medical record.",
    "Standard institutional protocols will be observed.",
    "Communication among the care team will be maintained.",
    "The patient's progress will continue to be monitored.",
)
"""Boilerplate that says nothing about this patient: no finding, drug, dose, date or procedure."""


@dataclass(frozen=True)
class ControlNote:
    """What a control needs to know of one instance."""

    id: str
    section: str
    """The section kind the reference was cut from (``extra_data["extracted_section"]``)."""
    reference: str


def control_model_name(kind: str) -> str:
    """The HELM model (and deployment) name of a control: ``mtsamples-control/<kind>``."""
    if kind not in CONTROL_KINDS:
        raise ValueError(f"unknown control {kind!r}; expected one of {CONTROL_KINDS}")
    return f"{CONTROL_ORGANIZATION}/{kind}"


def _rotate(ids: Sequence[str]) -> dict[str, str]:
    """Each id takes the next one's place, the last the first's: a cycle with no fixed point (len >= 2)."""
    return {ids[i]: ids[(i + 1) % len(ids)] for i in range(len(ids))}


def derangement(notes: Iterable[ControlNote]) -> dict[str, str]:
    """Whose reference each note gets as its ``shuffled`` answer: {note id: donor note id}.

    The rule, fixed so that every machine computes the same map:

    1. Sort the notes by id (a plain string sort).
    2. Within each section kind (PLAN, SUMMARY, FINDINGS) that has two notes or more, rotate by one:
       each note gets the reference of the next note of its kind in id order, the last the first's.
    3. Notes whose kind has no other note are pooled and rotated among themselves the same way (they
       get another kind's reference, since theirs has no other). A pool of one joins the rotation of
       the kind of the note that follows it in id order (wrapping round), in its id-order place.

    The result is a permutation with no fixed point: every reference is used once, never for its own
    note. Raises ValueError with fewer than two notes (no derangement exists) or with duplicate ids.
    """
    ordered = sorted(notes, key=lambda n: n.id)
    ids = [n.id for n in ordered]
    if len(set(ids)) != len(ids):
        raise ValueError("note ids must be unique")
    if len(ordered) < 2:
        raise ValueError("a derangement needs at least two notes")
    by_kind: dict[str, list[str]] = defaultdict(list)
    for note in ordered:
        by_kind[note.section].append(note.id)
    groups = [members for members in by_kind.values() if len(members) >= 2]
    lone = sorted(members[0] for members in by_kind.values() if len(members) == 1)
    if len(lone) >= 2:
        groups.append(lone)
    elif lone:
        (single,) = lone
        follower = ids[(ids.index(single) + 1) % len(ids)]
        host = next(g for g in groups if follower in g)
        host.append(single)
        host.sort()
    mapping: dict[str, str] = {}
    for group in groups:
        mapping.update(_rotate(group))
    return mapping


def truncate(reference: str) -> str:
    """The first third of ``reference`` (by characters), cut back to a word boundary.

    Always a non-empty prefix of the reference (for a non-empty reference). When the first word alone
    is longer than a third, there is no boundary to cut at, so the cut falls mid-word at the third
    (at least one character): the promise that matters is that the answer is clearly incomplete.
    """
    limit = max(1, len(reference) // 3)
    head = reference[:limit]
    if limit < len(reference) and not reference[limit].isspace():
        boundary = max((i for i, ch in enumerate(head) if ch.isspace()), default=-1)
        if boundary > 0 and head[:boundary].strip():
            head = head[:boundary]
    return head.rstrip() or reference[:limit]


def pad(reference: str) -> str:
    """``reference``, a blank line, then ``PADDING_SENTENCES`` in a cycle until ``PADDING_FACTOR`` times as long."""
    target = PADDING_FACTOR * len(reference)
    text = reference + "\n\n"
    for i, sentence in enumerate(itertools.cycle(PADDING_SENTENCES)):
        if len(text) >= target and i > 0:
            break
        text += ("" if i == 0 else " ") + sentence
    return text


def control_answers(kind: str, notes: Iterable[ControlNote]) -> dict[str, str]:
    """The ``kind`` control's answer for every note: {note id: answer}.

    ``shuffled`` depends on the whole set (see ``derangement``), so it is computed over all notes at once.
    """
    notes = list(notes)
    if kind == "reference":
        return {n.id: n.reference for n in notes}
    if kind == "shuffled":
        reference = {n.id: n.reference for n in notes}
        return {note: reference[donor] for note, donor in derangement(notes).items()}
    if kind == "truncated":
        return {n.id: truncate(n.reference) for n in notes}
    if kind == "padded":
        return {n.id: pad(n.reference) for n in notes}
    raise ValueError(f"unknown control {kind!r}; expected one of {CONTROL_KINDS}")
