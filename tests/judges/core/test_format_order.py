"""One judge's structured-output form under concurrent calls (judges/format_order.FormatChoice).

The race it closes: calls that start together each send the first form; when they are refused together, a shared
list cut by each call's own position ran out (three refusals of ``auto``'s three forms left none, and every later
call failed without asking) or skipped a form that works. The doors' end-to-end tests drive real concurrent calls
at a judge refusing ``json_schema``; these pin the rule for every order of events."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from helm_mtsamples_ext.judges.core.format_order import FALLBACK_ORDER, FormatChoice


def test_calls_refused_together_all_move_to_the_next_form_and_later_calls_start_there() -> None:
    for calls in (3, 8):
        choice = FormatChoice(FALLBACK_ORDER)
        started = [choice.first() for _ in range(calls)]
        assert started == [0] * calls
        moved = [choice.refused(index) for index in started]
        assert moved == [1] * calls, "each refused call asks json_object next; none skips to 'off' or runs out"
        assert choice.first() == 1


def test_the_last_form_is_never_dropped_and_a_form_that_worked_stays() -> None:
    choice = FormatChoice(FALLBACK_ORDER)
    assert choice.refused(2) is None and choice.may_fall_back(2) is False
    assert choice.first() == 0, "a refusal of the last form moves nothing"
    choice.worked(1)
    assert choice.refused(1) is None, "a 500 in the form that worked is the server's, not the format's"
    assert choice.first() == 1
    assert choice.refused(0) == 1, "a call still in the first form moves to the one that worked, not past it"
    choice.worked(2)
    assert choice.first() == 1, "the first form that worked wins"


events = st.lists(st.tuples(st.sampled_from(["refused", "worked"]), st.integers(0, 2)), max_size=30)


@given(events)
def test_in_any_order_of_events_the_choice_never_runs_out_or_goes_back(order: list[tuple[str, int]]) -> None:
    choice = FormatChoice(FALLBACK_ORDER)
    before = choice.first()
    for event, index in order:
        if event == "refused":
            may = choice.may_fall_back(index)
            following = choice.refused(index)
            assert (following is not None) == may, "may_fall_back tells what a refusal will do"
            assert following is None or index < following < len(FALLBACK_ORDER)
        else:
            choice.worked(index)
        now = choice.first()
        assert 0 <= now < len(FALLBACK_ORDER)
        assert now >= before or event == "worked", "only a form that worked may move the choice back"
        before = now
