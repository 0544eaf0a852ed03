"""Reading a judge's verdict from its reply, without I/O: the rules that decide what a judge said.

Kept pure so they can be tested on strings alone; the call only moves requests and records.

Parsing rules (why each exists):
- A reply that is, as a whole, one JSON object of the asked form (a ```json fence aside) is the verdict by its
  structure (``structured.py``): its strings are never read as verdicts, nothing in it is masked, and an
  explanation sharing the answer's words does not refuse it, so an answer carrying the judge's own words
  (the opening of its verdict, its stock sentences) cannot remove it. Only a reply that is wholly a verdict
  written in the answer or the note fails (``ECHOED``).
- A verdict writing a key twice is two answers to one question: a named failure (``DUPLICATE_KEYS``), never
  the last value silently.
- In a prose reply, a verdict is read only from the judge's own words. The reply is compared with the prompt's
  untrusted texts (the candidate answer and the note, which the model under test wrote or was given), both
  normalised (``normalise.py``): every stretch the judge copied from them, retyped or not, is masked out
  first (``copied.py``), so JSON planted in the answer and quoted by the judge, before or after its own
  verdict, whole or in part, in a JSON or single-quoted object or in prose, is never a candidate. Masking
  can never remove the judge's own verdict: when it leaves fewer valid dimensions than the reply's last
  verdict object that is no quote (``structured.is_quote``), that object is read as written.
- A reply may wrap its JSON in prose or a ```json fence, or break it (trailing comma, single quotes,
  unescaped quotes, missing closing brace): every top-level ``{...}`` span is read, strictly first, then
  with ``json_repair`` — a maintained repairer rather than ad-hoc fixes. Spans are delimited with string
  literals respected (double-quoted, and single-quoted where a JSON token may start), so a ``}`` inside a
  quoted explanation neither ends a span nor starts a new scan, and json_repair is given those strings as
  JSON strings (it would count their braces too: ``verdict_spans.py``).
- Of the verdicts that remain (an object with at least one dimension key), the judge's LAST counts: a judge
  that drafts and corrects itself means its final word, and objects nested inside a verdict are never
  candidates of their own. A verdict whose explanations are the answer's or the note's words (a plant too
  short to mask) is not the judge's and is passed over.
- Both the nested form ``{"accuracy": {"score": 4, "explanation": "..."}}`` and the flat form
  ``{"accuracy": 4}`` are read: small judges often flatten, and the score rule below is the same
  either way (a flat dimension has no explanation, so it does not count: see the explanation rule).
  Keys are matched case-insensitively; extra keys are ignored.
- A score counts only if it is an integer 1-5 (4, 4.0 and "4" are 4; 4.5, 0, 6, "N/A", null, "4/5",
  true are not: the rubric's rule, ``rubric.normalise_score``). An invalid or missing dimension has score
  None and a reason in ``invalid``.
- Reasoning is dropped only where a reasoning judge puts it: a leading ``<think>...</think>`` block (all of
  the reply if it never closes), or the text before a first ``</think>`` with no ``<think>`` before it (the
  chat template opened the block), unless that tag could be a quote (the untrusted texts hold it). A tag
  anywhere else is text: an answer holding ``<think>`` cannot hide or cut the judge's verdict.
- A verdict is only what the judge wrote. Repair may close a brace, never invent a value: in a repaired
  object a score counts only if the reply holds it literally, followed by a delimiter (a reply cut off
  after ``"score": 4`` may have been going to say 45).
- An explanation is the verdict's evidence (``explanations.py``): a dimension counts only when its
  explanation is the judge's own words, and a verdict with any placeholder, format fragment or copied
  explanation is refused whole: the judge was copying, not judging.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from helm_mtsamples_ext.common.answer import reasoning_end
from helm_mtsamples_ext.common.failure_kinds import DUPLICATE_KEYS, ECHOED, NOT_OWN_WORDS, VERDICT_REFUSED
from helm_mtsamples_ext.common.rubric import DIMENSIONS, normalise_score
from helm_mtsamples_ext.judges.core.reply.copied import Masked, holds_verbatim, mask_copied, normalised_forms, own_words
from helm_mtsamples_ext.judges.core.reply.explanations import (
    COPIED,
    explanation_problem,
    refuses_verdict,
    words,
)
from helm_mtsamples_ext.judges.core.reply.spans import Candidate, literal_scores, lower_keys, show, verdict_objects
from helm_mtsamples_ext.judges.core.reply.structured import is_quote, top_level_verdict

__all__ = ["DUPLICATE_KEYS", "ECHOED", "DimensionScore", "Verdict", "parse_verdict"]


@dataclass(frozen=True)
class DimensionScore:
    score: int | None
    explanation: str


@dataclass(frozen=True)
class Verdict:
    """One judge's reading of one answer; ``dimensions`` always holds the three DIMENSIONS, in order."""

    dimensions: dict[str, DimensionScore]
    invalid: dict[str, str] = field(default_factory=dict)
    failure: str | None = None
    """Why the reply's verdict counts for nothing as a whole (a key written twice), or None."""

    @property
    def has_valid_dimension(self) -> bool:
        return any(d.score is not None for d in self.dimensions.values())


