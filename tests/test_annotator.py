"""The real JudgeAnnotator, through HELM's real AutoClient and cache, against a loopback judge server."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helm.benchmark.annotation.annotator import AnnotatorSpec
from helm.benchmark.annotation.annotator_factory import AnnotatorFactory
from helm.benchmark.model_deployment_registry import DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig
from helm.common.general import parallel_map
from helm.common.request import ErrorFlags, RequestResult, Token

from helm_mtsamples_ext import names
from helm_mtsamples_ext.annotator import JudgeAnnotator, make_encodable, question_of
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.helm_calls.call import JudgeAccessError, classify
from helm_mtsamples_ext.judges.helm_calls.endpoints import JudgeEndpointClient, endpoint_deployment_name
from tests.annotators import NOTE, judge_specs, make_annotator, notes, state
from tests.servers.judge import Behaviour, JudgeServer, verdict_json
from tests.states import request_state

pytestmark = pytest.mark.helm

CLASS_NAME = "helm_mtsamples_ext.annotator.JudgeAnnotator"


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JUDGE_API_KEY", "JUDGE_API_KEY_1", "JUDGE_API_KEY_2", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def scores(entry: dict[str, Any]) -> dict[str, int | None]:
    return {dim: entry[dim]["score"] for dim in DIMENSIONS}


@pytest.fixture
def panel() -> Iterator[JudgeServer]:
    judges: dict[str, str | Behaviour] = {
        "steady": "steady",
        "prose_fence": "prose_fence",
        "nonsense": "nonsense",
        "out_of_range": "out_of_range",
        "flaky": "flaky",
        "rate_limited": "rate_limited",
        "partial": "partial",
        "quoter": Behaviour("quoter", {"accuracy": 2, "completeness": 3, "clarity": 1}),
        "reject": "reject",
        "thinker": Behaviour("thinker", {"accuracy": 4, "completeness": 4, "clarity": 5}),
        "schema_refuser": "schema_refuser",
        "format_refuser": "format_refuser",
        "echo": "echo",
        "cut_off": "cut_off",
        "repairable": "repairable",
    }
    with JudgeServer(judges, cut_below=2000) as server:
        yield server


# What each judge behaviour must give: (status, scores are the server's, failure prefix, calls made).
# Calls: a bad reply gets a repair turn, and an identical second reply ends it (a deterministic server
# would repeat it forever); a server refusing a response_format costs one call per refused format.
BEHAVIOURS = {
    "steady": ("ok", True, None, 1),
    "prose_fence": ("ok", True, None, 1),
    "flaky": ("ok", True, None, 2),
    "rate_limited": ("ok", True, None, 2),
    "thinker": ("ok", True, None, 1),
    "quoter": ("ok", True, None, 1),
    "schema_refuser": ("ok", True, None, 2),
    "format_refuser": ("ok", True, None, 3),
    "cut_off": ("ok", True, None, 2),
    "repairable": ("ok", True, None, 2),
    "nonsense": ("failed", False, "no verdict in reply", 2),
    "out_of_range": ("failed", False, "no valid dimension", 2),
    "echo": ("failed", False, "no valid dimension", 2),
    "reject": ("failed", False, "request refused: HTTP 400", 1),
    "refuser": ("failed", False, "refused: I'm sorry", 1),
    "tool_caller": ("failed", False, "no text: the judge answered with a tool call", 1),
    "empty": ("failed", False, "empty reply", 1),
    "no_message": ("failed", False, "no message in the reply", 1),
}


@pytest.fixture(scope="module")
def panel_record(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], JudgeServer]]:
    """One note judged by the whole misbehaving panel (module-scoped: each case reads its own judge)."""
    judges: dict[str, str | Behaviour] = {m: m for m in BEHAVIOURS}
    judges["quoter"] = Behaviour("quoter", {"accuracy": 2, "completeness": 3, "clarity": 1})
    with JudgeServer(judges, cut_below=2000) as server:
        annotator = make_annotator(tmp_path_factory.mktemp("panel"), judge_specs(server, list(BEHAVIOURS)))
        yield annotator.annotate(state()), server


@pytest.mark.parametrize("judge", list(BEHAVIOURS))
def test_each_judge_behaviour_is_recorded_as_what_it_was(
    panel_record: tuple[dict[str, Any], JudgeServer], judge: str
) -> None:
    """A valid verdict counts with the judge's own scores; anything else is a failure with its reason and
    no score; the number of calls follows the retry and repair rules."""
    record, server = panel_record
    status, scored, failure, calls = BEHAVIOURS[judge]
    entry = record[judge]
    assert entry["status"] == status
    if scored:
        assert scores(entry) == server.scores_for(judge, server.prompts_for(judge)[0])
    else:
        assert set(scores(entry).values()) == {None}
        assert entry["failure"].startswith(failure)
    assert server.count(judge) == calls


def test_the_record_lists_judges_in_panel_order_then_the_failed_ones(
    panel_record: tuple[dict[str, Any], JudgeServer],
) -> None:
    record, _ = panel_record
    assert list(record) == [*BEHAVIOURS, "failed_judges", "rules_version"]  # the rules it was scored under, last
    assert record["failed_judges"] == [j for j, (status, *_) in BEHAVIOURS.items() if status == "failed"]


def test_a_valid_entry_holds_scores_explanations_tokens_format_and_deployment(
    panel_record: tuple[dict[str, Any], JudgeServer],
) -> None:
    record, server = panel_record
    steady = record["steady"]
    (prompt,) = server.prompts_for("steady")
    assert list(steady) == [
        *DIMENSIONS,
        "status",
        "tokens",
        "tokens_in",
        "tokens_out",
        "structured",
        "reported_model",
        "model_deployment",
    ]
    assert steady["reported_model"] == "steady"  # the model the server said it ran (no fingerprint sent)
    reply = verdict_json(server.scores_for("steady", prompt), prompt)
    verdict_tokens = len(reply.split())
    assert (steady["tokens_in"], steady["tokens_out"]) == (len(prompt.split()), verdict_tokens)
    assert steady["tokens"] == steady["tokens_in"] + steady["tokens_out"]
    assert steady["structured"] == "json_schema"
    assert steady["model_deployment"] == endpoint_deployment_name(server.base_url, "steady")
    assert steady["accuracy"]["explanation"] == json.loads(reply)["accuracy"]["explanation"]


def test_every_judge_is_asked_for_the_verdict_schema_first(panel_record: tuple[dict[str, Any], JudgeServer]) -> None:
    _, server = panel_record
    first: dict[str, str | None] = {}
    for request in server.requests:
        first.setdefault(request.model, request.response_format)
    assert set(first.values()) == {"json_schema"}


@pytest.mark.parametrize(
    ("judge", "formats", "kept"),
    [
        ("schema_refuser", ["json_schema", "json_object"], "json_object"),
        ("format_refuser", ["json_schema", "json_object", None], "off"),
    ],
)
def test_a_server_refusing_a_response_format_gets_the_next_one(
    panel_record: tuple[dict[str, Any], JudgeServer], judge: str, formats: list[str | None], kept: str
) -> None:
    """llama.cpp answers 500 to json_schema but takes json_object; others take no response_format at all."""
    record, server = panel_record
    assert [r.response_format for r in server.requests if r.model == judge] == formats
    assert record[judge]["structured"] == kept


def test_a_cut_off_reply_is_never_completed_and_the_repair_turn_gets_more_tokens(
    panel_record: tuple[dict[str, Any], JudgeServer],
) -> None:
    _, server = panel_record
    first, repair = [r for r in server.requests if r.model == "cut_off"]
    assert (first.turns, repair.turns) == (1, 2)
    assert repair.max_tokens == 2 * (first.max_tokens or 0)


def test_a_template_echo_is_no_verdict(panel_record: tuple[dict[str, Any], JudgeServer]) -> None:
    """A small judge echoing the format line ("score": 1, "<one or two sentences>") scores nothing."""
    record, _ = panel_record
    assert all("placeholder" in reason for reason in record["echo"]["invalid"].values())


def test_out_of_range_scores_are_named_in_invalid(panel_record: tuple[dict[str, Any], JudgeServer]) -> None:
    record, _ = panel_record
    assert record["out_of_range"]["invalid"] == {
        "accuracy": "9 is not an integer 1-5",
        "completeness": "0 is not an integer 1-5",
        "clarity": "4.5 is not an integer 1-5",
    }
    assert "raw_reply" in record["out_of_range"]


def test_every_call_of_a_failed_judge_counts_its_tokens(panel_record: tuple[dict[str, Any], JudgeServer]) -> None:
    record, _ = panel_record
    assert record["nonsense"]["tokens"] > record["steady"]["tokens"]
    assert record["nonsense"]["tokens_in"] > record["steady"]["tokens_in"], "the repair turns' prompts count too"


def test_each_failure_is_logged_once_naming_judge_and_instance(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="helm")
    with JudgeServer({"nonsense": "nonsense", "steady": "steady"}) as server:
        record = make_annotator(tmp_path, judge_specs(server, ["nonsense", "steady"])).annotate(state())
    assert record["failed_judges"] == ["nonsense"]
    assert sum("Judge nonsense failed on instance note-1" in r.getMessage() for r in caplog.records) == 1
    assert NOTE not in json.dumps(record)  # no copy of the prompt per instance


def test_a_dead_judge_costs_a_few_timeouts_then_fails_at_once(tmp_path: Path) -> None:
    """A judge that never answers: its timeout is retried once, and after three different prompts unanswered in a
    row (a prompt's retry counts once) its calls fail at once ("judge unavailable") while the rest of the panel
    judges every note: 2 + 2 + 1 calls, then none."""
    with JudgeServer({"slow": "slow", "steady": "steady"}, hold_seconds=30) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["slow", "steady"]), judge_timeout=0.3)
        records = [annotator.annotate(state(note=f"{NOTE} case {i}", instance_id=f"n{i}")) for i in range(6)]
        dead_calls = server.count("slow")
    assert dead_calls == 5
    assert all(r["slow"]["failure"].startswith("timed out") for r in records[:2])
    assert all(r["slow"]["failure"].startswith("judge unavailable: timed out") for r in records[3:])
    assert all(r["steady"]["status"] == "ok" for r in records)


def test_judges_of_one_note_are_called_concurrently(tmp_path: Path) -> None:
    """All judges of a note are in flight at once (the server holds each until it has seen three)."""
    with JudgeServer(dict.fromkeys(["a", "b", "c"], "steady"), rendezvous=3, rendezvous_timeout=5) as server:
        record = make_annotator(tmp_path, judge_specs(server, ["a", "b", "c"])).annotate(state())
        assert server.max_in_flight == 3
    assert record["failed_judges"] == []


def test_calls_in_flight_are_bounded_by_judge_max_concurrency(tmp_path: Path) -> None:
    """judge_max_concurrency caps the calls in flight to an endpoint even when a panel is larger."""
    with JudgeServer(dict.fromkeys(["a", "b", "c"], "steady"), rendezvous=3, rendezvous_timeout=0.3) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["a", "b", "c"]), judge_max_concurrency=2)
        record = annotator.annotate(state())
        assert server.max_in_flight == 2
    assert record["failed_judges"] == []


@pytest.mark.parametrize(
    ("error", "flags", "kind"),
    [
        ("OpenAI error: Error code: 400 - {...}", None, "client"),
        ("OpenAI error: Error code: 401 - {...}", None, "auth"),
        ("OpenAI error: Error code: 403 - {...}", None, "auth"),
        ("OpenAI error: Error code: 404 - {...}", None, "client"),
        ("OpenAI error: Error code: 408 - {...}", None, "server"),
        ("OpenAI error: Error code: 429 - {...}", None, "rate_limited"),
        ("OpenAI error: Error code: 503 - {...}", None, "server"),
        ("OpenAI error: Connection error.", None, "server"),
        ("Content blocked by OpenAI filter", ErrorFlags(is_retriable=False, is_fatal=False), "filtered"),
    ],
)
def test_call_errors_are_classified_from_helms_error_text(error: str, flags: ErrorFlags | None, kind: str) -> None:
    """Where the SDK's exception is not at hand (another client), HELM's error text decides: 4xx other than
    408/429 is final, 401/403 stops the run, 429 waits, the rest are retried."""
    result = RequestResult(success=False, embedding=[], completions=[], cached=False, error=error, error_flags=flags)
    assert classify(result).kind == kind


def test_a_rerun_replays_every_judge_call_from_helms_cache(panel: JudgeServer, tmp_path: Path) -> None:
    """A second annotator on the same cache makes zero judge calls and records the same thing."""
    models = ["steady", "nonsense", "flaky", "partial", "quoter"]
    states = [state(instance_id="n1"), state(note=NOTE + " Second case.", instance_id="n2")]
    first = [make_annotator(tmp_path, judge_specs(panel, models)).annotate(s) for s in states]
    calls = panel.count()
    again = [make_annotator(tmp_path, judge_specs(panel, models)).annotate(s) for s in states]
    assert panel.count() == calls
    assert again == first


def test_two_endpoints_serving_the_same_model_name_never_share_cache(tmp_path: Path) -> None:
    """The deployment (and cache shard) carries a hash of the base URL, so endpoint B is really called."""
    with (
        JudgeServer({"judge": Behaviour("steady", {"accuracy": 5, "completeness": 5, "clarity": 5})}) as one,
        JudgeServer({"judge": Behaviour("steady", {"accuracy": 1, "completeness": 2, "clarity": 1})}) as two,
    ):
        first = make_annotator(tmp_path, judge_specs(one, ["judge"])).annotate(state())
        second = make_annotator(tmp_path, judge_specs(two, ["judge"])).annotate(state())
        assert (one.count(), two.count()) == (1, 1)
    assert scores(first["judge"]) == {"accuracy": 5, "completeness": 5, "clarity": 5}
    assert scores(second["judge"]) == {"accuracy": 1, "completeness": 2, "clarity": 1}
    assert first["judge"]["model_deployment"] != second["judge"]["model_deployment"]


def test_the_key_reaches_the_server_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """JUDGE_API_KEY is sent as the bearer token but appears in no annotation and no log line."""
    secret = "sk-test-SECRET-7f3a9c"
    monkeypatch.setenv("JUDGE_API_KEY", secret)
    caplog.set_level(logging.DEBUG, logger="helm")
    with JudgeServer({"steady": "steady", "nonsense": "nonsense"}) as server:
        record = make_annotator(tmp_path, judge_specs(server, ["steady", "nonsense"])).annotate(state())
        assert {r.authorization for r in server.requests} == {f"Bearer {secret}"}
    assert secret not in json.dumps(record)
    assert "Judge nonsense failed" in caplog.text and secret not in caplog.text


def test_a_refused_key_stops_the_run_with_one_line_naming_the_endpoint_not_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A 401 (here one that echoes the key back, as some APIs do) is no judge failure to record per note:
    no waiting fixes a wrong key. The run stops at the first one, and later notes make no call."""
    secret = "sk-test-SECRET-7f3a9c"
    monkeypatch.setenv("JUDGE_API_KEY", secret)
    caplog.set_level(logging.DEBUG, logger="helm")
    with JudgeServer({"leaky": "leaky"}) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["leaky"]))
        with pytest.raises(JudgeAccessError) as first:
            annotator.annotate(state())
        with pytest.raises(JudgeAccessError):
            annotator.annotate(state(instance_id="note-2"))
        assert server.count("leaky") == 1
    message = str(first.value)
    assert "\n" not in message and server.base_url in message and "HTTP 401" in message
    assert "JUDGE_API_KEY_1" in message
    assert secret not in message and secret not in caplog.text


