"""Each judge of the panel as a call target: its HELM deployment, registered for an endpoint judge.

Why registered here: a judge served at a ``judge_base_url`` has no deployment in HELM's registry, so one is
made per (endpoint, model) (``endpoints.register_endpoint_deployment``: its own cache file, no SDK retries);
a hosted judge names its deployment. Either way the target says
where the judge is and which setting holds its key, for error messages that never show the key.
"""

from __future__ import annotations

from helm_mtsamples_ext.common.panel import JudgeSpec, JudgeTarget
from helm_mtsamples_ext.helm_host.model_check import hosted_key_hint
from helm_mtsamples_ext.judges.core.endpoint_keys import EndpointKey, key_settings
from helm_mtsamples_ext.judges.core.urls import normalise_base_url
from helm_mtsamples_ext.judges.helm_calls.endpoints import endpoint_host, register_endpoint_deployment


def judge_target(spec: JudgeSpec, keys: dict[str, EndpointKey]) -> JudgeTarget:
    """The call target of one judge; ``keys`` by normalised base URL (keys.install_panel_keys)."""
    if spec.base_url:
        url = normalise_base_url(spec.base_url)
        deployment = register_endpoint_deployment(url, spec.model)
        hint = key_settings(keys[url].position, url)
        return JudgeTarget(spec.name, deployment, deployment, endpoint_host(url), url, hint, base_url=url)
    deployment = spec.model_deployment or spec.model
    host = deployment.split("/")[0]
    return JudgeTarget(spec.name, spec.model, deployment, host, deployment, hosted_key_hint(deployment))
