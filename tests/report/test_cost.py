"""report/cost.py: what judging cost, in tokens in and out per model, panel and judge, and in dollars."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.cost import Price, Prices, PricesError, load_prices
from tests.report.suites import EMPTY, Note, Run, build_suite, ok, read, row

NOTES = [Note("n1.txt", "Orthopedic"), Note("n2.txt", "Orthopedic"), Note("n3.txt", "Neurosurgery")]
PRICES_YAML = """
batch_discount: 0.5
judges:
  fake/judge-one: {input: 2.0, output: 10.0}
  judge-two: {input: 1, output: 4}
"""


def spent(judge: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    entry = {**ok(4, 4, 4), "tokens": tokens_in + tokens_out, "tokens_in": tokens_in, "tokens_out": tokens_out}
    return {**entry, "model_deployment": f"fake/{judge}"}


RUN = Run(
    model="acme/model",
    judges=["judge-one", "judge-two"],
    verdicts={
        "n1.txt": {"judge-one": spent("judge-one", 1000, 100), "judge-two": spent("judge-two", 2000, 200)},
        "n2.txt": {"judge-one": spent("judge-one", 3000, 300), "judge-two": spent("judge-two", 4000, 400)},
        "n3.txt": EMPTY,  # no judge called: nothing spent
    },
)


def report(tmp_path: Path, runs: list[Run], *extra: str) -> tuple[int, Path]:
    build_suite(tmp_path, runs, notes=NOTES)
    out = tmp_path / "report"
    code = main(["--suite", "v1", "-o", str(tmp_path), "--out", str(out), "--bootstrap", "50", *extra])
    return code, out


@pytest.fixture
def prices_file(tmp_path: Path) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text(PRICES_YAML)
    return path


def test_judge_tokens_in_and_out_are_summed_per_model_and_per_judge(tmp_path: Path) -> None:
    code, out = report(tmp_path, [RUN])
    board = row(read(out, "leaderboard"), model="acme/model")
    assert code == 0
    assert (board["judge_tokens_in"], board["judge_tokens_out"]) == (10000, 1000)
    assert (board["judge_tokens_in_judge-one"], board["judge_tokens_out_judge-one"]) == (4000, 400)
    assert (board["judge_tokens_in_judge-two"], board["judge_tokens_out_judge-two"]) == (6000, 600)
    assert "judge_cost_usd" not in board.index, "no cost without prices"


def test_prices_give_the_cost_per_judge_the_total_and_the_batch_price(tmp_path: Path, prices_file: Path) -> None:
    """judge-one is priced by its model deployment, judge-two by its name; USD per million tokens."""
    code, out = report(tmp_path, [RUN], "--judge-prices", str(prices_file))
    board = row(read(out, "leaderboard"), model="acme/model")
    one, two = (4000 * 2.0 + 400 * 10.0) / 1e6, (6000 * 1 + 600 * 4) / 1e6
    assert code == 0
    assert board["judge_cost_usd_judge-one"] == pytest.approx(one)
    assert board["judge_cost_usd_judge-two"] == pytest.approx(two)
    assert board["judge_cost_usd"] == pytest.approx(one + two)
    assert board["judge_cost_batch_usd"] == pytest.approx((one + two) * 0.5)
    md = (out / "report.md").read_text()
    assert "## What judging cost" in md and "| 10,000 | 1,000 | 0.0204 | 0.0102 |" in md


def test_a_judge_without_a_price_leaves_its_cost_missing_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("judges:\n  judge-one: {input: 1, output: 1}\n")
    code, out = report(tmp_path, [RUN], "--judge-prices", str(prices))
    board = row(read(out, "leaderboard"), model="acme/model")
    assert code == 0 and board["judge_cost_usd_judge-one"] == pytest.approx(4400 / 1e6)
    assert math.isnan(board["judge_cost_usd_judge-two"]) and math.isnan(board["judge_cost_usd"])
    assert "has no price for judge 'judge-two'" in capsys.readouterr().err


def test_a_record_from_before_tokens_were_split_has_missing_counts_not_zero(tmp_path: Path) -> None:
    older = Run("acme/old", ["judge-one"], {"n1.txt": {"judge-one": ok(4, 4, 4)}, "n2.txt": {"judge-one": ok(3, 3, 3)}})
    code, out = report(tmp_path, [older])
    board = row(read(out, "leaderboard"), model="acme/old")
    assert code == 0 and math.isnan(board["judge_tokens_in"]) and math.isnan(board["judge_tokens_out_judge-one"])


def test_instances_keep_each_judges_tokens(tmp_path: Path) -> None:
    _, out = report(tmp_path, [RUN])
    instances = read(out, "instances")
    one = instances[(instances["judge"] == "judge-one") & (instances["note"] == "n2.txt")].iloc[0]
    assert (one["tokens_in"], one["tokens_out"]) == (3000, 300)


def test_a_prices_file_is_read_as_usd_per_million_input_and_output(prices_file: Path) -> None:
    prices = load_prices(prices_file)
    assert prices == Prices({"fake/judge-one": Price(2.0, 10.0), "judge-two": Price(1.0, 4.0)}, 0.5)
    assert prices.of("judge-two", "x/y") == Price(1.0, 4.0) and prices.of("nobody", None) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("judges: [1, 2", "is not valid YAML"),
        ("batch_discount: 0.5\n", "expected `judges:`"),
        ("judges:\n  a: {input: 1}\n", "judge 'a' needs input and output"),
        ("judges:\n  a: {input: -1, output: 1}\n", "judge 'a' input must be a number of USD per million tokens"),
        ("judges:\n  a: {input: 1, output: cheap}\n", "judge 'a' output must be a number"),
        ("batch_discount: 50\njudges:\n  a: {input: 1, output: 1}\n", "batch_discount must be a share"),
    ],
    ids=["yaml", "no-judges", "no-output", "negative", "not-a-number", "discount-percent"],
)
def test_a_bad_prices_file_is_one_line_naming_what_to_fix(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(PricesError, match=message) as raised:
        load_prices(path)
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)


def test_the_report_stops_on_a_bad_prices_file_with_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = report(tmp_path, [RUN], "--judge-prices", str(tmp_path / "missing.yaml"))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and err[-1].startswith("error: cannot read the prices file") and "Traceback" not in "".join(err)


def test_leaderboard_columns_already_there_stay_in_place(tmp_path: Path, prices_file: Path) -> None:
    """The cost columns come after every column the leaderboard had (other tools read it by position too)."""
    _, out = report(tmp_path, [RUN], "--judge-prices", str(prices_file))
    columns = list(pd.read_csv(out / "leaderboard.csv").columns)
    assert columns.index("run") < columns.index("judge_tokens_in") < columns.index("judge_cost_usd")
