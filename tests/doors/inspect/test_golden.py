"""The golden set through the Inspect door: the real ``inspect eval helm_mtsamples_ext/mtsamples_procedures`` on
the ten synthetic notes, the golden model under test and the golden panel (tests/golden.py), must give the table's
rewards, verdicts and failure kinds, and the log ``inspect view`` reads must hold each judge's scores, explanations
and failures. One eval for the module: the note whose judge never answers costs ``judge_max_wait``."""

from __future__ import annotations

import json
import math
import re
import selectors
import shutil
import subprocess
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.scorer import Score
from playwright.sync_api import expect

from helm_mtsamples_ext.common.failure_kinds import KINDS, failure_kind
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings, reward_ci
from tests import golden
from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium
from tests.doors.inspect.eval_command import INSPECT, eval_command, eval_env
from tests.servers.judge import JudgeServer
from tests.servers.loopback import free_port
from tests.servers.model import ModelServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect


@dataclass(frozen=True)
class GoldenRun:
    log: EvalLog
    log_file: Path
    done: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def run(synthetic_notes: SyntheticNotes, tmp_path_factory: pytest.TempPathFactory) -> GoldenRun:
    tmp = tmp_path_factory.mktemp("golden")
    judges = dict.fromkeys(golden.JUDGES, "golden")
    hold = golden.JUDGE_MAX_WAIT + 15  # past any wait of the door's; released when the server stops
    with (
        synthetic_notes.mirror() as mirror,
        ModelServer(golden.answer_for) as model,
        JudgeServer(judges, hold_seconds=hold) as server,
    ):
        env = eval_env(mirror.env, tmp, model.base_url)
        command = eval_command(
            tmp, "-T", f"judges={'+'.join(golden.JUDGES)}", "-T", f"judge_base_url={server.base_url}",
            "-T", f"judge_timeout={golden.JUDGE_TIMEOUT:g}", "-T", f"judge_max_wait={golden.JUDGE_MAX_WAIT:g}",
            "-T", "max_unjudged=0.1",  # one note in ten is unjudged by design: the default 0 would fail the eval
        )  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    logs = list((tmp / "logs").glob("*.eval"))
    assert done.returncode == 0 and len(logs) == 1, done.stderr[-3000:]
    return GoldenRun(read_eval_log(str(logs[0])), logs[0], done)


def note_of(sample: EvalSample) -> str:
    name = golden.note_of(sample.input if isinstance(sample.input, str) else str(sample.metadata.get("note")))
    assert name is not None, sample.input
    return name


def panel_score(sample: EvalSample) -> Score:
    assert sample.scores is not None
    return sample.scores["panel_scorer"]


def by_note(run: GoldenRun) -> dict[str, EvalSample]:
    assert run.log.samples is not None
    return {note_of(s): s for s in run.log.samples}


def metadata(sample: EvalSample) -> dict[str, Any]:
    return cast(dict[str, Any], panel_score(sample).metadata or {})


def recorded_scores(entry: dict[str, Any]) -> tuple[int, int, int] | None:
    """A judge's recorded scores, None when it failed: then it holds none (it counts for nothing, never low)."""
    scores = tuple(entry[d]["score"] for d in DIMENSIONS)
    if entry["status"] == "failed":
        assert scores == (None, None, None), entry
        return None
    return cast(tuple[int, int, int], scores)


def test_the_eval_runs_every_golden_note(run: GoldenRun) -> None:
    assert run.log.status == "success", run.log.error
    assert sorted(by_note(run)) == sorted(golden.EXPECTED)


def test_each_reward_is_the_tables(run: GoldenRun) -> None:
    for name, sample in by_note(run).items():
        expected, score = golden.EXPECTED[name], panel_score(sample)
        assert isinstance(score.value, dict)
        reward = score.value["reward"]
        if expected.reward is None:  # missing, never 0: NaN is what Inspect's metrics skip
            assert math.isnan(reward) and score.reason == "unjudged", name
        else:
            assert reward == pytest.approx(expected.reward), name


def test_each_judges_scores_are_the_tables(run: GoldenRun) -> None:
    for name, sample in by_note(run).items():
        judges = metadata(sample)["judges"]
        assert {j: recorded_scores(e) for j, e in judges.items()} == golden.EXPECTED[name].scores, name


def test_each_failed_judges_failure_is_of_the_tables_kind(run: GoldenRun) -> None:
    for name, sample in by_note(run).items():
        failures = metadata(sample)["failures"]
        assert {j: failure_kind(f) for j, f in failures.items()} == golden.EXPECTED[name].failures, (name, failures)
        judges = metadata(sample)["judges"]  # each entry as the record writes it: the kind beside the text
        stored = {j: judges[j].get("failure_kind") for j in failures}
        assert stored == golden.EXPECTED[name].failures and set(stored.values()) <= set(KINDS), (name, stored)


def test_the_failures_per_judge_and_kind_are_the_tables(run: GoldenRun) -> None:
    counted: dict[str, Counter[str]] = {j: Counter() for j in golden.JUDGES}
    for sample in by_note(run).values():
        for judge, failure in metadata(sample)["failures"].items():
            counted[judge][failure_kind(failure)] += 1
    assert {j: dict(c) for j, c in counted.items()} == golden.FAILURE_COUNTS


