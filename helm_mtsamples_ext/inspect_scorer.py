"""The Inspect door's scorer: our panel asked through Inspect's model API, our reward, and the metrics.

Why apart from inspect_task.py: the task is the harness glue (arguments, the notes as samples, the model under
test); this is what a note's score is. The rules are the core's: the judge prompt, the verdict reading
(judges/inspect_calls/judge.py) and the reward (scoring.reward.score_note).

Unjudged notes (no judge of the panel gave a verdict that counts) must not count as 0. Inspect 0.3.285 skips a
NaN score value when it computes metrics: at the root (``Score.unscored()``) or, in a dict value, per key (the
dict metrics leave the NaN keys out). So each score is a dict, ``reward`` and the three dimension means NaN where
nothing counts, and ``unjudged`` 1.0 or 0.0, so the mean of ``unjudged`` is the share of notes nobody could
score. A judge that fails is unscored with its reason in the score's metadata, never a low score. An empty answer
scores 0, as in HELM, and no judge is asked.

Failures are shown as HELM's report shows them (report/answer_failures.py): each judge's failed share
(``failed_share:<judge>``, 1.0 or 0.0 per note, NaN where no judge was asked) and ``reward_failed_at_min``, the
reward had every failed judgment been the scale's minimum, so a panel that scores by failing shows it. (HELM's
warning that one judge fails far more often on one model's answers than on the others' compares models: one Inspect
eval has one model, so it has nothing to compare.)
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from inspect_ai.model import Model, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, bootstrap_stderr, mean, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import collect

from helm_mtsamples_ext.common.log import hwarn
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.common.secrets import install_log_scrubber, reachable_keys
from helm_mtsamples_ext.judges.core.async_panel import judge_panel
from helm_mtsamples_ext.judges.core.capacity import endpoint_capacities
from helm_mtsamples_ext.judges.core.endpoint_keys import EndpointKey, refused_keys, resolve_endpoint_keys
from helm_mtsamples_ext.judges.core.urls import normalise_base_url
from helm_mtsamples_ext.judges.inspect_calls.judge import JudgeCall, ServerPace, judge_note
from helm_mtsamples_ext.judges.inspect_calls.wire import masking_client
from helm_mtsamples_ext.report.answer_failures import BOUNDED, SHARE_PREFIX
from helm_mtsamples_ext.scoring.reward import NoteScores, score_note
from helm_mtsamples_ext.stats.intervals import BootstrapSettings, reward_ci

__all__ = [
    "EvalSize",
    "VoidResult",
    "bootstrap_ci",
    "endpoint_keys",
    "judge_models",
    "max_unjudged_check",
    "metrics",
    "panel_names",
    "panel_scorer",
    "server_paces",
]

logger = logging.getLogger(__name__)

JUDGE_SERVICE = "judge"
"""Judges on ``judge_base_url`` are Inspect's ``openai-api/judge/<judge>`` models: their usage shows under that."""
UNJUDGED = "unjudged"
VOID = "of the notes were judged by no judge"
"""Words of the line that fails an eval over ``max_unjudged`` (inspect_task.py finds it in the log by them)."""


