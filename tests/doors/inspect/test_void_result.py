"""A void result is not a success (issue 42, point 5): ``inspect eval`` of our task over ``max_unjudged`` exits 1
and its last stderr line names the share unjudged and the fix, whatever ``--display`` (``none`` prints nothing
else). Within ``max_unjudged`` it exits 0 and says nothing of the kind. The real command, as a script runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from helm_mtsamples_ext.inspect_scorer import VOID
from helm_mtsamples_ext.inspect_task import void_lines
from tests.doors.inspect.served_eval import served_eval
from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.model import default_answer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect

LINE = (
    "mtsamples_procedures: 100% of the notes were judged by no judge (max_unjudged=0.5): see each score's metadata "
    "for why, fix the judges, or raise max_unjudged"
)


def lost_judge() -> JudgeServer:
    """A panel of one judge that gives no verdict on any note (every plan carries its marker)."""
    return JudgeServer({"b": Behaviour("lost_some", fail_marker=default_answer("")[:40])})


@pytest.mark.parametrize("display", ["none", "plain", "rich", "full"])
def test_an_eval_over_max_unjudged_exits_1_with_one_last_line(
    synthetic_notes: SyntheticNotes, tmp_path: Path, display: str
) -> None:
    done, log = served_eval(
        synthetic_notes, tmp_path, lost_judge(), "-T", "max_unjudged=0.5", "--display", display, limit=2
    )
    assert log is not None and log.status == "error", done.stderr[-3000:]
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1] == LINE, done.stderr[-3000:]
    assert done.stderr.count(LINE) == 1 and "Traceback" not in done.stderr.strip().splitlines()[-1]


def test_an_eval_within_max_unjudged_exits_0_without_the_line(synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    done, log = served_eval(synthetic_notes, tmp_path, lost_judge(), "-T", "max_unjudged=1", limit=2)
    assert done.returncode == 0 and log is not None and log.status == "success", done.stderr[-3000:]
    assert VOID not in done.stderr


def test_the_line_is_read_back_from_our_logs_only(synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    """The hook reads the line from the log's error; a log of another task with the same words is not ours."""
    _, log = served_eval(synthetic_notes, tmp_path, lost_judge(), "-T", "max_unjudged=0.5", limit=2)
    assert log is not None
    assert void_lines([log]) == [LINE]
    other = log.model_copy(deep=True)
    other.eval.task = "someone_else/task"
    assert void_lines([other]) == []
