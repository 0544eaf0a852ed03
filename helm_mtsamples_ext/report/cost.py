"""What judging cost: judge tokens in and out per model and panel (and per judge), and with prices, dollars.

Judges are most of an LLM-as-jury bill, yet HELM reports only the model under test's tokens. The record
keeps each judge's ``tokens_in`` / ``tokens_out`` as its server reported them (``usage``), summed over a
note's turns (repair turns included); here they are added up per leaderboard row. Prices come from a
small YAML the user keeps (USD per million tokens, input and output priced apart, as providers bill):

    batch_discount: 0.5              # share off for a provider batch (OpenAI's Batch API: half price)
    judges:
      openai/gpt-4o-mini: {input: 0.15, output: 0.60}
      qwen2.5-7b-instruct: {input: 0, output: 0}

A judge is priced by its name in the panel or by its HELM model deployment. Tokens replayed from HELM's
cache are counted too: they are what the judgments took, not what a re-run paid.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from helm_mtsamples_ext.stats.intervals import KEYS

PER_MILLION = 1_000_000


class PricesError(ValueError):
    """The prices file cannot be used; the message is one line naming the file and the fix."""


@dataclass(frozen=True)
class Price:
    input: float
    output: float

    def cost(self, tokens_in: float, tokens_out: float) -> float:
        return (tokens_in * self.input + tokens_out * self.output) / PER_MILLION


@dataclass(frozen=True)
class Prices:
    judges: dict[str, Price] = field(default_factory=dict)
    batch_discount: float = 0.0

    def of(self, *names: str | None) -> Price | None:
        """The price of the first of ``names`` (judge name, model deployment) the file lists."""
        for name in names:
            if name and name in self.judges:
                return self.judges[name]
        return None


def _usd(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or math.isnan(value):
        raise PricesError(f"{where} must be a number of USD per million tokens, 0 or more, got {value!r}")
    return float(value)


def load_prices(path: Path) -> Prices:
    """Read a prices file; every problem is one ``PricesError`` line."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise PricesError(f"cannot read the prices file {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise PricesError(f"{path} is not valid YAML: {str(error).splitlines()[0]}") from None
    judges = data.get("judges") if isinstance(data, Mapping) else None
    if not isinstance(judges, Mapping) or not judges:
        raise PricesError(f"{path}: expected `judges:` mapping each judge model to {{input: USD, output: USD}}")
    prices = {}
    for name, price in judges.items():
        if not isinstance(price, Mapping) or not {"input", "output"} <= price.keys():
            raise PricesError(f"{path}: judge {name!r} needs input and output, USD per million tokens")
        where = f"{path}: judge {name!r}"
        prices[str(name)] = Price(_usd(price["input"], f"{where} input"), _usd(price["output"], f"{where} output"))
    discount = data.get("batch_discount", 0.0)
    if isinstance(discount, bool) or not isinstance(discount, (int, float)) or not 0 <= discount < 1:
        raise PricesError(
            f"{path}: batch_discount must be a share between 0 and 1 (0.5 for half price), got {discount!r}"
        )
    return Prices(prices, float(discount))


def unpriced(instances: pd.DataFrame, prices: Prices) -> list[str]:
    """Judges of the suite the prices file does not list (their cost, and their panel's, is missing)."""
    pairs = instances[["judge", "judge_model"]].drop_duplicates().itertuples(index=False)
    return sorted({judge for judge, model in pairs if judge and prices.of(judge, model) is None})


def judge_cost(instances: pd.DataFrame, prices: Prices | None = None) -> pd.DataFrame:
    """One row per (panel, model): judge tokens in and out, per judge too, and with prices the cost in USD
    (direct calls) and as a provider batch. A missing count or price makes the sum missing, never 0."""
    rows = []
    for (panel, model), group in instances.groupby(KEYS, sort=False):
        row: dict[str, object] = {"panel": panel, "model": model}
        total_in = total_out = 0.0
        total_cost: float = 0.0
        for judge, calls in group.groupby("judge", sort=False):
            tokens_in, tokens_out = _sum(calls["tokens_in"]), _sum(calls["tokens_out"])
            row[f"judge_tokens_in_{judge}"], row[f"judge_tokens_out_{judge}"] = tokens_in, tokens_out
            total_in, total_out = total_in + tokens_in, total_out + tokens_out
            if prices is not None:
                price = prices.of(str(judge), *_models(calls["judge_model"]))
                cost = price.cost(tokens_in, tokens_out) if price is not None else math.nan
                row[f"judge_cost_usd_{judge}"] = cost
                total_cost += cost
        row["judge_tokens_in"], row["judge_tokens_out"] = total_in, total_out
        if prices is not None:
            row["judge_cost_usd"] = total_cost
            row["judge_cost_batch_usd"] = total_cost * (1 - prices.batch_discount)
        rows.append(row)
    table = pd.DataFrame(rows)
    totals = ["judge_tokens_in", "judge_tokens_out"]
    totals += ["judge_cost_usd", "judge_cost_batch_usd"] if prices is not None else []
    per_judge = [c for c in table.columns if c not in (*KEYS, *totals)]
    return table[[*KEYS, *totals, *per_judge]] if rows else pd.DataFrame(columns=[*KEYS, *totals])


def _sum(values: pd.Series) -> float:
    """Tokens over the rows that called the judge; NaN if any such row has no count (an older record)."""
    return math.nan if values.isna().any() else float(values.sum())


def _models(values: Iterable[object]) -> list[str]:
    return [str(v) for v in dict.fromkeys(values) if isinstance(v, str) and v]


def with_judge_cost(board: pd.DataFrame, instances: pd.DataFrame, prices: Prices | None) -> pd.DataFrame:
    """The leaderboard with the cost columns appended (left as they are: other columns stay put)."""
    return board.merge(judge_cost(instances, prices), on=KEYS, how="left")


def cost_markdown(board: pd.DataFrame) -> list[str]:
    """report.md's "What judging cost" section, from the leaderboard's cost columns."""
    priced = "judge_cost_usd" in board.columns
    header = "| panel | model | judge tokens in | judge tokens out |" + (
        " cost (USD) | as a batch (USD) |" if priced else ""
    )
    lines = ["## What judging cost", "", header, "|---|---|---:|---:|" + ("---:|---:|" if priced else "")]
    for row in board.itertuples(index=False):
        cells = [str(row.panel), str(row.model), _int(row.judge_tokens_in), _int(row.judge_tokens_out)]
        if priced:
            cells += [_money(row.judge_cost_usd), _money(row.judge_cost_batch_usd)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Tokens as the judges' servers reported them, over every call and repair turn, per judge in "
        "`leaderboard.csv` (`judge_tokens_in_<judge>`, ...); replays from HELM's cache count as what the judgment "
        "took. "
        + (
            "Cost from `--judge-prices`; *as a batch* applies its `batch_discount`. `missing`: a judge without a price."
            if priced
            else "Give `--judge-prices prices.yaml` for the cost."
        ),
        "",
    ]
    return lines


def _int(value: float) -> str:
    return "missing" if value is None or math.isnan(value) else f"{int(value):,}"


def _money(value: float) -> str:
    return "missing" if value is None or math.isnan(value) else f"{value:,.4f}"
