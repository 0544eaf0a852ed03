"""The judge panel as a HELM Annotator: every judge of a note called at once, a failure recorded as one.

HELM's ``LLMAsJuryAnnotator`` calls judges one after another through ``AutoClient.make_request``
(5 s·2^n retry waits), accepts any score and lets a note nobody judged look judged. Here the judges of
a note run concurrently on a pool shared by all of HELM's annotation threads (so calls in flight stay
bounded), with short bounded retries, and a judge that did not give a valid verdict is recorded as
failed with its reason. Requests still go through HELM's clients, so HELM's cache replays them.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.annotation.annotator import Annotator
from helm.clients.auto_client import AutoClient
from helm.clients.client import Client
from helm.common.hierarchical_logger import hwarn
from helm.common.request import Request, RequestResult
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from helm_mtsamples_ext.endpoints import (
    credentials_with_key,
    install_log_scrubber,
    register_endpoint_deployment,
    resolve_api_key,
    scrub,
)
from helm_mtsamples_ext.judging import DIMENSIONS, PROMPT_STYLES, Verdict, build_prompt, parse_verdict, strip_think
from helm_mtsamples_ext.scoring import ANNOTATION_KEY

RESERVED_KEYS = ("failed_judges", "answer")  # record keys that are not judges
_ERROR_CODE = re.compile(r"Error code: (\d{3})")
_RETRIED_4XX = (408, 429)


@dataclass(frozen=True)
class Judge:
    name: str
    model: str
    model_deployment: str


@dataclass
class _Outcome:
    """What one attempt (and, at the end, the whole call) of a judge gave."""

    verdict: Verdict | None = None
    failure: str | None = None
    raw_reply: str | None = None
    tokens: int | None = None
    retryable: bool = False


class _Retry(Exception):
    def __init__(self, outcome: _Outcome) -> None:
        super().__init__(outcome.failure)
        self.outcome = outcome


class _UsageCache:
    """Stands in for a client's HELM cache to read ``usage``, which HELM keeps in the cached raw response
    but drops from RequestResult. Per thread, since each call runs on one pool thread."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache
        self._local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def get(self, request: Any, compute: Any) -> Any:
        response, cached = self._cache.get(request, compute)
        usage = response.get("usage") if isinstance(response, dict) else None
        self._local.tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        return response, cached

    def take_tokens(self) -> int | None:
        tokens, self._local.tokens = getattr(self._local, "tokens", None), None
        return tokens if isinstance(tokens, int) else None


def _is_retryable(result: RequestResult) -> bool:
    if result.error_flags is not None and result.error_flags.is_retriable is False:
        return False
    match = _ERROR_CODE.search(result.error or "")
    if match:
        code = int(match.group(1))
        return not (400 <= code < 500 and code not in _RETRIED_4XX)
    return True


