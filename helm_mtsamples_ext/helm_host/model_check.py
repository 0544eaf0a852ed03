"""The model under test, checked while helm-run builds the run: HELM must know it, and it must have its key.

Why here: HELM takes ``model=`` off a run entry (for its ``ModelRunExpander``) before it calls our run-spec
function, and resolves the model only after that function returns; an unknown model then ends helm-run in a
26-line traceback, and a missing key fails each run later with the reason buried in one. The run-spec function
is the only code of ours that runs in between, so it reads ``model=`` from HELM's ``construct_run_specs`` (the
caller building the entry), and helm-run's own options (``--dry-run``, ``--local-path``, ``--server-url``) from
``helm_run``: the same on crfm-helm 0.5.16 and medhelm 0.8 (``helm_compat.REQUIRED_API`` names both functions).

The key is checked the way the judges' is (``JudgeCaller.preflight``): HELM's AutoClient builds the model's
client from helm-run's credentials, which makes no request. Not with ``--dry-run`` (it calls no model), nor with
``--server-url`` (the server holds the keys), nor where nothing of helm-run's is on the stack (tests, the
estimate): there only the model's name is checked.
"""

from __future__ import annotations

import difflib
import inspect
import os
import re
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any

from helm_mtsamples_ext.common.helm_paths import LOCAL_PATH, OUTPUT_PATH
from helm_mtsamples_ext.helm_host.compat import OPENAI_PREFIX, check_helm, ensure_deployment

LIST_MODELS = "python -m helm_mtsamples_ext.models [TEXT]"
DATED = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{4})(?=-|$)")
"""A snapshot's date in an OpenAI model name (``-2024-07-18``, ``-0613``): without it, the alias OpenAI serves."""
OPENAI_KEY_ENV = "OPENAI_API_KEY"  # what HELM's OpenAI clients fall back to (the OpenAI SDK reads it)


def hosted_key_hint(deployment: str, local_path: str = LOCAL_PATH) -> str:
    """Where a user sets the key of a hosted deployment, as HELM looks for it: ``<host>ApiKey`` in credentials.conf
    (and, for OpenAI, the SDK's environment variable)."""
    host = deployment.split("/")[0]
    extra = f" or the {OPENAI_KEY_ENV} environment variable" if host == "openai" else ""
    return f"{host}ApiKey in {local_path}/credentials.conf{extra}"


@dataclass(frozen=True)
class BuildingCommand:
    """What the run entry being built says of the command building it."""

    model: str | None  # the entry's model= (None outside HELM's construct_run_specs)
    dry_run: bool = False
    local_path: str = LOCAL_PATH
    server_url: str | None = None
    in_helm_run: bool = False
    output_path: str = OUTPUT_PATH  # helm-run's -o, where a suite's earlier runs are
    suite: str | None = None


def building_command(frame: FrameType | None = None) -> BuildingCommand:
    """Read from the stack: HELM's ``construct_run_specs(spec)`` and ``helm_run(args)`` calling us."""
    from helm.benchmark import run as helm_run_module
    from helm.benchmark import run_spec_factory

    spec: Any = None
    args: Any = None
    run_file = os.path.realpath(helm_run_module.__file__)
    current: FrameType | None = frame or sys._getframe(1)
    while current is not None:
        code = current.f_code
        if spec is None and code is run_spec_factory.construct_run_specs.__code__:
            spec = current.f_locals.get("spec")
        elif code.co_name == "helm_run" and os.path.realpath(code.co_filename) == run_file:
            args = current.f_locals.get("args")
        current = current.f_back
    model = spec.args.get("model") if spec is not None and isinstance(getattr(spec, "args", None), dict) else None
    if args is None:
        return BuildingCommand(str(model) if model else None)
    return BuildingCommand(
        str(model) if model else None,
        dry_run=bool(getattr(args, "dry_run", False)),
        local_path=str(getattr(args, "local_path", None) or LOCAL_PATH),
        server_url=getattr(args, "server_url", None) or None,
        in_helm_run=True,
        output_path=str(getattr(args, "output_path", None) or OUTPUT_PATH),
        suite=getattr(args, "suite", None) or None,
    )


def known_models() -> list[str]:
    """Every model and deployment name HELM knows now (its configs, prod_env's, the plugin's)."""
    from helm.benchmark.model_deployment_registry import ALL_MODEL_DEPLOYMENTS

    names = {d.name for d in ALL_MODEL_DEPLOYMENTS} | {d.model_name for d in ALL_MODEL_DEPLOYMENTS if d.model_name}
    return sorted(names)


