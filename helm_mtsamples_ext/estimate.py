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
from pathlib import Path

from helm.benchmark.scenarios.scenario import TEST_SPLIT, VALID_SPLIT, Instance

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.helm_paths import OUTPUT_PATH
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.prompt import build_prompt
from helm_mtsamples_ext.report.cost import PricesError, load_prices
from helm_mtsamples_ext.report.judging_cost import (
    CHARS_PER_TOKEN,
    VERDICT_TOKENS,
    Estimate,
    Judge,
    estimate_tokens,
    render,
)

__all__ = ["CHARS_PER_TOKEN", "VERDICT_TOKENS", "Estimate", "Judge", "estimate", "main", "render"]


def estimate(
    entry: str, instances: Sequence[Instance], judges: Sequence[Judge], style: str, max_answer_tokens: int
) -> Estimate:
    """The judge tokens of ``instances``: each judge prompt built as the annotator will, without the answer."""
    notes = []
    for instance in instances:
        reference = instance.references[0].output.text if instance.references else ""
        notes.append((len(build_prompt(instance.input.text, "", reference, style)), len(reference)))
    return estimate_tokens(entry, notes, judges, max_answer_tokens)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helm_mtsamples_ext.estimate", description=__doc__.split("\n")[0])
    parser.add_argument("--run-entries", nargs="+", required=True, help="as given to helm-run")
    parser.add_argument("-m", "--max-eval-instances", type=int, required=True, help="as given to helm-run")
    parser.add_argument("--judge-prices", type=Path, help="USD per million input/output tokens per judge (YAML)")
    parser.add_argument("-o", "--output-path", default=OUTPUT_PATH, help="helm-run's output path")
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