def test_a_hosted_judge_without_its_key_fails_before_any_call(tmp_path: Path) -> None:
    judges = [{"name": "gpt", "model": "openai/gpt-4o-mini", "model_deployment": "openai/gpt-4o-mini"}]
    with pytest.raises(JudgeAccessError, match="OPENAI_API_KEY"):
        make_annotator(tmp_path, judges)


def test_an_unknown_deployment_fails_before_any_call(tmp_path: Path) -> None:
    judges = [{"name": "ghost", "model": "nobody/ghost", "model_deployment": "nobody/ghost", "base_url": None}]
    with pytest.raises(JudgeAccessError, match="'ghost'.*no model deployment 'nobody/ghost'"):
        make_annotator(tmp_path, judges)


# ---------------------------------------------------------------- rate limits


def annotate_notes(annotator: JudgeAnnotator, n: int, threads: int = 4) -> list[dict[str, Any]]:
    """As HELM's AnnotationExecutor does: parallel_map over the notes."""
    states = [state(note=f"{NOTE} Case {i}.", instance_id=f"n{i}") for i in range(n)]
    return parallel_map(annotator.annotate, states, parallelism=threads)


@pytest.mark.parametrize("retry_after", ["seconds", "date", "ms"])
def test_a_rate_limited_endpoint_loses_no_judgment(tmp_path: Path, retry_after: str) -> None:
    """An endpoint answering 429 with Retry-After (seconds, HTTP date or retry-after-ms) once its rolling
    window is full: every judgment is still made, because calls wait as told instead of giving up."""
    panel = ["a", "b", "c"]
    with JudgeServer(dict.fromkeys(panel, "steady"), rate_limit=(6, 1.0), retry_after=retry_after) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, panel), judge_max_wait=60)
        records = annotate_notes(annotator, 8)
        rejected = server.rejected_429
    assert rejected > 0, "the server must have pushed back for this test to mean anything"
    assert all(r["failed_judges"] == [] for r in records)


