"""MTSamples Procedures as a verifiers environment (MedARC's Medmarks harness): our rules behind verifiers' door.

``verifiers.load_environment("helm_mtsamples_ext.verifiers_env", judge_model=[...], ...)`` or ``vf-eval
helm_mtsamples_ext.verifiers_env``. MedARC's arguments (``judge_model``, ``judge_base_url``, ``judge_api_key``: a
string or a list, matched by position; ``use_think``; ``cache_dir``), our run entry's others as keyword arguments.
Only the glue is here: the notes are ``data/``'s (pinned, HELM's extraction), the judge prompt, the verdict reading
and the repair turns ``judges/``', the reward ``scoring/``'s. A judge that fails counts for nothing, with its
reason in ``info["judge_feedback"]``; a note no judge scored has reward NaN, a missing reward, never 0 (verifiers
0.1.x turns a reward function's exception or None into 0.0, and keeps a float NaN as it is). No HELM here: the
module never imports ``helm`` (the verifiers venv has none).
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import re
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.choices import HELM_FENCED
from helm_mtsamples_ext.common.judge_lists import ListedJudge, list_judges
from helm_mtsamples_ext.common.log import hwarn
from helm_mtsamples_ext.common.model_prompt import max_tokens, model_prompt
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.common.secrets import install_log_scrubber, mask, reachable_keys, refused_key_line
from helm_mtsamples_ext.data.custom_manifest import resolve_manifest
from helm_mtsamples_ext.data.instances import NoteSample, build_samples
from helm_mtsamples_ext.data.notes import CACHE_DIR_ENV, ensure_notes, resolve_base_url
from helm_mtsamples_ext.judges.async_openai import AsyncCallSettings, AsyncJudge
from helm_mtsamples_ext.judges.async_panel import judge_panel
from helm_mtsamples_ext.judges.reachability import check_endpoint
from helm_mtsamples_ext.scoring.judge_feedback import judge_feedback
from helm_mtsamples_ext.scoring.reward import score_note

DEFAULT_JUDGE = "gpt-5-mini"
DEFAULT_CACHE_DIR = "~/.cache/helm_mtsamples_ext/notes"
DEFAULT = RunEntryArgs()
"""The run entry's defaults: the door's keyword arguments default to them (``medarc-eval`` lists them in --help and
accepts only named parameters, so each honoured argument is one)."""


def _run_args(named: dict[str, Any], kwargs: dict[str, Any]) -> RunEntryArgs:
    """The run entry's arguments (``RunEntryArgs.parse``: an unknown one is one line naming the closest); one this
    door does not honour (``kwargs`` that parse) is refused in one line, never silently ignored."""
    args = RunEntryArgs.parse(**named, **kwargs)
    unused = sorted(kwargs)
    if unused:
        hint = "; give the panel as judge_model (a string or a list)" if "judges" in unused else ""
        raise ValueError(f"{', '.join(unused)}: HELM's runner's argument(s), not the verifiers environment's{hint}")
    if args.judge_prompt in ("helm", HELM_FENCED) and importlib.util.find_spec("helm") is None:
        raise ValueError(
            f"judge_prompt={args.judge_prompt} fills HELM's template, and HELM is not installed here: "
            "use judge_prompt=prefix (the default) or ours"
        )
    return args


def _samples(cache_dir: str | None, extraction: str) -> list[tuple[int, NoteSample]]:
    """The notes' samples, each with its ``example_id``: the note's position in the manifest (0-based), the same for
    every model and every extraction, so runs of different models pair up note by note."""
    directory = Path(cache_dir or os.environ.get(CACHE_DIR_ENV) or DEFAULT_CACHE_DIR).expanduser()
    directory.mkdir(parents=True, exist_ok=True)
    try:
        paths = ensure_notes(directory, base_url=resolve_base_url(None), manifest=resolve_manifest())
    except Exception as e:  # NoteHostUnreachable, ManifestUnusable, DataError: one line, already naming the fix
        raise ValueError(f"{names.RUN_ENTRY}: {e}") from None
    position = {filename: i for i, filename in enumerate(paths)}
    batch = build_samples({name: path.read_bytes() for name, path in paths.items()}, extraction)
    return [(position[s.filename], s) for s in batch.samples]


def _row(example_id: int, sample: NoteSample, use_think: bool) -> dict[str, Any]:
    """A dataset row as SingleTurnEnv reads it; ``info`` carries MedARC's fields and ours."""
    info = {
        "instance_id": sample.id,
        "filename": sample.filename,
        "extracted_section": sample.extracted_section,
        "procedure_note": sample.input,
        "reference_plan": sample.reference,
        "specialty": sample.specialty or "",
        "extraction": sample.extraction,
    }
    question = model_prompt(sample.input, use_think)
    return {"example_id": example_id, "question": question, "answer": sample.reference, "info": info}