def test_the_mean_reward_leaves_the_unjudged_note_out_and_has_its_interval(run: GoldenRun) -> None:
    assert run.log.results is not None
    metrics = {(s.name, m.name): m.value for s in run.log.results.scores for m in s.metrics.values()}
    assert metrics[("reward", "mean")] == pytest.approx(golden.MEAN_REWARD)
    low, high = metrics[("reward", "ci_low")], metrics[("reward", "ci_high")]
    assert 0.0 <= low < golden.MEAN_REWARD < high <= 1.0
    table = np.array([e.reward for e in golden.EXPECTED.values() if e.reward is not None])
    assert (low, high) == pytest.approx(reward_ci(table, BootstrapSettings()))  # the leaderboard's, on the 9 rewards
    assert [v for (name, _), v in metrics.items() if name == "unjudged"] == [pytest.approx(1 / 10)]


def test_the_timed_out_judge_was_bounded_by_judge_max_wait(run: GoldenRun) -> None:
    """The silent judge is given up at ``judge_max_wait``, retries included, as "timed out" naming both bounds. It
    holds each call ``judge_max_wait`` + 15 s and then answers 503: a door waiting past ``judge_max_wait`` would
    record "judge unavailable" (the table's kind check fails), one that crashed no failure at all."""
    bounds = f"judge_timeout={golden.JUDGE_TIMEOUT:g}s per attempt, judge_max_wait={golden.JUDGE_MAX_WAIT:g}s"
    timed_out = [
        failure
        for sample in by_note(run).values()
        for failure in metadata(sample)["failures"].values()
        if failure_kind(failure) == golden.TIMED_OUT
    ]
    assert len(timed_out) == golden.FAILURE_COUNTS["gold-b"][golden.TIMED_OUT]
    assert all(bounds in failure for failure in timed_out), timed_out


def test_each_score_holds_every_judges_scores_explanations_and_failure(run: GoldenRun) -> None:
    """What ``inspect view`` shows of a sample's score: its metadata (each judge's entry) and its explanation."""
    for name, sample in by_note(run).items():
        score, recorded = panel_score(sample), metadata(sample)
        assert score.explanation
        if not golden.EXPECTED[name].scores:
            assert recorded["empty_answer"] and score.explanation == "empty answer: reward 0"
            continue
        for judge in golden.JUDGES:
            entry, scores = recorded["judges"][judge], golden.EXPECTED[name].scores[judge]
            if scores is None:
                assert entry["failure"] == recorded["failures"][judge]
                assert f"{judge}: failed ({entry['failure']})" in score.explanation
            else:
                assert all(entry[d]["explanation"] for d in DIMENSIONS), (name, judge)
                said = ", ".join(f"{d} {s}" for d, s in zip(DIMENSIONS, scores, strict=True))
                assert f"{judge}: {said}" in score.explanation, (name, judge, score.explanation)


def test_inspect_view_bundles_the_log(run: GoldenRun, tmp_path: Path) -> None:
    """``inspect view bundle``: the static viewer, with the log it shows."""
    out = tmp_path / "bundle"
    command = [
        INSPECT, "view", "bundle", "--log-dir", str(run.log_file.parent), "--output-dir", str(out),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (out / "index.html").is_file()
    bundled = list(out.rglob("*.eval"))
    assert [p.name for p in bundled] == [run.log_file.name]
    with zipfile.ZipFile(bundled[0]) as log:
        names = log.namelist()
        sample = next(n for n in names if n.startswith("samples/"))
        assert "panel_scorer" in json.loads(log.read(sample))["scores"]


VIEW_START = 60.0
"""Seconds ``inspect view`` may take to say where it serves (a few on a loaded machine)."""


def serving_url(view: subprocess.Popen[str]) -> str:
    """The URL ``inspect view`` says it serves on (its ``Running on http://...`` line), read as it prints it: a
    line, not a poll, says the server listens. Bounded by VIEW_START."""
    assert view.stdout is not None
    deadline = time.monotonic() + VIEW_START
    with selectors.DefaultSelector() as selector:
        selector.register(view.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0 and selector.select(left):
            line = view.stdout.readline()
            assert line, "inspect view exited before serving"
            found = re.search(r"Running on (http://127\.0\.0\.1:\d+)", line)
            if found:
                return found.group(1) + "/"
    raise AssertionError(f"inspect view said nothing of serving within {VIEW_START:g} s")


def test_inspect_view_shows_each_judges_scores_and_failure_in_chromium(run: GoldenRun, tmp_path: Path) -> None:
    """The real ``inspect view`` on the golden log, opened in headless Chromium: the task page shows the reward's
    interval, and a note where one judge failed shows, on its scoring tab, the other judge's scores and the failure,
    by name."""
    from playwright.sync_api import sync_playwright

    require_chromium()
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(run.log_file, logs / run.log_file.name)
    port = free_port()
    name, sample = next((n, s) for n, s in by_note(run).items() if len(metadata(s)["failures"]) == 1)
    ((failed, failure),) = metadata(sample)["failures"].items()
    scored = next(j for j in golden.JUDGES if j != failed)
    scores = ", ".join(f"{d} {s}" for d, s in zip(DIMENSIONS, golden.EXPECTED[name].scores[scored] or (), strict=True))
    command = [INSPECT, "view", "--log-dir", str(logs), "--host", "127.0.0.1", "--port", str(port)]
    view = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = serving_url(view)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.goto(url)
            expect(page.get_by_text("ci_low").first).to_be_visible(timeout=30_000)
            page.goto(f"{url}#/tasks/{run.log_file.name}/samples/sample/{sample.id}/{sample.epoch}/scoring")
            expect(page.get_by_text(f"{scored}: {scores}", exact=False).first).to_be_visible(timeout=30_000)
            expect(page.get_by_text(f"{failed}: failed ({failure}", exact=False).first).to_be_visible()
            browser.close()
    finally:
        view.terminate()
        view.wait(timeout=30)
