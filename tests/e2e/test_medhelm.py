"""Where MedHELM users already work: the installed HELM's MedHELM schema (on medhelm 0.8 through its own
`medhelm-run`), a schema for any judge panel, HELM's SlurmRunner worker, a quiet log, and the review page
for MedHELM's UI, which has no per-note view. One real run (HELM's offline `simple/model1`, notes from the
loopback mirror of the synthetic notes, a two-judge panel the shipped schema does not name) serves every test here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext.helm_host.nltk_quiet import EXPLANATION
from tests.e2e.helm_tools import RUN_TOOL, helm_tool, request_states, run_dir, stat, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.synthetic_notes import OBGYN, SyntheticNotes

pytestmark = pytest.mark.e2e

P = "mtsamples_procedures"
SUITE = "medhelm"
MARKER = OBGYN  # south fails on these notes
NORTH = {"accuracy": 4, "completeness": 3, "clarity": 5}
SOUTH = {"accuracy": 2, "completeness": 2, "clarity": 5}  # clarity 5 from both: no variation, no alpha
MEDHELM_SCHEMA = str(resources.files("helm.benchmark.static").joinpath("schema_medhelm.yaml"))
UNMATCHED = "does not have any stat matched"
# Stats that measure the machine, not the run.
TIMING = {"inference_runtime", "inference_idealized_runtime", "inference_denoised_runtime"}


@dataclass
class Suite:
    root: Path  # helm-run's working directory
    run: Path  # the run's output directory
    log: str  # helm-run's stdout + stderr
    env: dict[str, str]
    judge: JudgeServer
    south_failed: list[bool]  # per note, in request-state order

    @property
    def out(self) -> Path:
        return self.root / "benchmark_output"


@pytest.fixture(scope="module")
def suite(synthetic_notes: SyntheticNotes, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    panel = {"north": Behaviour("steady", NORTH), "south": Behaviour("fail_some", SOUTH, fail_marker=MARKER)}
    root = tmp_path_factory.mktemp("medhelm")
    with synthetic_notes.mirror() as mirror, JudgeServer(panel, max_lifetime=1200) as judge:
        env = user_env(**mirror.env)
        # judge_max_wait: south answers 500 on some notes, and a 5xx is retried until then (default 15 min).
        entry = f"{P}:model=simple/model1,judges=north+south,judge_base_url={judge.base_url},judge_max_wait=2"
        log = helm_tool(RUN_TOOL, "--run-entries", entry, "--suite", SUITE, "-m", "5", cwd=root, env=env)
        run = run_dir(root / "benchmark_output", SUITE)
        south_failed = [MARKER in s["instance"]["input"]["text"] for s in request_states(run)]
        assert 0 < sum(south_failed) < len(south_failed), "the sample needs notes where south fails and where it works"
        yield Suite(root, run, log, env, judge, south_failed)


def group_table(suite: Suite) -> dict[str, Any]:
    """The MTSamples Procedures table helm-summarize wrote (the first one: the run group's main metrics)."""
    tables = json.loads((suite.out / "runs" / SUITE / "groups" / f"{P}.json").read_text())
    return tables[0]


def test_medhelm_schema_shows_our_runs_in_its_mtsamples_procedures_column(suite: Suite) -> None:
    """With HELM's own schema_medhelm.yaml, the column is our pooled 1-5 jury mean over valid scores only."""
    helm_tool("helm-summarize", "--suite", SUITE, "--schema-path", MEDHELM_SCHEMA, cwd=suite.root, env=suite.env)
    both, north_only = sum(NORTH.values()) + sum(SOUTH.values()), sum(NORTH.values())
    per_note = [north_only / 3 if failed else both / 6 for failed in suite.south_failed]
    expected = sum(per_note) / len(per_note)
    assert stat(suite.run, f"{P}_accuracy")["mean"] == pytest.approx(expected)

    table = group_table(suite)
    headers = [h["value"] for h in table["header"]]
    assert headers[:2] == ["Model", "Jury Score"], headers
    (row,) = table["rows"]
    assert row[1]["value"] == pytest.approx(expected)


def test_generated_schema_names_this_suites_judges_and_summarizes_without_warnings(suite: Suite) -> None:
    """`python -m helm_mtsamples_ext.schema --suite S`: strict helm-summarize, no "undefined", no "no stat matched"."""
    # The shipped schema cannot know this panel: that is the noise the generated schema removes.
    shipped = subprocess.run(
        [sys.executable, "-m", "helm_mtsamples_ext.schema"], capture_output=True, text=True, check=True
    ).stdout.strip()
    noisy = helm_tool("helm-summarize", "--suite", SUITE, "--schema-path", shipped, cwd=suite.root, env=suite.env)
    assert f"{P}_reward_north undefined" in noisy and UNMATCHED in noisy

    made = subprocess.run(
        [sys.executable, "-m", "helm_mtsamples_ext.schema", "--suite", SUITE],
        cwd=suite.root, capture_output=True, text=True, check=True, env=suite.env,
    )  # fmt: skip
    path = made.stdout.strip()
    assert Path(path).is_file() and f"{P}_alpha_clarity" in made.stderr, "the left-out column is named, with why"
    quiet = helm_tool(
        "helm-summarize", "--suite", SUITE, "--schema-path", path, "--schema-validation", "error",
        cwd=suite.root, env=suite.env,
    )  # fmt: skip
    warnings = [line for line in quiet.splitlines() if "undefined" in line or UNMATCHED in line]
    assert warnings == []

    tables = json.loads((suite.out / "runs" / SUITE / "groups" / f"{P}.json").read_text())
    headers = {h["value"] for table in tables for h in table["header"]}
    assert {"Reward (north)", "Reward (south)", "Jury Score", "Alpha accuracy (within model)"} <= headers
    assert "Alpha clarity" not in headers and "Reward (gpt-4o-mini)" not in headers


def test_slurm_runner_worker_reproduces_the_local_run(suite: Suite, tmp_path: Path) -> None:
    """HELM's SlurmRunner worker entry point, given the run_spec.json helm-run wrote, yields the same stats."""
    from helm.benchmark.executor import ExecutionSpec
    from helm.benchmark.slurm_runner import SlurmRunnerSpec
    from helm.common.authentication import Authentication
    from helm.common.cache_backend_config import SqliteCacheBackendConfig
    from helm.common.codec import to_json

    # What SlurmRunner.run_all writes for its workers (slurm/<time>/...), here for one run. The manager
    # builds it in the workers' directory; medhelm 0.8 makes the cache path absolute as the config is
    # built, so it is built here for the worker's directory, as the manager would.
    (tmp_path / "prod_env" / "cache").mkdir(parents=True)
    spec = SlurmRunnerSpec(
        execution_spec=ExecutionSpec(
            url=None,
            auth=Authentication(""),
            local_path=str(tmp_path / "prod_env"),
            parallelism=4,
            sqlite_cache_backend_config=SqliteCacheBackendConfig(str(tmp_path / "prod_env" / "cache")),
        ),
        output_path="benchmark_output",
        suite="slurm",
        skip_instances=False,
        cache_instances=False,
        cache_instances_only=False,
        skip_completed_runs=False,
        exit_on_error=True,
    )
    spec_path, run_spec_path = tmp_path / "slurm_runner_spec.json", tmp_path / "run_spec.json"
    spec_path.write_text(to_json(spec))
    run_spec_path.write_text((suite.run / "run_spec.json").read_text())

    calls_before = suite.judge.count()
    worker = subprocess.run(
        [sys.executable, "-m", "helm.benchmark.slurm_runner",
         "--slurm-runner-spec-path", str(spec_path), "--run-spec-path", str(run_spec_path)],
        cwd=tmp_path, env=suite.env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    log = worker.stdout + worker.stderr
    assert worker.returncode == 0, log[-4000:]
    assert suite.judge.count() > calls_before, "the worker (fresh cache) judged through the loopback endpoint"
    assert "[nltk_data]" not in log

    worker_run = run_dir(tmp_path / "benchmark_output", "slurm")
    assert worker_run.name == suite.run.name
    assert stats_by_name(worker_run) == stats_by_name(suite.run)
    assert stat(worker_run, f"{P}_reward")["mean"] == stat(suite.run, f"{P}_reward")["mean"]


def stats_by_name(run: Path) -> dict[str, tuple[int, float | None]]:
    """(count, mean) of every stat, keyed by its full name; timing stats left out."""
    stats = json.loads((run / "stats.json").read_text())
    return {
        json.dumps(s["name"], sort_keys=True): (s["count"], s.get("mean"))
        for s in stats
        if s["name"]["name"] not in TIMING
    }


def test_helm_run_log_has_no_nltk_download_error_and_says_why_once(suite: Suite) -> None:
    """HELM's import-time nltk download error is caught; offline, one line explains it instead."""
    import nltk

    assert "[nltk_data]" not in suite.log
    try:
        nltk.data.find("tokenizers/punkt_tab")
        installed = True
    except LookupError:
        installed = False
    assert suite.log.count(EXPLANATION) == (0 if installed else 1)


def test_the_review_page_shows_each_judges_scores_and_explanations(suite: Suite) -> None:
    """MedHELM's web UI has no per-note annotation view; the report's review page is where they are read."""
    out = suite.root / "report"
    helm_tool("helm-mtsamples-report", "--suite", SUITE, "--out", str(out), cwd=suite.root, env=suite.env)
    page = (out / "report.html").read_text()
    for judge in ("north", "south"):
        assert judge in page
    assert page.count("accuracy judged") >= len(suite.south_failed)  # north's explanation, on every note
