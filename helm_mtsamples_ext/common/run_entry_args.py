"""The `mtsamples_procedures` run entry's arguments, typed and checked: the one place a default lives.

Everything that takes one of these settings (the run spec, the annotator, the judge call settings) reads its
default from ``RunEntryArgs``, so a default is written once. Parsing is pure: it contacts nothing and reads no
environment variable, and every mistake is one line naming the argument and what it takes.
"""

from __future__ import annotations

import difflib
import inspect
import math
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from helm_mtsamples_ext.common.choices import EXTRACTION_MODES, HELM_FENCED, PROMPT_STYLES, STRUCTURED_MODES


def parse_bool(value: Any, argument: str) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", ""):
        return False
    raise ValueError(f"{argument} must be true or false, got {value!r}")


def _arg_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


DEFAULT_JUDGES = "openai/gpt-4o-mini"
"""The panel when ``judges`` is left out: a HELM deployment in HELM, the same name as an Inspect model in Inspect."""
SECONDS = "a positive number of seconds"
NOT_IN_NAME = ("judge_batch", "judge_batch_fallback", "judge_family")
ANNOTATOR_ALWAYS = ("judge_prompt", "use_think", "judge_timeout")
"""The annotator arguments every run_spec.json has carried since the first release."""
ANNOTATOR_IF_SET = (
    "judge_structured",
    "judge_max_wait",
    "judge_max_concurrency",
    "judge_rpm",
    "judge_batch",
    "judge_batch_fallback",
    "answer_cap",
    "explanation_cap",
)
"""Annotator arguments added later: stored only off their default, so earlier runs' run_spec.json stay equal."""


def _number(value: Any, argument: str, what: str, integer: bool = False, upper: float | None = None) -> float:
    try:
        number = float(str(value).strip())
    except ValueError:
        number = float("nan")
    ok = (number > 0 or (upper is not None and number == 0)) and math.isfinite(number)
    if not ok or (integer and not number.is_integer()) or (upper is not None and number > upper) or number != number:
        raise ValueError(f"{argument} must be {what}, got {value!r}")
    return number


def _with_closest(name: str, known: list[str]) -> str:
    """An unknown argument with the known one it is most likely a typo of (``judgs`` -> ``judges``); ``model``, which
    HELM takes off the run entry before calling us, is a candidate too (``modle``)."""
    close = difflib.get_close_matches(name, known, n=1)
    return f"{name} (did you mean {close[0]}?)" if close else name


def _choice(value: Any, argument: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{argument} must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def _optional_number(value: Any, argument: str, what: str) -> float | None:
    return None if value in (None, "") else _number(value, argument, what)


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "extraction": lambda v: _choice(v, "extraction", EXTRACTION_MODES),
    "judges": lambda v: v,
    "jury_config_path": lambda v: v or None,
    "judge_base_url": lambda v: v or None,
    "judge_family": lambda v: str(v or "").strip() or None,
    "use_think": lambda v: parse_bool(v, "use_think"),
    "judge_prompt": lambda v: HELM_FENCED if v == HELM_FENCED else _choice(v, "judge_prompt", PROMPT_STYLES),
    "judge_timeout": lambda v: _number(v, "judge_timeout", SECONDS),
    "judge_structured": lambda v: _choice(v, "judge_structured", STRUCTURED_MODES),
    "judge_max_wait": lambda v: _number(v, "judge_max_wait", SECONDS),
    "judge_max_concurrency": lambda v: int(
        _number(v, "judge_max_concurrency", "a positive whole number", integer=True)
    ),
    "judge_rpm": lambda v: _optional_number(v, "judge_rpm", "a positive number of requests per minute"),
    "max_unjudged": lambda v: _number(v, "max_unjudged", "a share between 0 and 1", upper=1.0),
    "judge_batch": lambda v: parse_bool(v, "judge_batch"),
    "judge_batch_fallback": lambda v: parse_bool(v, "judge_batch_fallback"),
    "answer_cap": lambda v: int(_number(v, "answer_cap", "a positive whole number of characters", integer=True)),
    "explanation_cap": lambda v: (
        None
        if v in (None, "")
        else int(_number(v, "explanation_cap", "a positive whole number of characters", integer=True))
    ),
}
"""How each argument's text (or value, from a stored run_spec.json) is read; a mistake is one line naming it."""


