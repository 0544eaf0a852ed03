"""The cluster guide (docs/cluster.md): its runner_config.yaml is one HELM's SlurmRunner reads and can submit with."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import dacite
import yaml
from helm.benchmark.runner_config_registry import RunnerConfigSpec

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "cluster.md"


def runner_config_example() -> str:
    (block,) = [
        b
        for b in re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
        if "runner_config.yaml" in b
    ]
    return block


def test_the_guides_runner_config_parses_as_helms_runner_config_with_quotable_slurm_args() -> None:
    """HELM shlex-quotes every slurm_args value (strings only) and sets job_name/output/chdir itself."""
    config = dacite.from_dict(RunnerConfigSpec, yaml.safe_load(runner_config_example()))
    assert config.slurm_args and config.helm_max_concurrent_workers > 0
    assert all(isinstance(v, str) and shlex.quote(v) for v in config.slurm_args.values())
    assert {"job_name", "output", "chdir"}.isdisjoint(config.slurm_args)
    assert config.slurm_args.get("export") != "NONE", "the workers need the manager's environment"
