"""The `mtsamples_procedures` run entry: parse its arguments, build the RunSpec.

Building a RunSpec is pure bookkeeping: it never contacts or checks a judge (so `helm-run --dry-run`
works with no credentials) and never reads an environment variable (the scenario and the annotator
read theirs when they load). The adapter is HELM's, unchanged, so numbers compare with MedHELM's.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml
from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.annotation.annotator import AnnotatorSpec
from helm.benchmark.metrics.common_metric_specs import get_basic_generation_metric_specs, get_generic_metric_specs
from helm.benchmark.metrics.metric import MetricSpec
from helm.benchmark.run_spec import RunSpec
from helm.benchmark.run_specs.medhelm_run_specs import get_generation_adapter_spec
from helm.benchmark.scenarios.scenario import ScenarioSpec

from helm_mtsamples_ext.annotator import RESERVED_KEYS
from helm_mtsamples_ext.sections import EXTRACTION_MODES

RUN_ENTRY_NAME = "mtsamples_procedures"
DEFAULT_JUDGES = "openai/gpt-4o-mini"
JUDGE_PROMPTS = ("ours", "helm")
DEFAULT_JUDGE_TIMEOUT = 120.0

INSTRUCTIONS = "Here are information about a patient, return a reasonable treatment plan for the patient."
THINK_INSTRUCTIONS = (
    " First reason step by step inside <think></think> tags; then, after the closing tag, give only the plan."
)


@dataclass(frozen=True)
class Judge:
    """One member of the panel as the annotator receives it (no secrets: this lands in run_spec.json)."""

    name: str
    model: str
    model_deployment: str | None
    base_url: str | None = None

    def as_arg(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model,
            "model_deployment": self.model_deployment,
            "base_url": self.base_url,
        }


def parse_bool(value: Any, argument: str) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", ""):
        return False
    raise ValueError(f"{argument} must be true or false, got {value!r}")


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _check_base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"judge_base_url must be an http(s) URL, got {url!r}")
    secret_params = [k for k, _ in parse_qsl(parts.query) if re.search(r"key|token|secret|passw", k, re.IGNORECASE)]
    if parts.username or parts.password or secret_params:
        raise ValueError("judge_base_url must not carry credentials: put the key in JUDGE_API_KEY or credentials.conf")
    return url


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    return unique


def _judges_from_config(path: str) -> list[Judge]:
    """HELM's own jury YAML (`judges: [{name, model, model_deployment}]`), so MedHELM users reuse theirs."""
    with open(path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    entries = config.get("judges") if isinstance(config, dict) else None
    if not entries or not all(
        isinstance(e, dict) and {"name", "model", "model_deployment"} <= e.keys() for e in entries
    ):
        raise ValueError(f"{path}: expected `judges:` with entries of name, model and model_deployment")
    return [Judge(str(e["name"]), str(e["model"]), str(e["model_deployment"])) for e in entries]


def _model_of(deployment: str) -> str:
    """The model a HELM deployment serves (`together/llama-3.3-70b-instruct-turbo` serves `meta/...`).

    A local registry look-up, nothing more; an unknown name is taken as its own model and fails, with a
    recorded reason, only when the annotator calls it."""
    from helm.benchmark.model_deployment_registry import ModelDeploymentNotFoundError, get_model_deployment

    try:
        return get_model_deployment(deployment).model_name or deployment
    except ModelDeploymentNotFoundError:
        return deployment


def resolve_judges(judges: str | None, jury_config_path: str | None, judge_base_url: str | None) -> list[Judge]:
    """The panel, named uniquely; served models get their HELM deployment from the annotator when it loads."""
    if judges and jury_config_path:
        raise ValueError("give either judges= or jury_config_path=, not both")
    if jury_config_path and judge_base_url:
        raise ValueError("judge_base_url goes with judges=, not with jury_config_path=")
    if jury_config_path:
        panel = _judges_from_config(jury_config_path)
    else:
        models = [m for m in (judges or DEFAULT_JUDGES).split("+") if m]
        if not models:
            raise ValueError("judges= names no judge")
        urls = [_check_base_url(u) for u in judge_base_url.split("+")] if judge_base_url else []
        if len(urls) > 1 and len(urls) != len(models):
            raise ValueError(f"judge_base_url has {len(urls)} URLs for {len(models)} judges: give one, or one each")
        if len(urls) == 1:
            urls = urls * len(models)
        if urls:
            panel = [Judge(m, m, None, u) for m, u in zip(models, urls, strict=True)]
        else:
            panel = [Judge(m.split("/")[-1], _model_of(m), m) for m in models]
    names = _unique([j.name for j in panel])
    for name in names:
        if name in RESERVED_KEYS:  # the annotator's record keys beside the judge names
            raise ValueError(f"a judge may not be named {name!r}")
    return [Judge(n, j.model, j.model_deployment, j.base_url) for n, j in zip(names, panel, strict=True)]


def _name_value(value: str) -> str:
    """Keep run names readable and file-system-safe; anything long goes in as a short hash."""
    clean = re.sub(r"[^\w.+-]", "_", value)
    return clean if len(clean) <= 80 else short_hash(value)


def _arg_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def run_spec_name(non_default: dict[str, str]) -> str:
    if not non_default:
        return RUN_ENTRY_NAME
    parts = []
    for key, value in non_default.items():
        hashed = key in ("jury_config_path", "judge_base_url")
        parts.append(f"{key}={short_hash(value) if hashed else _name_value(value)}")
    return f"{RUN_ENTRY_NAME}:{','.join(parts)}"


def get_mtsamples_procedures_spec(
    extraction: str = "helm",
    judges: str | None = None,
    jury_config_path: str | None = None,
    judge_base_url: str | None = None,
    use_think: str | bool = False,
    judge_prompt: str = "ours",
    judge_timeout: float | str = DEFAULT_JUDGE_TIMEOUT,
) -> RunSpec:
    """MTSamples Procedures with our scenario, judge panel and reward metric (replaces HELM's built-in)."""
    if extraction not in EXTRACTION_MODES:
        raise ValueError(f"extraction must be one of {EXTRACTION_MODES}, got {extraction!r}")
    if judge_prompt not in JUDGE_PROMPTS:
        raise ValueError(f"judge_prompt must be one of {JUDGE_PROMPTS}, got {judge_prompt!r}")
    think = parse_bool(use_think, "use_think")
    timeout = float(judge_timeout)
    if not timeout > 0:
        raise ValueError(f"judge_timeout must be a positive number of seconds, got {judge_timeout!r}")
    panel = resolve_judges(judges, jury_config_path, judge_base_url)

    defaults: dict[str, Any] = {
        "extraction": "helm",
        "judges": None,
        "jury_config_path": None,
        "judge_base_url": None,
        "use_think": False,
        "judge_prompt": "ours",
        "judge_timeout": DEFAULT_JUDGE_TIMEOUT,
    }
    given: dict[str, Any] = {
        "extraction": extraction,
        "judges": judges,
        "jury_config_path": jury_config_path,
        "judge_base_url": judge_base_url,
        "use_think": think,
        "judge_prompt": judge_prompt,
        "judge_timeout": timeout,
    }
    non_default = {key: _arg_text(value) for key, value in given.items() if value != defaults[key]}

    adapter_spec: AdapterSpec = get_generation_adapter_spec(
        instructions=INSTRUCTIONS + (THINK_INSTRUCTIONS if think else ""),
        input_noun="Patient Notes",
        newline_after_input_noun=False,
        output_noun="Answer",
        # Reasoning spends tokens before the plan; 512 would cut most plans off.
        max_tokens=2048 if think else 512,
        max_train_instances=0,
        stop_sequences=[],
    )
    judge_names = [j.name for j in panel]
    return RunSpec(
        name=run_spec_name(non_default),
        scenario_spec=ScenarioSpec(
            class_name="helm_mtsamples_ext.scenario.MTSamplesProceduresScenario",
            args={"extraction": extraction},
        ),
        adapter_spec=adapter_spec,
        annotators=[
            AnnotatorSpec(
                class_name="helm_mtsamples_ext.annotator.JudgeAnnotator",
                args={
                    "judges": [j.as_arg() for j in panel],
                    "judge_prompt": judge_prompt,
                    "use_think": think,
                    "judge_timeout": timeout,
                },
            )
        ],
        # HELM's efficiency and general-information stats; not its reference metrics (log-probabilities
        # of references mean nothing for a free-text plan) nor ROUGE/BERTScore (the latter downloads a model).
        metric_specs=get_basic_generation_metric_specs([])
        + get_generic_metric_specs()
        + [
            MetricSpec(
                class_name="helm_mtsamples_ext.metric.MTSamplesProceduresMetric",
                args={"judge_names": judge_names},
            )
        ],
        groups=[RUN_ENTRY_NAME],
    )