def test_one_429_makes_every_call_to_the_endpoint_wait(tmp_path: Path) -> None:
    """After a 429 saying "Retry-After: 2", no call reaches that endpoint for those two seconds."""
    panel = ["a", "b", "c"]
    with JudgeServer(dict.fromkeys(panel, "steady"), rate_limit=(3, 2.0), retry_after="seconds") as server:
        annotator = make_annotator(tmp_path, judge_specs(server, panel), judge_max_wait=60)
        annotate_notes(annotator, 3)
        arrivals = list(server.arrivals)
    first_429 = next(t for t, status in arrivals if status == 429)
    blocked = [t for t, _ in arrivals if first_429 + 0.2 < t < first_429 + 1.0]
    assert blocked == []


def test_a_declared_rpm_makes_no_429_and_gives_up_cleanly_past_max_wait(tmp_path: Path) -> None:
    """judge_rpm keeps under a known limit client-side: the server never says 429; a call that cannot get a
    slot within judge_max_wait fails as rate limited, without reaching the server."""
    with JudgeServer({"a": "steady"}, rate_limit=(3, 60.0)) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["a"]), judge_rpm=3, judge_max_wait=1)
        records = [annotator.annotate(state(note=f"{NOTE} {i}", instance_id=f"n{i}")) for i in range(4)]
        assert server.rejected_429 == 0 and server.count("a") == 3
    assert [r["failed_judges"] for r in records] == [[], [], [], ["a"]]
    assert records[3]["a"]["failure"].startswith("gave up waiting")