def _completion_text(completion: Any) -> str:
    """The model's answer: the last assistant message's text (verifiers 0.1.11 gives pydantic messages)."""
    if isinstance(completion, str):
        return completion
    for message in reversed(list(completion or [])):
        if message["role"] == "assistant":
            return str(message["content"] or "")
    return ""


KEY_HANDOFF = "MTSAMPLES_JUDGE_API_KEY_"
"""Where a key given as ``judge_api_key`` waits for verifiers' env server (a process it spawns, which loads the
environment again from the arguments it keeps): verifiers writes those arguments to each run's metadata.json, so
they hold ``env:<variable>`` in the key's place, and the spawned process inherits the variable."""
KEY_REFERENCE = "env:"
"""How the kept arguments name a ``KEY_HANDOFF`` variable. No other variable may be named: an argument that could
name any variable would let a shared config send, say, a cloud key to the judge URL it also names."""


KeyArgument = str | Sequence[str | None] | None
"""``judge_api_key`` as MedARC takes it: one key for every judge, or one per judge."""


def _dereference(value: KeyArgument, environ: Mapping[str, str]) -> str | list[str | None] | None:
    """``judge_api_key`` with each ``env:<KEY_HANDOFF variable>`` replaced by its value: the env server's load."""

    def one(item: str | None) -> str | None:
        if item is None or not item.startswith(KEY_REFERENCE):
            return item
        name = item.removeprefix(KEY_REFERENCE)
        if not re.fullmatch(rf"{KEY_HANDOFF}\d+", name) or not environ.get(name):
            raise ValueError(
                f"judge_api_key names the variable {name}, which this environment did not set for verifiers' env "
                "server: give the key itself, or set JUDGE_API_KEY"
            )
        return environ[name]

    return one(value) if value is None or isinstance(value, str) else [one(item) for item in value]


_HANDED_OFF: dict[str, str] = {}
"""Each key this process handed off, by the variable holding it: one variable per key for the process's life, so a
second environment loaded with another key never overwrites the first's before its env server starts."""


def _references(value: KeyArgument) -> str | list[str | None] | None:
    """``judge_api_key`` with each key moved into a ``KEY_HANDOFF`` variable of this process and named by it."""

    def one(key: str | None) -> str | None:
        if not key or key.startswith(KEY_REFERENCE):
            return key
        name = _HANDED_OFF.setdefault(key, f"{KEY_HANDOFF}{len(_HANDED_OFF) + 1}")
        os.environ[name] = key
        return f"{KEY_REFERENCE}{name}"

    return one(value) if value is None or isinstance(value, str) else [one(item) for item in value]


class _ArgumentKeyMask(logging.Filter):
    """verifiers logs the arguments an environment is loaded with (``Using provided args: judge_api_key=...``, and
    on failure the whole dict) before this module's ``load_environment`` runs: the key's value is masked there."""

    PATTERNS = (
        re.compile(r"(judge_api_key=)(\[.*?\]|.*?)(?=, \w+=|$)", re.DOTALL),
        re.compile(r"""('judge_api_key': )(\[.*?\]|'.*?'|".*?")"""),
    )

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "judge_api_key" in message:
            for pattern in self.PATTERNS:
                message = pattern.sub(r"\1***", message)
            record.msg, record.args = message, None
        return True


def _mask_argument_keys() -> None:
    logger = logging.getLogger("verifiers.utils.env_utils")
    if not any(isinstance(f, _ArgumentKeyMask) for f in logger.filters):
        logger.addFilter(_ArgumentKeyMask())


_mask_argument_keys()


