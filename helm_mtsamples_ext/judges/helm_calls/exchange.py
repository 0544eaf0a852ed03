"""One exchange with a judge server through HELM's client and cache, or a replay from the cache alone.

Through ``AutoClient._get_client``, not ``AutoClient.make_request``, whose own retries (5 s·2^n) would
stack on ours and cannot see a Retry-After: each client is put behind the cache gate (cache_gate.py), and
what came back is named by outcome.py. HELM's client logs every API error with a traceback; inside a
judge call that error is expected and told in one line by call.py, so here it is kept quiet. Each exchange,
live or replayed, carries the model and fingerprint its reply named (``Sent.served``), for the record.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from helm.clients.auto_client import AutoClient
from helm.clients.client import Client
from helm.clients.openai_client import OpenAIClient
from helm.common.request import Request, RequestResult

from helm_mtsamples_ext.helm_host.compat import check_helm
from helm_mtsamples_ext.judges.core.reply.served_model import NOT_REPORTED
from helm_mtsamples_ext.judges.helm_calls.batch.run import direct_key
from helm_mtsamples_ext.judges.helm_calls.cache_gate import NotCached, install_gate
from helm_mtsamples_ext.judges.helm_calls.outcome import Sent, classify

_QUIET = threading.local()


class _ClientErrorFilter(logging.Filter):
    """HELM's OpenAI client logs every API error as an ERROR with a traceback (``hexception``). Inside a judge
    call the error is expected, classified and told in one line by call.py, so in that thread the
    traceback record is dropped; HELM's other logging is untouched."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (getattr(_QUIET, "on", False) and record.exc_info)


_FILTER = _ClientErrorFilter()


@contextmanager
def quiet_client_errors() -> Iterator[None]:
    """Within it (one thread), HELM's logged tracebacks of client errors are dropped."""
    logger = logging.getLogger("helm")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    _QUIET.on = True
    try:
        yield
    finally:
        _QUIET.on = False


class JudgeClients:
    """The HELM clients of a run's judges, each behind a CacheGate: one exchange, or a replay from the cache
    alone. Through ``AutoClient._get_client``, not ``AutoClient.make_request`` (whose own retries, 5 s·2^n,
    would stack on ours and cannot see a Retry-After); thread-safe."""

    def __init__(self, auto_client: AutoClient, scrub: Callable[[str], str]) -> None:
        check_helm()  # the one check of the HELM APIs we use (AutoClient._get_client among them); once per process
        self._auto_client = auto_client
        self._scrub = scrub
        self._clients: dict[str, Client] = {}
        self._lock = threading.Lock()

    def get(self, deployment: str) -> Client:
        with self._lock:
            if deployment not in self._clients:
                client = self._auto_client._get_client(deployment)
                install_gate(client, self._scrub)
                self._clients[deployment] = client
            return self._clients[deployment]

    def loaded(self, deployment: str, model: str | None) -> None:
        """The model the deployment's server said it loaded, stored with each of its live replies from now on."""
        tap = install_gate(self.get(deployment), self._scrub)
        if tap is not None:
            tap.loaded_model = model

    def exchange(self, deployment: str, request: Request) -> Sent:
        """One request through HELM's client and cache, classified."""
        client = self.get(deployment)
        tap = install_gate(client, self._scrub)
        if tap is not None:
            tap.take()
            tap.take_shape()
            tap.take_served()
        try:
            with quiet_client_errors():
                result = client.make_request(request)
        except Exception as e:  # a client raising instead of returning an error result
            result = RequestResult(
                success=False, embedding=[], completions=[], cached=False, error=f"{type(e).__name__}: {e}"
            )
        shape = tap.take_shape() if tap is not None else None
        tokens, error = tap.take() if tap is not None else (None, None)
        split = tap.take_split() if tap is not None else (None, None)
        served = tap.take_served() if tap is not None else NOT_REPORTED
        if shape is not None:
            return Sent("no_text", error=shape, tokens=tokens, tokens_in=split[0], tokens_out=split[1], served=served)
        return replace(classify(result, error, tokens, split), served=served)

    def replay(self, deployment: str, requests: Iterable[tuple[str, Request]]) -> tuple[Sent, str] | None:
        """The first of ``(label, request)`` that HELM's cache answers, without reaching any server."""
        client = self.get(deployment)
        tap = install_gate(client, self._scrub)
        if tap is None:
            return None
        for label, request in requests:
            if isinstance(client, OpenAIClient) and not tap.may_hold(direct_key(client, request)[0]):
                continue
            tap.take_shape()
            tap.take_served()
            try:
                with tap.replay_only():
                    result = client.make_request(request)
            except NotCached:
                continue
            except Exception as e:  # HELM could not read what an older release stored (null content on medhelm)
                result = RequestResult(success=False, embedding=[], completions=[], cached=True, error=str(e))
            shape = tap.take_shape()
            tokens, _ = tap.take()
            split = tap.take_split()
            served = tap.take_served()
            if shape is not None:  # a stored reply without text replays as the failure it was
                no_text = Sent("no_text", error=shape, tokens=tokens, tokens_in=split[0], tokens_out=split[1])
                return replace(no_text, served=served), label
            sent = replace(classify(result, None, tokens, split), served=served)
            if sent.kind == "ok":
                return sent, label
        tap.take()
        return None
