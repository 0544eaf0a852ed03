"""The golden set is consistent with itself and covers every note the doors run (tests/golden.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from helm_mtsamples_ext.common.failure_kinds import (
    ECHOED,
    ERROR_BESIDE,
    NO_VERDICT,
    NOT_A_COMPLETION,
    REFUSED,
    REPLY_TOO_LONG,
    TIMED_OUT,
    failure_kind,
)
from helm_mtsamples_ext.data.instances import build_samples
from helm_mtsamples_ext.judges.core.reply.shape import completion_failure
from tests import golden
from tests.synthetic_notes import HELM_INSTANCES, notes_in, write_synthetic_notes


def test_each_expected_reward_is_the_mean_of_score_over_5_of_the_judges_that_gave_one() -> None:
    for name, expected in golden.EXPECTED.items():
        given = [s for s in expected.scores.values() if s is not None]
        if golden.CASES[name] == "empty":
            assert expected.reward == 0.0 and not expected.scores
        elif not given:
            assert expected.reward is None
        else:
            assert expected.reward is not None
            assert abs(expected.reward - sum(v / 5 for s in given for v in s) / (3 * len(given))) < 1e-12, name
        for judge, scores in expected.scores.items():
            said = golden.VERDICTS[golden.CASES[name]][judge]
            assert scores == (said if isinstance(said, tuple) else None), (name, judge)
            assert (scores is None) == (judge in expected.failures), (name, judge)


def test_the_failure_kinds_are_the_packages_and_the_counts_add_up() -> None:
    assert (golden.NO_VERDICT, golden.REFUSED, golden.TIMED_OUT, golden.ECHOED) == (
        NO_VERDICT,
        REFUSED,
        TIMED_OUT,
        ECHOED,
    )
    assert (golden.NOT_A_COMPLETION, golden.ERROR_BESIDE_REPLY, golden.REPLY_TOO_LONG) == (
        NOT_A_COMPLETION,
        ERROR_BESIDE,
        REPLY_TOO_LONG,
    )
    null = {"role": "assistant", "content": None}
    shapes = {
        golden.NO_MESSAGE_IN_REPLY: {"choices": [{"index": 0}]},
        golden.EMPTY_REPLY: {"choices": [{"message": null}]},
        golden.NO_TEXT: {"choices": [{"message": {**null, "tool_calls": [{"id": "c"}]}}]},
        golden.NOT_A_COMPLETION: {"error": {"message": "overloaded"}},
    }
    for kind, body in shapes.items():
        failure = completion_failure(body)
        assert failure is not None and failure_kind(failure) == kind, (kind, failure)
    counted: dict[str, Counter[str]] = {j: Counter() for j in golden.JUDGES}
    for expected in golden.EXPECTED.values():
        for judge, kind in expected.failures.items():
            counted[judge][kind] += 1
    assert {j: dict(c) for j, c in counted.items()} == golden.FAILURE_COUNTS


def test_every_instance_of_the_synthetic_notes_gets_its_golden_answer(tmp_path: Path) -> None:
    """The model under test finds each note by its Sample Name line in the prompt HELM's extraction leaves."""
    notes = write_synthetic_notes(tmp_path)
    samples = build_samples(notes_in(notes.directory), "helm").samples
    assert len(samples) == HELM_INSTANCES == len(golden.CASES)
    named = [golden.note_of(s.input) for s in samples]
    assert sorted(n for n in named if n) == sorted(golden.CASES)
    tags = {golden.answer_for(s.input) for s in samples}
    assert len(tags) == len(samples), "ten different answers"
    assert golden.verdict_for("gold-a", "judge this: " + golden.ANSWERS["planted"]) == golden.ECHO
    assert golden.verdict_for("gold-a", "no tag here") is None
