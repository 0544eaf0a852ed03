"""The Medmarks export read by medarc-verifiers' OWN win-rate code, in its own venv (it cannot share HELM's:
crfm-helm pins datasets~=3.1, medarc-verifiers needs datasets>=4.2).

The venv is `.venv-verifiers` at the checkout's root (CI builds it from `.[verifiers,test]`), else the local
`/work/venvs/verifiers`; without either the tests skip with one line, and under CI=true they fail instead.
Rewards (tests/report/medmarks_suite.py): alpha 1.0 .9 .8 1.0; beta .6 .4 (unjudged) .7.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext.report.medmarks_export import PARQUET_NAME, slug
from tests.report.medmarks_export import export_suite
from tests.report.medmarks_suite import ALPHA, BETA

REPO = Path(__file__).resolve().parents[2]
VENVS = (REPO / ".venv-verifiers", Path("/work/venvs/verifiers"))
WINRATE = """
import json, sys
from medarc_verifiers.cli.winrate import WinrateConfig, compute_winrates, to_json
result = compute_winrates([("mtsamples_procedures", sys.argv[1:])], WinrateConfig())
print(json.dumps(to_json(result)))
"""
BETA_MEAN = (0.6 + 0.4 + 0.7) / 3
"""beta's mean over its judged notes; with the unjudged note counted as 0 it would be 1.7 / 4 = 0.425."""


def _verifiers_bin() -> Path:
    for venv in VENVS:
        if (venv / "bin" / "python").is_file():
            return venv / "bin"
    missing = (
        f"no verifiers venv ({' or '.join(str(v) for v in VENVS)}): build it with pip install -e '.[verifiers,test]'"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {missing}")
    pytest.skip(missing)


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_suite(tmp_path_factory.mktemp("winrate"))


def _run(args: list[str], cwd: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    if ok:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


def _check(result: dict[str, Any]) -> None:
    alpha, beta = result["models"][ALPHA], result["models"][BETA]
    assert alpha["mean_winrate"]["simple_mean"] == 1.0 and beta["mean_winrate"]["simple_mean"] == 0.0
    assert alpha["vs"][BETA]["per_dataset"]["mtsamples_procedures"] == 1.0
    assert math.isclose(alpha["avg_reward_per_dataset"]["mtsamples_procedures"], (1.0 + 0.9 + 0.8 + 1.0) / 4)
    assert math.isclose(beta["avg_reward_per_dataset"]["mtsamples_procedures"], BETA_MEAN)  # the null left out
    assert result["datasets"]["mtsamples_procedures"]["n_questions"] == 4
    rates = [m["mean_winrate"][k] for m in (alpha, beta) for k in ("simple_mean", "weighted_mean")]
    assert all(math.isfinite(rate) for rate in rates)


def test_medarc_win_rate_reads_the_export(export: Path, tmp_path: Path) -> None:
    """alpha beats beta on every note both have; beta's unjudged note is missing from its mean, not a 0."""
    python = _verifiers_bin() / "python"
    paths = [str(export / slug(model) / PARQUET_NAME) for model in (ALPHA, BETA)]
    _check(json.loads(_run([str(python), "-c", WINRATE, *paths], tmp_path).stdout))


def test_medarc_eval_winrate_finds_the_export_by_its_env_index(export: Path, tmp_path: Path) -> None:
    """The CLI, given only the panel's directory, finds the files through env_index.json."""
    medarc_eval = _verifiers_bin() / "medarc-eval"
    out = tmp_path / "winrates.json"
    _run([str(medarc_eval), "winrate", "--processed-dir", str(export), "--output", str(out)], tmp_path)
    _check(json.loads(out.read_text(encoding="utf-8")))


def test_medarc_eval_pointed_at_medmarks_itself_stops_as_the_readme_warns(export: Path, tmp_path: Path) -> None:
    """medmarks/ holds panels, not files: medarc-eval stops with its traceback, which is why the export's README
    and report.md give the panel's directory instead."""
    medarc_eval = _verifiers_bin() / "medarc-eval"
    done = _run([str(medarc_eval), "winrate", "--processed-dir", str(export.parent)], tmp_path, ok=False)
    assert done.returncode != 0 or "Traceback" in done.stderr
    assert "No env_index.json found under" in done.stderr
    readme = (export.parent / "README.md").read_text(encoding="utf-8")
    assert f"medarc-eval winrate --processed-dir medmarks/{export.name}" in readme
