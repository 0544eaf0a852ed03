"""Self-preference through HELM's real helm-run and helm-mtsamples-report: families read from the suite's metadata,
and one model per family is not enough to tell a judge's taste for that model from a lean toward its family.

Three hosted judges and three models under test, all loopback servers registered in the suite's ``prod_env`` as a
user registers any model: their ``model_metadata.yaml`` names each one's creator (Alpha, Beta, Gamma), and nothing
else tells the report. The models number their plans (tests/servers/judge.py ``author``); the judges score by that
number (``by_author``), and alpha-judge adds 1 to every dimension of the plans of alpha-writer. beta-judge and
gamma-judge disagree with each other by 4 points on every plan, in turn, so their own figures are noisy.
"""

from __future__ import annotations

import csv
import datetime
from pathlib import Path

import pytest
import yaml

from tests.e2e.helm_tools import P, helm_tool, request_states, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.e2e

FAMILIES = {"alpha": "Alpha", "beta": "Beta", "gamma": "Gamma"}
JUDGES = {
    "alpha-judge": Behaviour("by_author", pattern=(3, 3, 4, 4), favours="alpha"),
    "beta-judge": Behaviour("by_author", pattern=(5, 1)),
    "gamma-judge": Behaviour("by_author", pattern=(1, 5)),
}
WRITERS = {f"{family}-writer": Behaviour("author") for family in FAMILIES}
NOTES = 8


def write_prod_env(prod_env: Path, base_url: str) -> None:
    """Every judge and writer as a HELM model ``<family>/<served name>`` made by ``<Family>``."""
    names = [f"{served.split('-')[0]}/{served}" for served in [*JUDGES, *WRITERS]]
    models = [
        {"name": name, "display_name": name, "description": "a loopback model",
         "creator_organization_name": FAMILIES[name.split("/")[0]], "access": "open",
         "release_date": datetime.date(2025, 1, 1), "tags": ["TEXT_MODEL_TAG", "FULL_FUNCTIONALITY_TEXT_MODEL_TAG"]}
        for name in names
    ]  # fmt: skip
    deployments = [
        {"name": name, "model_name": name, "tokenizer_name": "simple/tokenizer1", "max_sequence_length": 1000000,
         "client_spec": {"class_name": "helm.clients.openai_client.OpenAIClient",
                         "args": {"base_url": base_url, "openai_model_name": name.split("/")[1], "api_key": "EMPTY"}}}
        for name in names
    ]  # fmt: skip
    prod_env.mkdir(parents=True, exist_ok=True)
    (prod_env / "model_metadata.yaml").write_text(yaml.safe_dump({"models": models}))
    (prod_env / "model_deployments.yaml").write_text(yaml.safe_dump({"model_deployments": deployments}))


def test_one_model_per_family_reads_cannot_tell_and_warns_no_judge_even_the_leaning_one(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    panel = "+".join(f"{name.split('-')[0]}/{name}" for name in JUDGES)
    with (
        synthetic_notes.mirror(max_lifetime=900) as mirror,
        JudgeServer({**JUDGES, **WRITERS}, max_lifetime=900) as server,
    ):
        write_prod_env(tmp_path / "prod_env", server.base_url)
        entries = [f"{P}:model={family}/{family}-writer,judges={panel}" for family in FAMILIES]
        env = user_env(**mirror.env)
        helm_tool("helm-run", "--run-entries", *entries, "--suite", "fam", "-m", str(NOTES), cwd=tmp_path, env=env)
    output = helm_tool("helm-mtsamples-report", "--suite", "fam", "--bootstrap", "500", cwd=tmp_path, env=env)

    out = tmp_path / "benchmark_output"
    (alpha_run,) = [run for run in (out / "runs" / "fam").iterdir() if "alpha-writer" in run.name]
    assert {s["annotations"][P]["model_family"] for s in request_states(alpha_run)} == {"Alpha"}
    with (out / "mtsamples_report" / "fam" / "judge_self_preference.csv").open() as f:
        rows = {row["judge"]: row for row in csv.DictReader(f)}
    assert {judge: rows[judge]["family"] for judge in JUDGES} == {f"{j}-judge": f for j, f in FAMILIES.items()}
    assert {(row["n_own"], row["n_other"]) for row in rows.values()} == {(str(NOTES), str(2 * NOTES))}
    # alpha-judge adds a point to alpha-writer's plans; with one writer per family that is also a taste for that
    # one model, which a family bias cannot be told from: the row says so, with its figure and no interval.
    alpha = rows["alpha-judge"]
    assert float(alpha["self_preference"]) == pytest.approx(0.2)
    assert (alpha["ci_low"], alpha["ci_high"]) == ("", "")
    for row in rows.values():
        assert row["reading"].startswith("cannot tell: one model on a side"), row
    assert "favours its own family" not in output
    report = (out / "mtsamples_report" / "fam" / "report.md").read_text()
    assert "## Self-preference" in report and "`alpha-judge` (Alpha, panel" in report
