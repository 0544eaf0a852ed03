"""record.py: the annotation record's format, written by the annotator and read by everything else."""

from __future__ import annotations

from typing import Any

import pytest

from helm_mtsamples_ext.common.failure_kinds import NO_VERDICT, SERVER_ERROR, failure_kind
from helm_mtsamples_ext.common.record import RESERVED_KEYS, JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS

OK_ENTRY: dict[str, Any] = {
    "accuracy": {"score": 4, "explanation": "sound"},
    "completeness": {"score": 3, "explanation": "misses follow-up"},
    "clarity": {"score": None, "explanation": ""},
    "status": "ok",
    "invalid": {"clarity": '"N/A" is not an integer 1-5'},
    "tokens": 812,
    "tokens_in": 700,
    "tokens_out": 112,
    "structured": "json_schema",
    "reported_model": "gpt-4o-mini-2024-07-18",
    "system_fingerprint": "fp_0ba0d124f1",
    "model_deployment": "openai/gpt-4o-mini",
}
FAILED_ENTRY: dict[str, Any] = {
    **{dim: {"score": None, "explanation": ""} for dim in DIMENSIONS},
    "status": "failed",
    "failure": "no verdict in reply",
    "raw_reply": "I cannot evaluate this.",
    "model_deployment": "mtsjudge-0123abcd/llama",
}
RECORD: dict[str, Any] = {"gpt": OK_ENTRY, "llama": FAILED_ENTRY, "failed_judges": ["llama"]}


@pytest.mark.parametrize("record", [RECORD, {"failed_judges": [], "answer": "empty"}], ids=["judged", "empty"])
def test_a_record_reads_and_writes_back_byte_for_byte(record: dict[str, Any]) -> None:
    """The dict form is a file format: reading then writing changes nothing, keys in the same order."""
    parsed = NoteRecord.from_dict(record)
    assert parsed is not None
    assert parsed.to_dict() == record
    assert list(parsed.to_dict()) == list(record)
    assert list(parsed.to_dict().get("gpt", {})) == list(record.get("gpt", {}))


def test_a_record_from_before_the_served_model_was_kept_reads_and_writes_without_it() -> None:
    """Records written before ``reported_model``/``system_fingerprint`` load with None and are written back
    unchanged (no new keys); a server that sent only its model leaves no fingerprint key."""
    old = {key: value for key, value in OK_ENTRY.items() if key not in ("reported_model", "system_fingerprint")}
    entry = JudgeEntry.from_dict(old)
    assert (entry.reported_model, entry.system_fingerprint) == (None, None)
    assert entry.to_dict() == old
    only_model = JudgeEntry.from_dict({**old, "reported_model": "llama-3.3-70b"})
    assert only_model.to_dict()["reported_model"] == "llama-3.3-70b"
    assert "system_fingerprint" not in only_model.to_dict()


def test_an_empty_answer_is_its_own_record() -> None:
    assert NoteRecord.empty().to_dict() == {"failed_judges": [], "answer": "empty"}
    parsed = NoteRecord.from_dict({"failed_judges": [], "answer": "empty"})
    assert parsed is not None and parsed.empty_answer and parsed.judges == {}


def test_no_record_at_all_reads_as_none() -> None:
    assert NoteRecord.from_dict(None) is None
    assert NoteRecord.from_dict("garbage") is None


@pytest.mark.parametrize(
    ("record", "failed"),
    [
        ({"a": {"status": "failed"}, "failed_judges": []}, True),
        ({"a": {"accuracy": {"score": 4}}, "failed_judges": ["a"]}, True),  # listed only, as older records did
        ({"a": {"accuracy": {"score": 4}}, "failed_judges": []}, False),  # no status: older records were ok
        ({"a": "not an entry", "failed_judges": []}, True),  # hand-edited: not a mapping is no entry
        ({"failed_judges": []}, True),  # absent from the record
    ],
    ids=["marked", "listed", "no-status", "not-a-mapping", "absent"],
)
def test_which_judges_count_as_failed(record: dict[str, Any], failed: bool) -> None:
    parsed = NoteRecord.from_dict(record)
    assert parsed is not None and parsed.judge_failed("a") is failed


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (RECORD, "no verdict in reply"),
        ({"llama": {"status": "failed"}, "failed_judges": ["llama"]}, "marked failed"),
        ({"llama": {"status": "failed"}, "failed_judges": []}, "no valid dimension"),
        ({"failed_judges": []}, "no record in annotation"),
    ],
)
def test_a_failed_judge_has_a_reason_in_words(record: dict[str, Any], reason: str) -> None:
    parsed = NoteRecord.from_dict(record)
    assert parsed is not None and parsed.failure_of("llama") == reason


