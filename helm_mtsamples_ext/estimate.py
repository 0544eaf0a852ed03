"""What judging a run will cost, before running it: judge calls, tokens and, with prices, dollars.

``helm-run --dry-run`` counts the model's requests but not the judges', and the judges are most of the bill.
This reads the same run entries and ``--max-eval-instances``, picks the notes HELM would pick (HELM's own
sampling), builds each judge prompt as the annotator will, and prints a range, not a point:

- input tokens: the prompt's characters at ``CHARS_PER_TOKEN``, with the model's answer as long as the
  reference (low) or as its ``max_tokens`` allows (high); the answer is not known before the run;
- output tokens: a verdict (JSON, three scores and explanations) of ``VERDICT_TOKENS`` low to high;
- repair turns (rare with structured output) are not counted: the real cost is in the report afterwards.

    python -m helm_mtsamples_ext.estimate --run-entries mtsamples_procedures:model=openai/gpt-4o-mini \\
        --max-eval-instances 131 [--judge-prices prices.yaml] [-o benchmark_output]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from helm.benchmark.scenarios.scenario import TEST_SPLIT, VALID_SPLIT, Instance

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.prompt import build_prompt
from helm_mtsamples_ext.report.cost import Prices, PricesError, load_prices

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


def estimate(
    entry: str, instances: Sequence[Instance], judges: Sequence[Judge], style: str, max_answer_tokens: int
) -> Estimate:
    """Pure: the judge tokens of ``instances`` under the panel ``judges`` (every judge sees the same prompt)."""
    low_in = high_in = 0.0
    for instance in instances:
        reference = instance.references[0].output.text if instance.references else ""
        prompt_chars = len(build_prompt(instance.input.text, "", reference, style))
        low_in += (prompt_chars + len(reference)) / CHARS_PER_TOKEN
        high_in += prompt_chars / CHARS_PER_TOKEN + max_answer_tokens
    n = len(judges)
    out = (len(instances) * n * VERDICT_TOKENS[0], len(instances) * n * VERDICT_TOKENS[1])
    return Estimate(entry, len(instances), tuple(judges), (low_in * n, high_in * n), (float(out[0]), float(out[1])))


def _entry_estimate(entry: str, max_eval_instances: int, output_path: str) -> Estimate:
    """Build the run spec as helm-run would (our run-entry function), load its notes, sample as HELM does."""
    # HELM internals used here, and only here: parsing a run entry, the runner's sampling of eval instances.
    from helm.benchmark.runner import downsample_eval_instances
    from helm.common.object_spec import parse_object_spec

    from helm_mtsamples_ext.run_spec import get_mtsamples_procedures_spec
    from helm_mtsamples_ext.scenario import MTSamplesProceduresScenario

    spec = parse_object_spec(entry)
    if spec.class_name != names.RUN_ENTRY:
        raise ValueError(f"run entry {entry!r} is not {names.RUN_ENTRY}: this estimate knows only our judges")
    args = {k: v for k, v in spec.args.items() if k != "model"}
    run_spec = get_mtsamples_procedures_spec(**args)
    annotator = run_spec.annotators[0].args if run_spec.annotators else {}
    judges = [Judge(j["name"], j.get("model_deployment")) for j in annotator.get("judges", [])]
    scenario = MTSamplesProceduresScenario(**run_spec.scenario_spec.args)
    instances = scenario.get_instances(os.path.join(output_path, "scenarios", scenario.name))
    chosen = downsample_eval_instances(instances, max_eval_instances, [VALID_SPLIT, TEST_SPLIT])
    style = str(annotator.get("judge_prompt", RunEntryArgs.judge_prompt))
    return estimate(entry, chosen, judges, style, run_spec.adapter_spec.max_tokens)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helm_mtsamples_ext.estimate", description=__doc__.split("\n")[0])
    parser.add_argument("--run-entries", nargs="+", required=True, help="as given to helm-run")
    parser.add_argument("-m", "--max-eval-instances", type=int, required=True, help="as given to helm-run")
    parser.add_argument("--judge-prices", type=Path, help="USD per million input/output tokens per judge (YAML)")
    parser.add_argument("-o", "--output-path", default="benchmark_output", help="helm-run's output path")
    args = parser.parse_args(argv)
    try:
        prices = load_prices(args.judge_prices) if args.judge_prices else None
        estimates = [_entry_estimate(e, args.max_eval_instances, args.output_path) for e in args.run_entries]
    except (PricesError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("\n".join(render(estimates, prices, args.judge_prices)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