class VoidResult(RuntimeError):
    """An eval over ``max_unjudged``: its result is void. ``message`` is what Inspect keeps as the log's error (an
    exception without one is kept as its repr, quotes and class name around the line)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class EvalSize:
    """How many scores the eval will have (its samples, after ``--limit``, times its epochs), told by Inspect at
    the start through the early-stopping hooks; it never stops a sample.

    Why: Inspect also computes the metrics while the eval runs, for its progress display, over the notes done so
    far; a share of unjudged notes over ``max_unjudged`` there is no verdict on the eval (the notes judged last may
    bring it under), so the check waits for every score."""

    total: int | None = None

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        self.total = len(samples) * epochs
        return "max_unjudged"

    async def schedule_sample(self, id: str | int, epoch: int) -> None:
        return None

    async def complete_sample(self, id: str | int, epoch: int, scores: dict[str, Any]) -> None:
        return None

    async def complete_task(self) -> dict[str, Any]:
        return {}


@metric
def max_unjudged_check(max_unjudged: float, size: EvalSize | None = None) -> Metric:
    """The share of notes no judge could score; over ``max_unjudged`` the eval fails, naming the cause and the fix
    (HELM's metric fails the run the same way: a mean over the notes judged would hide a broken panel), once every
    note is scored (``size``)."""

    def compute(scores: list[SampleScore]) -> float:
        share = sum(s.score.as_float() for s in scores) / len(scores) if scores else 0.0
        final = size is None or size.total is None or len(scores) >= size.total
        if share > max_unjudged and final:
            raise VoidResult(
                f"mtsamples_procedures: {share:.0%} {VOID} (max_unjudged="
                f"{max_unjudged:g}): see each score's metadata for why, fix the judges, or raise max_unjudged"
            )
        return share

    return compute


@metric
def bootstrap_ci(resamples: int = 2000, seed: int = 0) -> Metric:
    """The 95% bootstrap interval of the mean reward, as ``ci_low`` and ``ci_high``: the leaderboard's interval
    (report.stats.reward_ci: expanded percentile bootstrap over the notes with a reward, seeded), so Inspect and
    helm-mtsamples-report give the same bounds for the same rewards. NaN (no interval) below 5 notes with a reward
    or when most resamples tie, as in the report: an interval from 2 notes would read as certainty."""
    settings = BootstrapSettings(n_resamples=resamples, seed=seed)

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        rewards = [s.score.as_float() for s in scores]
        low, high = reward_ci(np.array([r for r in rewards if math.isfinite(r)], dtype=float), settings)
        return {"ci_low": float(low), "ci_high": float(high)}

    return compute


def endpoint_keys(urls: list[str]) -> dict[str, EndpointKey]:
    """Each judge URL's key, by normalised URL, by HELM's path's rule (judges/core/endpoint_keys.py): the environment
    only, since Inspect reads no credentials.conf."""
    return resolve_endpoint_keys(enumerate(urls, 1), {}, os.environ)


def panel_names(judges: list[str], urls: list[str]) -> list[str]:
    """Each judge's name in the scores and the metrics: the served name on ``judge_base_url``, else the Inspect
    model's last part (``openai/gpt-4o-mini``: ``gpt-4o-mini``)."""
    return list(judges) if urls else [name.split("/")[-1] for name in judges]


def server_paces(judges: list[str], urls: list[str], keys: dict[str, EndpointKey]) -> dict[str, ServerPace]:
    """Each endpoint judge whose server says how many calls it takes at once (``capacity.probe_capacity``: llama.cpp's
    ``/props``, llama-cpp-python's ``/v1/models`` signature), with its server's slots; asked once per server, with
    the endpoint's key (none for the keyless placeholder). Why: a one-slot server queues what it is sent, and a
    queued call times out while the server is busy and well (HELM's path paces it the same way)."""
    if not urls:
        return {}
    pairs = list(zip(judges, urls if len(urls) > 1 else urls * len(judges), strict=True))
    said = endpoint_capacities((url, keys[normalise_base_url(url)].key) for _, url in pairs)
    paces: dict[str, ServerPace] = {}
    for judge, url in pairs:
        capacity = said.get(normalise_base_url(url))
        if capacity is not None:
            paces[judge] = ServerPace(normalise_base_url(url), capacity.slots, capacity.source)
    for pace in dict.fromkeys(paces.values()):
        logger.info(f"judge server {pace.url} takes {pace.slots} call(s) at once ({pace.source}): no more are sent")
    return paces


def judge_models(
    judges: list[str], urls: list[str], keys: dict[str, EndpointKey], secrets: tuple[str, ...]
) -> dict[str, Model]:
    """Each judge as an Inspect model; one served at ``judge_base_url`` with its key from ``keys`` (endpoint_keys)
    behind a client masking ``secrets`` in what its server sends back (judges/inspect_calls/wire.py). Not memoized by
    Inspect:
    its cache key leaves the client out, and a model reused from another eval could hold a client that was closed
    and rebuilt without the mask."""
    if not urls:
        return {name.split("/")[-1]: get_model(name) for name in judges}
    pairs = zip(judges, urls if len(urls) > 1 else urls * len(judges), strict=True)
    return {
        m: get_model(
            f"openai-api/{JUDGE_SERVICE}/{m}",
            base_url=u,
            api_key=keys[normalise_base_url(u)].key,
            memoize=False,
            http_client=masking_client(secrets),
            max_retries=0,  # the SDK's own retries would repeat each of Inspect's attempts unseen (2 more by default)
        )
        for m, u in pairs
    }


def _value(scores: NoteScores) -> dict[str, float]:
    """A note's score value: the reward and dimension means (NaN where nothing counts), whether it is unjudged,
    each judge's failure (NaN where no judge was asked) and the reward with failed judgments at the minimum."""
    nan = float("nan")

    def number(value: float | None) -> float:
        return nan if value is None else value

    value = {"reward": number(scores.reward)}
    value.update({d: number(scores.dimension_mean(d)) for d in DIMENSIONS})
    value[UNJUDGED] = 1.0 if scores.unjudged else 0.0
    for judge in scores.judges:
        value[f"{SHARE_PREFIX}{judge.name}"] = nan if scores.empty_answer else float(judge.failed)
    value[BOUNDED] = scores.reward_failed_at_min
    return value


def metrics(unjudged: Metric, judges: Sequence[str] = ()) -> dict[str, list[Metric]]:
    """Mean reward with its bootstrap standard error and 95% interval, each dimension's mean (1-5), the unjudged
    share, each judge's failed share (``failed_share:<judge>``) and the mean reward with failed judgments at the
    scale's minimum (``reward_failed_at_min``), as HELM's report shows them."""
    return {
        "reward": [mean(), bootstrap_stderr(), bootstrap_ci()],
        **{d: [mean()] for d in DIMENSIONS},
        UNJUDGED: [unjudged],
        **{f"{SHARE_PREFIX}{judge}": [mean()] for judge in judges},
        BOUNDED: [mean()],
    }


@scorer(metrics=metrics(mean()))
def panel_scorer(
    judges: list[str],
    judge_base_url: list[str],
    judge_prompt: str = RunEntryArgs.judge_prompt,
    use_think: bool = RunEntryArgs.use_think,
    answer_cap: int = RunEntryArgs.answer_cap,
    judge_structured: str = RunEntryArgs.judge_structured,
    explanation_cap: int | None = RunEntryArgs.explanation_cap,
    judge_timeout: float = RunEntryArgs.judge_timeout,
    judge_max_wait: float = RunEntryArgs.judge_max_wait,
) -> Scorer:
    """Our panel's reward for one note: every judge asked at once, each verdict read by our rules."""
    secrets = reachable_keys({}, os.environ)
    keys = endpoint_keys(judge_base_url)
    for line in refused_keys(keys.values()):
        hwarn(line)
    install_log_scrubber(secrets)
    paces = server_paces(judges, judge_base_url, keys)
    call = JudgeCall(judge_structured, explanation_cap, judge_timeout, judge_max_wait, secrets, paces)
    models: dict[str, Model] = {}

    async def score(state: TaskState, target: Target) -> Score:
        models.update(models or judge_models(judges, judge_base_url, keys, secrets))
        names = list(models)
        completion = state.output.completion if state.output else ""
        panel = {n: partial(judge_note, call, n, models[n]) for n in names}
        record, judged = await judge_panel(
            completion,
            str(state.metadata.get("note", "")),
            target.text,
            panel,
            use_think=use_think,
            answer_cap=answer_cap,
            judge_prompt=judge_prompt,
            gather=collect,
        )
        scores = score_note(record, names)
        failures = {n: record.failure_of(n) for n in names if record.judge_failed(n)} if not record.empty_answer else {}
        lines = [
            f"{j.name}: "
            + (f"failed ({failures[j.name]})" if j.failed else ", ".join(f"{d} {s}" for d, s in j.scores.items()))
            for j in scores.judges
            if not record.empty_answer  # no judge was asked: none failed, none scored
        ]
        metadata: dict[str, Any] = {
            "judges": {n: e.to_dict() for n, e in record.judges.items()},
            "judge_rewards": {j.name: j.reward for j in scores.judges},
            "failures": failures,
            "empty_answer": record.empty_answer,
            "answer_cut": record.answer_cut,
            "rules_version": RULES_VERSION,
        }
        return Score(
            value=_value(scores),
            answer=judged,
            explanation="empty answer: reward 0" if record.empty_answer else "; ".join(lines),
            reason=UNJUDGED if scores.unjudged else None,
            metadata=metadata,
        )

    return score
