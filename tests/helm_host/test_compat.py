"""The rules of helm_compat: exactly one known HELM distribution, found from the installed metadata
before anything imports `helm`; each difference between crfm-helm 0.5.16 and medhelm 0.8 answered in
one place (tests/e2e/test_helm_install.py: installing the plugin never changes a file of the HELM it sits beside).

These tests run on whichever distribution the environment has (CI runs them once on each).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

from helm_mtsamples_ext.helm_host import compat as helm_compat
from helm_mtsamples_ext.helm_host.compat import (
    HelmDistributionError,
    check_distribution,
    distribution_problem,
    ensure_deployment,
    find_model_deployment,
    installed_distributions,
)

pytestmark = pytest.mark.helm

REPO = Path(__file__).resolve().parents[2]
THIS = check_distribution()  # the environment's own HELM (the suite needs exactly one)
OTHER = {"crfm-helm": ("medhelm", "0.8.0"), "medhelm": ("crfm-helm", "0.5.16")}[THIS.name]


# ---------------------------------------------------------------- which HELM is installed


@pytest.mark.parametrize(
    "installed, says",
    [
        ({}, ["no HELM is installed", "pip install -e '.[medhelm]'", "pip install -e '.[crfm]'"]),
        (
            {"crfm-helm": "0.5.16", "medhelm": "0.8.0"},
            ["crfm-helm 0.5.16 and medhelm 0.8.0 are both installed", "pip uninstall -y crfm-helm medhelm"],
        ),
        ({"medhelm": "0.9.1"}, ["medhelm 0.9.1 is installed", "medhelm>=0.8,<0.9", "pip install 'medhelm[openai]"]),
        ({"crfm-helm": "0.5.15"}, ["crfm-helm 0.5.15 is installed", "crfm-helm>=0.5.16,<0.6"]),
        ({"crfm-helm": "not-a-version"}, ["crfm-helm not-a-version is installed"]),
    ],
    ids=["neither", "both (clobbered)", "newer medhelm", "older crfm-helm", "unreadable version"],
)
def test_a_helm_the_plugin_cannot_run_on_is_one_line_with_its_repair(
    installed: dict[str, str], says: list[str]
) -> None:
    problem = distribution_problem(installed)
    assert problem is not None and "\n" not in problem
    for words in says:
        assert words in problem


@pytest.mark.parametrize("installed", [{"crfm-helm": "0.5.16"}, {"crfm-helm": "0.5.17"}, {"medhelm": "0.8.0"}])
def test_one_supported_distribution_is_accepted(installed: dict[str, str]) -> None:
    assert distribution_problem(installed) is None
    ((name, version),) = installed.items()
    assert check_distribution(installed) == helm_compat.HelmDistribution(name, version)


def test_the_check_is_a_system_exit_so_helms_plugin_loader_cannot_swallow_it() -> None:
    """HELM loads entry points inside `except Exception`; a SystemExit stops helm-run with our line."""
    with pytest.raises(HelmDistributionError) as raised:
        check_distribution({})
    assert not isinstance(raised.value, Exception)
    assert str(raised.value.code).startswith("helm-mtsamples-ext: no HELM is installed")


def test_the_environment_has_exactly_the_distribution_its_extra_installed() -> None:
    assert installed_distributions() == {THIS.name: THIS.version}


def test_a_helm_lacking_an_api_the_plugin_uses_fails_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(helm_compat, "_CHECKED", None)
    monkeypatch.setattr(
        helm_compat, "REQUIRED_API", (*helm_compat.REQUIRED_API, ("helm.clients.auto_client", "AutoClient._gone"))
    )
    with pytest.raises(HelmDistributionError) as raised:
        helm_compat.check_helm()
    assert f"{THIS} lacks helm.clients.auto_client.AutoClient._gone" in str(raised.value.code)


def test_this_helm_has_every_api_the_plugin_uses() -> None:
    assert helm_compat.missing_api() == []


# ---------------------------------------------------------------- the differences


@pytest.mark.parametrize("name", ["nobody/none", "a/b/c"], ids=["two parts", "three parts (medhelm auto-generates)"])
def test_an_unknown_deployment_is_none_on_every_distribution(name: str) -> None:
    assert find_model_deployment(name) is None
    assert not ensure_deployment(name)


def test_the_default_judge_resolves_on_every_distribution() -> None:
    assert ensure_deployment("openai/gpt-4o-mini")
    deployment = find_model_deployment("openai/gpt-4o-mini")
    assert deployment is not None and deployment.model_name == "openai/gpt-4o-mini"


def test_endpoint_judges_name_a_tokenizer_exactly_where_the_openai_client_needs_one() -> None:
    from helm.benchmark.tokenizer_config_registry import get_tokenizer_config

    name = helm_compat.endpoint_tokenizer_name()
    assert (name is not None) == THIS.is_medhelm
    if name is not None:
        assert get_tokenizer_config(name) is not None


# ---------------------------------------------------------------- start-up, as a user meets it


def test_importing_the_plugin_with_no_helm_stops_with_one_line(tmp_path: Path) -> None:
    """A Python with the plugin's code but no HELM at all (a bare venv)."""
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    deps = tmp_path / "deps"
    import packaging

    shutil.copytree(Path(packaging.__file__).parent, deps / "packaging")
    python = bare / "bin" / "python"
    done = subprocess.run(
        [str(python), "-c", "import helm_mtsamples_ext.plugin"],
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{REPO}{os.pathsep}{deps}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "helm-mtsamples-ext: no HELM is installed; install the plugin with the HELM you use: "
        "pip install -e '.[medhelm]' (MedHELM's medhelm 0.8) or pip install -e '.[crfm]' (Stanford's crfm-helm 0.5.16)"
    ]
