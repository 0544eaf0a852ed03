"""The judge panel as a HELM Annotator: a whole run's judge calls at once, a failure recorded as one.

HELM's ``LLMAsJuryAnnotator`` calls judges one after another through ``AutoClient.make_request``
(5 s·2^n retry waits), accepts any score and lets a note nobody judged look judged. Here the annotator
sets ``use_global_metric``, so HELM hands it every note of the run at once (``annotate_all``) and the
calls in flight to each endpoint are set by that endpoint's limit (``fanout.py``), not by HELM's
``--num-threads``. Each call is made by ``judge_call.JudgeCaller`` (structured output, rate limits,
breaker, retries) through HELM's client and cache, so records, cache keys and resume are those of a
note-by-note run; a judge that did not give a valid verdict is recorded as failed with its reason. A
judge that cannot be used at all (no deployment, no key, a refused key) fails the run with one line.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.annotation.annotator import Annotator
from helm.clients.auto_client import AutoClient
from helm.common.hierarchical_logger import hwarn
from tqdm import tqdm

from helm_mtsamples_ext.judges.batch import BATCH_DIR, BatchItem, BatchSettings, batch_all
from helm_mtsamples_ext.judges.call import CallOutcome, CallSettings, JudgeCaller, JudgeTarget
from helm_mtsamples_ext.judges.endpoints import (
    credentials_with_keys,
    endpoint_host,
    install_log_scrubber,
    key_settings,
    normalise_base_url,
    register_endpoint_deployment,
    resolve_endpoint_keys,
    scrub,
    secrets_of,
)
from helm_mtsamples_ext.judges.fanout import EndpointWait, FanOut, status_line
from helm_mtsamples_ext.judges.prompt import PROMPT_STYLES, build_prompt, strip_think
from helm_mtsamples_ext.masking import reachable_keys
from helm_mtsamples_ext.model_check import hosted_key_hint
from helm_mtsamples_ext.panel import JudgeSpec
from helm_mtsamples_ext.record import ANNOTATION_KEY, FAILED, OK, RESERVED_KEYS, JudgeEntry, NoteRecord
from helm_mtsamples_ext.rubric import DIMENSIONS


def _endpoint_positions(panel: list[JudgeSpec]) -> list[tuple[int, str]]:
    """(position in judge_base_url, URL) of each endpoint judge; suites from before positions were recorded
    number their distinct URLs in panel order."""
    distinct: list[str] = []
    positions = []
    for judge in panel:
        if not judge.base_url:
            continue
        url = normalise_base_url(judge.base_url)
        if url not in distinct:
            distinct.append(url)
        positions.append((judge.endpoint_index or distinct.index(url) + 1, judge.base_url))
    return positions


class JudgeAnnotator(Annotator):
    """The ``mtsamples_procedures`` annotation: one record per note, in the format of the package README."""

    name = ANNOTATION_KEY
    use_global_metric = True
    """HELM then calls ``annotate_all`` with every note of the run (the name is HELM's)."""

    def __init__(
        self,
        auto_client: AutoClient,
        judges: list[dict[str, Any]],
        judge_prompt: str = "ours",
        use_think: bool = False,
        judge_timeout: float = 120.0,
        judge_structured: str = "auto",
        judge_max_wait: float = 900.0,
        judge_max_concurrency: int = 16,
        judge_rpm: float | None = None,
        max_tokens: int = 1024,
        retry_base: float = 0.5,
        judge_batch: bool = False,
        judge_batch_fallback: bool = True,
    ) -> None:
        if not judges:
            raise ValueError("The judge panel is empty")
        panel = [JudgeSpec.from_arg(spec) for spec in judges]
        names = [judge.name for judge in panel]
        if len(set(names)) != len(names) or set(names) & set(RESERVED_KEYS):
            raise ValueError(f"Judge names must be unique and not one of {sorted(RESERVED_KEYS)}: {names}")
        if judge_prompt not in PROMPT_STYLES:
            raise ValueError(f"Unknown judge_prompt {judge_prompt!r}; expected one of {PROMPT_STYLES}")
        self._prompt_style = judge_prompt
        self._use_think = use_think
        positions = _endpoint_positions(panel)
        keys = resolve_endpoint_keys(positions, auto_client.credentials)
        # Every key this process could send, hosted judges' included (masking.py), masked in all we keep.
        self._secrets = reachable_keys(auto_client.credentials, os.environ, secrets_of(keys.values()))
        install_log_scrubber(self._secrets)
        if keys:
            auto_client.credentials = credentials_with_keys(auto_client.credentials, keys.values())
        self._judges: list[JudgeTarget] = []
        for spec in panel:
            if spec.base_url:
                url = normalise_base_url(spec.base_url)
                deployment = register_endpoint_deployment(url, spec.model, judge_timeout)
                hint = key_settings(keys[url].position, url)
                target = JudgeTarget(spec.name, deployment, deployment, endpoint_host(url), url, hint, base_url=url)
            else:
                deployment = spec.model_deployment or spec.model
                host = deployment.split("/")[0]
                target = JudgeTarget(spec.name, spec.model, deployment, host, deployment, hosted_key_hint(deployment))
            self._judges.append(target)
        settings = CallSettings(
            max_tokens=max_tokens,
            max_wait=float(judge_max_wait),
            structured=judge_structured,
            max_concurrency=int(judge_max_concurrency),
            rpm=float(judge_rpm) if judge_rpm else None,
            retry_base=retry_base,
            breaker_cooldown=max(5.0, 2 * float(judge_timeout)),
        )
        self._caller = JudgeCaller(auto_client, settings, self._scrub)
        for judge in self._judges:
            self._caller.preflight(judge)
        self._fanout = FanOut(
            [j.endpoint for j in self._judges], int(judge_max_concurrency), limit_of=self._caller.limit_of
        )
        self._judge_batch = bool(judge_batch)
        self._batch_settings = BatchSettings(fallback=bool(judge_batch_fallback))
        self._batch_dir = Path(auto_client.file_storage_path) / BATCH_DIR

    # ------------------------------------------------------------ annotate

    def annotate(self, request_state: RequestState) -> dict[str, Any]:
        """One note (HELM's per-note path, used when another annotator of the run is not global)."""
        return self._judge_notes([request_state])[0]

    def annotate_all(self, request_states: list[RequestState]) -> list[dict[str, Any]]:
        """Every note of the run, in HELM's shape for ``use_global_metric``: ``{name: record}`` per note."""
        failures = self._batch_first_turns(request_states) if self._judge_batch else {}
        # Every second on a terminal; in a log file (HELM's runs under nohup, Slurm) every 30 s, not a
        # carriage-return line per second.
        every = 1.0 if sys.stderr.isatty() else 30.0
        with tqdm(total=len(request_states), desc="Judging notes", unit="note", mininterval=every) as bar:
            records = self._judge_notes(request_states, bar, failures)
        return [{self.name: record} for record in records]

    def _judge_notes(
        self, states: list[RequestState], bar: tqdm | None = None, failures: dict[Any, str] | None = None
    ) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = [{} for _ in states]
        calls = partial(self._calls, states, failures or {})
        judged = self._fanout.run(range(len(states)), calls, self._ticker(bar))
        for i, outcomes in judged:
            records[i] = self._record(states[i], outcomes)
            if bar is not None:
                bar.update(1)
        return records

    def _calls(
        self, states: list[RequestState], failures: dict[Any, str], i: int
    ) -> list[tuple[str, Callable[[], CallOutcome]]]:
        """A note's judge calls (none for an empty answer), the prompt built only when the note's turn comes; a
        judge whose batch request failed gets that failure, named, without a call."""
        if self._caller.fatal is not None:
            raise self._caller.fatal
        prompt = self._prompt(states[i])
        if prompt is None:
            return []
        untrusted = self._untrusted(states[i])
        return [
            (judge.endpoint, partial(CallOutcome, failure=failures[(i, judge.name)]))
            if (i, judge.name) in failures
            else (judge.endpoint, partial(self._caller.call, judge, prompt, untrusted))
            for judge in self._judges
        ]

    def _untrusted(self, state: RequestState) -> tuple[str, str]:
        """The prompt's texts no verdict is read from: the answer the model under test wrote, and the note."""
        return self._answer(state), state.instance.input.text

    def _prompt(self, state: RequestState) -> str | None:
        answer = self._answer(state)
        if not answer.strip():
            return None
        instance = state.instance
        reference = instance.references[0].output.text if instance.references else ""
        return build_prompt(instance.input.text, answer, reference, self._prompt_style)

    def _batch_first_turns(self, states: list[RequestState]) -> dict[Any, str]:
        """judge_batch: every first turn not yet in HELM's cache is answered through its endpoint's Batch API
        into that cache, so the direct pass replays it; {(note, judge): failure} for what the error file named."""
        items: dict[str, list[BatchItem]] = {}
        for i, state in enumerate(states):
            prompt = self._prompt(state)
            for judge in self._judges if prompt is not None else []:
                request = self._caller.first_request(judge, prompt or "")
                items.setdefault(judge.model_deployment, []).append(BatchItem((i, judge.name), request))
        return batch_all(self._caller.client, items, self._batch_dir, self._batch_settings)

    def _answer(self, state: RequestState) -> str:
        result = state.result
        answer = result.completions[0].text if result is not None and result.completions else ""
        return strip_think(answer) if self._use_think else answer

    def _record(self, state: RequestState, outcomes: list[CallOutcome]) -> dict[str, Any]:
        if not outcomes:
            return NoteRecord.empty().to_dict()
        entries: dict[str, JudgeEntry] = {}
        for judge, outcome in zip(self._judges, outcomes, strict=True):
            entries[judge.name] = self._judge_entry(judge, outcome)
            if outcome.failure is not None:
                hwarn(f"Judge {judge.name} failed on instance {state.instance.id}: {self._scrub(outcome.failure)}")
        failed = tuple(name for name, entry in entries.items() if entry.failed)
        return NoteRecord(judges=entries, failed_judges=failed).to_dict()

    def _ticker(self, bar: tqdm | None) -> Callable[[], None]:
        """Refreshes the bar's note on endpoints that hold calls back (a 429's wait, a lowered limit)."""

        shown = [0.0]

        def tick() -> None:
            if bar is None:
                return
            now = time.monotonic()
            waits = [
                EndpointWait(endpoint, gate.blocked_until - now, gate.limit, gate.max_concurrency, gate.capacity_source)
                for endpoint, gate in self._caller.gates().items()
            ]
            due = now - shown[0] >= bar.mininterval
            shown[0] = now if due else shown[0]
            bar.set_postfix_str(status_line(waits), refresh=due)

        return tick

    def _judge_entry(self, judge: JudgeTarget, outcome: CallOutcome) -> JudgeEntry:
        """What the record keeps of a call: scores only from a verdict that counted; the reply only when failed."""
        verdict, failed = outcome.verdict, outcome.failure is not None
        dimensions = {dim: verdict.dimensions[dim] for dim in DIMENSIONS} if verdict is not None else {}
        return JudgeEntry(
            scores={dim: None if failed else d.score for dim, d in dimensions.items()},
            explanations={dim: self._scrub(d.explanation) for dim, d in dimensions.items()},
            status=FAILED if failed else OK,
            failure=self._scrub(outcome.failure) if outcome.failure is not None else None,
            invalid={dim: self._scrub(why) for dim, why in verdict.invalid.items()} if verdict is not None else {},
            raw_reply=self._scrub(outcome.raw_reply) if failed and outcome.raw_reply is not None else None,
            tokens=outcome.tokens,
            structured=outcome.structured,
            model_deployment=judge.model_deployment,
            tokens_in=outcome.tokens_in,
            tokens_out=outcome.tokens_out,
        )

    def _scrub(self, text: str) -> str:
        return scrub(text, self._secrets)
