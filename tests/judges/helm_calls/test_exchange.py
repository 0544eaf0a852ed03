"""The rules of exchange.py beyond what outcome.py and cache_gate.py test: inside a judge call, HELM's logged
traceback of a client error is dropped (call.py tells it in one line), in that thread alone and nowhere else."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest

from helm_mtsamples_ext.judges.helm_calls.exchange import quiet_client_errors

pytestmark = pytest.mark.helm


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def kept() -> Iterator[Kept]:
    """What HELM's logger lets through, seen at the logger itself."""
    logger, handler = logging.getLogger("helm"), Kept()
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def log_client_error(message: str) -> None:
    """As HELM's client logs an API error: an ERROR with the exception's traceback."""
    try:
        raise RuntimeError("Error code: 500")
    except RuntimeError:
        logging.getLogger("helm").error(message, exc_info=True)


def test_a_client_errors_traceback_is_dropped_inside_a_judge_call_and_kept_outside(kept: Kept) -> None:
    with quiet_client_errors():
        log_client_error("inside")
        logging.getLogger("helm").error("a line without a traceback")
    log_client_error("after")
    assert kept.messages == ["a line without a traceback", "after"]


def test_another_thread_logs_as_always_while_a_judge_call_is_quiet(kept: Kept) -> None:
    other = threading.Thread(target=log_client_error, args=("other thread",))
    with quiet_client_errors():
        other.start()
        other.join(timeout=10)
    assert kept.messages == ["other thread"]
