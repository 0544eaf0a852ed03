"""The `mtsamples_procedures` run entry: parse its arguments, build the RunSpec.

Building a RunSpec is pure bookkeeping: it never contacts or checks a judge (so `helm-run --dry-run`
works with no credentials) and never reads an environment variable (the scenario and the annotator
read theirs when they load). The adapter is HELM's, unchanged, so numbers compare with MedHELM's.
Only `run_entry`, what helm-run calls, also checks the model under test (model_check.py), contacting nothing:
that HELM knows it, and outside --dry-run that its client can be built with helm-run's credentials; and reads
the suite's stored run_spec.json for the judge prompt style it was judged with (prompt_default.py).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import yaml
from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.annotation.annotator import AnnotatorSpec
from helm.benchmark.metrics.common_metric_specs import get_basic_generation_metric_specs, get_generic_metric_specs
from helm.benchmark.metrics.metric import MetricSpec
from helm.benchmark.run_spec import RunSpec
from helm.benchmark.run_specs.medhelm_run_specs import get_generation_adapter_spec
from helm.benchmark.scenarios.scenario import ScenarioSpec

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.families import declared_families
from helm_mtsamples_ext.common.judge_url import check_base_url
from helm_mtsamples_ext.common.model_prompt import INPUT_NOUN, OUTPUT_NOUN, instructions, max_tokens
from helm_mtsamples_ext.common.outside_text import terminal
from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.common.record import RESERVED_KEYS
from helm_mtsamples_ext.common.run_entry_args import DEFAULT_JUDGES, RunEntryArgs
from helm_mtsamples_ext.helm_host.compat import find_model_deployment
from helm_mtsamples_ext.helm_host.families import creator_of
from helm_mtsamples_ext.helm_host.model_check import building_command, check_model_under_test
from helm_mtsamples_ext.helm_host.prompt_default import with_stored_prompt_style

__all__ = ["RunEntryArgs", "get_mtsamples_procedures_spec", "resolve_judges", "run_entry"]

UNSET_JUDGE = "MTSAMPLES_JUDGE-is-not-set"
"""What run_specs/mtsamples_procedures_local_quickstart.conf names as the judge when MTSAMPLES_JUDGE is unset
(HOCON keeps the conf's default): a run entry cannot read the environment, so the missing variable is said here."""


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


NAME_SEPARATORS = (",", "=", "+", '"', "'")
"""Characters a judge's name may not hold: HELM splits a run entry at ``,`` and ``=``, our panels at ``+``, and a
quote ends the run entry's value; whitespace and control characters are refused too."""


def _check_judge_name(name: str) -> str:
    bad = [c for c in NAME_SEPARATORS if c in name] + (["a space or a control character"] if any(
        c.isspace() or not c.isprintable() for c in name) else [])  # fmt: skip
    if bad:
        shown = ", ".join(repr(b) if len(b) == 1 else b for b in bad)
        raise ValueError(
            f"a judge's name may not hold {shown} (HELM and the panel use them as separators), got "
            f"{terminal(name)!r}: rename it"
        )
    return name


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return unique


def _judges_from_config(path: str) -> list[JudgeSpec]:
    """HELM's own jury YAML (`judges: [{name, model, model_deployment}]`), so MedHELM users reuse theirs."""
    with open(path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    entries = config.get("judges") if isinstance(config, dict) else None
    if not entries or not all(
        isinstance(e, dict) and {"name", "model", "model_deployment"} <= e.keys() for e in entries
    ):
        raise ValueError(f"{path}: expected `judges:` with entries of name, model and model_deployment")
    return [JudgeSpec(str(e["name"]), str(e["model"]), str(e["model_deployment"])) for e in entries]


def _model_of(deployment: str) -> str:
    """The model a HELM deployment serves (`together/llama-3.3-70b-instruct-turbo` serves `meta/...`).

    A local registry look-up, nothing more; an unknown name is taken as its own model and fails, with a
    recorded reason, only when the annotator calls it."""
    found = find_model_deployment(deployment)
    return (found.model_name if found else None) or deployment


def resolve_judges(
    judges: str | None, jury_config_path: str | None, judge_base_url: str | None, judge_family: str | None = None
) -> list[JudgeSpec]:
    """The panel, named uniquely; served models get their HELM deployment from the annotator when it loads.

    Each judge's family is the one ``judge_family`` declares, else, for a hosted judge, its model's creator in
    HELM's metadata (helm-run has registered the suite's prod_env/ by now), else unknown (families.py)."""
    if judges is not None and jury_config_path:
        raise ValueError("give either judges= or jury_config_path=, not both")
    if jury_config_path and judge_base_url:
        raise ValueError("judge_base_url goes with judges=, not with jury_config_path=")
    if judges == UNSET_JUDGE:
        raise ValueError(
            "MTSAMPLES_JUDGE is not set: export MTSAMPLES_JUDGE='judges=<served model name>,judge_base_url="
            "http://127.0.0.1:8081/v1' (your judge server) before helm-run; see the README, A first result with no key"
        )
    if jury_config_path:
        panel = _judges_from_config(jury_config_path)
    else:
        models = (DEFAULT_JUDGES if judges is None else judges).split("+")
        if not all(m.strip() for m in models):
            raise ValueError(
                f"judges= must name one or more judges joined by '+' (e.g. judges={DEFAULT_JUDGES}), got {judges!r}; "
                "leave it out for the default"
            )
        models = [m.strip() for m in models]
        urls = [check_base_url(u, n) for n, u in enumerate(judge_base_url.split("+"), 1)] if judge_base_url else []
        if len(urls) > 1 and len(urls) != len(models):
            raise ValueError(f"judge_base_url has {len(urls)} URLs for {len(models)} judges: give one, or one each")
        if len(urls) == 1:
            panel = [JudgeSpec(m, m, None, urls[0], 1) for m in models]
        elif urls:
            panel = [JudgeSpec(m, m, None, u, n) for n, (m, u) in enumerate(zip(models, urls, strict=True), start=1)]
        else:
            panel = [JudgeSpec(m.split("/")[-1], _model_of(m), m) for m in models]
    names = _unique([_check_judge_name(j.name) for j in panel])
    for name in names:
        if name in RESERVED_KEYS:  # the annotator's record keys beside the judge names
            raise ValueError(f"a judge may not be named {name!r}")
    declared = declared_families(judge_family, len(panel))
    return [
        JudgeSpec(n, j.model, j.model_deployment, j.base_url, j.endpoint_index, family or _creator(j))
        for n, j, family in zip(names, panel, declared, strict=True)
    ]


def _creator(judge: JudgeSpec) -> str | None:
    """A hosted judge's maker from HELM's metadata; an endpoint judge's metadata names only its host."""
    return creator_of(judge.model) if judge.model_deployment else None


def _name_value(value: str) -> str:
    """Keep run names readable and file-system-safe; anything long goes in as a short hash."""
    clean = re.sub(r"[^\w.+-]", "_", value)
    return clean if len(clean) <= 80 else short_hash(value)


def run_spec_name(non_default: dict[str, str]) -> str:
    if not non_default:
        return names.RUN_ENTRY
    parts = []
    for key, value in non_default.items():
        hashed = key in ("jury_config_path", "judge_base_url")
        parts.append(f"{key}={short_hash(value) if hashed else _name_value(value)}")
    return f"{names.RUN_ENTRY}:{','.join(parts)}"


def get_mtsamples_procedures_spec(**raw_args: Any) -> RunSpec:
    """MTSamples Procedures with our scenario, judge panel and reward metric (replaces HELM's built-in).

    Arguments (all optional; see RunEntryArgs and the README): extraction, judges, jury_config_path,
    judge_base_url, judge_family, use_think, judge_prompt, judge_timeout, judge_structured, judge_max_wait,
    judge_max_concurrency, judge_rpm, max_unjudged, judge_batch, judge_batch_fallback."""
    args = RunEntryArgs.parse(**raw_args)
    panel = resolve_judges(args.judges, args.jury_config_path, args.judge_base_url, args.judge_family)
    think = args.use_think
    adapter_spec: AdapterSpec = get_generation_adapter_spec(
        # The text the model reads is common/model_prompt.py's, so every door gives it the same words.
        instructions=instructions(think),
        input_noun=INPUT_NOUN,
        newline_after_input_noun=False,
        output_noun=OUTPUT_NOUN,
        max_tokens=max_tokens(think),
        max_train_instances=0,
        stop_sequences=[],
    )
    annotator_args: dict[str, Any] = {"judges": [j.as_arg() for j in panel], **args.annotator_args()}
    metric_args: dict[str, Any] = {"judge_names": [j.name for j in panel], **args.metric_args()}
    return RunSpec(
        name=run_spec_name(args.non_default()),
        scenario_spec=ScenarioSpec(
            class_name=names.SCENARIO_CLASS,
            args={"extraction": args.extraction},
        ),
        adapter_spec=adapter_spec,
        annotators=[AnnotatorSpec(class_name=names.ANNOTATOR_CLASS, args=annotator_args)],
        # HELM's efficiency and general-information stats; not its reference metrics (log-probabilities
        # of references mean nothing for a free-text plan) nor ROUGE/BERTScore (the latter downloads a model).
        metric_specs=get_basic_generation_metric_specs([])
        + get_generic_metric_specs()
        + [MetricSpec(class_name=names.METRIC_CLASS, args=metric_args)],
        groups=[names.RUN_ENTRY],
    )


def run_entry(**raw_args: Any) -> RunSpec:
    """What ``helm-run`` calls for ``mtsamples_procedures``: the spec, or, for a bad argument, exactly one line
        on stderr and exit status 1. HELM would print a ~25-line traceback around the ValueError; SystemExit is
        the one exception its command line lets through without one. The model under test (``model=``, which HELM keeps
    from us) is checked here too (model_check.py): HELM must know it and, for a real run, have its key. A run entry
    without judge_prompt keeps the style its suite's earlier run of that name stored (prompt_default.py)."""
    try:
        spec = get_mtsamples_procedures_spec(**raw_args)
        command = building_command()
        check_model_under_test(command)
        return with_stored_prompt_style(spec, command, named="judge_prompt" in raw_args)
    except ValueError as e:
        raise SystemExit(f"{names.RUN_ENTRY}: {e}") from None
