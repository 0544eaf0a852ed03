"""MTSamples Procedures as a verifiers environment (MedARC's Medmarks harness): our rules behind verifiers' door.

``verifiers.load_environment("helm_mtsamples_ext.verifiers_env", judge_model=[...], ...)`` or ``vf-eval
helm_mtsamples_ext.verifiers_env``. MedARC's arguments (``judge_model``, ``judge_base_url``, ``judge_api_key``: a string
or a list, matched by position; ``use_think``; ``cache_dir``), our run entry's others as keyword arguments. Only the
glue is here: the notes are ``data/``'s (pinned, HELM's extraction), the judge prompt, the verdict reading and the
repair turns ``judges/``', the reward ``scoring/``'s. What Medmarks' tools read is MedARC's: each row's ``example_id``
is the one MedARC's own environment gives the note (data/example_ids.py), the reward function is ``reward_mtsamples``,
and ``info["judge_feedback"]`` MedARC's list of evaluations (scoring/judge_feedback.py). A judge that fails counts for
nothing, with its reason in ``info["judge_feedback"][-1]``; a note no judge scored has reward NaN, a missing reward,
never 0 (verifiers 0.1.x turns a reward function's exception or None into 0.0, and keeps a float NaN as it is), so no
exception leaves our reward function: each is a named failure. Beside the reward, zero-weight functions show each
judge's failed share (``judge_failed_<judge>``) and ``reward_failed_at_min``, as HELM's report does. A judge endpoint
whose server says how many calls it takes at once (llama-cpp-python's: one) gets no more. Everything kept in a rollout's
output is encodable and bounded (verifiers' env server cannot send a lone surrogate). A mistake the user can fix is one
line (``LoadError``). No HELM here: the module never imports ``helm`` (the verifiers venv has none).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import math
import os
import re
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from inspect import Parameter
from types import TracebackType
from typing import Any

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common import failure_kinds
from helm_mtsamples_ext.common.choices import HELM_FENCED
from helm_mtsamples_ext.common.judge_lists import ListedJudge, list_judges
from helm_mtsamples_ext.common.log import hwarn
from helm_mtsamples_ext.common.model_prompt import max_tokens, model_prompt
from helm_mtsamples_ext.common.outside_text import encodable, encodable_text, strings_mapped, terminal
from helm_mtsamples_ext.common.record import FAILED, JudgeEntry
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.common.run_entry_args import (
    RunEntryArgs,
    door_arguments,
    door_signature,
    run_entry_parameters,
)
from helm_mtsamples_ext.common.secrets import (
    PLACEHOLDER_KEY,
    install_log_scrubber,
    mask,
    reachable_keys,
    refused_key_line,
)
from helm_mtsamples_ext.data.custom_manifest import resolve_manifest
from helm_mtsamples_ext.data.example_ids import example_ids, manifest_index
from helm_mtsamples_ext.data.instances import NoteSample, build_samples
from helm_mtsamples_ext.data.notes import ManifestEntry, door_cache_dir, ensure_notes, resolve_base_url
from helm_mtsamples_ext.judges.core.async_panel import judge_panel
from helm_mtsamples_ext.judges.core.capacity import endpoint_capacities, probe_capacity
from helm_mtsamples_ext.judges.core.reachability import check_endpoint
from helm_mtsamples_ext.judges.core.reply.reading import entry_of
from helm_mtsamples_ext.judges.core.settings import REPLY_CAP
from helm_mtsamples_ext.judges.core.urls import normalise_base_url
from helm_mtsamples_ext.judges.openai_calls.judge import AsyncCallSettings, AsyncJudge
from helm_mtsamples_ext.report.answer_failures import BOUNDED
from helm_mtsamples_ext.scoring.judge_feedback import judge_feedback
from helm_mtsamples_ext.scoring.reward import FLOOR_REWARD, failed_at_min, score_note, slugify

DEFAULT_JUDGE = "gpt-5-mini"
"""MedARC's default panel (its environment's ``judge_model``)."""
PANEL = ("judge_model", "judge_base_url", "judge_api_key")
"""MedARC's arguments naming the panel (``list_judges``); the others but ``cache_dir`` are the run entry's."""


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


def _samples(cache_dir: str | None, extraction: str) -> list[tuple[int, int, NoteSample]]:
    """The notes' samples, each with its ``example_id`` and its manifest position. The ``example_id`` is the row
    MedARC's own environment gives the same note (data/example_ids.py: its keep rule over the notes in name order),
    the same for every model and every extraction, so runs of ours and of MedARC's pair up note by note in
    ``medarc-eval winrate``; a note MedARC does not keep gets one no MedARC id reaches."""
    directory = door_cache_dir(cache_dir)
    directory.mkdir(parents=True, exist_ok=True)
    manifest = _manifest()
    try:
        paths = ensure_notes(directory, base_url=resolve_base_url(None), manifest=manifest)
    except Exception as e:  # NoteHostUnreachable, DataError: one line, already naming the fix
        raise ValueError(f"{names.RUN_ENTRY}: {e}") from None
    raw = {name: path.read_bytes() for name, path in paths.items()}
    ids, position = example_ids(manifest, raw), manifest_index(manifest)
    batch = build_samples(raw, extraction)
    return [(ids[s.filename], position[s.filename], s) for s in batch.samples]


def _manifest() -> list[ManifestEntry]:
    """``resolve_manifest``, its refusal (``ManifestUnusable``) as the one line the door raises."""
    try:
        return resolve_manifest()
    except Exception as e:
        raise ValueError(f"{names.RUN_ENTRY}: {e}") from None


def _row(example_id: int, manifest_position: int, sample: NoteSample, use_think: bool) -> dict[str, Any]:
    """A dataset row as SingleTurnEnv reads it; ``info`` carries MedARC's fields (``filename``,
    ``extracted_section``, ``procedure_note``, ``reference_plan``) and ours."""
    info = {
        "manifest_index": manifest_position,
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


class LoadError(ValueError):
    """A mistake the user can fix (an argument, a key, an endpoint), in one line naming it and the fix."""


def _ours(error: BaseException | None) -> bool:
    """Whether ``error`` is, or was raised from, our ``LoadError`` (verifiers wraps it in a RuntimeError)."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, LoadError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


