"""What judging will cost, as ranges: judge calls, tokens in and out, and dollars with prices. Pure.

Why ranges: before a run the answers are unknown, so the prompt a judge reads is as long as the note and
reference plus an answer between the reference's length (low) and the model's ``max_tokens`` (high); a verdict
is ``VERDICT_TOKENS`` low to high. The estimate command (``python -m helm_mtsamples_ext.estimate``) and the
recheck (``python -m helm_mtsamples_ext.recheck``) both print these; the report counts what was spent after.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from helm_mtsamples_ext.report.cost import Prices

CHARS_PER_TOKEN = 4.0
"""OpenAI's rule of thumb for English text (their tokenizer guide): about four characters per token."""
VERDICT_TOKENS = (80, 250)
"""A verdict's JSON: three scores with one short sentence each (low) to two long sentences each (high)."""


@dataclass(frozen=True)
class Judge:
    name: str
    deployment: str | None


@dataclass(frozen=True)
class Estimate:
    """One run entry's judging: calls, and (low, high) tokens in and out per judge call summed."""

    entry: str
    notes: int
    judges: tuple[Judge, ...]
    tokens_in: tuple[float, float]
    tokens_out: tuple[float, float]

    @property
    def calls(self) -> int:
        return self.notes * len(self.judges)

    def cost(self, prices: Prices) -> tuple[float, float] | str:
        """(low, high) USD for direct calls, or the name of a judge the prices do not cover."""
        low = high = 0.0
        per_judge_in = [t / max(1, len(self.judges)) for t in self.tokens_in]
        per_judge_out = [t / max(1, len(self.judges)) for t in self.tokens_out]
        for judge in self.judges:
            price = prices.of(judge.name, judge.deployment)
            if price is None:
                return judge.name
            low += price.cost(per_judge_in[0], per_judge_out[0])
            high += price.cost(per_judge_in[1], per_judge_out[1])
        return low, high


def estimate_tokens(
    entry: str, notes: Sequence[tuple[int, int]], judges: Sequence[Judge], max_answer_tokens: int
) -> Estimate:
    """The judge tokens of notes given as (prompt characters without the answer, reference characters), under
    the panel ``judges`` (every judge reads the same prompt)."""
    low_in = high_in = 0.0
    for prompt_chars, reference_chars in notes:
        low_in += (prompt_chars + reference_chars) / CHARS_PER_TOKEN
        high_in += prompt_chars / CHARS_PER_TOKEN + max_answer_tokens
    n = len(judges)
    out = (len(notes) * n * VERDICT_TOKENS[0], len(notes) * n * VERDICT_TOKENS[1])
    return Estimate(entry, len(notes), tuple(judges), (low_in * n, high_in * n), (float(out[0]), float(out[1])))


def render(estimates: Sequence[Estimate], prices: Prices | None, prices_path: Path | None) -> list[str]:
    lines: list[str] = []
    totals = [0.0, 0.0]
    priced = prices is not None
    for e in estimates:
        names = "+".join(j.name for j in e.judges)
        lines += [
            f"{e.entry}: {e.notes} notes x {len(e.judges)} judges ({names})",
            f"  judge calls:      {e.calls:,}",
            f"  judge tokens in:  {e.tokens_in[0]:,.0f} - {e.tokens_in[1]:,.0f}",
            f"  judge tokens out: {e.tokens_out[0]:,.0f} - {e.tokens_out[1]:,.0f}",
        ]
        if prices is None:
            continue
        cost = e.cost(prices)
        if isinstance(cost, str):
            lines.append(f"  cost: unknown, {prices_path} has no price for judge {cost!r}")
            priced = False
            continue
        totals = [totals[0] + cost[0], totals[1] + cost[1]]
        lines.append(f"  cost: {_usd(cost, prices.batch_discount)}")
    calls = sum(e.calls for e in estimates)
    total = f"total: {calls:,} judge calls"
    if prices is not None and priced:
        total += f", {_usd((totals[0], totals[1]), prices.batch_discount)}"
    return [*lines, total]


def _usd(cost: tuple[float, float], discount: float) -> str:
    text = f"{_dollars(cost[0])} - {_dollars(cost[1])}"
    if discount:
        text += f" (as a provider batch: {_dollars(cost[0] * (1 - discount))} - {_dollars(cost[1] * (1 - discount))})"
    return text


def _dollars(value: float) -> str:
    """Cents for a real bill, three significant digits for a small one ($0.0306, not $0.03)."""
    return f"${value:,.2f}" if value >= 1 else f"${value:.3g}"
