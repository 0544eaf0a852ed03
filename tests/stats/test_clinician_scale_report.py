"""The clinician scale through `helm-mtsamples-report`: the new columns and report.md's section with --ratings, and
without --ratings every CSV and report.md byte for byte what the report wrote before the clinician scale existed.

The golden hashes were computed from the code at commit b2100af (before issue 44): `git archive b2100af` into a
scratch directory, then the same suite (tests/report/suites.build_main_suite) and the same arguments as
`_plain_report` below, run with that tree first on PYTHONPATH; each file's sha256 is pinned here.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.ratings import COLUMNS
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from tests.report.suites import Note, Run, build_main_suite, build_suite, instance_id, ok, run_name

BEFORE_ISSUE_44 = {
    "by_specialty.csv": "14a8874dbbfeed32bda4bc678d422616dd3d961c28f7b63c8fcc46e79e603cc6",
    "instances.csv": "eb4225eb289040dfa28d1b4f17dea574be1dc59d4dceafb75145cdef7b745a47",
    "judge_self_preference.csv": "11d4b9922af5b22713d53703331cdc5e3b951e2d41540bea40ff21e6ede02b7e",
    "judge_versions.csv": "6f54f2f380ed6dc60e21e4100fc80c5b8f31382862dace462b0f7daa6341846c",
    "leaderboard.csv": "fb5c3b308b3e387b34462ab5b0c4e7608d96af909cdc03bd667c5d2abb73f1ac",
    "pairwise.csv": "aa6b2e986ffcbc3c4cd797c37cd82624b2525fa17fec1239a4bdcbcefa7bf962",
    "report.md": "eb092860ccc36fc98678176e86c7641cdbf7fdc606705229bb46919891ac945f",
}


def _run(args: list[str]) -> None:
    stderr = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        assert main(args) == 0, stderr.getvalue()


def test_without_ratings_every_table_and_report_md_is_byte_identical_to_before(tmp_path: Path) -> None:
    build_main_suite(tmp_path / "bench")
    out = tmp_path / "report"
    _run(["--suite", "v1", "-o", str(tmp_path / "bench"), "--out", str(out), "--bootstrap", "400", "--seed", "0"])
    found = {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in BEFORE_ISSUE_44}
    assert found == BEFORE_ISSUE_44
    assert "clinician" not in (out / "leaderboard.csv").read_text() + (out / "pairwise.csv").read_text()


# A rated suite: three models, 24 notes, two judges kinder than the clinicians by one score point. Models A and B
# get 12 rated answers each (above the floor of 10), C only 6 (below it).
NOTES = [Note(f"n{i}.txt", ("Orthopedic", "Neurosurgery")[i % 2]) for i in range(24)]
QUALITY = {"acme/a": 4, "acme/b": 3, "acme/c": 3}
RATED = {"acme/a": 12, "acme/b": 12, "acme/c": 6}


def clinician_score(model: str, i: int) -> int:
    return QUALITY[model] - (i % 3 == 0) + (i % 5 == 0)


def judge_score(model: str, i: int, judge: int, extra: int = 0) -> int:
    return min(5, clinician_score(model, i) + 1 + extra - (judge == 1 and i % 4 == 0))


def same(score: int) -> dict[str, object]:
    """A judge record with one score on every dimension."""
    return ok(score, score, score)


def probability(i: int) -> float:
    """A recorded inclusion probability: the first six rated answers of a model drawn at 0.2, the rest at 0.6."""
    return 0.2 if i < 6 else 0.6


def build_rated(tmp_path: Path, recorded: bool = False, kinder_to: str = "") -> tuple[Path, Path]:
    """The suite and its ratings file; `kinder_to`: a model the judges score one point kinder still."""

    def verdicts(model: str, i: int) -> dict[str, object]:
        extra = int(model == kinder_to)
        return {"judge-one": same(judge_score(model, i, 0, extra)), "judge-two": same(judge_score(model, i, 1, extra))}

    runs = [Run(model, ["judge-one", "judge-two"], {n.filename: verdicts(model, i) for i, n in enumerate(NOTES)})
            for model in QUALITY]  # fmt: skip
    output = tmp_path / "bench"
    build_suite(output, runs, NOTES)
    path = tmp_path / "ratings.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(COLUMNS))
        writer.writeheader()
        for model, n in RATED.items():
            for i in range(n):
                scores = dict.fromkeys(("accuracy", "completeness", "clarity"), clinician_score(model, i))
                run = run_name(runs[0]).replace("acme/a", model).replace("/", "_")
                pi = {"inclusion_probability": probability(i)} if recorded else {}
                writer.writerow({"run": run, "instance_id": instance_id(NOTES[i]), "model": model, "rater": "alice",
                                 **scores, **pi})  # fmt: skip
    return output, path


def independent(model: str) -> float:
    """PPI++ on the same numbers, written from the formula: lambda = cov(y, f) / var(f) on the rated answers
    (clipped to [0, 1]), then lambda * mean over all judged answers + mean over rated ones of (y - lambda f)."""
    f_all = np.array([(judge_score(model, i, 0) + judge_score(model, i, 1)) / 10 for i in range(len(NOTES))])
    y = np.array([clinician_score(model, i) / 5 for i in range(RATED[model])])
    f = f_all[: RATED[model]]
    lam = float(np.clip(np.cov(y, f)[0, 1] / np.var(f, ddof=1), 0, 1))
    return lam * f_all.mean() + float(np.mean(y - lam * f))


@pytest.fixture(scope="module")
def rated_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("rated")
    output, ratings = build_rated(tmp_path)
    out = tmp_path / "report"
    _run(["--suite", "v1", "-o", str(output), "--out", str(out), "--bootstrap", "200", "--ratings", str(ratings)])
    return out


def test_the_leaderboard_gains_the_clinician_columns_beside_reward(rated_report: Path) -> None:
    board = pd.read_csv(rated_report / "leaderboard.csv").set_index("model")
    columns = list(board.columns)
    at = columns.index("reward_ci_high")
    assert columns[at + 1 : at + 6] == ["clinician_reward", "clinician_ci_low", "clinician_ci_high", "n_rated",
                                        "calibration"]  # fmt: skip
    for model in ("acme/a", "acme/b"):
        row = board.loc[model]
        assert row["clinician_reward"] == pytest.approx(independent(model), abs=1e-9)
        assert row["clinician_ci_low"] < row["clinician_reward"] < row["clinician_ci_high"]
        assert row["n_rated"] == 12 and row["calibration"].startswith("ppi++ own ratings")
        # the judges are kinder by a score point (0.2): the clinician scale sits below the judges' reward
        assert row["clinician_reward"] < row["reward"] - 0.1
    low = board.loc["acme/c"]
    assert np.isnan(low["clinician_reward"]) and np.isnan(low["clinician_ci_low"]) and low["n_rated"] == 6
    needed = MINIMUMS.rated_for_clinician_scale
    assert low["calibration"] == f"none: 6 rated, {needed} needed (rate {needed - 6} more of its answers)"


def test_pairwise_gains_the_clinician_difference_and_its_verdict(rated_report: Path) -> None:
    pairs = pd.read_csv(rated_report / "pairwise.csv", keep_default_na=False, na_values=[""])
    assert list(pairs.columns[-4:]) == ["clinician_diff", "clinician_ci_low", "clinician_ci_high",
                                        "separated_clinician"]  # fmt: skip
    ab = pairs[(pairs["model_a"] == "acme/a") & (pairs["model_b"] == "acme/b")].iloc[0]
    assert ab["clinician_diff"] == pytest.approx(independent("acme/a") - independent("acme/b"), abs=1e-9)
    assert ab["clinician_ci_low"] < ab["clinician_diff"] < ab["clinician_ci_high"]
    assert ab["separated_clinician"] == ("yes" if ab["clinician_ci_low"] > 0 else "no")
    with_c = pairs[(pairs["model_a"] == "acme/c") | (pairs["model_b"] == "acme/c")]
    assert with_c["clinician_diff"].isna().all() and with_c["separated_clinician"].isna().all()


def test_report_md_shows_the_clinician_scale_with_its_interval_and_the_floor_line(rated_report: Path) -> None:
    text = (rated_report / "report.md").read_text()
    section = text.split("## Clinician scale", 1)[1].split("\n## ", 1)[0]
    assert "`clinician_reward` is each model's reward in clinicians' units" in section
    board = pd.read_csv(rated_report / "leaderboard.csv").set_index("model")
    a = board.loc["acme/a"]
    assert f"| {a['clinician_reward']:.3f} | [{a['clinician_ci_low']:.3f}, {a['clinician_ci_high']:.3f}] |" in section
    floor_line = "- **acme/c** (panel `judge-one+judge-two`): none: 6 rated, 10 needed (rate 4 more of its answers)."
    assert floor_line in section
    assert "no inclusion probabilities recorded: taken as a uniform sample" in section


def weighted_independent(model: str) -> tuple[float, float]:
    """docs/ratings.md's formula with weights w = 1 / pi, written out: lambda minimises
    sum (1 - pi) w^2 (e_y - lambda e_f)^2 (e: centred at the weighted means), clipped to [0, 1]; the estimate is
    lambda * mean over all judged answers (f) + sum w (y - lambda f) / sum w. Also the Hajek mean of y."""
    f_all = np.array([(judge_score(model, i, 0) + judge_score(model, i, 1)) / 10 for i in range(len(NOTES))])
    n = RATED[model]
    y = np.array([clinician_score(model, i) / 5 for i in range(n)])
    f = f_all[:n]
    pi = np.array([probability(i) for i in range(n)])
    w = 1 / pi
    ey, ef = y - np.average(y, weights=w), f - np.average(f, weights=w)
    a = (1 - pi) * w**2
    lam = float(np.clip(np.sum(a * ey * ef) / np.sum(a * ef**2), 0, 1))
    return lam * f_all.mean() + float(np.average(y - lam * f, weights=w)), float(np.average(y, weights=w))


def test_recorded_inclusion_probabilities_reach_the_estimate_and_human_reward(tmp_path: Path) -> None:
    """A ratings.csv with `inclusion_probability` (as the rating mode's Export writes it) through the command line:
    each rating weighted by 1 / its probability, in clinician_reward and in human_reward, and no "uniform" caveat."""
    output, ratings = build_rated(tmp_path, recorded=True)
    out = tmp_path / "report"
    _run(["--suite", "v1", "-o", str(output), "--out", str(out), "--bootstrap", "200", "--ratings", str(ratings)])
    board = pd.read_csv(out / "leaderboard.csv").set_index("model")
    for model in ("acme/a", "acme/b"):
        clinician, human = weighted_independent(model)
        assert board.loc[model, "clinician_reward"] == pytest.approx(clinician, abs=1e-9)
        assert board.loc[model, "human_reward"] == pytest.approx(human, abs=1e-9)
        assert board.loc[model, "calibration"].startswith("ppi++ own ratings; transport not yet checkable")
        assert board.loc[model, "human_reward_ci_low"] < human < board.loc[model, "human_reward_ci_high"]
    assert board.loc["acme/a", "clinician_reward"] != pytest.approx(independent("acme/a"), abs=1e-6)


def test_a_model_the_judges_favour_is_named_in_a_warning_atop_report_md(tmp_path: Path) -> None:
    output, ratings = build_rated(tmp_path, kinder_to="acme/b")
    out = tmp_path / "report"
    _run(["--suite", "v1", "-o", str(output), "--out", str(out), "--bootstrap", "200", "--ratings", str(ratings)])
    board = pd.read_csv(out / "leaderboard.csv").set_index("model")
    assert "judges err differently on this model" in board.loc["acme/b", "calibration"]
    assert "judges err differently" not in board.loc["acme/a", "calibration"]
    top = (out / "report.md").read_text().split("## Leaderboard", 1)[0]
    assert "> WARNING: acme/b under panel judge-one+judge-two: judges err differently on this model" in top