def test_a_rate_limited_call_gives_up_only_after_judge_max_wait(tmp_path: Path) -> None:
    """An endpoint whose Retry-After is beyond judge_max_wait: the call fails as rate limited."""
    with JudgeServer({"a": "steady"}, rate_limit=(1, 60.0)) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["a"]), judge_max_wait=2)
        first = annotator.annotate(state(instance_id="n1"))
        second = annotator.annotate(state(note=NOTE + " again", instance_id="n2"))
    assert first["failed_judges"] == [] and second["failed_judges"] == ["a"]
    assert second["a"]["failure"].startswith(("rate limited", "gave up waiting"))


# ---------------------------------------------------------------- a key for each endpoint


@pytest.mark.parametrize(
    ("env", "credentials"),
    [
        ({"JUDGE_API_KEY_1": "key-one-1111", "JUDGE_API_KEY_2": "key-two-2222"}, {}),
        ({}, {"judgeApiKeys": {"{one}": "key-one-1111", "{two}": "key-two-2222"}}),
        ({"JUDGE_API_KEY_2": "key-two-2222"}, {"judgeApiKeys": {"{one}": "key-one-1111"}}),
    ],
    ids=["numbered-env", "credentials-map", "mixed"],
)
def test_two_endpoints_with_their_own_keys_judge_every_note(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], credentials: dict[str, Any]
) -> None:
    with (
        JudgeServer({"a": "steady"}, api_key="key-one-1111") as one,
        JudgeServer({"b": "steady"}, api_key="key-two-2222") as two,
    ):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        if credentials:
            urls = {"{one}": one.base_url, "{two}": two.base_url}
            credentials = {"judgeApiKeys": {urls[k]: v for k, v in credentials["judgeApiKeys"].items()}}
        judges = judge_specs(one, ["a"], endpoint_index=1) + judge_specs(two, ["b"], endpoint_index=2)
        records = annotate_notes(make_annotator(tmp_path, judges, credentials=credentials), 3)
    assert all(r["failed_judges"] == [] for r in records)


