"""Time per note of each front door on the same loopback servers, side by side, in one run: HELM's ``helm-run``,
``inspect eval`` and the verifiers environment (``vf-eval``), each a real process in its own venv.

One loopback model under test (tests/servers/model.py) and one loopback judge (tests/servers/judge.py, ``steady``,
``--latency`` seconds per call, as a hosted judge takes) serve all three; each door judges ``--notes`` notes, then
twice as many, with a one-judge panel, from a fresh directory each time. A door's time per note is the difference of
the two wall times over the notes added (its start-up, the same in both, drops out); its start-up is what remains
of the first. HELM runs in this script's venv; the others in ``.venv-inspect`` and
``.venv-verifiers`` under ``--venvs`` (the checkout by default, where the README's set-up lines put them); a door
whose venv is missing is named and skipped. The goal: no door over 2x HELM's time per note.

    python benchmarks/bench_doors.py [--notes 30] [--latency 0.2] [--venvs DIR] [--smallest]

The notes come from where each door finds them: ``MTSAMPLES_PROCEDURES_BASE_URL`` (and
``MTSAMPLES_PROCEDURES_MANIFEST``) when set, else ../shared or GitHub.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks import parse_args  # noqa: E402
from tests.e2e.helm_tools import RUN_TOOL, register_loopback_model  # noqa: E402
from tests.servers.judge import JudgeServer  # noqa: E402
from tests.servers.model import ModelServer  # noqa: E402

JUDGE = "bench-judge"
GOAL = 2.0
"""The most a door's time per note may be, as a multiple of HELM's."""
KEY_VAR = "BENCH_DOORS_MODEL_KEY"


@dataclass
class Door:
    name: str
    seconds: float | None = None  # None: not run
    notes: int = 0  # notes the model under test was asked about
    judged: int = 0  # judge calls it made
    why_not: str = ""
    more: Door | None = None  # the same door on twice the notes


def _run(command: list[str], cwd: Path, env: dict[str, str], what: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=3600, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise SystemExit(f"bench_doors: {what} failed (exit {done.returncode}): {last}")
    return seconds


def _measured(door: Door, model: ModelServer, judge: JudgeServer, run: Callable[[], float]) -> Door:
    """The door's wall time (``run``) and what it asked of the servers while it ran."""
    before = judge.count(JUDGE)
    door.seconds = run()
    door.notes, door.judged = len(model.prompts), judge.count(JUDGE) - before
    model.prompts.clear()
    return door


def helm(notes: int, venvs: Path, model: ModelServer, judge: JudgeServer, work: Path, env: dict[str, str]) -> Door:
    root = work
    name = register_loopback_model(root / "prod_env", model.base_url, "bench")
    entry = f"mtsamples_procedures:model={name},judges={JUDGE},judge_base_url={judge.base_url}"
    command = [str(Path(sys.executable).with_name(RUN_TOOL)), "--run-entries", entry, "--suite", "bench"]
    command += ["-m", str(notes), "--local-path", "prod_env"]
    return _measured(Door("helm-run"), model, judge, lambda: _run(command, root, env, "helm-run"))


def inspect(notes: int, venvs: Path, model: ModelServer, judge: JudgeServer, work: Path, env: dict[str, str]) -> Door:
    tool = venvs / ".venv-inspect" / "bin" / "inspect"
    if not tool.is_file():
        return Door("inspect eval", why_not=f"skipped: no {tool} (README, Run the tests, sets it up)")
    root = work
    root.mkdir()
    command = [str(tool), "eval", "helm_mtsamples_ext/mtsamples_procedures", "--model", "openai-api/loop/bench"]
    command += ["--limit", str(notes), "--display", "none", "--log-dir", "logs", "-T", f"judges={JUDGE}"]
    command += ["-T", f"judge_base_url={judge.base_url}"]
    door_env = {**env, "LOOP_BASE_URL": model.base_url, "LOOP_API_KEY": "EMPTY"}
    return _measured(Door("inspect eval"), model, judge, lambda: _run(command, root, door_env, "inspect eval"))


def verifiers(notes: int, venvs: Path, model: ModelServer, judge: JudgeServer, work: Path, env: dict[str, str]) -> Door:
    tool = venvs / ".venv-verifiers" / "bin" / "vf-eval"
    if not tool.is_file():
        return Door("vf-eval", why_not=f"skipped: no {tool} (README, Run the tests, sets it up)")
    root = work
    root.mkdir()
    env_args = {"judge_model": [JUDGE], "judge_base_url": judge.base_url, "judge_api_key": "EMPTY"}
    command = [str(tool), "helm_mtsamples_ext.verifiers_env", "-m", "bench", "-b", model.base_url, "-k", KEY_VAR]
    command += ["-n", str(notes), "-r", "1", "-a", json.dumps(env_args)]
    door_env = {**env, KEY_VAR: "EMPTY"}
    return _measured(Door("vf-eval"), model, judge, lambda: _run(command, root, door_env, "vf-eval"))


def per_note(door: Door) -> float:
    """Seconds per note added, from the door's two runs (start-up drops out)."""
    assert door.seconds is not None and door.more is not None and door.more.seconds is not None
    return (door.more.seconds - door.seconds) / max(door.more.notes - door.notes, 1)


def report(doors: list[Door], notes: int, latency: float) -> None:
    print(f"{notes} then {2 * notes} notes per door, one judge answering in {latency:g} s per call")
    print(f"{'door':<14}{'notes':>7}{'judge calls':>12}{'wall s':>13}{'start-up s':>11}{'s / note':>10}{'vs HELM':>9}")
    base = doors[0]
    for door in doors:
        if door.seconds is None or door.more is None or door.more.seconds is None:
            print(f"{door.name:<14}{door.why_not}")
            continue
        each = per_note(door)
        ratio = each / per_note(base) if per_note(base) > 0 else float("inf")
        counts = f"{door.notes}+{door.more.notes}", f"{door.judged}+{door.more.judged}"
        walls = f"{door.seconds:.1f}, {door.more.seconds:.1f}"
        print(
            f"{door.name:<14}{counts[0]:>7}{counts[1]:>12}{walls:>13}{door.seconds - each * door.notes:>11.1f}"
            f"{each:>10.3f}{ratio:>8.2f}x"
        )
    ran = [d for d in doors[1:] if d.more is not None]
    if base.more is not None and ran and per_note(base) > 0:
        worst = max(per_note(d) for d in ran) / per_note(base)
        verdict = "meets" if worst <= GOAL else "misses"
        print(f"goal: no door over {GOAL:g}x HELM's time per note: {verdict} it (worst {worst:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=30, help="notes each door judges")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the judge takes per call")
    parser.add_argument("--venvs", type=Path, default=REPO, help="where .venv-inspect and .venv-verifiers are")
    args = parse_args(parser, notes=2, latency=0.0)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUDGE_"))}
    with tempfile.TemporaryDirectory(prefix="bench_doors_") as tmp:
        work = Path(tmp)
        env.setdefault("MTSAMPLES_PROCEDURES_CACHE_DIR", str(work / "notes"))
        judges = JudgeServer({JUDGE: "steady"}, latency=args.latency, max_lifetime=3600)
        with ModelServer(max_lifetime=3600) as model, judges as judge:
            doors = []
            for run in (helm, inspect, verifiers):
                door = run(args.notes, args.venvs, model, judge, work / f"{run.__name__}-1", env)
                if door.seconds is not None:
                    door.more = run(2 * args.notes, args.venvs, model, judge, work / f"{run.__name__}-2", env)
                doors.append(door)
    report(doors, args.notes, args.latency)


if __name__ == "__main__":
    main()
