"""judge_dropout.csv and report.md's judge-dropout line through `helm-mtsamples-report` (report/cli.main): written
for a panel of three or more judges, never for one of one or two (those suites write what they wrote before)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.report.dropout_render import dropout_markdown
from tests.report.reports import run_report
from tests.report.suites import NOTES, Run, build_suite, ok, read, row

JUDGES = ["judge-one", "judge-two", "judge-three"]
PANEL = "+".join(JUDGES)
BASE = {"acme/a": 5, "acme/b": 4, "acme/c": 2}
"""Each model's score from judges who agree; the scores of the last two dimensions vary by note."""


def verdict(model: str, note: int, judge: str, score: int) -> dict[str, Any]:
    """A verdict in the judge's own words on this answer (one verdict on many answers would be a blind judge's)."""
    record = ok(score, max(1, score - note % 2), score)
    record["accuracy"]["explanation"] = f"{judge} on {model}, note {note}"
    return record


def dropout_suite(output: Path, scrambled: bool) -> Path:
    """Three models under three judges on the nine notes; when ``scrambled``, judge-three scores acme/a 1 on every
    note: the full panel then ranks acme/b first, and without judge-three acme/a is first again."""

    def score(model: str, judge: str) -> int:
        return 1 if scrambled and judge == "judge-three" and model == "acme/a" else BASE[model]

    runs = [
        Run(
            model,
            JUDGES,
            {n.filename: {j: verdict(model, k, j, score(model, j)) for j in JUDGES} for k, n in enumerate(NOTES)},
        )
        for model in BASE
    ]
    build_suite(output, runs)
    assert run_report(output, output / "report") == 0
    return output / "report"


@pytest.fixture(scope="module")
def scrambled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dropout_suite(tmp_path_factory.mktemp("scrambled"), scrambled=True)


def test_a_three_judge_panel_writes_each_models_reward_and_rank_without_each_judge(scrambled: Path) -> None:
    table = read(scrambled, "judge_dropout")
    assert list(table["judge_dropped"].unique()) == JUDGES and set(table["panel"]) == {PANEL}
    a = row(table, judge_dropped="judge-three", model="acme/a")
    board = read(scrambled, "leaderboard")
    assert a["reward"] == pytest.approx(row(board, model="acme/a")["reward"])  # the full panel's is the leaderboard's
    assert a["rank"] == 2 and a["rank_without"] == 1
    assert a["reward_without"] > a["reward"]
    three = table[table["judge_dropped"] == "judge-three"].iloc[0]
    assert three["tau"] == pytest.approx(1 / 3)  # b > a > c against a > b > c: one pair of three reversed
    one = table[table["judge_dropped"] == "judge-one"].iloc[0]
    assert one["tau"] == 1 and one["n_tau_notes"] == len(NOTES) and one["n_tau_models"] == 3


def test_report_md_names_the_judge_the_ranking_depends_on(scrambled: Path) -> None:
    text = (scrambled / "report.md").read_text(encoding="utf-8")
    assert "**Judge dropout**" in text
    line = next(line for line in text.splitlines() if line.startswith(f"- Panel {PANEL}: the ranking depends"))
    assert "judge judge-three" in line and "tau 0.33" in line and "acme/a 2 -> 1" in line


def test_a_panel_of_agreeing_judges_holds(tmp_path: Path) -> None:
    text = (dropout_suite(tmp_path, scrambled=False) / "report.md").read_text(encoding="utf-8")
    assert f"- Panel {PANEL}: without any one judge the ranking holds: tau >= 0.8 (lowest: without judge" in text
    assert "tau 1.00 [1.00, 1.00]" in text


def test_a_three_judge_panel_of_one_model_writes_the_rewards_and_says_there_is_no_ranking(
    three_judge_page: Path,
) -> None:
    report = three_judge_page.parent
    table = pd.read_csv(report / "judge_dropout.csv")
    assert len(table) == 3 * 2  # acme/long and the control, without each of three judges
    assert table["tau"].isna().all()
    assert "fewer than two models under test, no ranking to compare" in (report / "report.md").read_text("utf-8")


def test_panels_of_one_or_two_judges_write_no_dropout(main_report: tuple[Path, str], one_judge_page: Path) -> None:
    for report in (main_report[0], one_judge_page.parent):
        assert not (report / "judge_dropout.csv").exists()
        assert "Judge dropout" not in (report / "report.md").read_text(encoding="utf-8")


def test_a_judge_without_whom_there_is_no_tau_is_not_counted_as_holding() -> None:
    """Without judge c no note is judged for every model: the line says the ranking holds without a or b only."""
    rows = []
    for judge, tau in (("a", 1.0), ("b", 0.9), ("c", float("nan"))):
        for model, rank in (("m1", 1), ("m2", 2)):
            n_notes, n_models = (0, 0) if judge == "c" else (3, 2)
            rows.append({"panel": "a+b+c", "judge_dropped": judge, "model": model, "rank": rank,
                         "rank_without": rank, "tau": tau, "tau_ci_low": float("nan"), "tau_ci_high": float("nan"),
                         "n_tau_notes": n_notes, "n_tau_models": n_models})  # fmt: skip
    line = dropout_markdown(pd.DataFrame(rows))[2]
    assert line == (
        "- Panel a+b+c: without judge a or b the ranking holds: tau >= 0.8 (lowest: without judge b, tau 0.90 (too "
        "few notes (3) to tell)); without judge c, no tau (no note judged for every model, or all tied)."
    )