def test_swapped_keys_fail_loudly_naming_the_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JUDGE_API_KEY_1", "key-two-2222")
    monkeypatch.setenv("JUDGE_API_KEY_2", "key-one-1111")
    with (
        JudgeServer({"a": "steady"}, api_key="key-one-1111") as one,
        JudgeServer({"b": "steady"}, api_key="key-two-2222") as two,
    ):
        judges = judge_specs(one, ["a"], endpoint_index=1) + judge_specs(two, ["b"], endpoint_index=2)
        with pytest.raises(JudgeAccessError) as raised:
            make_annotator(tmp_path, judges).annotate(state())
    message = str(raised.value)
    assert one.base_url in message or two.base_url in message
    assert "key-one" not in message and "key-two" not in message


def test_the_factory_injects_the_credentials_key_and_the_env_key_wins(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Built by HELM's AnnotatorFactory, the judge key is credentials.conf judgeApiKey unless JUDGE_API_KEY is
    set; with neither, keyless servers get a placeholder."""

    def authorization(credentials: dict[str, str]) -> str | None:
        with JudgeServer({"steady": "steady"}) as server:
            factory = AnnotatorFactory(credentials, str(tmp_path), SqliteCacheBackendConfig(str(tmp_path)))
            spec = AnnotatorSpec(
                class_name=CLASS_NAME,
                args={"judges": judge_specs(server, ["steady"]), "judge_prompt": "ours", "use_think": False,
                      "judge_timeout": 10.0},
            )  # fmt: skip
            annotator = factory.get_annotator(spec)
            assert annotator.name == "mtsamples_procedures"
            annotator.annotate(state())
            return server.requests[0].authorization

    assert authorization({"judgeApiKey": "cred-key-5678"}) == "Bearer cred-key-5678"
    monkeypatch.setenv("JUDGE_API_KEY", "env-key-1234")
    assert authorization({"judgeApiKey": "cred-key-5678"}) == "Bearer env-key-1234"
    monkeypatch.delenv("JUDGE_API_KEY")
    assert authorization({}) == "Bearer EMPTY"


def test_use_think_strips_reasoning_before_judging(tmp_path: Path) -> None:
    """With use_think the judge sees only the final answer; without it, the answer as written."""
    answer = "<think>SECRET-REASONING</think>Plan: follow up in 2 weeks."
    with JudgeServer({"steady": "steady"}) as server:
        make_annotator(tmp_path / "a", judge_specs(server, ["steady"]), use_think=True).annotate(state(answer))
        make_annotator(tmp_path / "b", judge_specs(server, ["steady"]), use_think=False).annotate(state(answer))
        stripped, raw = server.prompts_for("steady")
    assert "Plan: follow up in 2 weeks." in stripped and "SECRET-REASONING" not in stripped
    assert "SECRET-REASONING" in raw


@pytest.mark.parametrize(("answer", "use_think"), [("<think>only reasoning</think>", True), ("  \n", False)])
def test_an_empty_answer_is_not_sent_to_judges(tmp_path: Path, answer: str, use_think: bool) -> None:
    """An answer empty (after stripping think) is recorded as such, and no judge is called."""
    with JudgeServer({"steady": "steady"}) as server:
        record = make_annotator(tmp_path, judge_specs(server, ["steady"]), use_think=use_think).annotate(state(answer))
        assert server.count() == 0
    assert record == {"failed_judges": [], "answer": "empty", "rules_version": RULES_VERSION}


# ---------------------------------------------------------------- the whole run at once (annotate_all)


def test_helm_hands_the_annotator_every_note_of_the_run_at_once() -> None:
    """HELM's AnnotationExecutor calls annotate_all (not annotate per note) only when this is set."""
    assert JudgeAnnotator.use_global_metric is True


def test_a_whole_run_keeps_every_endpoint_at_its_own_limit_not_the_threads(tmp_path: Path) -> None:
    """Four notes × three judges with judge_max_concurrency=6: six calls in flight at once (the server holds
    each until it has seen six), where one of HELM's threads judging a note at a time would send three."""
    with JudgeServer(dict.fromkeys(["a", "b", "c"], "steady"), rendezvous=6, rendezvous_timeout=5) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["a", "b", "c"]), judge_max_concurrency=6)
        annotator.annotate_all(notes(4))
        assert server.max_in_flight == 6


