"""deployments.py: each judge as a call target, an endpoint judge's deployment registered for it."""

from __future__ import annotations

import pytest
from helm.benchmark.model_deployment_registry import DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.judges.core.endpoint_keys import EndpointKey
from helm_mtsamples_ext.judges.helm_calls.deployments import judge_target
from helm_mtsamples_ext.judges.helm_calls.endpoints import endpoint_host

pytestmark = pytest.mark.helm

URL = "http://127.0.0.1:7/v1"


def test_an_endpoint_judge_gets_a_deployment_of_its_own_without_a_timeout() -> None:
    """judge_timeout reaches the client by the caller (bound_whole_calls), never by the deployment."""
    keys = {URL: EndpointKey(URL, 3, "EMPTY", "none (keyless)")}
    target = judge_target(JudgeSpec("q", "qwen", None, URL + "/", 3), keys)
    assert target.model_deployment == f"{endpoint_host(URL)}/qwen" and target.base_url == URL
    assert DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT[target.model_deployment].client_spec.args.get("timeout") is None
    assert "JUDGE_API_KEY_3" in target.key_hint


def test_a_hosted_judge_names_its_deployment_and_where_its_key_goes() -> None:
    target = judge_target(JudgeSpec("mini", "openai/gpt-4o-mini", "openai/gpt-4o-mini"), {})
    assert (target.model_deployment, target.endpoint, target.base_url) == ("openai/gpt-4o-mini", "openai", None)
    assert "openaiApiKey" in target.key_hint
