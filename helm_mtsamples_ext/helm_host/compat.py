"""The two HELMs this plugin runs on, and every way they differ that the plugin meets.

Stanford's ``crfm-helm`` (0.5.16, in maintenance since June 2026) and MedHELM's ``medhelm`` (0.8, a
fork) install the *same* top-level ``helm`` package, so exactly one of them may be installed: with both,
the second one pip installed has overwritten files of the first (a clobbered ``helm`` that fails in
odd places, e.g. "A run spec function with name vqa_rad already exists"). Which one is installed is
read from the installed distributions' metadata, before anything imports ``helm``.

Each difference below is named with the version it comes from; the rest of the plugin asks this module
and never tries one API and then another. The start-up check (``check_helm``, run when HELM loads the
plugin) fails with one line, never an ``AttributeError`` mid-run:

======================================  ==============================  ================================
difference                              crfm-helm 0.5.16                medhelm 0.8
======================================  ==============================  ================================
unknown deployment name                 ``ModelDeploymentNotFoundError``  ``ValueError``; names of more than
                                        (a ``ValueError``)              two parts ``NotImplementedError``
``OpenAIClient.__init__``               no tokenizer                    requires ``tokenizer`` and
                                                                        ``tokenizer_name`` (AutoClient
                                                                        injects the deployment's)
``openai/<model>`` deployments          made by a deployment generator  none: the generator is gone
======================================  ==============================  ================================
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from helm.benchmark.model_deployment_registry import ModelDeployment

# The HELM distributions we know, with the releases whose API this module describes. The extras in
# setup.cfg carry the same ranges.
SUPPORTED: dict[str, str] = {"crfm-helm": ">=0.5.16,<0.6", "medhelm": ">=0.8,<0.9"}
EXTRA = {"crfm-helm": "crfm", "medhelm": "medhelm"}
PIP_NAME = {"crfm-helm": "crfm-helm[openai]", "medhelm": "medhelm[openai]"}

# A tokenizer that needs no download (HELM's character-level SimpleTokenizer), registered by us so it
# exists wherever the plugin runs: judges are chat calls and never tokenize, but medhelm 0.8's
# OpenAIClient will not be built without one.
JUDGE_TOKENIZER = "mtsjudge/characters"
# What crfm-helm 0.5.16's `openai` deployment generator builds, and medhelm 0.8's does not.
OPENAI_PREFIX = "openai/"
OPENAI_RESPONSES_CLIENT = "helm.clients.openai_responses_client.OpenAIResponseClient"

# What the plugin uses of HELM beyond its documented extension points (module, attribute). A HELM
# without one of them is a HELM this plugin does not know.
REQUIRED_API: tuple[tuple[str, str], ...] = (
    ("helm.clients.auto_client", "AutoClient._get_client"),
    ("helm.clients.openai_client", "OpenAIClient._make_chat_raw_request"),
    ("helm.benchmark.run_spec", "discover_run_spec_functions"),
    ("helm.benchmark.run_spec_factory", "construct_run_specs"),  # model_check reads model= from its frame
    ("helm.benchmark.run", "helm_run"),  # and helm-run's --dry-run, --local-path from its frame
    ("helm.benchmark.model_deployment_registry", "get_default_model_deployment_for_model"),
    ("helm.benchmark.run_spec", "_REGISTERED_RUN_SPEC_FUNCTIONS"),
    ("helm.benchmark.run_specs.medhelm_run_specs", "get_generation_adapter_spec"),
    ("helm.benchmark.model_deployment_registry", "register_model_deployment"),
    ("helm.benchmark.model_deployment_registry", "DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT"),
    ("helm.benchmark.model_metadata_registry", "register_model_metadata"),
    ("helm.benchmark.tokenizer_config_registry", "register_tokenizer_config"),
    ("helm.benchmark.annotation.mtsamples_procedures_annotator", "PROMPT_TEMPLATE"),
)


class HelmDistributionError(SystemExit):
    """The installed HELM cannot run the plugin. A ``SystemExit`` because HELM loads plugins inside
    ``except Exception`` (a plain error would be logged and the run would go on with HELM's built-in
    benchmark under our name); its message is the one line the user sees."""

    def __init__(self, message: str) -> None:
        super().__init__(f"helm-mtsamples-ext: {message}")


@dataclass(frozen=True)
class HelmDistribution:
    name: str  # "crfm-helm" or "medhelm"
    version: str

    @property
    def is_medhelm(self) -> bool:
        return self.name == "medhelm"

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


def installed_distributions() -> dict[str, str]:
    """The HELM distributions pip has installed, by name, with their versions (from their metadata)."""
    found = {}
    for name in SUPPORTED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _install_line(name: str) -> str:
    return f"pip install '{PIP_NAME[name]}{SUPPORTED[name]}'"


def distribution_problem(installed: Mapping[str, str]) -> str | None:
    """What is wrong with these installed HELM distributions, as one line with the repair; None if nothing."""
    if not installed:
        return (
            "no HELM is installed; install the plugin with the HELM you use: pip install -e '.[medhelm]' "
            "(MedHELM's medhelm 0.8) or pip install -e '.[crfm]' (Stanford's crfm-helm 0.5.16)"
        )
    if len(installed) > 1:
        both = " and ".join(f"{n} {v}" for n, v in sorted(installed.items()))
        return (
            f"{both} are both installed; they share the `helm` package, so the later one overwrote the "
            f"other's files. Repair: pip uninstall -y {' '.join(sorted(installed))} && "
            f"{_install_line('medhelm')} (or {_install_line('crfm-helm')}), then reinstall this plugin with "
            "its matching extra ('.[medhelm]' or '.[crfm]')"
        )
    ((name, version),) = installed.items()
    try:
        known = Version(version) in SpecifierSet(SUPPORTED[name])
    except InvalidVersion:
        known = False
    if not known:
        return (
            f"{name} {version} is installed, but this plugin knows {name}{SUPPORTED[name]} only: {_install_line(name)}"
        )
    return None


def check_distribution(installed: Mapping[str, str] | None = None) -> HelmDistribution:
    """The one installed HELM distribution; raises ``HelmDistributionError`` (one line) otherwise."""
    found = installed_distributions() if installed is None else installed
    problem = distribution_problem(found)
    if problem:
        raise HelmDistributionError(problem)
    ((name, version),) = found.items()
    return HelmDistribution(name, version)


def missing_api() -> list[str]:
    """The parts of ``REQUIRED_API`` this HELM lacks, as ``module.attribute``."""
    import importlib

    missing = []
    for module_name, path in REQUIRED_API:
        try:
            obj: Any = importlib.import_module(module_name)
            for part in path.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            missing.append(f"{module_name}.{path}")
    return missing


_CHECKED: HelmDistribution | None = None


def check_helm() -> HelmDistribution:
    """The start-up check: one supported HELM distribution with every API the plugin uses (once per process)."""
    global _CHECKED
    if _CHECKED is None:
        distribution = check_distribution()
        missing = missing_api()
        if missing:
            raise HelmDistributionError(
                f"{distribution} lacks {', '.join(missing)}, which this plugin uses; {_install_line(distribution.name)}"
            )
        _CHECKED = distribution
    return _CHECKED


# ---------------------------------------------------------------- the differences


def deployment_not_found_errors() -> tuple[type[Exception], ...]:
    """What ``get_model_deployment`` raises for an unknown name.

    crfm-helm 0.5.16: ``ModelDeploymentNotFoundError`` (a ``ValueError``). medhelm 0.8: ``ValueError``,
    or ``NotImplementedError`` for a name of more than two parts (it tries to auto-generate those)."""
    return (ValueError, NotImplementedError)


def find_model_deployment(name: str) -> ModelDeployment | None:
    """HELM's deployment of that name, None when this HELM has none (on both distributions)."""
    from helm.benchmark.model_deployment_registry import get_model_deployment

    try:
        return get_model_deployment(name)
    except deployment_not_found_errors():
        return None


