"""Bad references through `helm-mtsamples-report --ratings` (report/cli.main): ratings that flag a note's reference
add flagged_references.csv and report.md's "Bad references" section; ratings without a flag (the column blank or 0,
or a file from before the column) change nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.report.ratings import COLUMNS
from tests.report.rated import JUDGE_ONE, JUDGE_TWO, MODEL, PANEL, RATINGS, build, report

FLAGS = {("alice", 2), ("bob", 2), ("alice", 5)}
"""(rater, note number) flagged: n2 by both raters who rated it, n5 by one of its three."""


def write(path: Path, run: str, flags: set[tuple[str, int]], column: bool = True) -> Path:
    header = list(COLUMNS) if column else [c for c in COLUMNS if c not in ("bad_reference", "inclusion_probability")]
    lines = [",".join(header)]
    for rater, by_note in RATINGS.items():
        for n, (a, c, k) in by_note.items():
            cells = [f'"{run}"', f"id_n{n}.txt", MODEL, rater, str(a), str(c), str(k), ""]
            cells += ["1" if (rater, n) in flags else "", ""] if column else []
            lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def note_reward(n: int) -> float:
    return float(np.mean([np.mean(JUDGE_ONE[n - 1]) / 5, np.mean(JUDGE_TWO[n - 1]) / 5]))


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("flagged")
    run = build(output)
    return report(output, "report", write(output / "ratings.csv", run, FLAGS))


def test_the_reward_without_the_flagged_notes_and_the_difference(flagged: Path) -> None:
    table = pd.read_csv(flagged / "flagged_references.csv")
    assert table[["panel", "model"]].values.tolist() == [[PANEL, MODEL]]
    found = table.iloc[0]
    every = [note_reward(n) for n in range(1, 9)]
    unflagged = [note_reward(n) for n in (1, 3, 4, 6, 7, 8)]
    assert found["reward"] == pytest.approx(np.mean(every))
    assert found["reward_unflagged"] == pytest.approx(np.mean(unflagged))
    assert found["difference"] == pytest.approx(np.mean(unflagged) - np.mean(every))
    assert (found["n_notes"], found["n_flagged_notes"], found["n_unflagged_notes"]) == (8, 2, 6)
    assert found["ci_low"] <= found["difference"] <= found["ci_high"]


def test_report_md_lists_the_flagged_notes(flagged: Path) -> None:
    text = (flagged / "report.md").read_text(encoding="utf-8")
    assert "## Bad references" in text and "Raters flagged 2 note(s)" in text
    assert "n2.txt (2 of 2 raters), n5.txt (1 of 3 raters)" in text


@pytest.mark.parametrize("column", [True, False], ids=["no-flag", "no-column"])
def test_ratings_without_a_flag_change_nothing(tmp_path: Path, column: bool) -> None:
    run = build(tmp_path)
    out = report(tmp_path, "report", write(tmp_path / "ratings.csv", run, set(), column=column))
    assert not (out / "flagged_references.csv").exists()
    assert "Bad references" not in (out / "report.md").read_text(encoding="utf-8")
