"""Each judge endpoint made ready once per run, before its first call HELM's cache cannot answer.

Why once and late: a run answered from HELM's cache needs no server at all, so nothing is asked until a
live call is due; then the endpoint is checked (``reachability.check_endpoint``: an HTML page or no server
fails the run at once with one line) and asked how many calls it takes at once and which model it loaded
(``capacity.probe_server``: the first caps its gate, the second goes into each live reply's record).
Until then the fan-out starts one call at it, so no call waits out its deadline behind a capacity of 1,
unless a call was answered from the cache (a re-run still fans out).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from helm.common.hierarchical_logger import hlog

from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.judges.core.capacity import ServerFacts
from helm_mtsamples_ext.judges.core.throttle import EndpointGate


class EndpointReadiness:
    """The endpoint checks of one run (thread-safe): which endpoints a live call has reached, which a cached
    reply has, and what each check found."""

    def __init__(
        self,
        credentials: Callable[[], Mapping[str, Any]],
        check: Callable[[str, str | None], str | None],
        probe: Callable[[str, str | None, str], ServerFacts],
        scrub: Callable[[str], str],
    ) -> None:
        self._credentials = credentials
        self._check = check
        self._probe = probe
        self._loaded: dict[str, str | None] = {}  # endpoint: the model its server said it loaded
        self._scrub = scrub
        self._endpoint_urls: set[str] = set()  # endpoints of judges served at a judge_base_url
        self._checks: dict[str, str | None] = {}
        self._replayed: set[str] = set()  # endpoints a call was answered for from HELM's cache
        self._lock = threading.Lock()
        self._check_lock = threading.Lock()

    def expect(self, target: JudgeTarget) -> None:
        """Note an endpoint judge of the panel (its calls start one at a time until its server was asked)."""
        if target.base_url is not None:
            with self._lock:
                self._endpoint_urls.add(target.endpoint)

    def replayed(self, endpoint: str) -> None:
        with self._lock:
            self._replayed.add(endpoint)

    def unasked(self, endpoint: str) -> bool:
        """True while an endpoint judge's server has not been asked its capacity and no call was replayed."""
        with self._lock:
            return endpoint in self._endpoint_urls and endpoint not in self._checks and endpoint not in self._replayed

    def ready(self, target: JudgeTarget, gate: EndpointGate, stop_run: Callable[[str], NoReturn]) -> None:
        """Check the judge's endpoint once per run, before its first live call; a failed check stops the run."""
        if target.base_url is None:
            return
        with self._check_lock:  # concurrent first calls wait for the one check
            if target.endpoint not in self._checks:
                key = self._credentials().get(f"{target.endpoint}ApiKey")
                problem = self._check(target.base_url, key)
                with self._lock:
                    self._checks[target.endpoint] = None if problem is None else self._scrub(problem)
                if problem is None:
                    self._learn_capacity(target, gate, key)
            problem = self._checks[target.endpoint]
        if problem is not None:
            stop_run(f"judge {target.name!r}: {problem}")

    def loaded_model(self, endpoint: str) -> str | None:
        """The model the endpoint's server said it loaded (None: not asked yet, or it does not say)."""
        with self._lock:
            return self._loaded.get(endpoint)

    def _learn_capacity(self, target: JudgeTarget, gate: EndpointGate, key: str | None) -> None:
        """Cap the endpoint's gate at what its server says it takes at once (one line when that lowers it), and
        keep the model it loaded (one line naming it: the judge's name alone may be any name the server echoes)."""
        facts = self._probe(target.base_url or "", key, target.name)
        found = facts.capacity
        if found is not None and gate.learned(found.slots, found.source):
            hlog(f"{target.where}: {found.source}: at most {found.slots} judge call(s) at once")
        if facts.loaded_model is not None:
            loaded = self._scrub(facts.loaded_model)
            with self._lock:
                self._loaded[target.endpoint] = loaded
            hlog(f"{target.where}: its server loaded {loaded!r} (recorded with each verdict as loaded_model)")
