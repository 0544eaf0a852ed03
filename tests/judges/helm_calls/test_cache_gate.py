"""The rules of cache_gate.py: what the tap in front of HELM's cache sees that HELM drops, taken once per thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import openai
import pytest

from helm_mtsamples_ext.judges.core.reply.served_model import NOT_REPORTED, ServedModel
from helm_mtsamples_ext.judges.helm_calls.cache_gate import CacheGate
from tests.judges.sdk_errors import http_request, status_error

pytestmark = pytest.mark.helm


class FakeCache:
    """HELM's Cache interface: ``get(key, compute)`` returns (response, cached), computing on a miss."""

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.cache_stats_key = "fake"

    def get(self, key: Any, compute: Callable[[], Any]) -> tuple[Any, bool]:
        self.keys.append(key)
        return compute(), False


def test_the_tap_records_the_exception_compute_raised_and_reraises_it() -> None:
    """HELM turns the SDK's exception into a string; the tap keeps the exception itself (status, headers)."""
    tap = CacheGate(FakeCache())
    error = status_error(429, {"Retry-After": "7"})

    def compute() -> Any:
        raise error

    with pytest.raises(openai.RateLimitError) as raised:
        tap.get({"model": "m"}, compute)
    assert raised.value is error
    assert tap.take() == (None, error)


CHOICES = [{"index": 0, "message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]


@pytest.mark.parametrize(
    ("response", "tokens"),
    [
        ({"choices": CHOICES, "usage": {"total_tokens": 321, "prompt_tokens": 300}}, 321),
        ({"choices": CHOICES}, None),
        ({"choices": CHOICES, "usage": None}, None),
        ({"choices": CHOICES, "usage": {"total_tokens": "many"}}, None),
    ],
    ids=["usage", "no-usage", "null-usage", "non-integer"],
)
def test_the_tap_records_the_total_tokens_of_the_response(response: Any, tokens: int | None) -> None:
    """The cached response's ``usage.total_tokens`` is what the call spent (None when not an integer)."""
    tap = CacheGate(FakeCache())
    assert tap.get({"model": "m"}, lambda: response) == (response, False)
    assert tap.take() == (tokens, None)


@pytest.mark.parametrize(
    ("response", "split"),
    [
        (
            {"choices": CHOICES, "usage": {"total_tokens": 321, "prompt_tokens": 300, "completion_tokens": 21}},
            (300, 21),
        ),
        ({"choices": CHOICES, "usage": {"total_tokens": 321}}, (None, None)),
        ({"choices": CHOICES, "usage": {"prompt_tokens": True, "completion_tokens": "21"}}, (None, None)),
        ({"choices": CHOICES}, (None, None)),
    ],
    ids=["usage", "total-only", "not-integers", "no-usage"],
)
def test_the_tap_records_input_and_output_tokens_apart(response: Any, split: tuple[int | None, int | None]) -> None:
    """What judging cost needs prompt and completion tokens apart (they are priced apart); taken once."""
    tap = CacheGate(FakeCache())
    tap.get({"model": "m"}, lambda: response)
    assert [tap.take_split(), tap.take_split()] == [split, (None, None)]


def test_take_resets_what_the_tap_saw() -> None:
    """Each call's tokens and exception are taken once: the next take sees nothing from it."""
    tap = CacheGate(FakeCache())
    error = openai.APITimeoutError(request=http_request())

    def times_out() -> Any:
        raise error

    tap.get({"model": "m"}, lambda: {"choices": CHOICES, "usage": {"total_tokens": 5}})
    taken = [tap.take(), tap.take()]
    with pytest.raises(openai.APITimeoutError):
        tap.get({"model": "m"}, times_out)
    taken += [tap.take(), tap.take()]
    assert taken == [(5, None), (None, None), (None, error), (None, None)]


def test_the_tap_keeps_each_threads_exchange_apart() -> None:
    """Judge calls run in threads sharing a client: a thread takes only what its own call saw."""
    tap = CacheGate(FakeCache())
    tap.get({"model": "m"}, lambda: {"choices": CHOICES, "usage": {"total_tokens": 7}})
    seen: list[tuple[int | None, BaseException | None]] = []
    thread = threading.Thread(target=lambda: seen.append(tap.take()))
    thread.start()
    thread.join(timeout=10)
    assert seen == [(None, None)]
    assert tap.take() == (7, None)


def test_the_tap_passes_the_key_through_and_stands_in_for_the_cache() -> None:
    """The tap is the cache as far as the client can tell: same key, same attributes."""
    cache = FakeCache()
    tap = CacheGate(cache)
    tap.get({"model": "m", "messages": []}, lambda: {"choices": CHOICES})
    assert cache.keys == [{"model": "m", "messages": []}]
    assert tap.cache_stats_key == "fake"


def test_the_tap_records_what_the_server_said_it_ran_taken_once() -> None:
    """The reply's ``model`` and ``system_fingerprint``, as sent or as stored (served_model.py); taken once."""
    tap = CacheGate(FakeCache())
    tap.get({"model": "m"}, lambda: {"choices": CHOICES, "model": "judge-v1", "system_fingerprint": "fp_1"})
    assert tap.take_served() == ServedModel("judge-v1", "fp_1")
    assert tap.take_served() == NOT_REPORTED
