"""The task's ``-T`` arguments checked as HELM checks the run entry's (issue 42, point 3): a misspelled name stops
the eval naming the closest one, an empty or malformed ``judges`` gets HELM's line (never the default panel), a key
given as an argument is refused with where keys go (its value repeated nowhere), and a run entry's argument this
door does not honour is refused in one line. Each is one last line on stderr, exit 1, no traceback, no log, and no
server is asked anything (the URLs below are closed ports)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.doors.inspect.eval_command import eval_command
from tests.servers.loopback import closed_port_url
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect

KEY = "sk-given-as-an-argument-0123456789"


@pytest.mark.parametrize(
    ("task_args", "said"),
    [
        (["-T", "judgse=x"], "unknown argument(s) judgse (did you mean judges?); mtsamples_procedures takes "),
        (["-T", "judgs=smollm2-135m"], "unknown argument(s) judgs (did you mean judges?)"),
        (
            ["-T", "judges="],
            "judges= must name one or more judges joined by '+' (e.g. judges=openai/gpt-4o-mini), "
            "got ''; leave it out for the default",
        ),  # fmt: skip
        (["-T", "judges=a++b"], "judges= must name one or more judges joined by '+'"),
        (["-T", "judges=a+a"], "judges must name different judges joined by '+', got 'a+a'"),
        (
            ["-T", f"judge_api_key={KEY}"],
            "judge_api_key: the task takes no key as an argument (Inspect writes its "
            "arguments into the log): set JUDGE_API_KEY, or JUDGE_API_KEY_<n> for the n-th judge_base_url",
        ),  # fmt: skip
        (["-T", "judge_rpm=60"], "judge_rpm: HELM's runner's argument(s), not the Inspect task's"),
        (["-T", "judge_max_concurrency=2"], "not the Inspect task's; Inspect's --max-connections bounds the judges'"),
        (["-T", "judge_timeout=abc"], "judge_timeout must be a positive number of seconds, got 'abc'"),
    ],
    ids=[
        "misspelled",
        "issue's typo",
        "empty judges",
        "blank judge",
        "same judge",
        "key",
        "rpm",
        "concurrency",
        "bad value",
    ],  # fmt: skip
)
def test_a_task_argument_mistake_is_one_last_line(
    synthetic_notes: SyntheticNotes, tmp_path: Path, task_args: list[str], said: str
) -> None:
    env = {
        **os.environ,
        **synthetic_notes.env(closed_port_url().removesuffix("/v1") + "/"),  # the notes: never fetched either
        "MTSAMPLES_PROCEDURES_CACHE_DIR": str(tmp_path / "notes"),
        "LOOP_BASE_URL": closed_port_url(),
        "LOOP_API_KEY": "EMPTY",
    }
    command = eval_command(tmp_path, "-T", f"judge_base_url={closed_port_url()}", *task_args)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-2000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("mtsamples_procedures: ") and said in last, done.stderr[-2000:]
    assert "Traceback" not in done.stderr + done.stdout and "not used by task" not in done.stderr
    assert KEY not in done.stderr + done.stdout
    assert not list((tmp_path / "logs").glob("*.eval"))


def test_the_tasks_run_entry_arguments_are_run_entry_args_own() -> None:
    """Inspect reads ``-T`` names from the task's signature: each run-entry argument there has ``RunEntryArgs``' name,
    default and type (built from it, never typed again), and every run-entry argument is either taken (``judges``
    and ``judge_base_url`` as lists too) or refused with a hint (NOT_HONOURED)."""
    import inspect
    import typing
    from dataclasses import fields

    from helm_mtsamples_ext.common.run_entry_args import DEFAULT_JUDGES, RunEntryArgs
    from helm_mtsamples_ext.inspect_task import HONOURED, NOT_HONOURED, mtsamples_procedures

    parameters = inspect.signature(mtsamples_procedures).parameters
    hints, types = typing.get_type_hints(mtsamples_procedures), typing.get_type_hints(RunEntryArgs)
    for name in HONOURED:
        assert parameters[name].default == getattr(RunEntryArgs(), name) and hints[name] == types[name], name
    assert parameters["judges"].default == DEFAULT_JUDGES
    assert {*HONOURED, *NOT_HONOURED, "judges", "judge_base_url"} == {f.name for f in fields(RunEntryArgs)}
    assert parameters["others"].kind is inspect.Parameter.VAR_KEYWORD