def test_a_flat_score_and_odd_fields_are_read_without_guessing() -> None:
    """A flat ``{"accuracy": 4}`` keeps its score; a non-int tokens or non-mapping invalid is dropped."""
    entry = JudgeEntry.from_dict({"accuracy": 4, "tokens": "many", "invalid": "yes"})
    assert entry.scores == {"accuracy": 4, "completeness": None, "clarity": None}
    assert entry.tokens is None and entry.invalid == {} and entry.status == "ok"


def test_reserved_keys_are_the_record_keys_that_are_not_judges() -> None:
    assert RESERVED_KEYS == {"failed_judges", "answer", "model_family", "answer_cut", "rules_version"}
    parsed = NoteRecord.from_dict(RECORD)
    assert parsed is not None and list(parsed.judges) == ["gpt", "llama"]


def test_the_model_under_tests_family_is_kept_and_an_earlier_record_has_none() -> None:
    """Self-preference needs the answer's family, resolved while the run had HELM's registry."""
    parsed = NoteRecord.from_dict({**RECORD, "model_family": "OpenAI"})
    assert parsed is not None and parsed.model_family == "OpenAI" and list(parsed.judges) == ["gpt", "llama"]
    assert parsed.to_dict()["model_family"] == "OpenAI"
    earlier = NoteRecord.from_dict(RECORD)
    assert earlier is not None and earlier.model_family is None and "model_family" not in earlier.to_dict()


@pytest.mark.parametrize(
    "record",
    [{**RECORD, "rules_version": 1}, {"failed_judges": [], "answer": "empty", "rules_version": 1}],
    ids=["judged", "empty"],
)
def test_the_rules_version_reads_and_writes_back(record: dict[str, Any]) -> None:
    parsed = NoteRecord.from_dict(record)
    assert parsed is not None and parsed.rules_version == 1
    assert parsed.to_dict() == record and "rules_version" not in parsed.judges


@pytest.mark.parametrize("version", [None, "1", True, 1.5], ids=["absent", "text", "bool", "float"])
def test_a_record_from_before_versioning_or_hand_edited_reads_as_unversioned(version: object) -> None:
    """Records of earlier releases have no rules_version; a value that is not a whole number is not one either."""
    record = dict(RECORD) if version is None else {**RECORD, "rules_version": version}
    parsed = NoteRecord.from_dict(record)
    assert parsed is not None and parsed.rules_version is None and "rules_version" not in parsed.to_dict()
    empty = NoteRecord.from_dict({"failed_judges": [], "answer": "empty"})
    assert empty is not None and empty.rules_version is None


def test_a_failures_kind_is_written_beside_its_text_and_read_back() -> None:
    """``failure_kind`` follows ``failure`` in the entry's JSON (scenario_state.json, Inspect's score metadata,
    verifiers' info), and only on a failed entry."""
    entry = JudgeEntry.from_dict({**FAILED_ENTRY, "failure_kind": NO_VERDICT})
    written = entry.to_dict()
    assert entry.failure_kind == written["failure_kind"] == NO_VERDICT
    assert list(written).index("failure_kind") == list(written).index("failure") + 1
    assert JudgeEntry.from_dict(written) == entry
    assert "failure_kind" not in JudgeEntry.from_dict(OK_ENTRY).to_dict()


def test_the_stored_kind_is_read_not_the_text() -> None:
    record = NoteRecord.from_dict(
        {
            "a": {"status": "failed", "failure": "HTTP 502: bad gateway", "failure_kind": SERVER_ERROR},
            "failed_judges": [],
        }
    )
    assert record is not None and record.kind_of_failure("a") == SERVER_ERROR == record.judges["a"].kind
    assert failure_kind(record.failure_of("a")) == "HTTP 502", "the text alone names no kind of the table"


@pytest.mark.parametrize(
    "record",
    [
        RECORD,
        {"llama": {"status": "failed", "failure": "rate limited (HTTP 429): slow down"}, "failed_judges": []},
        {"llama": {"status": "failed", "failure": "reply cut off (max_tokens)"}, "failed_judges": ["llama"]},
        {"llama": {"status": "failed"}, "failed_judges": ["llama"]},
        {"llama": {"status": "failed"}, "failed_judges": []},
        {"failed_judges": []},
    ],
    ids=["text", "suffix", "words", "listed", "no-reason", "absent"],
)
def test_a_record_without_failure_kind_reads_its_kind_from_the_text_as_before(record: dict[str, Any]) -> None:
    """An older suite's entry has no ``failure_kind``: its kind is the one the prefix reader gave, and the record
    is written back without one."""
    parsed = NoteRecord.from_dict(record)
    assert parsed is not None and parsed.kind_of_failure("llama") == failure_kind(parsed.failure_of("llama"))
    assert all("failure_kind" not in entry for entry in parsed.to_dict().values() if isinstance(entry, dict))