MEDARC_ARGUMENT_CHECK = "medarc_verifiers.cli.utils.env_args"
"""The module where ``medarc-eval`` checks ``--env-arg`` names and values itself, before our environment loads."""


def _medarc_argument_check(error: BaseException, trace: TracebackType | None) -> bool:
    """Whether ``error`` is ``medarc-eval``'s own one-line refusal of an argument (an unknown ``--env-arg`` name,
    a value of the wrong type), raised where it checks them."""
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    module = trace.tb_frame.f_globals.get("__name__", "") if trace is not None else ""
    return isinstance(error, ValueError) and str(module).startswith(MEDARC_ARGUMENT_CHECK)


def _one_line_hook(previous: Callable[..., Any]) -> Callable[..., Any]:
    """``sys.excepthook`` printing a mistake the user can fix as its one line. Why: ``vf-eval`` lets verifiers'
    RuntimeError ("Failed to load environment '<id>': <our line>") reach the interpreter, which printed 40 lines of
    traceback above it, and ``medarc-eval`` its own check of ``--env-arg`` names; every other exception is
    ``previous``'s, as before (``medarc-eval`` logs a load error as one line itself)."""

    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> Any:
        if not _ours(error) and not _medarc_argument_check(error, trace):
            return previous(kind, error, trace)
        sys.stderr.write(terminal(" ".join(str(error).split())) + "\n")
        return None

    hook.mtsamples_one_line = True  # type: ignore[attr-defined]
    return hook


if not getattr(sys.excepthook, "mtsamples_one_line", False):
    sys.excepthook = _one_line_hook(sys.excepthook)


INFO_TEXT_CAP = REPLY_CAP
"""The most characters any text we put in ``info`` keeps (a judge's reply is clipped there already)."""


def kept(value: Any) -> Any:
    """``value`` as ``info`` may hold it: every text encodable (a lone surrogate or a NUL becomes U+FFFD) and at
    most ``INFO_TEXT_CAP`` characters. Why: verifiers' env server sends each rollout's output as msgpack, which
    raises on a lone surrogate outside any handler, so the rollout's answer never came and the run waited (10 h,
    its request timeout); a 5 MB explanation would be carried whole."""
    return strings_mapped(value, lambda text: encodable_text(text[:INFO_TEXT_CAP]))


