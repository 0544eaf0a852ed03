"""The real JudgeAnnotator, through HELM's real AutoClient and cache, against a loopback judge server."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.annotation.annotator import AnnotatorSpec
from helm.benchmark.annotation.annotator_factory import AnnotatorFactory
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig
from helm.common.request import ErrorFlags, RequestResult

from helm_mtsamples_ext.annotator import JudgeAnnotator, _is_retryable
from helm_mtsamples_ext.endpoints import endpoint_deployment_name
from helm_mtsamples_ext.judging import DIMENSIONS
from tests.judge_server import Behaviour, JudgeServer, verdict_json
from tests.states import request_state

CLASS_NAME = "helm_mtsamples_ext.annotator.JudgeAnnotator"
NOTE = "PREOPERATIVE DIAGNOSIS: Left inguinal hernia. PROCEDURE: Open repair with mesh."
ANSWER = "Discharge home today. Follow up in clinic in 2 weeks. No heavy lifting for 6 weeks."


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUDGE_API_KEY", raising=False)


def judge_specs(server: JudgeServer, models: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "name": m,
            "model": m,
            "model_deployment": endpoint_deployment_name(server.base_url, m),
            "base_url": server.base_url,
        }
        for m in models
    ]


def make_annotator(cache_dir: Path, judges: list[dict[str, Any]], **kwargs: Any) -> JudgeAnnotator:
    cache_dir.mkdir(parents=True, exist_ok=True)
    auto_client = AutoClient(
        credentials={}, file_storage_path=str(cache_dir), cache_backend_config=SqliteCacheBackendConfig(str(cache_dir))
    )
    options: dict[str, Any] = {"judge_timeout": 10.0, "retry_wait": 0.0, **kwargs}
    return JudgeAnnotator(auto_client=auto_client, judges=judges, **options)


def state(answer: str = ANSWER, note: str = NOTE, instance_id: str = "note-1") -> RequestState:
    return request_state(note, answer, reference="Follow up in 2 weeks.", instance_id=instance_id)


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
    }
    with JudgeServer(judges) as server:
        yield server


def test_each_behaviour_is_recorded_as_the_contract_says(
    panel: JudgeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Valid verdicts count, failures are failures with their reason, retries follow the rules."""
    caplog.set_level(logging.WARNING, logger="helm")
    models = list(panel.judges)
    record = make_annotator(tmp_path, judge_specs(panel, models)).annotate(state())

    assert list(record) == [*models, "failed_judges"]
    assert record["failed_judges"] == ["nonsense", "out_of_range", "reject"]
    (prompt,) = set(panel.prompts_for("steady"))
    expected = panel.scores_for("steady", prompt)
    for ok in ("steady", "prose_fence", "flaky", "rate_limited"):
        assert record[ok]["status"] == "ok" and scores(record[ok]) == panel.scores_for(ok, prompt), ok
    steady = record["steady"]
    assert list(steady) == [*DIMENSIONS, "status", "tokens", "model_deployment"]
    assert steady["tokens"] == len(prompt.split()) + len(verdict_json(expected).split())
    assert steady["model_deployment"] == endpoint_deployment_name(panel.base_url, "steady")
    assert steady["accuracy"]["explanation"] == "accuracy judged"

    assert record["nonsense"]["failure"] == "no verdict in reply"
    assert record["nonsense"]["raw_reply"].startswith("I am unable")
    assert set(scores(record["nonsense"]).values()) == {None}
    assert record["out_of_range"]["failure"] == "no valid dimension"
    assert record["out_of_range"]["invalid"] == {
        "accuracy": "9 is not an integer 1-5",
        "completeness": "0 is not an integer 1-5",
        "clarity": "4.5 is not an integer 1-5",
    }
    assert "raw_reply" in record["out_of_range"]
    partial = record["partial"]
    assert partial["status"] == "ok" and partial["invalid"] == {"clarity": '"N/A" is not an integer 1-5'}
    assert scores(partial)["clarity"] is None and "raw_reply" not in partial
    assert scores(record["quoter"]) == {"accuracy": 2, "completeness": 3, "clarity": 1}
    assert scores(record["thinker"]) == {"accuracy": 4, "completeness": 4, "clarity": 5}
    assert record["reject"]["failure"].startswith("call error: ") and "400" in record["reject"]["failure"]

    # Retries: errors and unparseable replies are retried (3 attempts), a 400 is not, a 429/500 once is enough.
    calls = {m: panel.count(m) for m in models}
    assert calls == {**dict.fromkeys(models, 1), "nonsense": 3, "out_of_range": 3, "flaky": 2, "rate_limited": 2}
    assert record["nonsense"]["tokens"] > record["steady"]["tokens"]  # every attempt's tokens are counted
    # Each failure is logged once, naming the judge and the instance.
    for failed in record["failed_judges"]:
        assert sum(f"Judge {failed} failed on instance note-1" in r.getMessage() for r in caplog.records) == 1
    assert NOTE not in json.dumps(record)  # no copy of the prompt per instance


