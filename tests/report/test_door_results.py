"""The doors' runs read back (report/door_results.py): verifiers' results.jsonl and Inspect's logs, as their tools
write them, give each judge's failed share per model and the suite report's warning when one model's answers make
a judge fail far more often than the others' do; none when they do not. The real files of the real tools are read
in the doors' own tests (tests/doors/*/test_door_results.py); here the formats are written from their documented
shapes, so the rule can be tried on known truth."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext.report.answer_failures import BOUNDED
from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.door_results import read_door_runs, summarize
from tests.report.door_runs import VERDICT, write_inspect_log, write_verifiers_run


def test_a_model_whose_answers_make_a_judge_fail_is_warned_of_through_both_formats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_verifiers_run(tmp_path, "junk", [{"harsh"}] * 18 + [set()] * 2)
    write_inspect_log(tmp_path, "openai-api/loop/decent", [set()] * 19 + [{"harsh"}])
    assert main(["--door-results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    (warning,) = [line for line in out.splitlines() if line.startswith("WARNING")]
    assert "model junk's answers make judge harsh fail: 18 of 20" in warning
    board = summarize(read_door_runs([tmp_path]).rows).board.set_index("model")
    assert list(board["notes"]) == [20, 20]
    one_judge = sum(VERDICT.values()) / 15  # a failed judge counts for nothing: the kind judge's reward alone
    assert board.loc["junk", "reward"] == pytest.approx(one_judge)
    assert board.loc["junk", "failed_share:harsh"] == pytest.approx(0.9) and board.loc["junk", "failed_share:kind"] == 0
    floored = (18 * (one_judge + 0.2) / 2 + 2 * one_judge) / 20  # each lost judgment at the minimum, 1/5
    assert board.loc["junk", BOUNDED] == pytest.approx(floored)
    assert board.loc["openai-api/loop/decent", "failed_share:harsh"] == pytest.approx(0.05)


def warned(root: Path, seed: int, on_junk: float, on_decent: float, notes: int = 40) -> bool:
    """Whether the runs of two models, whose harsh judge fails at the given rates (known truth), warn."""
    rng = random.Random(seed)
    for model, rate in (("junk", on_junk), ("decent", on_decent)):
        write_verifiers_run(root, model, [{"harsh"} if rng.random() < rate else set() for _ in range(notes)])
    return any("model junk's" in line for line in summarize(read_door_runs([root]).rows).warnings)


TRIALS = 100


def test_the_warning_fires_when_one_models_answers_cause_the_failures(tmp_path: Path) -> None:
    """Half the harsh judge's verdicts lost on one model's 40 answers, 5% on the other's: it warns nearly always."""
    fired = sum(warned(tmp_path / str(seed), seed, 0.5, 0.05) for seed in range(TRIALS))
    assert fired >= 0.95 * TRIALS


def test_the_warning_stays_quiet_when_the_judge_fails_alike_on_every_model(tmp_path: Path) -> None:
    """The same 20% failure rate on both models: a false warning at most at the documented 5% (Holm, Fisher)."""
    fired = sum(warned(tmp_path / str(seed), seed, 0.2, 0.2) for seed in range(TRIALS))
    assert fired <= 0.05 * TRIALS


def test_an_unreadable_file_is_named_and_the_rest_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_verifiers_run(tmp_path, "junk", [set()] * 5)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "broken.eval").write_bytes(b"not a zip")
    assert main(["--door-results", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "junk | 5 |" in captured.out
    assert (
        captured.err.strip().splitlines()[-1].startswith(f"warning: run skipped, {tmp_path / 'logs' / 'broken.eval'}")
    )


def test_nothing_to_read_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--door-results", str(tmp_path / "missing")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: no Inspect log or verifiers results.jsonl") and len(err) == 2


def feedback_lines(shape: str) -> list[str]:
    """Three rollouts without ``info.record``, their ``judge_feedback`` in MedARC's list shape (``new``) or the one
    dict older releases wrote (``old``): judged by both judges, by ``kind`` alone (``harsh`` failed), by none."""
    lines, lost = [], "no verdict in reply"
    judges: list[dict[str, Any]]
    for i, failed in enumerate([set(), {"harsh"}, {"harsh", "kind"}]):
        if shape == "new":
            judges = [
                {
                    "model": f"{j}-model",
                    "raw": None,
                    "error": lost if j in failed else None,
                    "scores": {
                        d: {"score": None if j in failed else s, "explanation": None} for d, s in VERDICT.items()
                    },
                    "score": None,
                    "judge": j,
                    "failure_kind": "no_verdict" if j in failed else None,
                }
                for j in ("harsh", "kind")
            ]
            feedback: object = [{"judges": judges, "score": None, "failures": len(failed), "empty_answer": False}]
        else:
            judges = [
                {
                    "name": j,
                    "scores": {} if j in failed else dict(VERDICT),
                    "error": "no verdict" if j in failed else None,
                }
                for j in ("harsh", "kind")
            ]
            feedback = {"judges": judges, "score": None, "failures": len(failed), "empty_answer": False}
        lines.append(json.dumps({"example_id": i, "reward": math.nan, "info": {"judge_feedback": feedback}}))
    return lines


@pytest.mark.parametrize("shape", ["new", "old"])
def test_judge_feedback_is_read_in_medarcs_list_shape_and_in_the_old_dict(tmp_path: Path, shape: str) -> None:
    run = tmp_path / "outputs" / "evals" / "env--m" / "abc"
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text("\n".join(feedback_lines(shape)) + "\n", encoding="utf-8")
    (run / "metadata.json").write_text(json.dumps({"model": "m"}), encoding="utf-8")
    board = summarize(read_door_runs([tmp_path]).rows).board.set_index("model")
    assert board.loc["m", "notes"] == 3 and board.loc["m", "unjudged"] == 1
    assert board.loc["m", "reward"] == pytest.approx(sum(VERDICT.values()) / 15)
    assert board.loc["m", "failed_share:harsh"] == pytest.approx(2 / 3)
    assert board.loc["m", "failed_share:kind"] == pytest.approx(1 / 3)