def door_failure(error: BaseException, scrub: Callable[[str], str] = str) -> str:
    """The named failure of an exception our reward path raised (a bug, never the judge's verdict: named and
    unjudged, where verifiers would have scored the exception 0), its first words with any key scrubbed."""
    return failure_kinds.door_failure(error, " ".join(scrub(str(error)).split())[:200], "the verifiers environment")


def failed_note(listed: Sequence[ListedJudge], failure: str) -> dict[str, Any]:
    """The ``judge_feedback`` evaluation of a note whose judging failed outside any one judge: every judge unjudged,
    with the note's failure as each one's error and as the note's (``error``, a key MedARC's evaluation lacks)."""
    judges: list[dict[str, Any]] = [
        {
            "model": j.model,
            "raw": None,
            "error": failure,
            "scores": {dim: {"score": None, "explanation": None} for dim in DIMENSIONS},
            "score": None,
            "judge": j.name,
            "status": FAILED,
            "failure_kind": failure_kinds.kind_of(failure),
            "served_model": None,
        }
        for j in listed
    ]
    return {"judges": judges, "score": None, "failures": len(judges), "empty_answer": False, "error": failure}


FEEDBACK = "judge_feedback"
"""``info``'s list of evaluations, MedARC's shape (scoring/judge_feedback.py); readers take the last."""


def last_evaluation(info: Any) -> Any:
    """``info["judge_feedback"][-1]``, as MedARC's readers take it; None when there is none."""
    feedback = info.get(FEEDBACK) if isinstance(info, Mapping) else None
    return feedback[-1] if isinstance(feedback, list) and feedback else None


def reward_failed_at_min(feedback: Any) -> float:
    """The note's reward with every failed judgment at the scale's minimum (``scoring.reward.failed_at_min``, HELM's
    report's rule for one note), read from ``judge_feedback``'s last evaluation. Never NaN, so a zero weight adds
    nothing to verifiers' reward."""
    if not isinstance(feedback, Mapping):
        return FLOOR_REWARD
    judges = [j for j in feedback.get("judges") or [] if isinstance(j, Mapping)]
    rewards = [j["score"] if isinstance(j.get("score"), int | float) else None for j in judges]
    return failed_at_min(rewards, bool(feedback.get("empty_answer")))


UNJUDGED = "unjudged"
"""The metric that is 1.0 on a note no judge scored (its reward NaN), else 0.0."""


def note_unjudged(feedback: Any) -> float:
    """1.0 when no judge scored the note (its reward is missing), else 0.0; an empty answer scores 0, judged."""
    if not isinstance(feedback, Mapping):
        return 1.0
    if feedback.get("empty_answer"):
        return 0.0
    return 0.0 if isinstance(feedback.get("score"), int | float) else 1.0


def judge_failed(feedback: Any, name: str) -> float:
    """1.0 when judge ``name`` gave nothing that counts on the note, else 0.0 (an empty answer asks no judge: 0.0);
    ``feedback`` is ``judge_feedback``'s last evaluation."""
    if not isinstance(feedback, Mapping):
        return 1.0
    if feedback.get("empty_answer"):
        return 0.0
    mine = [j for j in feedback.get("judges") or [] if isinstance(j, Mapping) and j.get("judge") == name]
    return 0.0 if mine and isinstance(mine[0].get("score"), int | float) else 1.0


class _Gates:
    """How many calls each judge endpoint takes at once (what its server says, ``probe_capacity``), held as an
    ``asyncio.Semaphore`` per endpoint. Why: llama-cpp-python's server takes one request at a time, and three
    calls at once lost the notes (HELM's door paces it; now this door does too). One semaphore per event loop:
    verifiers runs rollouts in a loop of its own (``evaluate_sync`` makes one per call; its env server, a process
    of its own, another), and a semaphore belongs to the loop it first waited in."""

    def __init__(self, slots: Mapping[str, int]) -> None:
        self.slots = dict(slots)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary()
        )

    def gate(self, base_url: str | None) -> contextlib.AbstractAsyncContextManager[Any]:
        """What a call to ``base_url`` holds while it runs: a slot of its endpoint, or nothing (no limit said)."""
        url = normalise_base_url(base_url) if base_url else None
        if url is None or url not in self.slots:
            return contextlib.nullcontext()
        gates = self._loops.setdefault(asyncio.get_running_loop(), {})
        if url not in gates:
            gates[url] = asyncio.Semaphore(self.slots[url])
        return gates[url]


