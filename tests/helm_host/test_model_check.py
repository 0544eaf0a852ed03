"""The model under test: HELM must know it, and a real run must have its key; otherwise helm-run stops with one
line, before any run starts. ``openai/<model>`` resolves on both HELMs (medhelm 0.8 lacks the deployment)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helm_mtsamples_ext.helm_host.compat import check_distribution
from helm_mtsamples_ext.helm_host.model_check import (
    LIST_MODELS,
    BuildingCommand,
    check_model_under_test,
    key_problem,
    resolve_model,
    unknown_model_line,
)
from tests.e2e.helm_tools import BIN, user_env

pytestmark = pytest.mark.helm

HELM = str(check_distribution())


@pytest.fixture(scope="module", autouse=True)
def helm_models() -> None:
    """As `helm-run` does first: HELM's built-in model deployments (simple/model1 among them)."""
    from helm.benchmark.config_registry import register_builtin_configs_from_helm_package

    register_builtin_configs_from_helm_package()


def test_openai_models_resolve_on_this_helm_as_on_the_other() -> None:
    """The quick conf's model: crfm-helm 0.5.16 generates its deployment; on medhelm 0.8 the plugin registers it."""
    assert resolve_model("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert resolve_model("openai/gpt-4o-mini-2024-07-18") is not None  # in both HELMs' model_deployments.yaml
    assert resolve_model("simple/model1") == "simple/model1"


def test_an_unknown_model_is_one_line_with_close_matches() -> None:
    line = unknown_model_line("opneai/gpt-4o-mini", ["openai/gpt-4o-mini-2024-07-18", "simple/model1"])
    assert line == (
        f"HELM ({HELM}) knows no model 'opneai/gpt-4o-mini' (close matches: openai/gpt-4o-mini-2024-07-18); "
        f"list the models it knows: {LIST_MODELS}"
    )
    assert "no close match" in unknown_model_line("zz/qq", ["simple/model1"])
    with pytest.raises(ValueError, match=r"knows no model 'opneai/gpt-4o-mini' \(close matches: openai/gpt-4o-mini"):
        check_model_under_test(BuildingCommand("opneai/gpt-4o-mini"))


def test_model_groups_and_longer_deployment_names_are_left_to_helm() -> None:
    """``model=text`` is a group HELM expands; ``a/b/c`` a deployment HELM may build (medhelm fetches a tokenizer)."""
    check_model_under_test(BuildingCommand("text"))
    check_model_under_test(BuildingCommand("huggingface/org/name-that-does-not-exist"))


def test_no_key_is_checked_outside_a_real_helm_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """--dry-run calls no model, --server-url holds the keys, the estimate calls nothing: none needs a key."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for command in (
        BuildingCommand("openai/gpt-4o-mini"),
        BuildingCommand("openai/gpt-4o-mini", dry_run=True, in_helm_run=True),
        BuildingCommand("openai/gpt-4o-mini", server_url="http://127.0.0.1:1", in_helm_run=True),
    ):
        check_model_under_test(command)


def test_the_key_is_found_where_helm_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """credentials.conf's openaiApiKey or OPENAI_API_KEY: either is enough; neither names both settings."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HELM_CREDENTIALS", raising=False)
    problem = key_problem("openai/gpt-4o-mini", str(tmp_path))
    assert problem is not None and problem.endswith(
        f"set openaiApiKey in {tmp_path}/credentials.conf or the OPENAI_API_KEY environment variable"
    )
    (tmp_path / "credentials.conf").write_text('openaiApiKey: "sk-not-a-real-key"\n')
    assert key_problem("openai/gpt-4o-mini", str(tmp_path)) is None
    (tmp_path / "credentials.conf").unlink()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-real-key")
    assert key_problem("openai/gpt-4o-mini", str(tmp_path)) is None
    assert key_problem("simple/model1", str(tmp_path)) is None  # an offline model takes no key


def test_the_model_list_names_helms_models_and_the_controls() -> None:
    proc = subprocess.run(
        [str(BIN / "python"), "-m", "helm_mtsamples_ext.models", "-"],
        env=user_env(), capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    names = proc.stdout.split()
    assert "openai/gpt-4o-mini-2024-07-18" in names and "mtsamples-control/reference" in names
    assert all("-" in name for name in names)


def test_an_openai_model_helm_does_not_list_is_one_line_with_the_closest_listed_names() -> None:
    """crfm-helm makes a deployment for any ``openai/`` name, so a typo would be accepted and fail every call."""
    with pytest.raises(ValueError) as raised:
        check_model_under_test(BuildingCommand("openai/gpt-4o-minii"))
    line = str(raised.value)
    start = f"HELM ({HELM}) lists no OpenAI model 'openai/gpt-4o-minii' (closest listed: openai/gpt-4o-mini"
    assert line.startswith(start)
    assert "\n" not in line and "prod_env/model_metadata.yaml" in line
    for listed in ("openai/gpt-4o-mini", "openai/gpt-4o-mini-2024-07-18", "openai/gpt-4", "openai/gpt-3.5-turbo"):
        check_model_under_test(BuildingCommand(listed))


def test_a_new_openai_model_declared_in_model_metadata_yaml_runs(tmp_path: Path) -> None:
    """The override docs/helm.md documents: the model in prod_env/model_metadata.yaml, as helm-run reads it."""
    import re

    from helm.benchmark.config_registry import register_configs_from_directory

    page = (Path(__file__).resolve().parents[2] / "docs" / "helm.md").read_text(encoding="utf-8")
    (example,) = [b for b in re.findall(r"```yaml\n(.*?)```", page, re.S) if b.startswith("models:")]
    name = re.search(r"name: (openai/\S+)", example)
    assert name is not None
    with pytest.raises(ValueError, match="lists no OpenAI model"):
        check_model_under_test(BuildingCommand(name[1]))
    (tmp_path / "model_metadata.yaml").write_text(example, encoding="utf-8")
    register_configs_from_directory(str(tmp_path))
    check_model_under_test(BuildingCommand(name[1]))
