"""The Inspect door: ``inspect eval helm_mtsamples_ext/mtsamples_procedures`` runs our benchmark in Inspect.

Only the harness glue lives here; the rules are the core's. The dataset is our pinned notes with HELM's extraction
(data.notes, data.instances); the model under test reads the words HELM gives it (common.model_prompt); the scorer
asks our panel through Inspect's own model API (inspect_judge.py), with our judge prompt, our verdict reading and
our reward (scoring.reward.score_note). The task's arguments are the run entry's, parsed by ``RunEntryArgs`` so the
defaults and the errors are the same as in HELM.

Unjudged notes (no judge of the panel gave a verdict that counts) must not count as 0. Inspect 0.3.285 skips a
NaN score value when it computes metrics: at the root (``Score.unscored()``) or, in a dict value, per key (the
dict metrics leave the NaN keys out). So each score is a dict, ``reward`` and the three dimension means NaN where
nothing counts, and ``unjudged`` 1.0 or 0.0, so the mean of ``unjudged`` is the share of notes nobody could
score. A judge that fails is unscored with its reason in the score's metadata, never a low score. An empty answer
scores 0, as in HELM, and no judge is asked.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, bootstrap_stderr, mean, metric, scorer
from inspect_ai.solver import TaskState, generate
from inspect_ai.util import collect

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.choices import HELM_FENCED
from helm_mtsamples_ext.common.judge_url import check_base_url
from helm_mtsamples_ext.common.log import hwarn
from helm_mtsamples_ext.common.model_prompt import max_tokens, model_prompt
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.common.run_entry_args import DEFAULT_JUDGES, RunEntryArgs
from helm_mtsamples_ext.common.secrets import PLACEHOLDER_KEY, install_log_scrubber, reachable_keys
from helm_mtsamples_ext.data.custom_manifest import resolve_manifest
from helm_mtsamples_ext.data.instances import build_samples
from helm_mtsamples_ext.data.notes import DataError, ensure_notes, resolve_base_url, resolve_cache_dir
from helm_mtsamples_ext.inspect_judge import JudgeCall, judge_note
from helm_mtsamples_ext.inspect_wire import masking_client
from helm_mtsamples_ext.judges.async_panel import judge_panel
from helm_mtsamples_ext.judges.endpoint_keys import EndpointKey, refused_keys, resolve_endpoint_keys
from helm_mtsamples_ext.judges.reachability import check_endpoint
from helm_mtsamples_ext.judges.urls import normalise_base_url
from helm_mtsamples_ext.report.stats import BootstrapSettings, reward_ci
from helm_mtsamples_ext.scoring.reward import score_note

__all__ = ["bootstrap_ci", "mtsamples_procedures", "panel_scorer"]

Quiet: type[BaseException] = SystemExit
"""The exception Inspect ends an eval with, exit 1, printing nothing: our line stays the last."""
try:
    from inspect_ai._util.error import SilentException

    Quiet = SilentException
except ImportError:  # pragma: no cover - a later Inspect that moved it: a traceback after our line
    pass

DEFAULT_CACHE_DIR = Path("~/.cache/helm_mtsamples_ext/notes")
"""Where the notes are kept between runs unless ``cache_dir`` or ``MTSAMPLES_PROCEDURES_CACHE_DIR`` says."""
JUDGE_SERVICE = "judge"
"""Judges on ``judge_base_url`` are Inspect's ``openai-api/judge/<judge>`` models: their usage shows under that."""
UNJUDGED = "unjudged"


def _joined(value: str | Sequence[str] | None) -> str | None:
    """``a+b`` or a list (``-T judges=a,b`` arrives as one) as the run entry writes it."""
    if value is None or isinstance(value, str):
        return value
    return "+".join(str(v) for v in value)


