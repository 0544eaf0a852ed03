"""Hosted judges' keys through the real helm-run and helm-mtsamples-report: a server that echoes the key it was
sent leaves it in no file under benchmark_output/ or prod_env/ and in no output (common/secrets.py).

The judges are HELM model deployments (prod_env/model_deployments.yaml), not judge_base_url endpoints, served by
one loopback server. The ``acmehost/`` ones take their key from credentials.conf (``acmehostApiKey``, HELM's
``provide_api_key``), the ``openai/`` ones from ``OPENAI_API_KEY`` (HELM hands its OpenAI client no key, so the
OpenAI SDK reads the variable). Each echoes the key somewhere else: in its explanations, in a score (kept in the
record's reason the score is invalid), in an HTTP 500's message (logged at each retry, kept as the failure).
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from tests.e2e.helm_tools import P, files_containing, helm_tool, request_states, run_dir, user_env
from tests.servers.judge import JudgeServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.e2e

CREDENTIALS_KEY = "sk-hosted-credentials-4d5e6f7a8b"
ENV_KEY = "sk-hosted-env-openai-1a2b3c4d5e"
JUDGES = {
    "acmehost/echo-judge": "echo-judge",
    "openai/echo-env-judge": "echo-env-judge",
    "acmehost/leaky-judge": "leaky-judge",
    "openai/score-judge": "score-judge",
}
BEHAVIOURS = {
    "echo-judge": "key_echo",
    "echo-env-judge": "key_echo",
    "leaky-judge": "leaky_500",
    "score-judge": "key_score",
}


def _deployments(base_url: str) -> str:
    deployments = [
        {
            "name": name,
            "model_name": name,
            "tokenizer_name": "simple/tokenizer1",
            "max_sequence_length": 128000,
            "client_spec": {
                "class_name": "helm.clients.openai_client.OpenAIClient",
                "args": {"base_url": base_url, "openai_model_name": served},
            },
        }
        for name, served in JUDGES.items()
    ]
    return yaml.safe_dump({"model_deployments": deployments})


def _metadata() -> str:
    models = [
        {
            "name": name,
            "display_name": served,
            "description": "a loopback judge echoing its key",
            "creator_organization_name": name.split("/")[0],
            "access": "limited",
            "release_date": datetime.date(2025, 1, 1),
            "tags": ["TEXT_MODEL_TAG"],
        }
        for name, served in JUDGES.items()
    ]
    return yaml.safe_dump({"models": models})


def test_a_hosted_judge_echoing_its_key_leaves_it_in_no_file_and_no_output(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    prod_env = tmp_path / "prod_env"
    prod_env.mkdir()
    with (
        synthetic_notes.mirror(max_lifetime=600) as mirror,
        JudgeServer(dict(BEHAVIOURS), max_lifetime=600) as judge,
    ):
        (prod_env / "model_deployments.yaml").write_text(_deployments(judge.base_url))
        (prod_env / "model_metadata.yaml").write_text(_metadata())
        (prod_env / "credentials.conf").write_text(f'acmehostApiKey: "{CREDENTIALS_KEY}"\n')
        env = user_env(**mirror.env, OPENAI_API_KEY=ENV_KEY)
        entry = f"{P}:model=simple/model1,judges={'+'.join(JUDGES)}"
        output = helm_tool("helm-run", "--run-entries", entry, "--suite", "hosted", "-m", "2", "-n", "1",
                           cwd=tmp_path, env=env)  # fmt: skip
        sent = {r.model: r.authorization for r in judge.requests}
    output += helm_tool("helm-mtsamples-report", "--suite", "hosted", "--bootstrap", "20", cwd=tmp_path, env=env)

    assert sent == {
        served: f"Bearer {CREDENTIALS_KEY if name.startswith('acmehost/') else ENV_KEY}"
        for name, served in JUDGES.items()
    }
    records = [s["annotations"][P] for s in request_states(run_dir(tmp_path / "benchmark_output", "hosted"))]
    explanations = {r[name]["clarity"]["explanation"] for r in records for name in ("echo-judge", "echo-env-judge")}
    assert explanations == {"clarity judged (Authorization: Bearer ***)"}  # echoed, judged, and masked
    assert {r["score-judge"]["invalid"]["clarity"] for r in records} == {'"Bearer ***" is not an integer 1-5'}
    assert all("upstream refused Authorization: Bearer ***" in r["leaky-judge"]["failure"] for r in records)
    retries = [line for line in output.splitlines() if "judge leaky-judge:" in line and "retrying in" in line]
    assert retries and all("upstream refused Authorization: Bearer ***" in line for line in retries)  # logged, masked
    assert (tmp_path / "benchmark_output" / "mtsamples_report" / "hosted" / "report.html").is_file()
    for key in (CREDENTIALS_KEY, ENV_KEY):
        assert files_containing(tmp_path, key) == ([prod_env / "credentials.conf"] if key == CREDENTIALS_KEY else [])
        assert key not in output