def test_a_whole_run_gives_the_records_and_cache_keys_of_note_by_note_judging(
    panel: JudgeServer, tmp_path: Path
) -> None:
    """annotate_all's records, in HELM's {name: record} shape, equal annotate's; and annotate on the same cache
    afterwards makes zero calls, so the cache keys are the same."""
    models = ["steady", "nonsense", "rate_limited", "partial", "repairable"]
    states = notes(3) + [state(answer="  ", instance_id="empty")]
    whole = make_annotator(tmp_path / "one", judge_specs(panel, models)).annotate_all(states)
    calls = panel.count()
    by_note = [make_annotator(tmp_path / "one", judge_specs(panel, models)).annotate(s) for s in states]
    assert panel.count() == calls
    assert whole == [{names.ANNOTATION_KEY: record} for record in by_note]


def test_a_killed_run_run_again_makes_only_the_calls_not_answered(panel: JudgeServer, tmp_path: Path) -> None:
    """The first two notes were judged before the run died; the whole run again calls only for the other three."""
    models = ["steady", "partial"]
    make_annotator(tmp_path, judge_specs(panel, models)).annotate_all(notes(2))
    before = panel.count()
    records = make_annotator(tmp_path, judge_specs(panel, models)).annotate_all(notes(5))
    assert panel.count() - before == 3 * len(models)
    assert all(r[names.ANNOTATION_KEY]["failed_judges"] == [] for r in records)