def openai_client_needs_tokenizer() -> bool:
    """medhelm 0.8's ``OpenAIClient`` requires a tokenizer; crfm-helm 0.5.16's takes none."""
    from helm.clients.openai_client import OpenAIClient

    return "tokenizer_name" in inspect.signature(OpenAIClient.__init__).parameters


def endpoint_tokenizer_name() -> str | None:
    """The tokenizer an endpoint judge's deployment names (registered here): only where the distribution
    needs one."""
    if not openai_client_needs_tokenizer():
        return None
    from helm.benchmark.tokenizer_config_registry import (
        TOKENIZER_NAME_TO_CONFIG,
        TokenizerConfig,
        TokenizerSpec,
        register_tokenizer_config,
    )

    config = TokenizerConfig(
        name=JUDGE_TOKENIZER,
        tokenizer_spec=TokenizerSpec(class_name="helm.tokenizers.simple_tokenizer.SimpleTokenizer"),
        end_of_text_token="</s>",
        prefix_token="<s>",
    )
    if TOKENIZER_NAME_TO_CONFIG.get(JUDGE_TOKENIZER) != config:
        register_tokenizer_config(config)
    return JUDGE_TOKENIZER


def ensure_deployment(name: str) -> bool:
    """Give medhelm 0.8 the ``openai/<model>`` deployment crfm-helm 0.5.16 generates, so the default judge and the
    quick conf's model under test (both ``openai/gpt-4o-mini``) resolve on both. True if the deployment exists
    afterwards."""
    if find_model_deployment(name) is not None:
        return True
    if not name.startswith(OPENAI_PREFIX) or name.count("/") != 1:
        return False
    from helm.benchmark.model_deployment_registry import ClientSpec, ModelDeployment, register_model_deployment
    from helm.benchmark.model_metadata_registry import (
        MODEL_NAME_TO_MODEL_METADATA,
        get_unknown_model_metadata,
        register_model_metadata,
    )

    if name not in MODEL_NAME_TO_MODEL_METADATA:  # else registering the deployment warns of an unknown model
        register_model_metadata(get_unknown_model_metadata(name))
    register_model_deployment(
        ModelDeployment(name=name, model_name=name, client_spec=ClientSpec(OPENAI_RESPONSES_CLIENT))
    )
    return True
