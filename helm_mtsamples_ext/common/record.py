"""The annotation record: what each judge said about one note, or why it said nothing.

The annotator writes it into ``annotations["mtsamples_procedures"]`` of scenario_state.json; the metric
(through ``scoring.score_note``), the report and the review page read it. Its dict form is therefore a
file format, owned here: ``to_dict`` writes it, ``from_dict`` reads it back, including records written by
earlier versions of the package (no ``structured``, no ``tokens``, no ``tokens_in``/``tokens_out``, no
``reported_model``/``system_fingerprint``, a failure only listed in ``failed_judges``, no ``model_family``, no
``rules_version``, no ``failure_kind``: its kind is then read from the failure's text, as before) and
hand-edited ones (a judge entry that is not a mapping is taken as no entry).

    {"<judge>": {"accuracy": {"score": 4, "explanation": "..."}, ..., "status": "ok", ...},
     "failed_judges": ["<judge>", ...], "model_family": "OpenAI", "rules_version": 1}   # or, for an empty answer:
    {"failed_judges": [], "answer": "empty", "rules_version": 1}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from helm_mtsamples_ext.common.failure_kinds import MARKED_FAILED, NO_RECORD, NO_VALID_DIMENSION, failure_kind
from helm_mtsamples_ext.common.rubric import DIMENSIONS

FAILED_JUDGES = "failed_judges"
ANSWER = "answer"
EMPTY = "empty"
MODEL_FAMILY = "model_family"
"""The model under test's maker (families.py), resolved while the run had HELM's registry: absent when unknown."""
ANSWER_CUT = "answer_cut"
"""The answer's length in characters when it was longer than ``answer_cap`` and judged on its first ``answer_cap``
characters (common/answer_cap.py); absent when the judges read it whole."""
RULES_VERSION_KEY = "rules_version"
"""The rules the note was scored under (common/rules.py); absent in records written before versioning."""
RESERVED_KEYS = frozenset({FAILED_JUDGES, ANSWER, MODEL_FAMILY, ANSWER_CUT, RULES_VERSION_KEY})
"""Record keys that are not judge names (a judge may not be named so)."""

STATUS, OK, FAILED = "status", "ok", "failed"
SCORE, EXPLANATION = "score", "explanation"
FAILURE, INVALID, RAW_REPLY, TOKENS, STRUCTURED, MODEL_DEPLOYMENT = (
    "failure",
    "invalid",
    "raw_reply",
    "tokens",
    "structured",
    "model_deployment",
)
FAILURE_KIND = "failure_kind"
"""The failure's kind, a constant of common/failure_kinds.py's table, written beside its text; absent in records
written before it was kept (then the kind is read from the text: ``failure_kinds.failure_kind``)."""
TOKENS_IN, TOKENS_OUT = "tokens_in", "tokens_out"
"""The judge's input (prompt) and output (completion) tokens over the note's calls, as the server reported."""
REPORTED_MODEL, SYSTEM_FINGERPRINT, LOADED_MODEL = "reported_model", "system_fingerprint", "loaded_model"
"""The model the judge's server said it ran for the verdict, its ``system_fingerprint``, and the model file or
id the server said it loaded (judges/core/reply/served_model.py); absent when the server said none, and in records
written before they were kept."""


@dataclass(frozen=True)
class JudgeEntry:
    """One judge's verdict on one note. ``scores`` holds what was recorded (None where a dimension was
    invalid); whether a score counts is ``rubric.normalise_score``'s call, not the record's."""

    scores: dict[str, Any] = field(default_factory=dict)
    explanations: dict[str, str] = field(default_factory=dict)
    status: str = OK
    failure: str | None = None
    invalid: dict[str, str] = field(default_factory=dict)
    raw_reply: str | None = None
    tokens: int | None = None
    structured: str | None = None
    model_deployment: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    reported_model: str | None = None
    system_fingerprint: str | None = None
    loaded_model: str | None = None
    failure_kind: str | None = None

    @property
    def failed(self) -> bool:
        return self.status == FAILED

    @property
    def kind(self) -> str | None:
        """The failure's kind: the stored one, or for an older record the one its text begins with (None: no
        failure text)."""
        if self.failure_kind is not None:
            return self.failure_kind
        return failure_kind(self.failure) if self.failure else None

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            dim: {SCORE: self.scores.get(dim), EXPLANATION: self.explanations.get(dim, "")} for dim in DIMENSIONS
        }
        entry[STATUS] = self.status
        optional = {
            FAILURE: self.failure,
            FAILURE_KIND: self.failure_kind,
            INVALID: dict(self.invalid) or None,
            RAW_REPLY: self.raw_reply,
            TOKENS: self.tokens,
            TOKENS_IN: self.tokens_in,
            TOKENS_OUT: self.tokens_out,
            STRUCTURED: self.structured,
            REPORTED_MODEL: self.reported_model,
            SYSTEM_FINGERPRINT: self.system_fingerprint,
            LOADED_MODEL: self.loaded_model,
        }
        entry.update({key: value for key, value in optional.items() if value is not None})
        entry[MODEL_DEPLOYMENT] = self.model_deployment
        return entry

    @classmethod
    def from_dict(cls, entry: Mapping[str, Any]) -> JudgeEntry:
        scores: dict[str, Any] = {}
        explanations: dict[str, str] = {}
        for dim in DIMENSIONS:
            value = entry.get(dim)
            scores[dim] = value.get(SCORE) if isinstance(value, Mapping) else value
            text = value.get(EXPLANATION) if isinstance(value, Mapping) else None
            explanations[dim] = text if isinstance(text, str) else ""
        invalid = entry.get(INVALID)
        return cls(
            scores=scores,
            explanations=explanations,
            status=str(entry.get(STATUS) or OK),
            failure=_text(entry.get(FAILURE)),
            invalid={str(k): str(v) for k, v in invalid.items()} if isinstance(invalid, Mapping) else {},
            raw_reply=_text(entry.get(RAW_REPLY)),
            tokens=_count(entry.get(TOKENS)),
            structured=_text(entry.get(STRUCTURED)),
            model_deployment=_text(entry.get(MODEL_DEPLOYMENT)),
            tokens_in=_count(entry.get(TOKENS_IN)),
            tokens_out=_count(entry.get(TOKENS_OUT)),
            reported_model=_text(entry.get(REPORTED_MODEL)),
            system_fingerprint=_text(entry.get(SYSTEM_FINGERPRINT)),
            loaded_model=_text(entry.get(LOADED_MODEL)),
            failure_kind=_text(entry.get(FAILURE_KIND)),
        )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class NoteRecord:
    """The panel's record for one note: each judge's entry in panel order, or an empty answer."""

    judges: dict[str, JudgeEntry] = field(default_factory=dict)
    failed_judges: tuple[str, ...] = ()
    empty_answer: bool = False
    model_family: str | None = None
    answer_cut: int | None = None
    rules_version: int | None = None

    @classmethod
    def empty(cls, rules_version: int | None = None) -> NoteRecord:
        return cls(empty_answer=True, rules_version=rules_version)

    def judge_failed(self, name: str) -> bool:
        """Absent, marked failed in its entry, or listed in ``failed_judges``: a judge that counts for nothing."""
        entry = self.judges.get(name)
        return entry is None or entry.failed or name in self.failed_judges

    def failure_of(self, name: str) -> str:
        """Why a failed judge counts for nothing, in words for tables and logs."""
        entry = self.judges.get(name)
        if entry is None:
            return NO_RECORD
        return entry.failure or (MARKED_FAILED if name in self.failed_judges else NO_VALID_DIMENSION)

    def kind_of_failure(self, name: str) -> str:
        """The kind of ``failure_of(name)``: the entry's stored ``failure_kind``, or for a record written before it
        was stored the kind its text begins with (``failure_kinds.failure_kind``, the reader of then)."""
        entry = self.judges.get(name)
        kind = entry.kind if entry is not None else None
        return kind if kind is not None else failure_kind(self.failure_of(name))

    def to_dict(self) -> dict[str, Any]:
        version = {} if self.rules_version is None else {RULES_VERSION_KEY: self.rules_version}
        if self.empty_answer:
            return {FAILED_JUDGES: [], ANSWER: EMPTY, **version}
        record: dict[str, Any] = {name: entry.to_dict() for name, entry in self.judges.items()}
        record[FAILED_JUDGES] = list(self.failed_judges)
        if self.model_family is not None:
            record[MODEL_FAMILY] = self.model_family
        if self.answer_cut is not None:
            record[ANSWER_CUT] = self.answer_cut
        return {**record, **version}

    @classmethod
    def from_dict(cls, record: object) -> NoteRecord | None:
        """The record, or None when there is none (not a mapping: no annotation at all)."""
        if not isinstance(record, Mapping):
            return None
        version = _count(record.get(RULES_VERSION_KEY))
        if record.get(ANSWER) == EMPTY:
            return cls.empty(version)
        listed = record.get(FAILED_JUDGES)
        failed = tuple(str(n) for n in listed) if isinstance(listed, (list, tuple)) else ()
        judges = {
            str(name): JudgeEntry.from_dict(value)
            for name, value in record.items()
            if name not in RESERVED_KEYS and isinstance(value, Mapping)
        }
        family = record.get(MODEL_FAMILY)
        return cls(
            judges=judges,
            failed_judges=failed,
            model_family=family if isinstance(family, str) else None,
            answer_cut=_count(record.get(ANSWER_CUT)),
            rules_version=version,
        )