def _read_dimension(
    value: Any, dimension: str, candidate: Candidate, masked: Masked, untrusted: Sequence[str], own: bool = False
) -> tuple[DimensionScore, str | None]:
    """A dimension's score and explanation (what the judge quoted written back), and why it is invalid (None
    when it counts). ``own``: the verdict is the judge's by its structure, so what its explanation shares with
    the answer or the note is the judge's wording, never a reason to refuse it."""
    if isinstance(value, dict):
        fields = lower_keys(value)
        raw_explanation = fields.get("explanation", "")
        read = raw_explanation if isinstance(raw_explanation, str) else show(raw_explanation)
        explanation = masked.restore(read)
        if "score" not in fields:
            return DimensionScore(None, explanation), "no score"
        raw = fields["score"]
    else:
        raw, read, explanation = value, "", ""
    score = normalise_score(raw)
    if score is None:
        return DimensionScore(None, explanation), f"{show(raw)} is not an integer 1-5"
    span = candidate.repaired_span
    if span is not None and score not in literal_scores(span, dimension):
        return DimensionScore(None, explanation), f"score {score} is not written out in the reply (cut off?)"
    if own:
        mine = own_words(explanation, untrusted) if explanation else None
        problem = explanation_problem(explanation, None if mine is None or not words(mine) else mine)
    else:
        mine = masked.own_text(read) if masked.holds_copy(read) else None
        problem = explanation_problem(explanation, mine, holds_verbatim(explanation, untrusted))
    if problem is not None:
        return DimensionScore(None, explanation), problem
    return DimensionScore(score, explanation), None


def _copying(dimensions: dict[str, DimensionScore], invalid: dict[str, str]) -> Verdict:
    """The verdict refused whole: one of its explanations shows the judge was copying, so none of it counts."""
    copied = next(dim for dim in DIMENSIONS if refuses_verdict(invalid.get(dim)))
    why = invalid[copied].split(": ", 1)[1]
    for dim in DIMENSIONS:
        if dim not in invalid:
            invalid[dim] = f"{VERDICT_REFUSED}: the {copied} explanation is {why}"
    return Verdict({dim: DimensionScore(None, d.explanation) for dim, d in dimensions.items()}, invalid)


def parse_verdict(reply: str, untrusted: Sequence[str] = ()) -> Verdict | None:
    """The judge's last verdict in ``reply``, read from its own words only, or None when the reply holds none.

    ``untrusted`` are the prompt's texts the judge may quote and must not be scored from (the candidate
    answer, the note). Never raises, but for MemoryError: running out of memory is not "no verdict"."""
    try:
        quoted_tags = any("think>" in text.lower() for text in untrusted)
        body = (reply or "")[reasoning_end(reply or "", quoted_tags) :]
        whole = top_level_verdict(body)
        if whole is not None:  # the reply is the verdict, by its structure (structured.py)
            if is_quote(whole, body, untrusted, normalised_forms(untrusted)):
                return _failed(f"{ECHOED}: the whole reply is a verdict written in them")
            return _read_candidate(whole, Masked(body, ()), untrusted, own=True)
        return _prose_verdict(reply or "", body, untrusted, quoted_tags)
    except MemoryError:
        raise
    except Exception:  # defensive: a judge reply must never crash a run
        return None


def _prose_verdict(reply: str, body: str, untrusted: Sequence[str], quoted_tags: bool) -> Verdict | None:
    """A reply in prose: its verdict read with the copied stretches masked; and, so that masking can never remove
    the judge's own verdict, its last verdict object that is no quote (structured.is_quote), read as written. The
    second wins when it gives more valid dimensions (the answer carried the judge's own words)."""
    masked = mask_copied(reply, untrusted)
    text = masked.text
    candidates = verdict_objects(text[reasoning_end(text, quoted_tags) :])
    read = [_read_candidate(candidate, masked, untrusted) for candidate in reversed(candidates)]
    # A verdict whose explanations are the answer's or the note's own words is a quote the word floor let
    # through (copied.py), not the judge's: the judge's last verdict of its own wins, else the last read.
    mine = [verdict for verdict in read if not _is_copy(verdict)]
    chosen = (mine or read)[0] if read else None
    if _valid(chosen) == len(DIMENSIONS):
        return chosen
    forms = normalised_forms(untrusted)
    own = [c for c in verdict_objects(body) if not is_quote(c, body, untrusted, forms, by_scores=True)]
    if not own:
        return chosen
    written = _read_candidate(own[-1], Masked(body, ()), untrusted, own=True)
    return written if _valid(written) > _valid(chosen) else chosen


def _valid(verdict: Verdict | None) -> int:
    return 0 if verdict is None else sum(d.score is not None for d in verdict.dimensions.values())


def _is_copy(verdict: Verdict) -> bool:
    return any(reason.startswith(f"{NOT_OWN_WORDS}: {COPIED}") for reason in verdict.invalid.values())


def _read_candidate(candidate: Candidate, masked: Masked, untrusted: Sequence[str], own: bool = False) -> Verdict:
    if candidate.duplicates:
        return _duplicated(candidate.duplicates)
    dimensions: dict[str, DimensionScore] = {}
    invalid: dict[str, str] = {}
    for dim in DIMENSIONS:
        if dim not in candidate.fields:
            dimensions[dim], invalid[dim] = DimensionScore(None, ""), "missing"
            continue
        dimensions[dim], reason = _read_dimension(candidate.fields[dim], dim, candidate, masked, untrusted, own)
        if reason is not None:
            invalid[dim] = reason
    if any(refuses_verdict(reason) for reason in invalid.values()):
        return _copying(dimensions, invalid)
    return Verdict(dimensions=dimensions, invalid=invalid)


def _duplicated(keys: tuple[str, ...]) -> Verdict:
    """A verdict writing a key twice is two answers to one question: none of it counts, and the failure says so."""
    return _failed(f"{DUPLICATE_KEYS}: {', '.join(keys)}")


def _failed(failure: str) -> Verdict:
    """A verdict none of which counts, for one reason: the call's failure."""
    return Verdict({dim: DimensionScore(None, "") for dim in DIMENSIONS}, dict.fromkeys(DIMENSIONS, failure), failure)
