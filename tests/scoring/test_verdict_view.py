"""Which same verdicts count for nothing (verdict_view.py): voiding one never raises a model's reward, and across a
suite a judge is blind only when one verdict goes to different answers of several models.

Attack table: what an answer can do with the rule. Rewards derived by hand in the comments."""

from __future__ import annotations

from typing import Any

import pytest

from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.scoring.same_verdict import MIN_MODELS, SAME_VERDICT, same_verdict_judges
from helm_mtsamples_ext.scoring.verdict_view import MIDDLE, may_void, run_reward, run_view, suite_view

CANNED_LOW = "The answer does not address the procedure."
PARROT = "The plan is reasonable and clearly written."


def entry(score: int, explanation: str, status: str = "ok") -> dict[str, Any]:
    dims = {d: {"score": score, "explanation": explanation} for d in ("accuracy", "completeness", "clarity")}
    return {**dims, "status": status}


def note(answer: str, **judges: dict[str, Any]) -> tuple[str, NoteRecord | None]:
    return answer, NoteRecord.from_dict({**judges, "failed_judges": []})


JUNK = ["re", "albeit", "Answer:", "lorem"]
GOOD = ["Admit, IV antibiotics.", "Follow up in 2 weeks.", "Physical therapy.", "Remove sutures day 10."]


def reward(records: list[NoteRecord | None], judges: tuple[str, ...] = ("j", "r")) -> float | None:
    return run_reward(records, judges)


def voided(records: list[NoteRecord | None], judge: str) -> int:
    return sum(r is not None and r.judge_failed(judge) for r in records)


@pytest.mark.parametrize(
    ("notes", "judges", "expected_reward", "expected_voided"),
    [
        # The attack: j fairly gives its one low verdict (1s) to four junk answers; r gives them 2s. Voiding j would
        # raise .3 to .4: kept.
        ([note(a, j=entry(1, CANNED_LOW), r=entry(2, f"on {a}")) for a in JUNK], ("j", "r"), 0.3, 0),
        # A blind flatterer: j gives 4s to everything, r reads and gives 2s. Voiding lowers .6 to .4: voided.
        ([note(a, j=entry(4, PARROT), r=entry(2, f"on {a}")) for a in JUNK], ("j", "r"), 0.4, 4),
        # j alone, its one low verdict: voiding would leave nothing judged, and 1s are below the middle: kept.
        ([note(a, j=entry(1, CANNED_LOW)) for a in JUNK], ("j",), 0.2, 0),
        # j alone, canned 3s: at the middle, kept (a junk answer's fair verdict may be that).
        ([note(a, j=entry(3, CANNED_LOW)) for a in JUNK], ("j",), 0.6, 0),
        # j alone flattering everything with 4s: nothing left judged, which max_unjudged reports (issue 17's judge).
        ([note(a, j=entry(4, PARROT)) for a in JUNK], ("j",), None, 4),
    ],
    ids=["canned-low-beside-reader", "flatterer-beside-reader", "canned-low-alone", "canned-middle-alone", "parrot"],
)
def test_attack_table_one_run_never_voids_up(
    notes: list[tuple[str, NoteRecord | None]],
    judges: tuple[str, ...],
    expected_reward: float | None,
    expected_voided: int,
) -> None:
    view = run_view(notes, judges)
    before = reward([r for _, r in notes], judges)
    after = reward(view, judges)
    assert after == pytest.approx(expected_reward) if expected_reward is not None else after is None
    assert voided(view, "j") == expected_voided
    if after is not None and before is not None:
        assert after <= before + 1e-12, "a lost judgment never raises a reward"


def test_may_void_weighs_against_the_middle_only_when_nothing_is_left() -> None:
    assert MIDDLE == pytest.approx(0.6)
    assert may_void(0.5, 0.4) and may_void(0.5, 0.5) and not may_void(0.5, 0.50001)
    assert may_void(0.8, None) and not may_void(0.6, None) and not may_void(None, None)


def test_across_models_the_rule_needs_two_models_and_voids_on_every_one() -> None:
    """j gives one 4s verdict to two junk answers and two good answers of another model: blind, void on all four
    (each model's reward is then r's alone); the same verdict on one model's answers only is left to run_view."""
    assert MIN_MODELS == 2
    junk = [note(a, j=entry(4, PARROT), r=entry(1, f"on {a}")) for a in JUNK[:2]]
    good = [note(a, j=entry(4, PARROT), r=entry(5, f"on {a}")) for a in GOOD[:2]]
    views = suite_view([("junk", junk, ("j", "r")), ("good", good, ("j", "r"))])
    assert [voided(v, "j") for v in views] == [2, 2]
    assert [reward(v) for v in views] == pytest.approx([0.2, 1.0])
    failure = views[0][0].failure_of("j")  # type: ignore[union-attr]
    assert failure.startswith(SAME_VERDICT) and "of several models in this suite" in failure
    # Two different answers of one model alone are below MIN_ANSWERS, and one model is below MIN_MODELS.
    assert same_verdict_judges(junk + good, ["junk"] * 4, MIN_MODELS) == [{}] * 4


def test_attack_junk_models_canned_low_verdict_is_not_voided_when_a_good_model_never_gets_it() -> None:
    """The issue's attack in a suite: j's one low verdict goes to the junk model's four answers only, never to the
    good model's: not blind, kept; the junk model does not rise to tie the good one."""
    junk = [note(a, j=entry(1, CANNED_LOW), r=entry(2, f"on {a}")) for a in JUNK]
    good = [note(a, j=entry(5, f"good {a}"), r=entry(5, f"on {a}")) for a in GOOD]
    views = suite_view([("junk", junk, ("j", "r")), ("good", good, ("j", "r"))])
    assert [voided(v, "j") for v in views] == [0, 0]
    assert [reward(v) for v in views] == pytest.approx([0.3, 1.0])


def test_two_runs_of_one_model_are_one_model() -> None:
    """Two extraction modes of one model: their answers are one model's, so a verdict shared by them is not blind
    across models (and run_view keeps a low one)."""
    first = [note(a, j=entry(1, CANNED_LOW), r=entry(2, f"on {a}")) for a in JUNK[:2]]
    second = [note(a, j=entry(1, CANNED_LOW), r=entry(2, f"on {a}")) for a in JUNK[2:]]
    views = suite_view([("m", first, ("j", "r")), ("m", second, ("j", "r"))])
    assert [voided(v, "j") for v in views] == [0, 0]


@pytest.mark.parametrize(("score", "expected_voided"), [(1, [0, 0]), (3, [0, 0]), (4, [2, 2])])
def test_attack_a_low_verdict_crossing_models_stays(score: int, expected_voided: list[int]) -> None:
    """Junk answers drawing the canned verdict j also gives a shuffled control's (another patient's plan): at or
    below the scale's middle it stays on both, so neither rises to r's reward alone; above it, j flatters every
    model's answers alike, and is void on both."""
    junk = [note(a, j=entry(score, CANNED_LOW), r=entry(1, f"on {a}")) for a in JUNK[:2]]
    shuffled = [note(a, j=entry(score, CANNED_LOW), r=entry(2, f"on {a}")) for a in GOOD[:2]]
    views = suite_view([("junk", junk, ("j", "r")), ("mtsamples-control/shuffled", shuffled, ("j", "r"))])
    assert [voided(v, "j") for v in views] == expected_voided
    for view, notes in zip(views, (junk, shuffled), strict=True):
        after, before = reward(view), reward([r for _, r in notes])
        assert after is not None and before is not None
        if score <= 3:
            assert after == pytest.approx(before), "a low verdict is never voided"
