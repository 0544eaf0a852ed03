"""What the Every Eval Ever export reads from each run's run_spec.json: the model, its generation settings, the
panel's judges and the judge prompt, as a template.

Why apart: the suite's table (suite.py) keeps one row per judge and note, not how a run was set up, and EEE's
aggregate record asks for exactly that (``generation_config``, ``llm_scoring.judges``, ``llm_scoring.input_prompt``).
The prompt is built by the judges' own builder (judges/core/prompt.py) with placeholders for the texts, so it is
the prompt the judges were sent, word for word, never a copy that could drift.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helm_mtsamples_ext.common.panel import JudgeSpec, panel_from_args
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.report.suite import RunProblem, our_annotator_args, our_run_spec

PLACEHOLDERS = {"note": "{note}", "answer": "{answer}", "reference": "{reference}"}
MARKER = "{marker}"
"""Where the per-prompt block marker stands in the template (a hash of the note, answer and reference)."""
_MARKERS = re.compile(r"(?<=-)[0-9a-f]{12}(?=>)|(?<=Block marker: )[0-9a-f]{12}$", re.MULTILINE)
"""The marker where the prompts write it: in each block's tags (``<operative_note-3fa4c1d2e5b6>``) and, in the
``prefix`` style, on its own line (judges/core/prompt_parts.block_marker)."""


@dataclass(frozen=True)
class RunFacts:
    """One run's setup as its run_spec.json stores it; None where it stores nothing (HELM's own jury, an
    earlier release)."""

    model: str
    model_deployment: str | None
    temperature: float | None
    max_tokens: int | None
    judges: tuple[JudgeSpec, ...]
    prompt_style: str | None
    use_think: bool | None
    answer_cap: int | None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def run_facts(run_spec: Mapping[str, Any]) -> RunFacts:
    adapter = run_spec.get("adapter_spec") or {}
    stored = our_annotator_args(dict(run_spec)) or {}
    try:
        judges = tuple(panel_from_args(stored.get("judges") or []))
    except (ValueError, KeyError, TypeError):
        judges = ()
    default = RunEntryArgs()
    tokens = _number(adapter.get("max_tokens"))
    return RunFacts(
        model=str(adapter.get("model") or ""),
        model_deployment=adapter.get("model_deployment") or None,
        temperature=_number(adapter.get("temperature")),
        max_tokens=int(tokens) if tokens is not None and tokens >= 1 else None,
        judges=judges,
        prompt_style=str(stored.get("judge_prompt", default.judge_prompt)) if stored else None,
        use_think=bool(stored.get("use_think", default.use_think)) if stored else None,
        answer_cap=int(stored.get("answer_cap", default.answer_cap)) if stored else None,
    )


def suite_run_facts(suite_dir: Path, runs: Iterable[str]) -> dict[str, RunFacts]:
    """{run directory name: its facts} for the given runs of the suite (those the report read)."""
    facts: dict[str, RunFacts] = {}
    for run in runs:
        try:
            spec = our_run_spec(suite_dir / run)
        except RunProblem:
            spec = None
        facts[run] = run_facts(spec or {})
    return facts


def prompt_template(style: str) -> str:
    """The judge prompt of ``style`` with ``{note}``, ``{answer}``, ``{reference}`` and ``{marker}`` where each
    prompt holds the note, the answer as the judges read it, the reference plan and its block marker."""
    try:  # HELM's styles fill HELM's template, read from HELM: a report without HELM names it instead
        from helm_mtsamples_ext.judges.core.prompt import build_prompt

        text = build_prompt(PLACEHOLDERS["note"], PLACEHOLDERS["answer"], PLACEHOLDERS["reference"], style)
    except ImportError:
        return (
            f"HELM's MTSamples Procedures annotator template (judge_prompt={style}): "
            "helm.benchmark.annotation.mtsamples_procedures_annotator.PROMPT_TEMPLATE"
        )
    except ValueError:  # a style this release does not know
        return f"judge_prompt={style}, a prompt style this release of helm-mtsamples-ext does not know"
    return _MARKERS.sub(MARKER, text)
