"""A panel given as MedARC gives it: ``judge_model``, ``judge_base_url`` and ``judge_api_key``, each a string or a
list, matched by position, one value broadcast to every judge.

Why here and pure: a verifiers environment takes its panel this way (MedARC's ``MultiJudge.from_env_args``), and
the same three arguments must mean the same panel whoever reads them. A mismatch is one line naming the argument,
never a silently shorter panel. The key falls back to ``JUDGE_API_KEY``, then ``OPENAI_API_KEY``, as MedARC's does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

KEY_VARIABLES = ("JUDGE_API_KEY", "OPENAI_API_KEY")
"""Where a judge's key comes from when ``judge_api_key`` gives none, in order (MedARC's order)."""


@dataclass(frozen=True)
class ListedJudge:
    """One judge of the panel: its name in records (the model, made unique by its URL when two share it), the
    model its server is asked for, where, and with what key."""

    name: str
    model: str
    base_url: str | None
    api_key: str | None


def _values(argument: str, value: str | Sequence[str | None] | None, count: int) -> list[str | None]:
    """``value`` as one entry per judge: a string (or None) broadcast, a list of one broadcast, a list of
    ``count`` matched by position."""
    if value is None or isinstance(value, str):
        return [value or None] * count
    listed = [None if v is None else str(v).strip() or None for v in value]
    if len(listed) == 1:
        return listed * count
    if len(listed) != count:
        raise ValueError(
            f"{argument} has {len(listed)} values for {count} judge_model values: give one value (for every judge) "
            "or one per judge, in judge_model's order"
        )
    return listed


def _names(models: list[str], urls: list[str | None]) -> list[str]:
    names = [
        model if models.count(model) == 1 else f"{model}@{url or 'default'}"
        for model, url in zip(models, urls, strict=True)
    ]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"judge {twice[0]!r} is listed twice at the same judge_base_url: list each judge once")
    return names


def list_judges(
    judge_model: str | Sequence[str],
    judge_base_url: str | Sequence[str | None] | None = None,
    judge_api_key: str | Sequence[str | None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[ListedJudge]:
    """The panel, in ``judge_model``'s order; ``environ`` (the process's environment) for the keys not given."""
    raw = [judge_model] if isinstance(judge_model, str) else list(judge_model)
    models = [str(m).strip() for m in raw if str(m).strip()]
    if not models:
        raise ValueError("judge_model names no judge: give a model name, or a list of them")
    urls = _values("judge_base_url", judge_base_url, len(models))
    keys = _values("judge_api_key", judge_api_key, len(models))
    fallback = next((environ[v] for v in KEY_VARIABLES if environ and environ.get(v)), None)
    names = _names(models, urls)
    return [
        ListedJudge(name, model, url, key or fallback)
        for name, model, url, key in zip(names, models, urls, keys, strict=True)
    ]


__all__ = ["KEY_VARIABLES", "ListedJudge", "list_judges"]