def endpoint_slots(judges: Sequence[ListedJudge], probe: Callable[..., Any] = probe_capacity) -> dict[str, int]:
    """Each judge endpoint's calls at once, where its server says (asked once per endpoint, at load)."""
    said = endpoint_capacities(((j.base_url, j.api_key) for j in judges if j.base_url), probe)
    for url, capacity in said.items():
        hwarn(f"judge endpoint {url}: {capacity.source}; the verifiers environment sends it {capacity.slots} at once")
    return {url: capacity.slots for url, capacity in said.items()}


class _Panel:
    """The judges of one environment, each behind its own AsyncOpenAI client (as MedARC's MultiJudge)."""

    def __init__(self, judges: list[ListedJudge], args: RunEntryArgs, slots: Mapping[str, int]) -> None:
        from openai import AsyncOpenAI

        secrets = reachable_keys({}, os.environ, [j.api_key for j in judges if j.api_key])
        install_log_scrubber(secrets)
        self.scrub = partial(mask, keys=secrets)
        settings = AsyncCallSettings(
            timeout=args.judge_timeout,
            max_wait=args.judge_max_wait,
            structured=args.judge_structured,
            explanation_cap=args.explanation_cap,
        )
        self.args, self.listed, self.gates = args, judges, _Gates(slots)
        self.judges = [
            AsyncJudge(
                AsyncOpenAI(base_url=j.base_url, api_key=j.api_key, timeout=args.judge_timeout, max_retries=0),
                j.model,
                settings,
                self.scrub,
            )
            for j in judges
        ]

    async def reward(self, completion: Any, info: dict[str, Any]) -> float:
        """Our reward for one rollout (NaN when no judge scored the note); the panel's detail into ``info``. Never
        raises: verifiers scores a reward function's exception 0, a lost judgment counted as the lowest score, so
        any exception below is a named failure (``door_failure``), the note unjudged."""
        try:
            judged = await judge_panel(
                _completion_text(completion),
                info["procedure_note"],
                info["reference_plan"],
                {j.name: self._judge(judge, j) for judge, j in self._pairs()},
                use_think=self.args.use_think,
                answer_cap=self.args.answer_cap,
                judge_prompt=self.args.judge_prompt,
            )
            scores = score_note(judged.record, [j.name for j in self.listed])
            feedback = judge_feedback(judged.record, scores, {j.name: j.model for j in self.listed})
            info["record"] = kept(judged.record.to_dict())
        except Exception as error:
            feedback = failed_note(self.listed, door_failure(error, self.scrub))
        info.setdefault(FEEDBACK, []).append(kept(feedback))  # MedARC's list: one evaluation per scoring
        score = feedback["score"]
        return math.nan if score is None else float(score)

    def _judge(self, judge: AsyncJudge, listed: ListedJudge) -> Callable[[str, tuple[str, ...]], Any]:
        """One judge as the panel asks it: in a slot of its endpoint, bounded by ``judge_max_wait`` from when the
        slot is free (each exchange and wait of the judgment ends by its deadline: openai_calls/attempts.py); its own
        exception is its named failure, so the other judges still count."""

        async def one(prompt: str, untrusted: tuple[str, ...]) -> JudgeEntry:
            try:
                async with self.gates.gate(listed.base_url):
                    return await judge.judge(prompt, untrusted, model_deployment=listed.model)
            except Exception as error:
                failure = door_failure(error, self.scrub)
            return entry_of(None, failure, None, self.scrub, model_deployment=listed.model)

        return one

    def _pairs(self) -> list[tuple[AsyncJudge, ListedJudge]]:
        return list(zip(self.judges, self.listed, strict=True))

    def metrics(self) -> list[Callable[..., Any]]:
        """The zero-weight functions verifiers averages in its summary and saves per rollout: each judge's failed
        share (``judge_failed_<judge>``: 1.0 on a note it failed) and ``reward_failed_at_min``, as HELM's report
        shows them beside the reward, and ``unjudged`` (1.0 on a note no judge scored): the share of notes whose NaN
        reward makes verifiers' plain ``avg_reward`` NaN, printed beside it. They read what ``reward`` put in
        ``info`` (verifiers calls the functions in order); none is ever NaN, which a zero weight would carry into
        the reward."""
        functions: list[Callable[..., Any]] = []
        taken: set[str] = set()
        for j in self.listed:
            name = f"judge_failed_{slugify(j.name)}"
            name = name if name not in taken else f"{name}_{len(taken) + 1}"
            taken.add(name)
            functions.append(_named(name, partial(judge_failed, name=j.name)))
        functions.append(_named(BOUNDED, reward_failed_at_min))
        functions.append(_named(UNJUDGED, note_unjudged))
        return functions


