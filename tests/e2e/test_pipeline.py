"""A user's session with HELM's real binaries: helm-run, helm-summarize, helm-server, and a browser.

Nothing of ours is mocked. HELM's offline `simple/model1` is the model under test; the notes come from a
loopback mirror (of the synthetic notes; of the pinned snapshot in the test of the full set) through our
real downloader; the judges are a loopback OpenAI-compatible server reached through HELM's own OpenAI client.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from helm_mtsamples_ext.helm_host.compat import check_distribution
from helm_mtsamples_ext.report.review_data import fold
from helm_mtsamples_ext.schema import SCHEMA_PATH
from tests.e2e.helm_tools import (
    BIN,
    CHROMIUM,
    CHROMIUM_ARGS,
    SECRET,
    P,
    files_containing,
    helm_tool,
    request_states,
    require_chromium,
    run_dir,
    stat,
    user_env,
    wait_until_serving,
)
from tests.report.review_page import page_data
from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.loopback import free_port
from tests.servers.mirror import NoteMirror
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.e2e


def test_full_pinned_set_then_offline_rerun_replays_everything(pinned_notes_dir: Path, tmp_path: Path) -> None:
    """131 instances from the mirror; a re-run with the mirror gone works and makes zero judge calls.

    Also: the judge key reaches the judge but appears nowhere under the output directory or in logs.
    """
    steady = Behaviour("steady", {"accuracy": 4, "completeness": 4, "clarity": 4})
    with NoteMirror(pinned_notes_dir) as mirror, JudgeServer({"steady": steady}) as judge:
        entry = f"{P}:model=simple/model1,judges=steady,judge_base_url={judge.base_url}"
        env = user_env(MTSAMPLES_PROCEDURES_BASE_URL=mirror.base_url, JUDGE_API_KEY=SECRET)
        args = ["--run-entries", entry, "--suite", "full", "-n", "4"]
        first = helm_tool("helm-run", *args, "-m", "1000", cwd=tmp_path, env=env)

        run = run_dir(tmp_path / "benchmark_output", "full")
        states = request_states(run)
        assert len(states) == 131 and len({s["instance"]["id"] for s in states}) == 131
        assert mirror.request_count == 429
        assert judge.count("steady") == 131
        assert all(r.authorization == f"Bearer {SECRET}" for r in judge.requests)
        assert stat(run, f"{P}_reward")["mean"] == pytest.approx(0.8)

        # Offline now. HELM's adapter takes minutes to truncate 131 long notes for simple/model1, so the
        # re-run evaluates a sample: the scenario still loads all 131 from the cache alone.
        mirror.stop()
        calls_before = judge.count()
        second = helm_tool("helm-run", *args, "-m", "10", cwd=tmp_path, env=env)
        assert "131 instances from 429 notes" in second
        assert len(request_states(run)) == 10
        assert judge.count() == calls_before, "a re-run must replay judge calls from HELM's cache"

    assert files_containing(tmp_path / "benchmark_output", SECRET) == []
    assert files_containing(tmp_path / "prod_env", SECRET) == []
    assert SECRET not in first + second


def test_dry_run_needs_no_judge_and_no_credentials(synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    """`--dry-run` builds everything without credentials and without contacting the (absent) judge."""
    entry = f"{P}:model=simple/model1,judges=nobody,judge_base_url=http://127.0.0.1:9/v1"
    env = user_env(**synthetic_notes.env())  # the notes from a plain directory
    helm_tool("helm-run", "--run-entries", entry, "--suite", "dry", "-m", "2", "--dry-run", cwd=tmp_path, env=env)
    states = request_states(run_dir(tmp_path / "benchmark_output", "dry"))
    assert len(states) == 2 and all(not s.get("annotations") for s in states)


def test_panel_of_misbehaving_judges_is_recorded_judge_by_judge(mirror: NoteMirror, tmp_path: Path) -> None:
    """Each judge's outcome is recorded as what it was: a failure is never a score, and the run finishes
    because the steady judges scored every note. Faults of real servers: a 500 to json_schema (llama.cpp),
    a template echo, a reply cut off by max_tokens, a hung judge, an unparseable reply a repair turn fixes."""
    fixed = {"accuracy": 4, "completeness": 3, "clarity": 5}
    panel = {
        "steady": Behaviour("steady", fixed),
        "prose_fence": Behaviour("prose_fence", fixed),
        "nonsense": Behaviour("nonsense"),
        "out_of_range": Behaviour("out_of_range"),
        "flaky": Behaviour("flaky", fixed),
        "slow": Behaviour("slow", fixed),
        "partial": Behaviour("partial", fixed),
        "quoter": Behaviour("quoter", {"accuracy": 2, "completeness": 2, "clarity": 2}),
        "schema_refuser": Behaviour("schema_refuser", fixed),
        "echo": Behaviour("echo"),
        "cut_off": Behaviour("cut_off", fixed),
        "repairable": Behaviour("repairable", fixed),
    }
    # cut_below beyond any max_tokens the annotator asks for: cut_off's every reply is cut off.
    with JudgeServer(panel, hold_seconds=30, cut_below=10**6) as judge:
        entry = f"{P}:model=simple/model1,judges={'+'.join(panel)},judge_base_url={judge.base_url},judge_timeout=1"
        env = user_env(**mirror.env)
        output = helm_tool("helm-run", "--run-entries", entry, "--suite", "panel", "-m", "2", cwd=tmp_path, env=env)
        flaky_calls = judge.count("flaky")

    run = run_dir(tmp_path / "benchmark_output", "panel")
    states = request_states(run)
    assert len(states) == 2
    failed = ["nonsense", "out_of_range", "slow", "echo", "cut_off"]
    for state in states:
        record = state["annotations"][P]
        scores = {name: {d: record[name][d]["score"] for d in fixed} for name in panel}
        for ok in ("steady", "prose_fence", "flaky", "schema_refuser", "repairable"):
            assert record[ok]["status"] == "ok" and scores[ok] == fixed, ok
        assert record["schema_refuser"]["structured"] == "json_object"
        assert scores["quoter"] == {"accuracy": 2, "completeness": 2, "clarity": 2}, "the planted 5s were read"
        assert record["partial"]["status"] == "ok" and scores["partial"] == {**fixed, "clarity": None}
        assert "clarity" in record["partial"]["invalid"]
        for name in failed:
            assert record[name]["status"] == "failed" and set(scores[name].values()) == {None}, name
        assert record["nonsense"]["failure"].startswith("no verdict in reply") and record["nonsense"]["raw_reply"]
        assert record["out_of_range"]["failure"].startswith("no valid dimension")
        assert set(record["out_of_range"]["invalid"]) == {"accuracy", "completeness", "clarity"}
        assert record["echo"]["failure"] == "no valid dimension"
        assert record["cut_off"]["failure"] == "reply cut off (max_tokens)"
        assert record["slow"]["failure"].startswith(("timed out", "judge unavailable"))
        assert sorted(record["failed_judges"]) == sorted(failed)
    assert flaky_calls == 2 * len(states), "flaky fails once per note, then the retry succeeds"
    assert "judgeApiKey" not in output, "HELM's key warning is for annotators that take an api_key; ours does not"

    # Seven judges parsed on each note: steady, prose_fence, flaky, schema_refuser, repairable (12/15 each),
    # partial (7/10), quoter (6/15).
    expected = (5 * 12 / 15 + (4 + 3) / 10 + 6 / 15) / 7
    assert stat(run, f"{P}_reward")["mean"] == pytest.approx(expected)
    assert stat(run, f"{P}_judge_failures")["mean"] == len(failed)
    assert stat(run, f"{P}_unjudged")["mean"] == 0


def test_leaderboard_web_view_and_report_from_real_binaries(mirror: NoteMirror, tmp_path: Path) -> None:
    """helm-run → helm-summarize (our schema, strict) → helm-server → Chromium, and the report, agree
    with rewards computed here from the judges' scripted scores; one judge fails on some notes."""
    require_chromium()

    a_scores = {"accuracy": 4, "completeness": 3, "clarity": 5}
    b_scores = {"accuracy": 2, "completeness": 2, "clarity": 3}
    marker = "Medical Specialty:Obstetrics / Gynecology"
    panel = {"a": Behaviour("steady", a_scores), "b": Behaviour("fail_some", b_scores, fail_marker=marker)}
    with JudgeServer(panel) as judge:
        # judge_max_wait: b answers 500 on some notes, and a 5xx is retried until then (default 15 min).
        entry = f"{P}:model=simple/model1,judges=a+b,judge_base_url={judge.base_url},judge_max_wait=2"
        env = user_env(**mirror.env)
        helm_tool("helm-run", "--run-entries", entry, "--suite", "web", "-m", "5", cwd=tmp_path, env=env)
    out = tmp_path / "benchmark_output"
    # Our ScenarioMetadata and MetricMetadata let HELM build a schema for any judge panel by itself...
    helm_tool("helm-summarize", "--suite", "web", "--auto-generate-schema", cwd=tmp_path, env=env)
    auto = json.loads((out / "runs" / "web" / "schema.json").read_text())
    (group,) = [g for g in auto["run_groups"] if g["name"] == P]
    assert group["environment"] == {"main_name": f"{P}_reward", "main_split": "test"}
    shown = {m["name"]: m["display_name"] for m in auto["metrics"]}
    assert shown[f"{P}_reward"].startswith("Reward") and f"{P}_reward_b" in shown
    # ...and the schema we ship passes HELM's strict validation.
    helm_tool(
        "helm-summarize", "--suite", "web", "--schema-path", SCHEMA_PATH, "--schema-validation", "error",
        cwd=tmp_path, env=env,
    )  # fmt: skip

    # Expected numbers, from the scripted scores and which sampled notes carry the failure marker.
    run = run_dir(out, "web")
    states = request_states(run)
    failing = [marker in s["instance"]["input"]["text"] for s in states]
    assert len(states) == 5 and 0 < sum(failing) < 5, "the sample must have notes where b fails and where it works"
    reward_a, reward_b = 12 / 15, 7 / 15
    per_note = [reward_a if f else (reward_a + reward_b) / 2 for f in failing]
    expected_reward = sum(per_note) / 5
    expected_accuracy = sum(4 if f else 3 for f in failing) / 5
    assert stat(run, f"{P}_reward")["mean"] == pytest.approx(expected_reward)
    assert stat(run, f"{P}_judge_accuracy")["mean"] == pytest.approx(expected_accuracy)
    assert stat(run, f"{P}_judge_failures")["mean"] == pytest.approx(sum(failing) / 5)
    assert stat(run, f"{P}_reward_a")["mean"] == pytest.approx(reward_a)
    assert stat(run, f"{P}_reward_b")["mean"] == pytest.approx(reward_b)
    for state, fails in zip(states, failing, strict=True):
        record = state["annotations"][P]
        assert record["failed_judges"] == (["b"] if fails else [])

    # The summarizer's group table shows the reward with the three dimensions beside it.
    (table,) = json.loads((out / "runs" / "web" / "groups" / f"{P}.json").read_text())
    headers = [h["value"] for h in table["header"]]
    assert headers[:5] == ["Model", "Reward", "Accuracy", "Completeness", "Clarity"]
    (row,) = table["rows"]
    assert row[1]["value"] == pytest.approx(expected_reward)
    assert row[2]["value"] == pytest.approx(expected_accuracy)

    # The report on the same suite.
    report = tmp_path / "report"
    helm_tool(
        "helm-mtsamples-report", "--suite", "web", "--out", str(report), "--bootstrap", "200", cwd=tmp_path, env=env
    )
    board = (report / "leaderboard.csv").read_text().splitlines()
    header, first = board[0].split(","), board[1].split(",")
    assert float(first[header.index("reward")]) == pytest.approx(expected_reward)
    assert (report / "leaderboard.png").stat().st_size > 10_000
    review = page_data((report / "report.html").read_text(encoding="utf-8"))  # the review page, from real run files
    assert len(review.notes) == 5 and sum(len(answer["judges"]) for answer in review.answers) == 5 * 2
    reference = states[0]["instance"]["references"][0]["output"]["text"]
    folded = fold(reference)  # a long reference shows its first lines, the rest folded behind them
    assert folded.rest and (folded.head, folded.rest) in {(note["ref_head"], note["ref_rest"]) for note in review.notes}

    # helm-server binds every interface by HELM's design; we only ever reach it at 127.0.0.1.
    port = free_port()
    server = subprocess.Popen(
        [str(BIN / "helm-server"), "--suite", "web", "-p", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/"
        wait_until_serving(base, server)
        _check_pages(base, run.name, expected_reward, tmp_path)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _check_pages(base: str, run_name: str, expected_reward: float, shots: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(base + "#/leaderboard")
            expect(page.get_by_text("Leaderboard: MTSamples Procedures")).to_be_visible(timeout=30_000)
            expect(page.get_by_role("table").first).to_contain_text(f"{expected_reward:.3f}".rstrip("0"))
            expect(page.get_by_role("table").first).to_contain_text("Clarity")
            page.screenshot(path=str(shots / "leaderboard.png"))

            if check_distribution().is_medhelm:
                return  # medhelm 0.8's UI has no per-note annotation view: the review page is (README)
            page.goto(base + "#/runs/" + urllib.parse.quote(run_name, safe=""))
            toggle = page.get_by_text(f"View {P} annotations").first
            toggle.click(timeout=30_000)
            details = page.locator("details").filter(has_text=f"View {P} annotations").first
            expect(details).to_contain_text("a.accuracy.explanation")
            expect(details).to_contain_text("accuracy judged")
            expect(details).to_contain_text("a.clarity.score")
            details.screenshot(path=str(shots / "instance.png"))
        finally:
            browser.close()
    keep = os.environ.get("MTSAMPLES_E2E_SCREENSHOTS")
    if keep:  # how the README's screenshots were made
        for name in ("leaderboard.png", "instance.png"):
            if (shots / name).exists():
                shutil.copy(shots / name, Path(keep) / name)