class _Panel:
    """The judges of one environment, each behind its own AsyncOpenAI client (as MedARC's MultiJudge)."""

    def __init__(self, judges: list[ListedJudge], args: RunEntryArgs) -> None:
        from openai import AsyncOpenAI

        secrets = reachable_keys({}, os.environ, [j.api_key for j in judges if j.api_key])
        install_log_scrubber(secrets)
        scrub = partial(mask, keys=secrets)
        settings = AsyncCallSettings(
            timeout=args.judge_timeout,
            max_wait=args.judge_max_wait,
            structured=args.judge_structured,
            explanation_cap=args.explanation_cap,
        )
        self.args, self.listed = args, judges
        self.judges = [
            AsyncJudge(
                AsyncOpenAI(base_url=j.base_url, api_key=j.api_key, timeout=args.judge_timeout, max_retries=0),
                j.model,
                settings,
                scrub,
            )
            for j in judges
        ]

    async def reward(self, completion: Any, info: dict[str, Any]) -> float:
        """Our reward for one rollout (NaN when no judge scored the note); the panel's detail into ``info``."""
        panel = {j.name: partial(judge.judge, model_deployment=j.model) for judge, j in self._pairs()}
        record, _ = await judge_panel(
            _completion_text(completion),
            info["procedure_note"],
            info["reference_plan"],
            panel,
            use_think=self.args.use_think,
            answer_cap=self.args.answer_cap,
            judge_prompt=self.args.judge_prompt,
        )
        scores = score_note(record, [j.name for j in self.listed])
        info["judge_feedback"] = judge_feedback(record, scores, {j.name: j.model for j in self.listed})
        info["record"] = record.to_dict()
        return math.nan if scores.reward is None else scores.reward

    def _pairs(self) -> list[tuple[AsyncJudge, ListedJudge]]:
        return list(zip(self.judges, self.listed, strict=True))


def load_environment(
    use_think: bool = False,
    cache_dir: str | None = None,
    judge_model: str | list[str] = DEFAULT_JUDGE,
    judge_base_url: str | list[str] | None = None,
    judge_api_key: str | list[str] | None = None,
    extraction: str = DEFAULT.extraction,
    judge_prompt: str = DEFAULT.judge_prompt,
    judge_timeout: float = DEFAULT.judge_timeout,
    judge_max_wait: float = DEFAULT.judge_max_wait,
    judge_structured: str = DEFAULT.judge_structured,
    answer_cap: int = DEFAULT.answer_cap,
    explanation_cap: int | None = DEFAULT.explanation_cap,
    **kwargs: Any,
) -> Any:
    """The environment: our pinned notes, HELM's prompt to the model, our panel and reward. The arguments after
    ``judge_api_key`` are the run entry's (README: Run-entry arguments); the run entry's others are HELM's runner's
    and refused here."""
    import verifiers as vf
    from datasets import Dataset

    named = dict(
        use_think=use_think, extraction=extraction, judge_prompt=judge_prompt, judge_timeout=judge_timeout,
        judge_max_wait=judge_max_wait, judge_structured=judge_structured, answer_cap=answer_cap,
        explanation_cap=explanation_cap,
    )  # fmt: skip
    args = _run_args(named, kwargs)
    judges = list_judges(judge_model, judge_base_url, _dereference(judge_api_key, os.environ), os.environ)
    keyless = [j.name for j in judges if not j.api_key]
    if keyless:
        raise ValueError(f"judge {keyless[0]!r} has no API key: pass judge_api_key or set JUDGE_API_KEY")
    for judge in judges:
        line = refused_key_line(f"judge {judge.name}'s key", judge.api_key or "")
        if line:
            hwarn(line)
    for url, key in dict.fromkeys((j.base_url, j.api_key) for j in judges if j.base_url):  # before any rollout
        problem = check_endpoint(url, key)
        if problem is not None:
            raise ValueError(problem)
    rows = [_row(i, sample, args.use_think) for i, sample in _samples(cache_dir, args.extraction)]
    panel = _Panel(judges, args)

    async def mtsamples_reward(completion: Any, info: dict[str, Any]) -> float:
        return await panel.reward(completion, info)

    env = vf.SingleTurnEnv(
        eval_dataset=Dataset.from_list(rows),
        rubric=vf.Rubric(funcs=[mtsamples_reward], weights=[1.0]),
        sampling_args={"temperature": 0.0, "max_tokens": max_tokens(args.use_think)},
    )
    if judge_api_key is not None:
        panel_args = {"cache_dir": cache_dir, "judge_model": judge_model, "judge_base_url": judge_base_url}
        env.env_args = {**panel_args, **named, "judge_api_key": _references(judge_api_key)}
    return env


__all__ = ["load_environment"]
