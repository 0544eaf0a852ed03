"""``inspect eval`` of our task against a judge server the test made (a ``JudgeServer`` or a subclass of it), and
what the Inspect door's tests read of its log.

Why a helper beside eval_command.py: these tests give the eval a server of their own (one-slot, or answering as
tests/servers/judge.py has no behaviour for) and read the same things of each log (a note's score, each judge's
failure, the metrics)."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.scorer import Score

from tests.doors.inspect.eval_command import eval_command, eval_env
from tests.servers.judge import JudgeServer
from tests.servers.model import ModelServer
from tests.synthetic_notes import SyntheticNotes


def served_eval(
    notes: SyntheticNotes, tmp: Path, server: JudgeServer, *task_args: str, limit: int = 3
) -> tuple[subprocess.CompletedProcess[str], EvalLog | None]:
    """``inspect eval`` on the first ``limit`` notes, every judge ``server`` serves on its ``judge_base_url``, then
    ``task_args`` (later options win: ``--display plain`` overrides the helper's ``none``); the command and its log.
    The server is started here and stopped before returning."""
    with notes.mirror() as mirror, ModelServer() as model, server:
        env = eval_env(mirror.env, tmp, model.base_url)
        command = eval_command(
            tmp, "--limit", str(limit), "-T", f"judges={'+'.join(server.judges)}",
            "-T", f"judge_base_url={server.base_url}", *task_args,
        )  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    logs = list((tmp / "logs").glob("*.eval"))
    return done, read_eval_log(str(logs[0])) if len(logs) == 1 else None


def panel_score(sample: EvalSample) -> Score:
    """The sample's score from our panel (the scorer is named after its function)."""
    assert sample.scores is not None
    return sample.scores["panel_scorer"]


def failures(sample: EvalSample) -> dict[str, str]:
    """Each failed judge's failure on the sample's note."""
    return dict((panel_score(sample).metadata or {})["failures"])


def recorded(sample: EvalSample) -> dict[str, Any]:
    """Each judge's entry in the note's record (its scores, explanations, failure, raw reply)."""
    return dict((panel_score(sample).metadata or {})["judges"])


def metric_values(log: EvalLog) -> dict[tuple[str, str], float]:
    """The eval's metrics by (score key, metric name): ``("reward", "mean")``, ``("failed_share:a", "mean")``."""
    assert log.results is not None
    return {(s.name, m.name): m.value for s in log.results.scores for m in s.metrics.values()}


def judged_everywhere(log: EvalLog, judges: Sequence[str]) -> bool:
    """Whether every note has a verdict from each of ``judges``."""
    assert log.samples
    return all(not (set(failures(s)) & set(judges)) for s in log.samples)
