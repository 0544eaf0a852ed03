"""One reply cap through Inspect (issue 42, point 2): a reply over ``REPLY_CAP`` is ``reply too long (N characters;
the cap is 65536)`` with its true N, never read (a valid verdict with a 5 MB explanation is no score), never sent
back in a repair turn, and never kept whole by Inspect (the wire clips it before Inspect sees it, so the log stays
small); a body past the wire's ceiling is not read on and fails as ``reply too long``, asked once."""

from __future__ import annotations

import asyncio
import json
import random
import string
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from helm_mtsamples_ext.common.failure_kinds import REPLY_TOO_LONG, failure_kind, reply_too_long
from helm_mtsamples_ext.common.record import RAW_REPLY
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.core.settings import REPLY_CAP, STORED_REPLY_CAP
from helm_mtsamples_ext.judges.inspect_calls.errors import NamedReply
from helm_mtsamples_ext.judges.inspect_calls.wire import BODY_CEILING, read_bounded
from tests.doors.inspect.served_eval import failures, metric_values, recorded, served_eval
from tests.servers.judge import JudgeServer, RecordedRequest, Reply
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect

EXPLANATION = 5_000_000
"""Characters of the big verdict's accuracy explanation (a valid verdict otherwise)."""
PROSE = 2_000_000
ENDLESS = BODY_CEILING + 4 * 1024 * 1024
"""A reply past the wire's ceiling (the ceiling stands in for a body without end)."""
WORDS = "".join(random.Random(42).choices(string.ascii_letters + " ", k=EXPLANATION))
"""Text that does not compress: the log's size then shows what Inspect kept (5 MB of one letter zips to kilobytes)."""
BIG_VERDICT = json.dumps({d: {"score": 4, "explanation": WORDS if d == "accuracy" else "fine"} for d in DIMENSIONS})
KEPT = 2_000_000
"""Bytes the log may hold in all, unpacked: each clipped reply (64 KiB) a few times per call, for 3 notes and 4
judges; one whole 5 MB reply would pass it."""


class HugeReplies(JudgeServer):
    """The loopback judges, with two tests/servers/judge.py has no behaviour for: ``big`` answers a valid verdict
    whose accuracy explanation is 5 MB, ``endless`` a reply past the wire's ceiling."""

    def respond(self, request: RecordedRequest) -> Reply:
        if request.model == "big":
            return Reply(200, BIG_VERDICT)
        if request.model == "endless":
            return Reply(200, (WORDS * 4)[:ENDLESS])
        return super().respond(request)


LIMIT = 3


def test_replies_over_the_cap_are_named_with_their_length_asked_once_and_kept_clipped(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    judges = {"a": "steady", "big": "steady", "prose": "huge", "endless": "steady"}
    server = HugeReplies(judges, huge_bytes=PROSE)
    done, log = served_eval(synthetic_notes, tmp_path, server, "-T", "judge_max_wait=60", limit=LIMIT)
    assert done.returncode == 0 and log is not None and log.status == "success" and log.samples, done.stderr[-3000:]
    for sample in log.samples:
        failed = failures(sample)
        assert failed["big"] == reply_too_long(len(BIG_VERDICT), REPLY_CAP), failed
        assert failed["prose"] == reply_too_long(PROSE, REPLY_CAP), failed
        assert failure_kind(failed["endless"]) == REPLY_TOO_LONG, failed
        assert set(failed) == {"big", "prose", "endless"}, "the steady judge scored every note"
        entries = recorded(sample)
        assert all(entries[j]["accuracy"]["score"] is None for j in ("big", "prose", "endless"))
        assert 0 < len(entries["prose"][RAW_REPLY]) <= STORED_REPLY_CAP, "stored clipped"
    for judge in ("big", "prose", "endless"):
        assert server.count(judge) == LIMIT, f"{judge}: asked once per note, no repair turn, no retry"
        assert all(r.turns == 1 for r in server.requests if r.model == judge)
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    assert log_file.stat().st_size < KEPT // 2 and unpacked_size(log_file) < KEPT, "Inspect kept a reply whole"
    assert metric_values(log)[("failed_share:big", "mean")] == 1.0


def test_the_wire_stops_reading_a_body_at_its_ceiling() -> None:
    """A body without end: read in chunks up to the ceiling, then the call fails as reply too long, the chunks
    after it never asked for."""
    asked: list[int] = []

    class Endless:
        async def aiter_bytes(self) -> AsyncIterator[bytes]:
            while True:
                asked.append(1)
                yield b"z" * 65536

    with pytest.raises(NamedReply) as raised:
        asyncio.run(read_bounded(Endless(), 1024 * 1024))
    assert failure_kind(raised.value.failure) == REPLY_TOO_LONG
    assert len(asked) == 1024 * 1024 // 65536 + 1


def unpacked_size(log_file: Path) -> int:
    """The bytes an ``.eval`` log (a zip) holds, unpacked."""
    with zipfile.ZipFile(log_file) as archive:
        return sum(member.file_size for member in archive.infolist())
