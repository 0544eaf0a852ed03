"""The Inspect door: ``inspect eval helm_mtsamples_ext/mtsamples_procedures`` runs our benchmark in Inspect.

Only the harness glue lives here; the rules are the core's. The dataset is our pinned notes with HELM's extraction
(data.notes, data.instances); the model under test reads the words HELM gives it (common.model_prompt); the scorer
asks our panel through Inspect's own model API (judges/inspect_calls/judge.py), with our judge prompt, our verdict
reading and our reward (scoring.reward.score_note), in inspect_scorer.py. The task's arguments are the run entry's:
their names, defaults and types are ``RunEntryArgs``' (``run_entry_parameters``), and they are parsed by it, so the
defaults and the errors are the same as in HELM: an unknown ``-T`` name names the closest
argument, one this door does not honour is refused, and a key given as an argument is refused with where keys go
(Inspect writes task arguments into its log). A result over ``max_unjudged`` is void, and ``inspect eval`` says so:
one line on stderr, last, whatever ``--display``, and exit status 1 (``VoidResultExit``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from functools import partial
from inspect import Parameter
from typing import Any

import click
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.log import EvalLog
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.choices import HELM_FENCED
from helm_mtsamples_ext.common.judge_url import check_base_url
from helm_mtsamples_ext.common.model_prompt import max_tokens, model_prompt
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.common.run_entry_args import (
    DEFAULT_JUDGES,
    RunEntryArgs,
    door_arguments,
    door_signature,
    run_entry_parameters,
)
from helm_mtsamples_ext.data.custom_manifest import resolve_manifest
from helm_mtsamples_ext.data.instances import build_samples
from helm_mtsamples_ext.data.notes import DataError, door_cache_dir, ensure_notes, resolve_base_url
from helm_mtsamples_ext.inspect_scorer import (
    VOID,
    EvalSize,
    endpoint_keys,
    max_unjudged_check,
    metrics,
    panel_names,
    panel_scorer,
)
from helm_mtsamples_ext.judges.core.reachability import check_endpoint

__all__ = ["mtsamples_procedures"]

Quiet: type[BaseException] = SystemExit
"""The exception Inspect ends an eval with, exit 1, printing nothing: our line stays the last."""
try:
    from inspect_ai._util.error import SilentException

    Quiet = SilentException
except ImportError:  # pragma: no cover - a later Inspect that moved it: a traceback after our line
    pass

NOT_HONOURED = {
    "jury_config_path": "; give the panel as judges (and judge_base_url)",
    "judge_family": "",
    "judge_max_concurrency": "; Inspect's --max-connections bounds the judges' calls",
    "judge_rpm": "",
    "judge_batch": "",
    "judge_batch_fallback": "",
}
"""Run-entry arguments this door does not honour, each with where its need is met here (README, Run-entry
arguments): taken in silence, the user would believe them applied."""
KEY_ARGUMENT = re.compile(r"(judge_)?api_keys?(_\d+)?")
"""A key given as a task argument (MedARC's ``judge_api_key``, or numbered): never taken, never repeated."""
VOID_LINE = re.compile(rf"{names.RUN_ENTRY}: \d+% {VOID} \(max_unjudged=[^)]*\): .*?raise max_unjudged")
"""The line the ``max_unjudged`` check failed the eval with, as Inspect keeps it in the log's error."""


def _joined(value: Any) -> str | None:
    """``a+b`` or a list (``-T judges=a,b`` arrives as one) as the run entry writes it; a scalar YAML read as a
    number or a boolean as its text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        return "+".join(str(v) for v in value)
    return str(value)


def dataset(extraction: str, use_think: bool, cache_dir: str | None = None) -> MemoryDataset:
    """Our pinned notes as Inspect samples, in HELM's order and with HELM's instance ids."""
    paths = ensure_notes(
        door_cache_dir(cache_dir), base_url=resolve_base_url(None), manifest=resolve_manifest(), progress=False
    )
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


HONOURED = (
    "use_think",
    "judge_prompt",
    "extraction",
    "max_unjudged",
    "answer_cap",
    "judge_structured",
    "explanation_cap",
    "judge_timeout",
    "judge_max_wait",
)
"""The run entry's arguments the task takes as they are (``judges`` and ``judge_base_url`` also as lists)."""
_KEYWORD = Parameter.POSITIONAL_OR_KEYWORD
PARAMETERS = (
    Parameter("judges", _KEYWORD, default=DEFAULT_JUDGES, annotation=str | list[str] | None),
    Parameter("judge_base_url", _KEYWORD, default=None, annotation=str | list[str] | None),
    *run_entry_parameters(*HONOURED),
    Parameter("cache_dir", _KEYWORD, default=None, annotation=str | None),
    Parameter("others", Parameter.VAR_KEYWORD, annotation=Any),
)
"""The task's signature, which Inspect reads for its ``-T`` names: each run-entry argument's default and type are
``RunEntryArgs``'."""


@task
@door_signature(*PARAMETERS)
def mtsamples_procedures(*args: Any, **kwargs: Any) -> Task:
    """MTSamples Procedures: write the treatment plan for an operative note, judged by an LLM panel.

    ``judges``: Inspect model names (``openai/gpt-4o-mini``), or, with ``judge_base_url`` (one URL, or one per
    judge joined by ``+``), the names an OpenAI-compatible server serves (the n-th URL's key: ``JUDGE_API_KEY_<n>``,
    else ``JUDGE_API_KEY``, else none, as on HELM's path).
    The other arguments are the run entry's (README, Run-entry arguments); ``others`` takes every other ``-T``
    name, so a misspelled one stops the task naming the closest (Inspect would only warn, and run the defaults)."""
    given = door_arguments(mtsamples_procedures, *args, **kwargs)
    try:
        _refuse_others(given.pop("others"))
        return _task(given.pop("cache_dir"), given)
    except (ValueError, DataError) as mistake:  # the user's to fix: one line, no traceback (Inspect prints its text)
        raise _user_error(f"mtsamples_procedures: {mistake}") from None


def _refuse_others(others: dict[str, Any]) -> None:
    """Refuse, in one line, an argument the task does not take: a key (named, its value never repeated), one no
    run entry has (``RunEntryArgs.parse`` names the closest), or a run entry's this door does not honour."""
    keys = sorted(name for name in others if KEY_ARGUMENT.fullmatch(name))
    if keys:
        raise ValueError(
            f"{', '.join(keys)}: the task takes no key as an argument (Inspect writes its arguments into the log): "
            "set JUDGE_API_KEY, or JUDGE_API_KEY_<n> for the n-th judge_base_url"
        )
    RunEntryArgs.parse(**others)
    if others:
        hints = "".join(dict.fromkeys(NOT_HONOURED.get(name, "") for name in sorted(others)))
        raise ValueError(f"{', '.join(sorted(others))}: HELM's runner's argument(s), not the Inspect task's{hints}")


def _user_error(message: str) -> BaseException:
    """A mistake the user fixes: its one line on stderr, then Inspect's exception that exits 1 without printing more
    (its PrerequisiteError would print the message through rich, wrapped at 80 columns, splitting cause from fix)."""
    print(message, file=sys.stderr, flush=True)
    return Quiet()


def _task(cache_dir: str | None, given: dict[str, Any]) -> Task:
    """The task for the run entry's arguments ``given`` (the task's own but ``cache_dir``)."""
    judges = given["judges"]
    if judges is None or not all(j.strip() for j in str(_joined(judges)).split("+")):
        raise ValueError(  # HELM's line (run_spec.py): an empty panel is a mistake, never the default
            f"judges= must name one or more judges joined by '+' (e.g. judges={DEFAULT_JUDGES}), "
            f"got {_joined(judges) or ''!r}; leave it out for the default"
        )
    args = RunEntryArgs.parse(
        **{**given, "judges": _joined(judges), "judge_base_url": _joined(given["judge_base_url"])}
    )
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
    for endpoint in endpoint_keys(urls).values():  # before the model under test is asked anything, as HELM's path
        problem = check_endpoint(endpoint.base_url, endpoint.key)  # the keyless placeholder is sent as no header
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
        metrics=metrics(max_unjudged_check(args.max_unjudged, size), panel_names(panel, urls)),  # unjudged checked
        config=GenerateConfig(max_tokens=max_tokens(args.use_think), temperature=0.0),
        version=RULES_VERSION,
    )