@dataclass(frozen=True)
class RunEntryArgs:
    """The run entry's arguments, typed, with their defaults: the one place a default lives.

    Arguments left at their default stay out of the run name, so adding an argument never renames
    existing runs."""

    extraction: str = "helm"
    judges: str | None = None
    jury_config_path: str | None = None
    judge_base_url: str | None = None
    judge_family: str | None = None
    use_think: bool = False
    judge_prompt: str = "prefix"  # a suite that stored another keeps it on a re-run (prompt_default.py)
    judge_timeout: float = 120.0
    judge_structured: str = "auto"
    judge_max_wait: float = 900.0
    judge_max_concurrency: int = 16
    judge_rpm: float | None = None
    max_unjudged: float = 0.0
    judge_batch: bool = False
    judge_batch_fallback: bool = True
    answer_cap: int = 20_000
    """Characters of an answer the judges read; a longer one is cut for judging and recorded as cut."""
    explanation_cap: int | None = None
    """Characters per explanation the verdict schema allows (a llama.cpp grammar keeps a small judge to it)."""

    @classmethod
    def parse(cls, **raw: Any) -> RunEntryArgs:
        """Validate run-entry text; every error is one line naming the argument and what it takes."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise ValueError(
                f"unknown argument(s) {', '.join(_with_closest(u, [*known, 'model']) for u in unknown)}; "
                f"mtsamples_procedures takes {', '.join(known)}"
            )
        return cls(**{name: _PARSERS[name](value) for name, value in raw.items()})

    def non_default(self) -> dict[str, str]:
        """What names the run: every argument off its default, but how judging is paid (judge_batch and
        judge_batch_fallback) and the judges' declared families (judge_family), which change no result: a
        batch-judged run and a direct one are the same run, and a family declared later keeps the run's cache."""
        default = RunEntryArgs()
        return {
            f.name: _arg_text(getattr(self, f.name))
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name) and f.name not in NOT_IN_NAME
        }

    def _off_default(self, names: tuple[str, ...]) -> dict[str, Any]:
        default = RunEntryArgs()
        return {name: getattr(self, name) for name in names if getattr(self, name) != getattr(default, name)}

    def annotator_args(self) -> dict[str, Any]:
        """The annotator's arguments but the panel, as run_spec.json stores them (see ANNOTATOR_IF_SET)."""
        stored = {name: getattr(self, name) for name in ANNOTATOR_ALWAYS}
        if stored["judge_prompt"] == "helm":  # the fenced template; a stored "helm" is the unfenced one (prompt.py)
            stored["judge_prompt"] = HELM_FENCED
        return {**stored, **self._off_default(ANNOTATOR_IF_SET)}

    def metric_args(self) -> dict[str, Any]:
        """The metric's arguments but the judge names: max_unjudged, when off its default."""
        return self._off_default(("max_unjudged",))


Door = TypeVar("Door", bound=Callable[..., Any])


def run_entry_parameters(*names: str) -> list[inspect.Parameter]:
    """The run entry's arguments ``names`` as a door's parameters: each with ``RunEntryArgs``' name, default and
    type, so a door taking one writes none of them again (tests/common/test_run_entry_args.py)."""
    hints = typing.get_type_hints(RunEntryArgs)
    default = RunEntryArgs()
    keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return [inspect.Parameter(name, keyword, default=getattr(default, name), annotation=hints[name]) for name in names]


def door_signature(*parameters: inspect.Parameter) -> Callable[[Door], Door]:
    """A door's function, taking ``*args, **kwargs``, given the signature ``parameters`` (its type hints too): what
    Inspect reads for ``-T`` names, and verifiers and ``medarc-eval`` for ``--env-arg`` names, defaults and types
    (all read ``inspect.signature``). The function reads its arguments with ``door_arguments``."""

    def decorate(door: Door) -> Door:
        returns = door.__annotations__.get("return", inspect.Signature.empty)
        door.__signature__ = inspect.Signature(list(parameters), return_annotation=returns)  # type: ignore[attr-defined]
        door.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
        return door

    return decorate


def door_arguments(door: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
    """What a door built by ``door_signature`` was called with, by name, each missing one at its default (a
    mistaken call raises the TypeError Python would)."""
    bound = inspect.signature(door).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


RECHECK_CALLS_WITHOUT_YES = 100
"""``python -m helm_mtsamples_ext.recheck`` makes at most this many live judge calls unless given ``--yes``: they are
paid, and, bypassing HELM's cache, paid again by every recheck."""
