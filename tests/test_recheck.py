"""`python -m helm_mtsamples_ext.recheck`: bad input is one `error:` line, and no call is made without --yes above the
stated number. (The live recheck itself, through helm-run and a loopback judge, is tests/e2e/test_recheck.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from helm_mtsamples_ext.common.run_entry_args import RECHECK_CALLS_WITHOUT_YES
from helm_mtsamples_ext.recheck import main
from tests.report.suites import JUDGES, Note, Run, build_main_suite, build_suite, ok, write_foreign_run

pytestmark = pytest.mark.helm


def last_error(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


def recheck(out: Path, *args: str) -> int:
    return main(["-o", str(out), "--local-path", str(out / "prod_env"), *args])


def test_no_such_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert recheck(tmp_path, "--suite", "nope", "--sample", "2") == 1
    assert last_error(capsys) == f"error: no suite directory {tmp_path}/runs/nope (check --suite and -o/--output-path)"


def test_a_sample_larger_than_the_judged_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_main_suite(tmp_path)
    assert recheck(tmp_path, "--suite", "v1", "--sample", "18") == 1
    assert last_error(capsys) == "error: panel judge-one+judge-two scored 17 answers, fewer than --sample 18"


def test_a_suite_no_panel_of_ours_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "runs" / "other"
    suite.mkdir(parents=True)
    write_foreign_run(suite)
    assert recheck(tmp_path, "--suite", "other", "--sample", "1") == 1
    line = last_error(capsys)
    assert line.startswith("error: no answer in") and line.endswith("nothing to ask again")


def test_more_calls_than_the_stated_number_need_yes_and_none_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    n = RECHECK_CALLS_WITHOUT_YES // (2 * len(JUDGES)) + 1  # each answer asked twice by default
    calls = 2 * len(JUDGES) * n
    notes = [Note(f"n{i}.txt", "Orthopedic") for i in range(n)]
    verdicts = {note.filename: {j: ok(4, 4, 4) for j in JUDGES} for note in notes}
    build_suite(tmp_path, [Run("acme/a", JUDGES, verdicts)], notes)
    assert recheck(tmp_path, "--suite", "v1", "--sample", str(n)) == 1
    captured = capsys.readouterr()
    assert f"judge calls:      {calls}" in captured.out, "the estimate is printed first"
    assert "(each answer asked 2 times)" in captured.out
    assert captured.err.strip().splitlines()[-1] == (
        f"error: {calls} live judge calls is more than {RECHECK_CALLS_WITHOUT_YES}: add --yes to make them"
    )
    assert not (tmp_path / "mtsamples_report").exists()


def test_a_judge_helm_cannot_reach_is_one_line_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_main_suite(tmp_path)  # its judges' deployments (fake/judge-one) exist nowhere
    assert recheck(tmp_path, "--suite", "v1", "--sample", "2") == 1
    assert last_error(capsys).startswith("error: judge 'judge-one': HELM has no model deployment 'fake/judge-one'")
    assert not (tmp_path / "mtsamples_report").exists()
