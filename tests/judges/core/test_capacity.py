"""The rules of capacity.py: an endpoint's capacity is read where its server says it (llama.cpp's /props,
llama-cpp-python's /v1/models), and caps the endpoint's gate and the fan-out; anything else is "unknown"."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext.judges.core.capacity import (
    LLAMA_CPP_PYTHON,
    Capacity,
    ServerFacts,
    endpoint_capacities,
    from_models,
    from_props,
    probe_capacity,
    probe_server,
    server_root,
)
from helm_mtsamples_ext.judges.core.reply.served_model import loaded_model
from tests.judges.callers import SHORT, make_caller, target
from tests.servers.judge import JudgeServer

pytestmark = pytest.mark.helm


@pytest.mark.parametrize(
    ("props", "slots"),
    [({"total_slots": 4}, 4), ({"total_slots": 0}, None), ({"total_slots": "4"}, None), ({}, None), ([1], None)],
    ids=["slots", "zero slots", "not a number", "no slots", "not an object"],
)
def test_llama_cpps_props_give_the_slots_when_they_are_a_positive_integer(props: Any, slots: int | None) -> None:
    found = from_props(props)
    assert (found.slots if found else None) == slots


@pytest.mark.parametrize(
    ("models", "capacity"),
    [
        ({"data": [{"id": "m", "owned_by": "me", "permissions": []}]}, 1),
        ({"data": [{"id": "m", "owned_by": "me"}]}, None),
        ({"data": [{"id": "m", "owned_by": "vllm", "permissions": []}]}, None),
        ({"data": []}, None),
        (None, None),
    ],
    ids=["llama-cpp-python", "no permissions", "vllm", "no models", "no answer"],
)
def test_llama_cpp_pythons_models_list_means_one_call_at_a_time(models: Any, capacity: int | None) -> None:
    found = from_models(models)
    assert (found.slots if found else None) == capacity


def test_props_are_asked_at_the_server_root_not_under_the_api_root() -> None:
    assert server_root("http://127.0.0.1:8081/v1/") == "http://127.0.0.1:8081"
    assert server_root("http://gw/llama") == "http://gw/llama"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"props_slots": 2}, Capacity(2, "llama.cpp's /props says total_slots=2")),
        ({"owned_by": "me"}, Capacity(1, LLAMA_CPP_PYTHON)),
        ({}, None),
    ],
    ids=["llama-server", "llama-cpp-python", "another server"],
)
def test_a_server_is_asked_its_capacity_over_http(options: dict[str, Any], expected: Capacity | None) -> None:
    with JudgeServer({"a": "steady"}, **options) as server:
        assert probe_capacity(server.base_url, None) == expected


def test_no_server_is_an_unknown_capacity_not_a_failure() -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    assert probe_capacity(url, None, timeout=2.0) is None


def test_a_learned_capacity_caps_the_gate_and_the_fan_out(tmp_path: Path) -> None:
    with JudgeServer({"a": "steady"}, props_slots=2) as server:
        caller = make_caller(tmp_path / "cache", server.base_url, max_concurrency=16)
        judge = target(caller, server.base_url, "a")
        assert caller.limit_of(judge.endpoint) == 1, "one call until the server was asked"
        assert caller.call(judge, SHORT).failure is None
        gate = caller.gates()[judge.endpoint]
        assert (gate.max_concurrency, caller.limit_of(judge.endpoint)) == (2, 2)
        assert "total_slots=2" in gate.capacity_source


def test_a_capacity_above_the_configured_concurrency_changes_nothing(tmp_path: Path) -> None:
    with JudgeServer({"a": "steady"}, props_slots=64) as server:
        caller = make_caller(tmp_path / "cache", server.base_url, max_concurrency=4)
        judge = target(caller, server.base_url, "a")
        caller.call(judge, SHORT)
        assert (caller.gates()[judge.endpoint].max_concurrency, caller.limit_of(judge.endpoint)) == (4, 4)


@pytest.mark.parametrize(
    ("props", "models", "asked", "loaded"),
    [
        ({"model_path": "/models/qwen2.5-7b-q4_k_m.gguf", "total_slots": 1}, None, "judge", "qwen2.5-7b-q4_k_m.gguf"),
        (None, {"data": [{"id": "/home/u/SmolLM2-135M-Instruct.Q4_1.gguf", "owned_by": "me"}]}, "smollm2-135m",
         "SmolLM2-135M-Instruct.Q4_1.gguf"),
        (None, {"data": [{"id": "C:\\models\\smol.gguf"}]}, "smol", "smol.gguf"),
        (None, {"data": [{"id": "qwen", "root": "Qwen/Qwen2.5-7B-Instruct"}]}, "qwen", "Qwen/Qwen2.5-7B-Instruct"),
        (None, {"data": [{"id": "qwen", "root": "/srv/weights/qwen7b"}]}, "qwen", "qwen7b"),
        (None, {"data": [{"id": "qwen", "root": "qwen"}]}, "qwen", None),
        (None, {"data": [{"id": "smollm2-135m", "owned_by": "me"}]}, "smollm2-135m", None),
        (None, {"data": [{"id": "a.gguf"}, {"id": "b.gguf"}]}, "a", None),
        ({"model_path": 7}, {"data": "x"}, "a", None),
        ([1], [2], "a", None),
    ],
    ids=["llama-server props", "llama-cpp-python no alias", "windows path", "vllm root", "vllm local root",
         "vllm root is the name", "an alias hides the file", "two files", "junk", "not objects"],
)  # fmt: skip
def test_the_loaded_model_is_read_where_the_server_says_it(
    props: Any, models: Any, asked: str, loaded: str | None
) -> None:
    assert loaded_model(props, models, asked) == loaded


def test_the_server_is_asked_its_loaded_model_over_http_with_its_capacity() -> None:
    with JudgeServer({"a": "steady"}, owned_by="me", model_file="/m/SmolLM2-135M-Instruct.Q4_1.gguf") as server:
        facts = probe_server(server.base_url, None, "a")
    assert facts == ServerFacts(Capacity(1, LLAMA_CPP_PYTHON), "SmolLM2-135M-Instruct.Q4_1.gguf")


def test_the_doors_ask_each_endpoint_once_and_keep_what_it_said() -> None:
    """endpoint_capacities (the Inspect and verifiers doors' start): one probe per endpoint, however its URL is
    written, and an endpoint that says nothing is left out (its calls are not limited)."""
    asked: list[tuple[str, str | None]] = []

    def probe(base_url: str, key: str | None) -> Capacity | None:
        asked.append((base_url, key))
        return Capacity(1, "one slot") if "8081" in base_url else None

    endpoints = [("http://127.0.0.1:8081/v1", "k"), ("http://127.0.0.1:8081/v1/", "k"), ("http://127.0.0.1:9/v1", None)]
    said = endpoint_capacities(endpoints, probe)
    assert asked == [("http://127.0.0.1:8081/v1", "k"), ("http://127.0.0.1:9/v1", None)]
    assert said == {"http://127.0.0.1:8081/v1": Capacity(1, "one slot")}