def _named(name: str, read: Callable[[Any], float]) -> Callable[..., Any]:
    """A reward function of ``info`` named ``name`` (verifiers names a metric by its function's ``__name__``)."""

    async def metric(info: dict[str, Any]) -> float:
        try:
            return float(read(last_evaluation(info)))
        except Exception:  # never verifiers' 0 for a failed share
            return 1.0 if name != BOUNDED else FLOOR_REWARD

    metric.__name__ = metric.__qualname__ = name
    return metric


def _encodable_messages(messages: Any) -> int:
    """The model's messages made encodable in place (their text and reasoning); how many characters were replaced.
    Why: the answer is the model's, and a lone surrogate in it made verifiers' env server fail to send the rollout
    (msgpack raises outside any handler) and the run wait for it; the judges read the same U+FFFD already."""
    replaced = 0
    for message in messages if isinstance(messages, list) else []:
        for field in ("content", "reasoning_content"):
            value = message.get(field) if isinstance(message, Mapping) else getattr(message, field, None)
            if isinstance(value, list):
                for part in value:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        found = encodable(part["text"])
                        part["text"], replaced = found.text, replaced + found.replaced
                continue
            if not isinstance(value, str):
                continue
            found = encodable(value)
            if found.replaced:
                if isinstance(message, dict):
                    message[field] = found.text
                else:
                    setattr(message, field, found.text)
                replaced += found.replaced
    return replaced


ANSWER_REPLACED = "answer_replaced_characters"
"""``info``'s count of the answer's characters no file takes (lone surrogates, controls but tab and newline), each
kept as U+FFFD; absent when there were none."""


def _environment_class() -> Any:
    """verifiers' SingleTurnEnv, keeping the model's answer encodable (``_encodable_messages``); built here because
    the module imports no verifiers until an environment is loaded."""
    import verifiers as vf

    class MTSamplesEnv(vf.SingleTurnEnv):
        async def render_completion(self, state: Any) -> None:
            await super().render_completion(state)
            replaced = _encodable_messages(state.get("completion"))
            if replaced:
                state["info"][ANSWER_REPLACED] = replaced

    return MTSamplesEnv


def _keyed(judges: list[ListedJudge]) -> list[ListedJudge]:
    """The panel with a key for each judge: a hosted judge (no ``judge_base_url``) without one is one line naming
    where it goes; a judge at a ``judge_base_url`` without one is sent the keyless placeholder, as the other doors
    send it (a local server takes any), with one warning line."""
    keyed = []
    for judge in judges:
        if not judge.api_key and judge.base_url is None:
            raise LoadError(f"judge {judge.name!r} has no API key: pass judge_api_key or set JUDGE_API_KEY")
        line = (
            refused_key_line(f"judge {judge.name}'s key", judge.api_key)
            if judge.api_key
            else (
                f"judge {judge.name} at {normalise_base_url(judge.base_url or '')} has no API key (judge_api_key, "
                "JUDGE_API_KEY and OPENAI_API_KEY are unset): it is sent without one, as to a keyless local server"
            )
        )  # one line either way: a missing key is no short key
        if line:
            hwarn(line)
        keyed.append(replace(judge, api_key=judge.api_key or PLACEHOLDER_KEY))
    return keyed


