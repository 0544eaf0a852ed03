"""The key-free first result (README, "A first result with no key"; its conf,
run_specs/mtsamples_procedures_local_quickstart.conf): HELM's offline simple/model1 and the four controls, judged
by a local server named in one variable, MTSAMPLES_JUDGE.

The end-to-end test runs the README's own commands, read from the README, against the loopback judge.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from helm.benchmark.presentation.run_entry import read_run_entries

from helm_mtsamples_ext.judges.core.prefix_prompt import FIXED_PART
from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec
from tests.e2e.helm_tools import BIN, P, user_env
from tests.servers.judge import JudgeServer
from tests.servers.mirror import NoteMirror

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "run_specs" / "mtsamples_procedures_local_quickstart.conf"
MODELS = [
    "simple/model1",
    "mtsamples-control/reference",
    "mtsamples-control/shuffled",
    "mtsamples-control/truncated",
    "mtsamples-control/padded",
]


def readme_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## A first result with no key")
    return text[start : text.index("\n## ", start + 1)]


def readme_blocks() -> tuple[str, str]:
    """(the line exporting MTSAMPLES_JUDGE, the run/summarize/report commands), as the README gives them."""
    blocks = re.findall(r"```bash\n(.*?)```", readme_section(), re.S)
    (export,) = [b for b in blocks if "export MTSAMPLES_JUDGE=" in b]
    (commands,) = [b for b in blocks if "helm-run " in b]
    return export.strip(), commands.strip()


def exported_judge() -> str:
    export, _ = readme_blocks()
    (value,) = re.findall(r"^export MTSAMPLES_JUDGE=(.*)$", export, re.M)
    (judge,) = shlex.split(value)
    return judge


def descriptions(monkeypatch: pytest.MonkeyPatch, judge: str | None) -> list[str]:
    if judge is None:
        monkeypatch.delenv("MTSAMPLES_JUDGE", raising=False)
    else:
        monkeypatch.setenv("MTSAMPLES_JUDGE", judge)
    return [entry.description for entry in read_run_entries([str(CONF)]).entries]


def test_the_conf_fills_the_one_variable_into_each_run_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as HELM reads conf files (HOCON): the four controls and simple/model1, each with the README's judge."""
    judge = exported_judge()
    assert judge == "judges=smollm2-135m,judge_base_url=http://127.0.0.1:8081/v1"  # the model the README starts
    assert descriptions(monkeypatch, judge) == [
        f"{P}:model={m},max_unjudged=1,explanation_cap=200,{judge}" for m in MODELS
    ]


def test_without_the_variable_building_the_run_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    (first, *_) = descriptions(monkeypatch, None)
    args = dict(part.split("=", 1) for part in first.split(":", 1)[1].split(","))
    with pytest.raises(ValueError, match=r"^MTSAMPLES_JUDGE is not set: export MTSAMPLES_JUDGE='judges=") as raised:
        get_mtsamples_procedures_spec(**{k: v for k, v in args.items() if k != "model"})
    assert "\n" not in str(raised.value)


def test_the_readme_keeps_local_judges_off_helm_servers_port() -> None:
    """helm-server (like vLLM) listens on 8000: a judge there would collide with the leaderboard."""
    section = readme_section()
    urls = re.findall(r"http://127\.0\.0\.1:(\d+)/v1", section)
    assert urls and "8000" not in urls
    for server in ("llama.cpp", "vLLM", "Ollama"):
        assert f"| {server} |" in section, f"no served-model-name explanation for {server}"
    assert "MTSAMPLES_PROCEDURES_BASE_URL" in section


@pytest.mark.e2e
@pytest.mark.parametrize("behaviour", ["copycat", "steady"])
def test_the_readme_quickstart_runs_as_written_with_no_key(mirror: NoteMirror, tmp_path: Path, behaviour: str) -> None:
    """The README's commands, run by bash from a checkout (its run_specs/), with MTSAMPLES_JUDGE as the README
    exports it but pointing at a loopback judge serving the README's model name one call at a time, as
    llama-cpp-python's server does. No OpenAI key anywhere in the environment.

    ``copycat`` is the weak judge (SmolLM2-135M): it copies the prompt's format line into its verdicts where the
    prompt shows one, and its scores ignore the answer; with the ``prefix`` prompt its verdicts are its own, so
    the audit can say what is true of it. ``steady`` follows the format, and runs with TQDM_DISABLE=1 (the bar off,
    which failed every run before)."""
    judge_arg = exported_judge()
    served = judge_arg.split(",")[0].removeprefix("judges=")
    _, commands = readme_blocks()
    shutil.copytree(REPO / "run_specs", tmp_path / "run_specs")
    with JudgeServer({served: behaviour}, max_lifetime=900, one_at_a_time=0.01, owned_by="me") as judge:
        extra = {"TQDM_DISABLE": "1"} if behaviour == "steady" else {}
        env = user_env(
            **mirror.env,
            **extra,
            MTSAMPLES_JUDGE=judge_arg.replace("http://127.0.0.1:8081/v1", judge.base_url),
            PATH=f"{BIN}:{user_env().get('PATH', '')}",
        )
        proc = subprocess.run(
            ["bash", "-e", "-c", commands],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        refused = "json_schema" if behaviour == "copycat" else None  # llama-cpp-python's 500 to json_schema
        answered = [r for r in judge.requests if r.model == served and r.response_format != refused]
        most_at_once = judge.max_served_at_once
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert len(answered) == 5 * 10, "each of the five runs judged its ten notes once"
    assert most_at_once == 1
    assert all(r.prompt.startswith(FIXED_PART) for r in answered), "a new suite gets the prefix prompt"
    assert {r.explanation_max for r in answered if r.response_format} == {200}, "the conf's explanation_cap"
    runs = sorted(
        p.name for p in (tmp_path / "benchmark_output" / "runs" / "quickstart").iterdir() if p.name.startswith(P)
    )
    assert len(runs) == 5 and all(f"judges={served}" in name for name in runs)
    report = tmp_path / "benchmark_output" / "mtsamples_report" / "quickstart"
    board = pd.read_csv(report / "leaderboard.csv")
    assert sorted(board["model"]) == sorted(MODELS) and board["panel_auroc"].notna().all()
    judged = pd.read_csv(report / "instances.csv")
    assert (judged["status"] == "ok").sum() == 50, "every verdict is the judge's own: none refused as copied"
    assert f"Judge panel {served}: " in proc.stdout, "the audit's verdict on the judge is printed"
    assert "not measured" not in proc.stdout, "every control ran and was scored"
    if behaviour == "copycat":
        assert f"Judge panel {served}: not shown to tell the clinician's plan from another patient's: AUROC 0.50" in (
            proc.stdout
        )
        assert f"Judging run 5 of 5 ({served}): 10/10 notes of this run, 50/50 notes of the suite judged" in (
            proc.stderr
        )
    else:
        assert "Judging run" not in proc.stderr
    assert (tmp_path / "benchmark_output" / "runs" / "quickstart" / "groups" / f"{P}.json").is_file()
