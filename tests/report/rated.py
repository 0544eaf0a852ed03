"""A hand-built rated suite for the agreement tests: one model, eight notes, two judges, three raters.

judge-one reaches equal rewards in different orders ((2,4,3) and (3,3,3) both average 0.6, one of them as
0.6000000000000001; (4,4,4) and (4,5,3) are 0.8 from either side): only rounding makes them tie. Raters:
alice rates all eight answers, bob n1-n6, carol n4-n8; alice and bob have the most answers in common (6).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pingouin

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.ratings import COLUMNS
from helm_mtsamples_ext.report.suite import load_suite
from tests.report.suites import NOTES, Run, build_suite, ok

MODEL = "acme/rated"
PANEL = "judge-one+judge-two"
JUDGE_ONE = [(2, 4, 3), (3, 3, 3), (4, 4, 4), (4, 5, 3), (2, 2, 2), (4, 1, 1), (5, 5, 5), (1, 1, 1)]
JUDGE_TWO = [(3, 3, 3), (4, 4, 4), (4, 4, 4), (5, 5, 5), (2, 2, 2), (3, 3, 3), (5, 5, 5), (2, 2, 2)]
Scores = tuple[int, int, int]
RATINGS: dict[str, dict[int, Scores]] = {  # rater -> {note number: scores}
    "alice": {1: (3, 3, 3), 2: (4, 3, 3), 3: (4, 4, 4), 4: (4, 4, 4), 5: (2, 2, 3), 6: (2, 2, 2), 7: (5, 5, 4),
              8: (1, 2, 1)},
    "bob": {1: (3, 3, 4), 2: (3, 3, 3), 3: (5, 4, 4), 4: (4, 4, 3), 5: (2, 2, 2), 6: (3, 2, 2)},
    "carol": {4: (5, 4, 4), 5: (2, 3, 2), 6: (2, 2, 2), 7: (5, 5, 5), 8: (2, 1, 1)},
}  # fmt: skip


def build(output: Path, judge_two: list[Scores] = JUDGE_TWO, notes: int = 8) -> str:
    """The suite under output/runs/v1; returns the run's name."""
    verdicts = {f"n{i + 1}.txt": {"judge-one": ok(*JUDGE_ONE[i]), "judge-two": ok(*judge_two[i])} for i in range(notes)}
    run = Run(MODEL, ["judge-one", "judge-two"], verdicts)
    build_suite(output, [run], NOTES[:notes])
    return str(load_suite(output / "runs" / "v1").instances["run"].iloc[0])


def write_ratings(path: Path, run: str, ratings: dict[str, dict[int, Scores]]) -> Path:
    lines = [",".join(COLUMNS)]
    for rater, by_note in ratings.items():
        lines += [f'"{run}",id_n{n}.txt,{MODEL},{rater},{a},{c},{k},' for n, (a, c, k) in by_note.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def report(output: Path, out: str, ratings: Path) -> Path:
    """Runs the report with the ratings; returns its directory."""
    stderr = io.StringIO()
    args = ["--suite", "v1", "-o", str(output), "--out", str(output / out), "--bootstrap", "200", "--ratings"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        assert main([*args, str(ratings)]) == 0, stderr.getvalue()
    return output / out


def human_rewards(ratings: dict[str, dict[int, Scores]]) -> dict[int, list[float]]:
    """Each note's rater rewards (mean of score/5), computed here independently of the report."""
    found: dict[int, list[float]] = {}
    for by_note in ratings.values():
        for note, scores in by_note.items():
            found.setdefault(note, []).append(float(np.mean([s / 5 for s in scores])))
    return found


def pingouin_icc(x: np.ndarray, y: np.ndarray, kind: str) -> float:
    """pingouin's intraclass_corr (MedHELM's script calls it) on two raters in long form.

    pingouin 0.7 names ICC3 / ICC3k (the names MedHELM's script uses) ICC(C,1) / ICC(C,k): consistency, two-way.
    """
    n = x.size
    long = pd.DataFrame({"answer": [*range(n), *range(n)], "rater": ["x"] * n + ["y"] * n, "score": [*x, *y]})
    table = pingouin.intraclass_corr(data=long, targets="answer", raters="rater", ratings="score")
    by_type = table.set_index("Type")["ICC"]
    names = {"ICC3": "ICC(C,1)", "ICC3k": "ICC(C,k)"}
    return float(by_type[kind] if kind in by_type.index else by_type[names[kind]])


def zscore(values: np.ndarray) -> np.ndarray:
    """Within-rater z-scores, as MedHELM's script takes them (sample sd; the ICC does not depend on which)."""
    return (values - values.mean()) / values.std(ddof=1)