def _checked_panel(named: dict[str, Any], kwargs: dict[str, Any], panel: dict[str, Any]) -> Any:
    """The run entry's arguments, the keyed panel and its endpoints' slots, each endpoint checked before any
    rollout; every mistake the user can fix is a ``LoadError`` (one line)."""
    try:
        args = _run_args(named, kwargs)
        listed = list_judges(
            panel["judge_model"], panel["judge_base_url"], _dereference(panel["judge_api_key"], os.environ), os.environ
        )
        judges = _keyed(listed)
        for url, key in dict.fromkeys((j.base_url, j.api_key) for j in judges if j.base_url):
            problem = check_endpoint(url, key)
            if problem is not None:
                raise LoadError(problem)
    except ValueError as error:
        raise LoadError(" ".join(str(error).split())) from None
    return args, judges, endpoint_slots(judges)


_KEYWORD = Parameter.POSITIONAL_OR_KEYWORD
PARAMETERS = (
    *run_entry_parameters("use_think"),
    Parameter("cache_dir", _KEYWORD, default=None, annotation=str | None),
    Parameter("judge_model", _KEYWORD, default=DEFAULT_JUDGE, annotation=str | list[str]),
    Parameter("judge_base_url", _KEYWORD, default=None, annotation=str | list[str] | None),
    Parameter("judge_api_key", _KEYWORD, default=None, annotation=str | list[str] | None),
    *run_entry_parameters(
        "extraction",
        "judge_prompt",
        "judge_timeout",
        "judge_max_wait",
        "judge_structured",
        "answer_cap",
        "explanation_cap",
    ),  # fmt: skip
    Parameter("kwargs", Parameter.VAR_KEYWORD, annotation=Any),
)
"""``load_environment``'s signature: MedARC's arguments in MedARC's order, then the run entry's this door honours,
each with ``RunEntryArgs``' name, default and type (``medarc-eval`` reads the signature for its ``--env-arg`` flags
and accepts only named parameters, so each honoured argument is one)."""


@door_signature(*PARAMETERS)
def load_environment(*args: Any, **kwargs: Any) -> Any:
    """The environment: our pinned notes, HELM's prompt to the model, our panel and reward. The arguments after
    ``judge_api_key`` are the run entry's (README: Run-entry arguments); the run entry's others are HELM's runner's
    and refused here. A mistake is one line (``LoadError``), through ``vf-eval`` and ``medarc-eval`` alike."""
    from datasets import Dataset

    given = door_arguments(load_environment, *args, **kwargs)
    others, cache_dir = given.pop("kwargs"), given.pop("cache_dir")
    panel_args = {name: given.pop(name) for name in PANEL}
    named = given
    run, judges, slots = _checked_panel(named, others, panel_args)
    try:
        rows = [_row(i, at, sample, run.use_think) for i, at, sample in _samples(cache_dir, run.extraction)]
    except ValueError as error:
        raise LoadError(" ".join(str(error).split())) from None
    panel = _Panel(judges, run, slots)

    async def reward_mtsamples(completion: Any, info: dict[str, Any]) -> float:
        """MedARC's name: the column of each rollout's ``metrics`` and of verifiers' summary."""
        return await panel.reward(completion, info)

    metrics = panel.metrics()
    env = _environment_class()(
        eval_dataset=Dataset.from_list(rows),
        rubric=_rubric([reward_mtsamples, *metrics], [1.0] + [0.0] * len(metrics)),
        sampling_args={"temperature": 0.0, "max_tokens": max_tokens(run.use_think)},
    )
    if panel_args["judge_api_key"] is not None:
        kept_args = {"cache_dir": cache_dir, "judge_model": panel_args["judge_model"]}
        env.env_args = {**kept_args, "judge_base_url": panel_args["judge_base_url"], **named}
        env.env_args["judge_api_key"] = _references(panel_args["judge_api_key"])
    return env


def _rubric(functions: list[Callable[..., Any]], weights: list[float]) -> Any:
    import verifiers as vf

    return vf.Rubric(funcs=functions, weights=weights)


__all__ = ["LoadError", "load_environment", "reward_failed_at_min"]
