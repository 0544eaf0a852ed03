"""`helm-mtsamples-report --plan-ratings` and `--rating-sample plan` (report/rating_plan.py, stats/rating_plan.py):
the CSV and the terminal lines, with and without ratings, and the plan's draw in report.html.

The suite (tests/report/plan_suite.py): three models x 40 notes x two judges; the ratings file rates 12 answers of
each model, clinicians' rewards following the judges' (so a correlation is seen and the plan uses it).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.stats.rating_plan import COLUMNS as PLAN_COLUMNS
from helm_mtsamples_ext.stats.rating_plan import PRIOR_RHO
from tests.report.plan_suite import MODELS, RATED_PER_MODEL, build_plan_suite
from tests.report.review_page import page_data


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(helm-run's output path, a ratings file of 12 answers per model)."""
    output = tmp_path_factory.mktemp("plan")
    return output, build_plan_suite(output)


def report(output: Path, out: Path, *extra: str) -> str:
    stdout = io.StringIO()
    args = ["--suite", "v1", "-o", str(output), "--out", str(out), "--bootstrap", "50", *extra]
    with contextlib.redirect_stdout(stdout):
        assert main(args) == 0
    return stdout.getvalue()


def test_without_ratings_the_plan_uses_the_stated_prior(suite: tuple[Path, Path], tmp_path: Path) -> None:
    output, _ = suite
    printed = report(output, tmp_path / "r", "--plan-ratings")
    plan = pd.read_csv(tmp_path / "r" / "rating_plan.csv")
    assert list(plan.columns) == PLAN_COLUMNS
    assert sorted(plan["model"]) == sorted(MODELS) and plan["n_rated"].eq(0).all() and plan["n_judged"].eq(40).all()
    assert plan["rho"].eq(PRIOR_RHO).all() and plan["rho_from"].str.startswith(f"prior rho = {PRIOR_RHO}").all()
    assert plan["target_halfwidth"].eq(0.05).all()
    assert "Rating plan (rating_plan.csv)" in printed and f"from prior rho = {PRIOR_RHO}" in printed
    for model in MODELS:
        assert f"  {model}: 0 of 40 rated, no interval yet; " in printed
    leaders = plan.loc[plan["pair_with"].notna()].set_index("model")
    assert sorted(leaders.index) == ["acme/second", "acme/top"]


def test_with_ratings_the_plan_uses_the_correlation_seen(suite: tuple[Path, Path], tmp_path: Path) -> None:
    output, ratings = suite
    printed = report(output, tmp_path / "r", "--plan-ratings", "--ratings", str(ratings), "--target-halfwidth", "0.08")
    plan = pd.read_csv(tmp_path / "r" / "rating_plan.csv").set_index("model")
    assert plan["n_rated"].eq(RATED_PER_MODEL).all() and plan["target_halfwidth"].eq(0.08).all()
    assert plan["rho_from"].eq(f"own ratings (n={RATED_PER_MODEL})").all()
    assert plan["rho"].between(0.3, 1.0).all() and plan["halfwidth_now"].notna().all()
    more = plan["more_for_target"].dropna()
    assert more.size and (more == (plan.loc[more.index, "rated_for_target"] - RATED_PER_MODEL).clip(lower=0)).all()
    assert "acme/top: 12 of 40 rated, +-" in printed and "+-0.08" in printed


def test_the_plans_sample_draws_each_models_quota_of_unrated_answers(
    suite: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, ratings = suite
    report(output, tmp_path / "r", "--rating-sample", "plan", "--ratings", str(ratings), "--target-halfwidth", "0.08")
    plan = pd.read_csv(tmp_path / "r" / "rating_plan.csv").set_index("model")  # written with the draw too
    assert f"--rating-sample plan: report.html offers {plan['quota'].sum()} unrated answers" in capsys.readouterr().err
    data = page_data((tmp_path / "r" / "report.html").read_text(encoding="utf-8"))
    notes = {note["name"]: note["id"] for note in data.notes}
    offered = pd.DataFrame(
        [(item["answer"]["model"], item["answer"]["run"], notes[item["answer"]["note"]],
          item["inclusion_probability"]) for item in data.rating],
        columns=["model", "run", "note_id", "pi"],
    )  # fmt: skip
    assert offered.groupby("model").size().reindex(plan.index, fill_value=0).tolist() == plan["quota"].tolist()
    assert plan["quota"].gt(0).any()
    rated = pd.read_csv(ratings)
    assert not set(zip(offered["run"], offered["note_id"], strict=True)) & set(
        zip(rated["run"], rated["instance_id"], strict=True)
    )
    assert offered["pi"].between(0, 1, inclusive="right").all()
    # each model's pis: its quota spread over its 28 unrated answers (a draw of k from 28 has pis summing to k)
    for model, rows in offered.groupby("model"):
        assert rows["pi"].max() <= 1 and rows["pi"].min() >= plan.loc[model, "quota"] / 28 / 5


def test_a_bad_target_is_refused(suite: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output, _ = suite
    with pytest.raises(SystemExit) as exited:
        main(["--suite", "v1", "-o", str(output), "--out", str(tmp_path / "r"), "--plan-ratings",
              "--target-halfwidth", "0"])  # fmt: skip
    assert exited.value.code == 2
    assert "--target-halfwidth: is a half-width between 0 and 1" in capsys.readouterr().err
