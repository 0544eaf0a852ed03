"""batch.py: judge calls through the OpenAI Batch API into HELM's cache, as the loopback batch server plays it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.failure_kinds import BATCH_UNANSWERED
from helm_mtsamples_ext.judges.helm_calls.batch.run import BATCH_DIR, BatchSettings
from tests.annotators import judge_specs, make_annotator, notes
from tests.servers.batch import BatchAPI
from tests.servers.judge import JudgeServer

pytestmark = pytest.mark.helm

PANEL = ["a", "b"]


class Killed(Exception):
    pass


def judged(server: JudgeServer, cache: Path, n: int = 4, **kwargs: Any) -> list[dict[str, Any]]:
    annotator = make_annotator(cache, judge_specs(server, list(server.judges)), **kwargs)
    return [r[names.ANNOTATION_KEY] for r in annotator.annotate_all(notes(n))]


def polling(**settings: Any) -> Any:
    """The annotator's batch settings, with quick polls (the server finishes a batch in three)."""
    return lambda **given: BatchSettings(**{"poll_first": 0.01, **settings, **given})


@pytest.fixture
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("helm_mtsamples_ext.annotator.BatchSettings", polling())


@pytest.mark.usefixtures("fast_polls")
def test_a_batched_run_makes_no_direct_call_and_records_what_a_direct_run_does(tmp_path: Path) -> None:
    with JudgeServer(dict.fromkeys(PANEL, "steady"), batch=BatchAPI()) as server:
        batched = judged(server, tmp_path / "batched", judge_batch=True)
        assert server.count() == 0 and server.batch is not None and server.batch.created() == len(PANEL)
        direct = judged(server, tmp_path / "direct")
    assert batched == direct


@pytest.mark.usefixtures("fast_polls")
def test_a_finished_batched_run_run_again_makes_no_request_at_all(tmp_path: Path) -> None:
    with JudgeServer(dict.fromkeys(PANEL, "steady"), batch=BatchAPI()) as server:
        judged(server, tmp_path, judge_batch=True)
        assert server.batch is not None
        before = len(server.batch.requests)
        judged(server, tmp_path, judge_batch=True)
        judged(server, tmp_path)  # and without judge_batch: the batch's answers are the direct calls' cache
        assert (server.count(), len(server.batch.requests)) == (0, before)


@pytest.mark.usefixtures("fast_polls")
def test_an_expired_batch_sends_its_unanswered_requests_as_direct_calls(tmp_path: Path) -> None:
    with JudgeServer({"a": "steady"}, batch=BatchAPI(expire=True)) as server:
        records = judged(server, tmp_path, n=4, judge_batch=True)
        assert server.count() == 2, "half the batch expired unanswered: those two go direct"
    assert all(r["failed_judges"] == [] for r in records)


@pytest.mark.usefixtures("fast_polls")
def test_without_fallback_an_expired_batchs_unanswered_requests_fail_and_make_no_direct_call(tmp_path: Path) -> None:
    with JudgeServer({"a": "steady"}, batch=BatchAPI(expire=True)) as server:
        records = judged(server, tmp_path, n=4, judge_batch=True, judge_batch_fallback=False)
        assert server.count() == 0
    assert [r["failed_judges"] for r in records] == [[], [], ["a"], ["a"]]
    assert {records[i]["a"]["failure"] for i in (2, 3)} == {
        f"{BATCH_UNANSWERED}: judge batch expired (no direct call: judge_batch_fallback=false)"
    }
    assert {records[i]["a"]["failure_kind"] for i in (2, 3)} == {BATCH_UNANSWERED}


@pytest.mark.usefixtures("fast_polls")
def test_without_fallback_an_endpoint_refusing_the_batch_api_leaves_its_notes_failed(tmp_path: Path) -> None:
    with JudgeServer({"a": "steady"}) as server:  # no Batch API: the upload to /files answers 400
        records = judged(server, tmp_path, n=2, judge_batch=True, judge_batch_fallback=False)
        assert server.count() == 0
    assert all(r["failed_judges"] == ["a"] for r in records)
    assert records[0]["a"]["failure"].startswith("no judge batch (judge batches for ")
    assert records[0]["a"]["failure"].endswith("failed (BadRequestError); no direct call: judge_batch_fallback=false)")


@pytest.mark.usefixtures("fast_polls")
def test_a_request_in_the_error_file_is_a_named_failure(tmp_path: Path) -> None:
    with JudgeServer({"a": "steady", "r": "reject"}, batch=BatchAPI()) as server:
        records = judged(server, tmp_path, n=2, judge_batch=True)
        assert server.count() == 0
    assert [r["failed_judges"] for r in records] == [["r"], ["r"]]
    assert records[0]["r"]["failure"] == "batch request failed (400): invalid request: judge rejects this prompt"


@pytest.mark.usefixtures("fast_polls")
def test_a_killed_run_reattaches_to_its_batch_instead_of_submitting_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run dies while waiting on its batch; the ids were written down first, so the next run polls it."""

    def die(seconds: float) -> None:
        raise Killed()

    with JudgeServer({"a": "steady"}, batch=BatchAPI()) as server:
        monkeypatch.setattr("helm_mtsamples_ext.annotator.BatchSettings", polling(sleep=die))
        with pytest.raises(Killed):
            judged(server, tmp_path, judge_batch=True)
        ledger = json.loads(next((tmp_path / BATCH_DIR).iterdir()).read_text())
        assert [e["batch"] for e in ledger.values()] == ["batch_1"]
        monkeypatch.setattr("helm_mtsamples_ext.annotator.BatchSettings", polling())
        records = judged(server, tmp_path, judge_batch=True)
        assert server.batch is not None and server.batch.created() == 1 and server.count() == 0
    assert all(r["failed_judges"] == [] for r in records)
    assert json.loads(next((tmp_path / BATCH_DIR).iterdir()).read_text()) == {}


@pytest.mark.usefixtures("fast_polls")
def test_a_run_killed_before_hearing_its_batch_id_finds_the_batch_by_its_input_file(tmp_path: Path) -> None:
    """The ledger holds the uploaded file but no batch id (killed right after batches.create was sent)."""
    with JudgeServer({"a": "steady"}, batch=BatchAPI()) as server:
        judged(server, tmp_path / "first", judge_batch=True)  # only to learn the request lines' file
        assert server.batch is not None
        (ledger_file,) = (tmp_path / "first" / BATCH_DIR).iterdir()
        file_id = "file-1"
        ids = [json.loads(line)["custom_id"] for line in server.batch.files[file_id].splitlines()]
        second = tmp_path / "second" / BATCH_DIR
        second.mkdir(parents=True)
        (second / ledger_file.name).write_text(json.dumps({file_id: {"batch": None, "ids": ids}}))
        records = judged(server, tmp_path / "second", judge_batch=True)
        assert server.batch.created() == 1 and server.count() == 0
    assert all(r["failed_judges"] == [] for r in records)
