"""A judge that favours its own family is caught, through HELM's real helm-run and helm-mtsamples-report.

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


def test_the_judge_adding_a_point_for_its_own_family_is_flagged_and_the_others_are_not(
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
    # alpha-judge: d = its reward - .6 (beta and gamma always sum to 6 points), .2 higher on alpha's plans.
    alpha = rows["alpha-judge"]
    assert float(alpha["self_preference"]) == pytest.approx(0.2)
    assert 0 < float(alpha["ci_low"]) < 0.2 < float(alpha["ci_high"])
    for judge in ("beta-judge", "gamma-judge"):
        assert float(rows[judge]["ci_low"]) < 0 < float(rows[judge]["ci_high"]), rows[judge]

    warnings = [line for line in output.splitlines() if "favours its own family" in line]
    assert len(warnings) == 1 and warnings[0].startswith("WARNING: judge alpha-judge (family Alpha) favours")
    assert warnings[0] in (out / "mtsamples_report" / "fam" / "report.md").read_text()
