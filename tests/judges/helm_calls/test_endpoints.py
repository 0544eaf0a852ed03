"""The rules of endpoints.py: what JudgeEndpointClient sends for each structured-output mode, and how
judge_timeout reaches its HTTP client."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from helm.common.cache import BlackHoleCacheConfig
from helm.common.request import Request

from helm_mtsamples_ext.judges.helm_calls import formats as structured
from helm_mtsamples_ext.judges.helm_calls.endpoints import JudgeEndpointClient, register_endpoint_deployment
from helm_mtsamples_ext.judges.helm_calls.formats import VERDICT_SCHEMA

pytestmark = pytest.mark.helm

# ---------------------------------------------------------------- what the client sends


@pytest.fixture(scope="module")
def client() -> JudgeEndpointClient:
    # medhelm 0.8's OpenAIClient takes a tokenizer (helm_compat); crfm-helm 0.5.16's takes none.
    from helm.tokenizers.simple_tokenizer import SimpleTokenizer

    from helm_mtsamples_ext.helm_host.compat import JUDGE_TOKENIZER, openai_client_needs_tokenizer

    tokenizer: dict[str, Any] = {"tokenizer": SimpleTokenizer(), "tokenizer_name": JUDGE_TOKENIZER}
    return JudgeEndpointClient(
        cache_config=BlackHoleCacheConfig(),
        api_key="EMPTY",
        base_url="http://127.0.0.1:9/v1",
        openai_model_name="m",
        **(tokenizer if openai_client_needs_tokenizer() else {}),
    )


def raw_request(client: JudgeEndpointClient, mode: str) -> dict[str, Any]:
    # A registered endpoint model, as the annotator sends (medhelm 0.8 refuses a model it has no metadata for).
    name = register_endpoint_deployment("http://127.0.0.1:9/v1", "m")
    request = Request(model=name, model_deployment=name, prompt="p", response_format=structured.response_format(mode))
    return client._make_chat_raw_request(request)


def test_json_object_mode_sends_the_schema_the_llama_cpp_way(client: JudgeEndpointClient) -> None:
    """``{"type": "json_object", "schema": VERDICT_SCHEMA}``, which llama.cpp's server accepts."""
    assert raw_request(client, "json_object")["response_format"] == {"type": "json_object", "schema": VERDICT_SCHEMA}


def test_json_schema_mode_sends_helms_json_schema_form(client: JudgeEndpointClient) -> None:
    """``{"type": "json_schema", "json_schema": {..., "schema": VERDICT_SCHEMA, "strict": True}}`` as HELM builds it."""
    sent = raw_request(client, "json_schema")["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"] == VERDICT_SCHEMA and sent["json_schema"]["strict"] is True


def test_the_doors_without_helm_send_helms_json_schema_body_byte_for_byte(client: JudgeEndpointClient) -> None:
    """A verifiers rubric's judges (judges/async_openai.py) ask for exactly what HELM's client asks for."""
    from helm_mtsamples_ext.judges.core.reply.verdict_schema import openai_json_schema

    assert raw_request(client, "json_schema")["response_format"] == openai_json_schema()


def test_off_mode_sends_no_response_format(client: JudgeEndpointClient) -> None:
    """Unconstrained: the request has no response_format at all."""
    raw = raw_request(client, "off")
    assert "response_format" not in raw and raw["messages"] == [{"role": "user", "content": "p"}]


def test_the_client_asks_for_the_served_model_name(client: JudgeEndpointClient) -> None:
    """The request names the model as the server knows it, not HELM's deployment name."""
    assert raw_request(client, "json_object")["model"] == "m"


def test_judge_timeout_bounds_each_read_and_the_whole_call_by_one_route() -> None:
    """``bound_whole_calls`` is how judge_timeout reaches the HTTP client: the SDK's per-read timeout and the
    whole-call transport both take it, so the deployment needs no timeout of its own."""
    from helm.tokenizers.simple_tokenizer import SimpleTokenizer

    from helm_mtsamples_ext.helm_host.compat import JUDGE_TOKENIZER, openai_client_needs_tokenizer

    tokenizer: dict[str, Any] = {"tokenizer": SimpleTokenizer(), "tokenizer_name": JUDGE_TOKENIZER}
    client = JudgeEndpointClient(
        cache_config=BlackHoleCacheConfig(),
        api_key="EMPTY",
        base_url="http://127.0.0.1:9/v1",
        openai_model_name="m",
        **(tokenizer if openai_client_needs_tokenizer() else {}),
    )
    client.bound_whole_calls(7)
    name = register_endpoint_deployment("http://127.0.0.1:9/v1", "m")
    with contextlib.suppress(Exception):  # nothing listens at port 9: the call fails, after the swap
        client._make_chat_request(Request(model=name, model_deployment=name, prompt="p"))
    assert client.client.timeout == 7.0
    assert client.client._client.timeout.read == 7.0