def unknown_model_line(model: str, known: list[str]) -> str:
    close = difflib.get_close_matches(model, known, n=3, cutoff=0.6)
    matches = f"close matches: {', '.join(close)}" if close else "no close match"
    return f"HELM ({check_helm()}) knows no model {model!r} ({matches}); list the models it knows: {LIST_MODELS}"


def _placeholder(metadata: Any) -> bool:
    """HELM's stand-in metadata for a model it does not know (``get_unknown_model_metadata``), which HELM and the
    plugin register for names nobody listed."""
    return getattr(metadata, "creator_organization_name", None) == "Unknown" and metadata.description == metadata.name


def listed_openai_models() -> list[str]:
    """The ``openai/`` models HELM's metadata lists (its own and ``prod_env/model_metadata.yaml``'s), each also
    without its snapshot date (``openai/gpt-4o-mini`` for ``openai/gpt-4o-mini-2024-07-18``)."""
    from helm.benchmark.model_metadata_registry import MODEL_NAME_TO_MODEL_METADATA

    names: set[str] = set()
    for name, metadata in list(MODEL_NAME_TO_MODEL_METADATA.items()):
        if name.startswith(OPENAI_PREFIX) and not _placeholder(metadata):
            names |= {name, DATED.sub("", name)}
    return sorted(names)


def unlisted_openai_line(model: str, listed: list[str], local_path: str = LOCAL_PATH) -> str:
    """Why an ``openai/`` model nobody lists stops the run (crfm-helm would make a deployment for any such name, and
    a typo would fail every call later), with the closest listed names and how to run a model too new to be listed."""
    close = difflib.get_close_matches(model, listed, n=3, cutoff=0.6)
    matches = f"closest listed: {', '.join(close)}" if close else "no close match"
    return (
        f"HELM ({check_helm()}) lists no OpenAI model {model!r} ({matches}); for a model newer than HELM's list, "
        f'declare it in {local_path}/model_metadata.yaml (see docs/helm.md, "A model HELM does not list")'
    )


def resolve_model(model: str) -> str | None:
    """The deployment HELM will run ``model`` on, None if it has none. An ``openai/<model>`` is given the
    deployment crfm-helm generates where medhelm lacks it (``helm_compat.ensure_deployment``, as for judges)."""
    from helm.benchmark.model_deployment_registry import get_default_model_deployment_for_model

    ensure_deployment(model)
    return get_default_model_deployment_for_model(model)


def key_problem(deployment: str, local_path: str) -> str | None:
    """What stops HELM's client for ``deployment`` from being built with helm-run's credentials; None if nothing
    (or the client takes no key: offline models, the controls)."""
    from helm.benchmark.model_deployment_registry import get_model_deployment
    from helm.clients.auto_client import AutoClient
    from helm.common.cache_backend_config import BlackHoleCacheBackendConfig
    from helm.common.general import get_credentials
    from helm.common.object_spec import get_class_by_name

    client_class = get_class_by_name(get_model_deployment(deployment).client_spec.class_name)
    if "api_key" not in inspect.signature(client_class.__init__).parameters:
        return None
    client = AutoClient(get_credentials(local_path), os.path.join(local_path, "cache"), BlackHoleCacheBackendConfig())
    try:
        client._get_client(deployment)
    except Exception as e:
        reason = " ".join(str(e).split())
        hint = hosted_key_hint(deployment, local_path)
        return f"the model under test {deployment!r} cannot be used ({reason}): set {hint}"
    return None


def check_model_under_test(command: BuildingCommand) -> None:
    """Raise ValueError (one line) for a model HELM does not know, or, when helm-run will call it, has no key for.

    Only a ``<organization>/<model>`` name is checked: a model group (``model=text``) is HELM's to expand, and a
    name of three parts or more is a deployment HELM may build itself (medhelm downloads a tokenizer for some)."""
    model = command.model
    if not model or model.count("/") != 1:
        return
    if model.startswith(OPENAI_PREFIX):
        listed = listed_openai_models()
        if model not in listed:
            raise ValueError(unlisted_openai_line(model, listed, command.local_path))
    deployment = resolve_model(model)
    if deployment is None:
        raise ValueError(unknown_model_line(model, known_models()))
    if command.in_helm_run and not command.dry_run and not command.server_url:
        problem = key_problem(deployment, command.local_path)
        if problem:
            raise ValueError(f"{problem} (or try the run with --dry-run, which calls no model)")