class JudgeAnnotator(Annotator):
    """The ``mtsamples_procedures`` annotation: one record per note, in the format of the package README."""

    name = ANNOTATION_KEY

    def __init__(
        self,
        auto_client: AutoClient,
        judges: list[dict[str, Any]],
        judge_prompt: str = "ours",
        use_think: bool = False,
        judge_timeout: float = 120.0,
        api_key: str | None = None,
        max_concurrent_calls: int = 16,
        max_attempts: int = 3,
        retry_wait: float = 0.5,
        max_tokens: int = 1024,
    ) -> None:
        if not judges:
            raise ValueError("The judge panel is empty")
        names = [spec["name"] for spec in judges]
        if len(set(names)) != len(names) or set(names) & set(RESERVED_KEYS):
            raise ValueError(f"Judge names must be unique and not one of {RESERVED_KEYS}: {names}")
        if judge_prompt not in PROMPT_STYLES:
            raise ValueError(f"Unknown judge_prompt {judge_prompt!r}; expected one of {PROMPT_STYLES}")
        self._auto_client = auto_client
        self._prompt_style = judge_prompt
        self._use_think = use_think
        self._max_attempts = max(1, max_attempts)
        self._retry_wait = retry_wait
        self._max_tokens = max_tokens
        self._api_key = resolve_api_key(api_key)
        install_log_scrubber(self._api_key)
        self._judges: list[Judge] = []
        base_urls = []
        for spec in judges:
            base_url = spec.get("base_url")
            if base_url:
                deployment = register_endpoint_deployment(base_url, spec["model"], judge_timeout)
                self._judges.append(Judge(spec["name"], deployment, deployment))
                base_urls.append(base_url)
            else:
                deployment = spec["model_deployment"]
                self._judges.append(Judge(spec["name"], spec.get("model") or deployment, deployment))
        if base_urls:
            auto_client.credentials = credentials_with_key(auto_client.credentials, base_urls, self._api_key)
        self._pool = ThreadPoolExecutor(max_workers=max_concurrent_calls, thread_name_prefix="mtsjudge")
        self._clients: dict[str, tuple[Client, _UsageCache | None]] = {}
        self._clients_lock = threading.Lock()

    # ------------------------------------------------------------ annotate

    def annotate(self, request_state: RequestState) -> dict[str, Any]:
        result = request_state.result
        answer = result.completions[0].text if result is not None and result.completions else ""
        if self._use_think:
            answer = strip_think(answer)
        if not answer.strip():
            return {"failed_judges": [], "answer": "empty"}
        instance = request_state.instance
        reference = instance.references[0].output.text if instance.references else ""
        prompt = build_prompt(instance.input.text, answer, reference, self._prompt_style)
        futures = [self._pool.submit(self._call_judge, judge, prompt) for judge in self._judges]
        record: dict[str, Any] = {}
        failed: list[str] = []
        for judge, future in zip(self._judges, futures, strict=True):
            outcome = future.result()
            record[judge.name] = self._judge_record(judge, outcome)
            if outcome.failure is not None:
                failed.append(judge.name)
                hwarn(f"Judge {judge.name} failed on instance {instance.id}: {self._scrub(outcome.failure)}")
        record["failed_judges"] = failed
        return record

    def _judge_record(self, judge: Judge, outcome: _Outcome) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        for dim in DIMENSIONS:
            score = outcome.verdict.dimensions[dim] if outcome.verdict is not None else None
            entry[dim] = {
                "score": score.score if score is not None else None,
                "explanation": self._scrub(score.explanation) if score is not None else "",
            }
        entry["status"] = "failed" if outcome.failure is not None else "ok"
        if outcome.failure is not None:
            entry["failure"] = self._scrub(outcome.failure)
        if outcome.verdict is not None and outcome.verdict.invalid:
            entry["invalid"] = dict(outcome.verdict.invalid)
        if outcome.raw_reply is not None:
            entry["raw_reply"] = self._scrub(outcome.raw_reply)
        if outcome.tokens is not None:
            entry["tokens"] = outcome.tokens
        entry["model_deployment"] = judge.model_deployment
        return entry

    def _scrub(self, text: str) -> str:
        return scrub(text, self._api_key)

    # ------------------------------------------------------------ one judge

    def _client(self, deployment: str) -> tuple[Client, _UsageCache | None]:
        with self._clients_lock:
            if deployment not in self._clients:
                # The client itself, not AutoClient.make_request: that wraps every call in HELM's own retry
                # (5 attempts, 5 s·2^n waits, ~150 s per failing call), which would stack on ours.
                client = self._auto_client._get_client(deployment)
                cache = getattr(client, "cache", None)
                usage: _UsageCache | None = None
                if isinstance(cache, _UsageCache):
                    usage = cache
                elif cache is not None:
                    usage = _UsageCache(cache)
                    setattr(client, "cache", usage)  # noqa: B010 - CachingClient.cache, not declared on Client
                self._clients[deployment] = (client, usage)
            return self._clients[deployment]

    def _call_judge(self, judge: Judge, prompt: str) -> _Outcome:
        """A judge's verdict after bounded retries; the last attempt's failure when none came.

        An unparseable reply was a successful call, so HELM cached it: retrying the same request would
        replay it. Such retries carry a ``random`` salt, which HELM puts in the cache key (not in the
        request sent), so they reach the judge again, and a re-run replays the same sequence from cache.
        """
        salt = [0]
        tokens_used: list[int] = []

        def attempt() -> _Outcome:
            outcome = self._attempt(judge, prompt, salt[0])
            if outcome.tokens is not None:
                tokens_used.append(outcome.tokens)
            if outcome.retryable:
                if outcome.raw_reply is not None:
                    salt[0] += 1
                raise _Retry(outcome)
            return outcome

        retrying = Retrying(
            stop=stop_after_attempt(self._max_attempts),
            wait=wait_exponential(multiplier=self._retry_wait, max=8 * max(self._retry_wait, 0.001)),
            retry=retry_if_exception_type(_Retry),
            reraise=True,
        )
        try:
            outcome = retrying(attempt)
        except _Retry as exhausted:
            outcome = exhausted.outcome
        outcome.tokens = sum(tokens_used) if tokens_used else None
        return outcome

    def _attempt(self, judge: Judge, prompt: str, salt: int) -> _Outcome:
        request = Request(
            model=judge.model,
            model_deployment=judge.model_deployment,
            prompt=prompt,
            temperature=0.0,
            max_tokens=self._max_tokens,
            random=f"mtsjudge-retry-{salt}" if salt else None,
        )
        try:
            client, usage = self._client(judge.model_deployment)
        except Exception as e:  # e.g. an unknown deployment or a missing key: no retry will fix it
            return _Outcome(failure=f"call error: {self._scrub(str(e))}")
        if usage is not None:
            usage.take_tokens()
        try:
            result = client.make_request(request)
        except Exception as e:  # clients raise on transport faults HELM does not map to a result
            return _Outcome(failure=f"call error: {self._scrub(f'{type(e).__name__}: {e}')}", retryable=True)
        tokens = usage.take_tokens() if usage is not None else None
        if not result.success or not result.completions:
            error = result.error or "no completion returned"
            return _Outcome(failure=f"call error: {self._scrub(error)}", tokens=tokens, retryable=_is_retryable(result))
        reply = result.completions[0].text
        verdict = parse_verdict(reply)
        if verdict is None:
            return _Outcome(failure="no verdict in reply", raw_reply=reply, tokens=tokens, retryable=True)
        if not verdict.has_valid_dimension:
            return _Outcome(
                verdict=verdict, failure="no valid dimension", raw_reply=reply, tokens=tokens, retryable=True
            )
        return _Outcome(verdict=verdict, tokens=tokens)
