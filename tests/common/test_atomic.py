"""atomic.py: a file or a directory replaced whole; a failure leaves the previous one as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helm_mtsamples_ext.common.atomic import replace_file, whole_directory, write_text_whole


class Boom(Exception):
    pass


def test_a_file_is_replaced_and_a_failed_write_leaves_the_old_one(tmp_path: Path) -> None:
    path = tmp_path / "schema.yaml"
    write_text_whole(path, "old")

    def half(tmp: Path) -> None:
        tmp.write_text("ne")
        raise Boom

    with pytest.raises(Boom):
        replace_file(path, half)
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["schema.yaml"]
    write_text_whole(path, "new")
    assert path.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["schema.yaml"]


def test_a_directory_is_swapped_whole_keeping_the_users_files_and_dropping_stale_outputs(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.md").write_text("old")
    (out / "judge_audit.csv").write_text("old audit")  # written by the writer last time, not this time
    (out / "notes.txt").write_text("mine")  # the user's
    (out / "judge_drift.csv").write_text("drift")  # another command's
    with whole_directory(out, owned=("report.md", "judge_audit.csv")) as new:
        (new / "report.md").write_text("new")
        assert (out / "report.md").read_text() == "old"  # nothing seen before the swap
    assert sorted(p.name for p in out.iterdir()) == ["judge_drift.csv", "notes.txt", "report.md"]
    assert (out / "report.md").read_text() == "new" and (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no temporary sibling left


def test_a_failing_writer_leaves_the_previous_directory_intact(tmp_path: Path) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.md").write_text("old")
    with pytest.raises(Boom), whole_directory(out, owned=("report.md",)) as new:
        (new / "instances.csv").write_text("new")
        raise Boom
    assert sorted(p.name for p in out.iterdir()) == ["report.md"] and (out / "report.md").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_a_new_directory_is_created(tmp_path: Path) -> None:
    out = tmp_path / "a" / "report"
    with whole_directory(out) as new:
        (new / "report.md").write_text("first")
    assert (out / "report.md").read_text() == "first"
    assert oct(out.stat().st_mode & 0o777) == oct(0o755)


def test_a_killed_writers_sibling_is_removed_by_the_next_writer(tmp_path: Path) -> None:
    out = tmp_path / "report"
    dead = tmp_path / ".report.writing-999999999-abc"  # no such process
    dead.mkdir()
    live = tmp_path / f".report.writing-{os.getpid()}-abc"  # a writer still running
    live.mkdir()
    with whole_directory(out) as new:
        (new / "report.md").write_text("x")
    assert not dead.exists() and live.exists()
