"""The plugin beside the HELM it was installed with: helm-run stops with one line when a second distribution's
metadata sits beside the first, and installing the plugin with its extra changes no file of that HELM."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from helm_mtsamples_ext.helm_host.compat import EXTRA, check_distribution, installed_distributions
from tests.installed_files import changed_files

REPO = Path(__file__).resolve().parents[2]
THIS = check_distribution()  # the environment's own HELM (the suite needs exactly one)
OTHER = {"crfm-helm": ("medhelm", "0.8.0"), "medhelm": ("crfm-helm", "0.5.16")}[THIS.name]


def _fake_distribution(root: Path, name: str, version: str) -> Path:
    """A dist-info as pip leaves it, so importlib.metadata finds `name` installed."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    return root


def _helm_tool(tool: str) -> str:
    return str(Path(sys.executable).with_name(tool))


def test_helm_run_beside_a_second_distribution_stops_with_one_line(tmp_path: Path) -> None:
    """The clobbered case: both distributions' metadata installed. helm-run loads the plugin first."""
    fake = _fake_distribution(tmp_path / "site", *OTHER)
    env = {**os.environ, "PYTHONPATH": str(fake)}
    done = subprocess.run(
        [_helm_tool("helm-run"), "--run-entries", "mtsamples_procedures:model=simple/model1", "--suite", "x"]
        + ["--dry-run", "-m", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("helm-mtsamples-ext: ") and "are both installed" in last and "pip uninstall -y" in last
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "benchmark_output" / "runs" / "x").exists()


def test_installing_the_plugin_with_its_extra_leaves_every_helm_file_as_installed() -> None:
    """`pip install -e '.[medhelm]'` beside medhelm (or '.[crfm]' beside crfm-helm): no file of the HELM
    distribution changes and the other distribution is not pulled in."""
    distribution = metadata.distribution(THIS.name)
    assert changed_files(distribution) == []
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "-e", f"{REPO}[{EXTRA[THIS.name]}]"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert installed_distributions() == {THIS.name: THIS.version}
    assert changed_files(metadata.distribution(THIS.name)) == []
