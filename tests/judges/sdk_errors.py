"""The OpenAI SDK's own exceptions, as a live server's replies would make them, for the classify and tap tests."""

from __future__ import annotations

import httpx
import openai

URL = "http://127.0.0.1/v1/chat/completions"


def http_request() -> httpx.Request:
    return httpx.Request("POST", URL)


def status_error(status: int, headers: dict[str, str] | None = None, body: str = "error") -> openai.APIStatusError:
    """The exception the OpenAI SDK raises for an HTTP error: its own subclass for the status."""
    response = httpx.Response(status, headers=headers, request=http_request(), json={"error": {"message": body}})
    client = openai.OpenAI(api_key="EMPTY", base_url="http://127.0.0.1/v1")
    return client._make_status_error_from_response(response)