def void_lines(logs: Iterable[EvalLog]) -> list[str]:
    """The line each of our evals failed over ``max_unjudged`` with (inspect_scorer.max_unjudged_check), read back
    from the logs' errors: another task's log, or another error, is none of ours."""
    found = []
    for log in logs:
        message = log.error.message if log.status == "error" and log.error is not None else ""
        line = VOID_LINE.search(message) if log.eval.task.endswith(names.RUN_ENTRY) else None
        if line is not None:
            found.append(line.group(0))
    return found


def _exit_void(lines: list[str]) -> None:
    """At the end of ``inspect eval``: the void result's line(s) on stderr, last, then exit status 1."""
    for line in lines:
        print(line, file=sys.stderr, flush=True)
    raise SystemExit(1)


@hooks(name="mtsamples_procedures_void_result", description="inspect eval of mtsamples_procedures over max_unjudged")
class VoidResultExit(Hooks):
    """A result over ``max_unjudged`` is void, and ``inspect eval`` says so, as ``helm-run`` does: one line on
    stderr, last, whatever ``--display`` (``none`` prints nothing else), and exit status 1.

    Why a hook: Inspect records the failed metric as the log's error and its ``eval`` command exits 0 whatever a
    task's status (``eval-set`` exits 1). At the run's end this hook finds our line in the logs; under ``inspect
    eval`` (or ``eval-retry``), it leaves a callback on the command's click context, which prints the line and
    exits 1 once Inspect has printed all it prints. Under ``eval-set`` (which exits 1 itself) or the Python API
    (whose caller reads the log's status), the line is printed at once and nothing else changes."""

    async def on_run_end(self, data: RunEnd) -> None:
        lines = void_lines(data.logs)
        if not lines:
            return
        context = click.get_current_context(silent=True)
        if data.eval_set_id is None and context is not None and context.info_name in ("eval", "eval-retry"):
            context.call_on_close(partial(_exit_void, lines))
            return
        for line in lines:
            print(line, file=sys.stderr, flush=True)