def test_a_refused_key_stops_the_whole_run_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JUDGE_API_KEY", "sk-wrong-0000")
    with JudgeServer({"leaky": "leaky"}) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["leaky"]), judge_max_concurrency=1)
        with pytest.raises(JudgeAccessError, match="refused its key"):
            annotator.annotate_all(notes(20))
        assert server.count() <= 2


def test_the_progress_bar_counts_notes_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with JudgeServer({"a": "steady"}) as server:
        make_annotator(tmp_path, judge_specs(server, ["a"])).annotate_all(notes(3))
    err = capsys.readouterr().err
    assert "Judging run 1 of 1 (a): 3/3 notes of this run" in err


# ---------------------------------------------------------------- defaults and set-up


def test_an_annotator_given_only_its_panel_calls_with_the_run_entrys_defaults(tmp_path: Path) -> None:
    """No default of its own: the call settings are RunEntryArgs' (with the breaker's cooldown from the timeout),
    and judge_timeout reaches the endpoint judge's client by one route, its whole-call bound."""
    auto_client = AutoClient({}, str(tmp_path), SqliteCacheBackendConfig(str(tmp_path)))
    url = "http://127.0.0.1:9/v1"  # never contacted: building an annotator calls no server
    annotator = JudgeAnnotator(auto_client=auto_client, judges=[{"name": "m", "model": "m", "base_url": url}])
    default = RunEntryArgs()
    assert annotator.settings == CallSettings.from_args(default)
    assert annotator.settings.breaker_cooldown == 2 * default.judge_timeout
    deployment = endpoint_deployment_name(url, "m")
    assert "timeout" not in DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT[deployment].client_spec.args
    client = annotator._session.caller.client(deployment)
    assert isinstance(client, JudgeEndpointClient) and client._whole_call_limit == default.judge_timeout


