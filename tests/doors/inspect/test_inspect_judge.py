"""How the Inspect door names what Inspect hands back, on Inspect's own objects: the errors it raises once its
retries are spent and the outputs it makes of a reply without text. (The wire cases run end to end in
test_inspect_eval.py and test_golden.py; these are the shapes a loopback server cannot make, such as another
provider's error.)"""

from __future__ import annotations

import asyncio

import httpx
import openai
import pytest
from inspect_ai.model import ChatMessageAssistant, Content, ContentText, ModelOutput
from inspect_ai.model._model import AttemptTimeoutError, ModelGenerateError
from tenacity import Future, RetryError

from helm_mtsamples_ext.common.failure_kinds import DOOR_FAILED, JUDGE_UNAVAILABLE, REFUSED, TIMED_OUT, failure_kind
from helm_mtsamples_ext.inspect_scorer import endpoint_keys, judge_models
from helm_mtsamples_ext.judges.core.prompt import build_prompt
from helm_mtsamples_ext.judges.core.throttle import Breaker
from helm_mtsamples_ext.judges.inspect_calls.errors import GaveUp, NamedReply, failure_of, shape_failure
from helm_mtsamples_ext.judges.inspect_calls.judge import JudgeCall, judge_note
from tests.servers.judge import JudgeServer

pytestmark = pytest.mark.inspect

CALL = JudgeCall("auto", None, 2.0, 20.0, ("sk-secret",))


def retry_error(last: BaseException) -> RetryError:
    """tenacity's error once its attempts are spent, the last attempt having raised ``last``."""
    attempt: Future = Future(attempt_number=3)
    attempt.set_exception(last)
    return RetryError(attempt)


def test_inspects_timeout_after_its_retries_is_timed_out_naming_both_bounds() -> None:
    for raised in (retry_error(AttemptTimeoutError(2)), AttemptTimeoutError(2), GaveUp(None)):
        failure = failure_of(raised, CALL)
        assert failure_kind(failure) == TIMED_OUT
        assert "judge_timeout=2s per attempt, judge_max_wait=20s in all" in failure


def test_another_providers_error_is_named_by_its_status_and_message_not_the_request() -> None:
    """Inspect wraps a provider's error in ModelGenerateError, whose text is the whole request (prompt, formats):
    the failure keeps the provider's status and message, the key scrubbed."""
    wrapped = ModelGenerateError(
        '\nRequest:\n{"response_format": {"type": "json_schema"}}\n\nOverloaded',
        status_code=529,
        provider_message="Overloaded (key sk-secret)",
    )
    assert failure_of(wrapped, CALL) == f"{JUDGE_UNAVAILABLE}: HTTP 529: Overloaded (key ***)"
    assert failure_of(GaveUp(wrapped), CALL) == f"{JUDGE_UNAVAILABLE}: HTTP 529: Overloaded (key ***)"


def test_a_reply_the_wire_named_keeps_its_name_however_wrapped() -> None:
    """The SDK wraps the transport's NamedReply in APIConnectionError, tenacity and GaveUp wrap that: the failure
    is the wire's text (a key in it scrubbed), never "connection failed" nor "judge unavailable"."""
    named = NamedReply("not a chat completion: the body is an error: key sk-secret; judge_base_url must be ...")
    try:
        raise openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1/v1")) from named
    except openai.APIConnectionError as wrapped:
        for raised in (wrapped, retry_error(wrapped), GaveUp(wrapped)):
            assert (
                failure_of(raised, CALL)
                == "not a chat completion: the body is an error: key ***; judge_base_url must be ..."
            )


def test_an_error_nothing_else_names_is_the_doors_never_judge_unavailable() -> None:
    """ "judge unavailable" is the breaker's word (or a 5xx's): a Python error Inspect raised on what it was handed
    is named as the door's failing, with its class."""
    failure = failure_of(TypeError("'NoneType' object is not iterable"), CALL)
    assert failure_kind(failure) == DOOR_FAILED and "TypeError" in failure


def output_of(content: str | list[Content]) -> ModelOutput:
    return ModelOutput.from_message(ChatMessageAssistant(content=content))


def test_a_refusal_is_refused_with_its_first_words_as_on_helms_path() -> None:
    refusal = "I'm sorry, but I can't help with evaluating this medical content as it might be unsafe."
    failure = shape_failure(output_of([ContentText(text=refusal, refusal=True)]))
    assert failure is not None and failure_kind(failure) == REFUSED
    assert failure.startswith(f"{REFUSED}: I'm sorry, but I can't help")


def test_a_reply_with_text_has_no_shape_failure_and_an_empty_one_has() -> None:
    assert shape_failure(output_of('{"accuracy": {"score": 4}}')) is None
    assert shape_failure(output_of("")) == "empty reply"


def test_the_probe_retrying_a_server_error_is_not_refused_by_its_own_breaker() -> None:
    """After the cooldown one call probes a judge whose breaker is open. The server's 500 to the probe's first
    attempt is retried by Inspect (it asks ``should_retry`` before ``before_retry``), never refused by the breaker
    that admitted the probe; the probe's verdict closes the breaker."""
    now = [0.0]
    breaker = Breaker(threshold=3, cooldown=10.0, clock=lambda: now[0])
    for prompt in ("one", "two", "three"):
        breaker.unanswered("connection failed: gone", prompt)
    now[0] = 11.0
    call = JudgeCall("json_object", None, 5.0, 60.0)
    call._breakers["j"] = breaker
    prompt = build_prompt("A note.", "A plan.", "The reference plan.", "prefix")
    with JudgeServer({"j": "flaky"}) as server:
        urls = [server.base_url]
        (model,) = judge_models(["j"], urls, endpoint_keys(urls), ()).values()  # as the scorer builds them
        entry = asyncio.run(judge_note(call, "j", model, prompt, ()))
        assert server.count("j") == 2
    assert entry.status != "failed" and entry.scores == server.scores_for("j", prompt), entry
    assert breaker.admit() == (True, "")