def test_a_judge_that_never_answers_fails_without_holding_the_others(tmp_path: Path) -> None:
    """A hung judge times out, is retried a bounded number of times, and fails; the rest of the panel is kept."""
    with JudgeServer({"slow": "slow", "steady": "steady"}, hold_seconds=30) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["slow", "steady"]), judge_timeout=0.2, max_attempts=2)
        record = annotator.annotate(state())
        assert server.count("slow") == 2
    assert record["failed_judges"] == ["slow"]
    assert record["slow"]["failure"].startswith("call error: ") and "timed out" in record["slow"]["failure"]
    assert record["steady"]["status"] == "ok"


def test_fail_some_fails_only_the_marked_notes(tmp_path: Path) -> None:
    """A judge erring on some notes fails for exactly those, after its bounded retries."""
    with JudgeServer({"fail_some": Behaviour("fail_some", fail_marker="FAIL_JUDGES")}) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["fail_some"]))
        bad = annotator.annotate(state(note=NOTE + " FAIL_JUDGES", instance_id="bad"))
        good = annotator.annotate(state(instance_id="good"))
        assert server.count("fail_some") == 3 + 1
    assert bad["failed_judges"] == ["fail_some"] and "500" in bad["fail_some"]["failure"]
    assert good["failed_judges"] == [] and good["fail_some"]["status"] == "ok"


def test_judges_of_one_note_are_called_concurrently(tmp_path: Path) -> None:
    """All judges of a note are in flight at once (the server holds each until it has seen three)."""
    with JudgeServer(dict.fromkeys(["a", "b", "c"], "steady"), rendezvous=3, rendezvous_timeout=5) as server:
        record = make_annotator(tmp_path, judge_specs(server, ["a", "b", "c"])).annotate(state())
        assert server.max_in_flight == 3
    assert record["failed_judges"] == []


def test_calls_in_flight_are_bounded_by_the_shared_pool(tmp_path: Path) -> None:
    """max_concurrent_calls caps the calls in flight even when a panel is larger."""
    with JudgeServer(dict.fromkeys(["a", "b", "c"], "steady"), rendezvous=3, rendezvous_timeout=0.3) as server:
        annotator = make_annotator(tmp_path, judge_specs(server, ["a", "b", "c"]), max_concurrent_calls=2)
        record = annotator.annotate(state())
        assert server.max_in_flight == 2
    assert record["failed_judges"] == []


@pytest.mark.parametrize(
    ("error", "flags", "retried"),
    [
        ("OpenAI error: Error code: 400 - {...}", None, False),
        ("OpenAI error: Error code: 401 - {...}", None, False),
        ("OpenAI error: Error code: 404 - {...}", None, False),
        ("OpenAI error: Error code: 408 - {...}", None, True),
        ("OpenAI error: Error code: 429 - {...}", None, True),
        ("OpenAI error: Error code: 503 - {...}", None, True),
        ("OpenAI error: Request timed out.", None, True),
        ("OpenAI error: Connection error.", None, True),
        ("Content blocked by OpenAI filter", ErrorFlags(is_retriable=False, is_fatal=False), False),
    ],
)
def test_which_call_errors_are_retried(error: str, flags: ErrorFlags | None, retried: bool) -> None:
    """A 4xx other than 408/429, or an error HELM flags not retriable, is final; the rest are retried."""
    result = RequestResult(success=False, embedding=[], completions=[], cached=False, error=error, error_flags=flags)
    assert _is_retryable(result) is retried


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
    """JUDGE_API_KEY is sent as the bearer token but appears in no annotation and no log line, even when
    the server echoes it back in an error."""
    secret = "sk-test-SECRET-7f3a9c"
    monkeypatch.setenv("JUDGE_API_KEY", secret)
    caplog.set_level(logging.DEBUG, logger="helm")
    with JudgeServer({"steady": "steady", "leaky": "leaky", "nonsense": "nonsense"}) as server:
        record = make_annotator(tmp_path, judge_specs(server, ["steady", "leaky", "nonsense"])).annotate(state())
        assert {r.authorization for r in server.requests} == {f"Bearer {secret}"}
        assert server.count("leaky") == 1  # a 401 is not retried
    assert record["leaky"]["failure"].startswith("call error: ") and "***" in record["leaky"]["failure"]
    assert secret not in json.dumps(record)
    assert "Judge leaky failed" in caplog.text
    assert secret not in caplog.text


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
    assert record == {"failed_judges": [], "answer": "empty"}


def test_an_unknown_deployment_is_a_recorded_failure_not_a_crash(tmp_path: Path) -> None:
    """A judge HELM cannot build a client for fails for the note; annotate never raises for a judge."""
    judges = [{"name": "ghost", "model": "nobody/ghost", "model_deployment": "nobody/ghost", "base_url": None}]
    record = make_annotator(tmp_path, judges).annotate(state())
    assert record["failed_judges"] == ["ghost"]
    assert record["ghost"]["failure"].startswith("call error: ")
    assert record["ghost"]["model_deployment"] == "nobody/ghost"