@pytest.mark.parametrize(
    ("judges", "message"),
    [
        ([], "The judge panel is empty"),
        ([{"name": "a", "model": "x/a"}, {"name": "a", "model": "y/a"}], "Judge names must be unique"),
        ([{"name": "failed_judges", "model": "x/a"}], "Judge names must be unique and not one of"),
    ],
    ids=["empty", "duplicate", "reserved"],
)
def test_a_panel_a_record_cannot_hold_is_refused_before_any_set_up(
    tmp_path: Path, judges: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        make_annotator(tmp_path, judges)


def test_a_bad_stored_argument_is_named_as_the_run_entry_names_it(tmp_path: Path) -> None:
    """The annotator reads its arguments with the run entry's parser: one message for a mistake, wherever made."""
    with pytest.raises(ValueError, match="judge_max_concurrency must be a positive whole number, got 0"):
        make_annotator(tmp_path, [{"name": "a", "model": "x/a"}], judge_max_concurrency=0)


def test_an_answer_no_file_can_hold_is_made_safe_in_place_and_counted() -> None:
    """A lone surrogate and a NUL in the model's answer: replaced in the completion and its tokens (HELM's metrics
    encode every token), counted once; a clean answer is left as it was."""
    state = request_state(answer="plan \ud800 rest\x00")
    assert state.result is not None
    completion = state.result.completions[0]
    state.result.completions[0] = dataclasses.replace(completion, tokens=[Token("plan", 0.0), Token(" \ud800", 0.0)])
    assert make_encodable(state) == 2
    safe = state.result.completions[0]
    assert safe.text == "plan \ufffd rest\ufffd" and [t.text for t in safe.tokens] == ["plan", " \ufffd"]
    assert question_of(state, RunEntryArgs()).answer.text == "plan \ufffd rest\ufffd"  # what the judges read
    assert make_encodable(state) == 0 and make_encodable(request_state(answer="fine")) == 0