def dataset(extraction: str, use_think: bool, cache_dir: str | None = None) -> MemoryDataset:
    """Our pinned notes as Inspect samples, in HELM's order and with HELM's instance ids."""
    where = Path(cache_dir).expanduser() if cache_dir else resolve_cache_dir(DEFAULT_CACHE_DIR)
    paths = ensure_notes(where, base_url=resolve_base_url(None), manifest=resolve_manifest(), progress=False)
    batch = build_samples({name: path.read_bytes() for name, path in paths.items()}, extraction)
    samples = [
        Sample(
            id=s.id,
            input=model_prompt(s.input, use_think),
            target=s.reference,
            metadata={"note": s.input, **s.extra_data},
        )
        for s in batch.samples
    ]
    return MemoryDataset(samples, name=names.RUN_ENTRY)


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
            raise RuntimeError(
                f"mtsamples_procedures: {share:.0%} of the notes were judged by no judge (max_unjudged="
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


def _endpoint_keys(urls: list[str]) -> dict[str, EndpointKey]:
    """Each judge URL's key, by normalised URL, by HELM's path's rule (judges/endpoint_keys.py): the environment
    only, since Inspect reads no credentials.conf."""
    return resolve_endpoint_keys(enumerate(urls, 1), {}, os.environ)


def _models(judges: list[str], urls: list[str], secrets: tuple[str, ...]) -> dict[str, Model]:
    """Each judge as an Inspect model; one served at ``judge_base_url`` behind a client masking ``secrets`` in what
    its server sends back (inspect_wire.py). Not memoized by Inspect: its cache key leaves the client out, and a
    model reused from another eval could hold a client that was closed and rebuilt without the mask."""
    if not urls:
        return {name.split("/")[-1]: get_model(name) for name in judges}
    keys = _endpoint_keys(urls)
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


def _value(reward: float | None, dims: dict[str, float | None], unjudged: bool) -> dict[str, float]:
    nan = float("nan")
    value = {"reward": nan if reward is None else reward}
    value.update({d: nan if v is None else v for d, v in dims.items()})
    value[UNJUDGED] = 1.0 if unjudged else 0.0
    return value


def metrics(unjudged: Metric) -> dict[str, list[Metric]]:
    """Mean reward with its bootstrap standard error and 95% interval, each dimension's mean (1-5), and the unjudged
    share."""
    return {
        "reward": [mean(), bootstrap_stderr(), bootstrap_ci()],
        **{d: [mean()] for d in DIMENSIONS},
        UNJUDGED: [unjudged],
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
    for line in refused_keys(_endpoint_keys(judge_base_url).values()):
        hwarn(line)
    install_log_scrubber(secrets)
    call = JudgeCall(judge_structured, explanation_cap, judge_timeout, judge_max_wait, secrets)
    models: dict[str, Model] = {}

    async def score(state: TaskState, target: Target) -> Score:
        models.update(models or _models(judges, judge_base_url, secrets))
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
        reward = scores.reward
        return Score(
            value=_value(reward, {d: scores.dimension_mean(d) for d in DIMENSIONS}, scores.unjudged),
            answer=judged,
            explanation="empty answer: reward 0" if record.empty_answer else "; ".join(lines),
            reason=UNJUDGED if scores.unjudged else None,
            metadata=metadata,
        )

    return score


@task
def mtsamples_procedures(
    judges: str | list[str] | None = None,
    judge_base_url: str | list[str] | None = None,
    use_think: bool = RunEntryArgs.use_think,
    judge_prompt: str = RunEntryArgs.judge_prompt,
    extraction: str = RunEntryArgs.extraction,
    max_unjudged: float = RunEntryArgs.max_unjudged,
    answer_cap: int = RunEntryArgs.answer_cap,
    judge_structured: str = RunEntryArgs.judge_structured,
    explanation_cap: int | None = RunEntryArgs.explanation_cap,
    judge_timeout: float = RunEntryArgs.judge_timeout,
    judge_max_wait: float = RunEntryArgs.judge_max_wait,
    cache_dir: str | None = None,
) -> Task:
    """MTSamples Procedures: write the treatment plan for an operative note, judged by an LLM panel.

    ``judges``: Inspect model names (``openai/gpt-4o-mini``), or, with ``judge_base_url`` (one URL, or one per
    judge joined by ``+``), the names an OpenAI-compatible server serves (the n-th URL's key: ``JUDGE_API_KEY_<n>``,
    else ``JUDGE_API_KEY``, else none, as on HELM's path).
    The other arguments are the run entry's (README, Run-entry arguments)."""
    try:
        return _task(
            judges, judge_base_url, use_think, judge_prompt, extraction, max_unjudged, answer_cap, judge_structured,
            explanation_cap, judge_timeout, judge_max_wait, cache_dir,
        )  # fmt: skip
    except (ValueError, DataError) as mistake:  # the user's to fix: one line, no traceback (Inspect prints its text)
        raise _user_error(f"mtsamples_procedures: {mistake}") from None


def _user_error(message: str) -> BaseException:
    """A mistake the user fixes: its one line on stderr, then Inspect's exception that exits 1 without printing more
    (its PrerequisiteError would print the message through rich, wrapped at 80 columns, splitting cause from fix)."""
    print(message, file=sys.stderr, flush=True)
    return Quiet()


def _task(
    judges: str | list[str] | None,
    judge_base_url: str | list[str] | None,
    use_think: bool,
    judge_prompt: str,
    extraction: str,
    max_unjudged: float,
    answer_cap: int,
    judge_structured: str,
    explanation_cap: int | None,
    judge_timeout: float,
    judge_max_wait: float,
    cache_dir: str | None,
) -> Task:
    raw = {
        "judges": _joined(judges) or DEFAULT_JUDGES,
        "judge_base_url": _joined(judge_base_url),
        "use_think": use_think,
        "judge_prompt": judge_prompt,
        "extraction": extraction,
        "max_unjudged": max_unjudged,
        "answer_cap": answer_cap,
        "judge_structured": judge_structured,
        "explanation_cap": explanation_cap,
        "judge_timeout": judge_timeout,
        "judge_max_wait": judge_max_wait,
    }
    args = RunEntryArgs.parse(**raw)
    if args.judge_prompt in ("helm", HELM_FENCED):
        raise ValueError("judge_prompt=helm needs HELM's own template, which this venv has not: use prefix or ours")
    panel = [j.strip() for j in (args.judges or DEFAULT_JUDGES).split("+")]
    # Refused as HELM refuses it: the URL is written into the log's task arguments.
    urls = (
        [check_base_url(u, n) for n, u in enumerate(args.judge_base_url.split("+"), 1)] if args.judge_base_url else []
    )
    if not all(panel) or len(set(panel)) != len(panel):
        raise ValueError(f"judges must name different judges joined by '+', got {args.judges!r}")
    if len(urls) > 1 and len(urls) != len(panel):
        raise ValueError(f"judge_base_url has {len(urls)} URLs for {len(panel)} judges: give one, or one each")
    for endpoint in _endpoint_keys(urls).values():  # before the model under test is asked anything, as HELM's path
        problem = check_endpoint(endpoint.base_url, None if endpoint.key == PLACEHOLDER_KEY else endpoint.key)
        if problem is not None:
            raise ValueError(problem)
    size = EvalSize()
    return Task(
        early_stopping=size,
        dataset=dataset(args.extraction, args.use_think, cache_dir),
        solver=generate(),
        scorer=[
            panel_scorer(
                panel,
                urls,
                args.judge_prompt,
                args.use_think,
                args.answer_cap,
                args.judge_structured,
                args.explanation_cap,
                args.judge_timeout,
                args.judge_max_wait,
            )
        ],
        metrics=metrics(max_unjudged_check(args.max_unjudged, size)),  # the scorer's, the unjudged share checked
        config=GenerateConfig(max_tokens=max_tokens(args.use_think), temperature=0.0),
        version=RULES_VERSION,
    )
