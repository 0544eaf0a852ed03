"""The Every Eval Ever aggregate record's two results for one (panel, model): ``reward`` and ``unjudged``.

``reward`` is the leaderboard's (stats/intervals.py): the mean over the notes the panel scored of each note's
reward, with the leaderboard's bootstrap interval, its method, confidence, resample count and seed; its
``llm_scoring`` names each judge of the panel with the model it was asked for and the models its server said it
ran (``reported_model``), the judge prompt as a template (eee_runs.py) and the aggregation (the mean over the judges
that scored: EEE's ``average``, with the rule for failed judges in words). ``unjudged`` is the share of notes no
judge scored, so the notes the reward leaves out are counted, never scored 0. A missing value (no interval below
`evidence.MINIMUMS.notes_for_verdict` notes) is left out, as EEE's schema has no null there, and said in
``details``. Pure.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from helm_mtsamples_ext.common.rubric import QUESTIONS
from helm_mtsamples_ext.data.notes import DEFAULT_BASE_URL, PINNED_COMMIT
from helm_mtsamples_ext.report.eee_instances import EVALUATION_NAME, REWARD_ID, UNJUDGED_ID
from helm_mtsamples_ext.report.eee_runs import MARKER, RunFacts, prompt_template
from helm_mtsamples_ext.report.json_cells import number, strict_json
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings

SOURCE_DATA = {
    "dataset_name": EVALUATION_NAME,
    "source_type": "url",
    "url": [DEFAULT_BASE_URL],
    "additional_details": {
        "notes": "MTSamples operative notes, each with its plan section cut out as the reference (docs/data.md)",
        "pinned_commit": PINNED_COMMIT,
    },
}
AGGREGATION = (
    "A note's reward is the mean of the rewards of the judges that scored it; a failed judge counts for nothing. "
    "A note no judge scored has no reward: it is left out of the mean and counted by the unjudged result. "
    "An empty answer scores 0 from every judge. The score is the mean of the note rewards."
)
JUDGE_REWARD = "A judge's reward is the mean of score/5 over its valid scores (integers 1-5) on the dimensions."
INTERVAL_METHOD = (
    "percentile bootstrap over notes (scipy.stats.bootstrap, method=percentile), expanded about the mean by "
    "t(n-1)/z*sqrt(n/(n-1)) (Hesterberg), clipped to the range of the note rewards"
)


def _judge(name: str, model: str | None, deployment: str | None, served: list[str]) -> dict[str, Any]:
    details = {"deployment_type": "unknown", "model_availability": "unknown", "served_models": strict_json(served)}
    if deployment:
        details["model_deployment"] = deployment
    return {"model_info": {"name": name, "id": model or name, "additional_details": details}}


def judge_configs(rows: pd.DataFrame, facts: RunFacts) -> list[dict[str, Any]]:
    """The panel's judges in panel order: each with the model it was asked for and the models its server said
    it ran on this model's notes (``served_models``, none when the server named none)."""
    names = list(dict.fromkeys(str(j) for j in rows["judge"]))
    specs = {spec.name: spec for spec in facts.judges}
    configs = []
    for name in names:
        reported = rows.loc[rows["judge"] == name, "reported_model"]
        served = sorted({str(m) for m in reported if isinstance(m, str) and m})
        spec = specs.get(name)
        configs.append(_judge(name, spec.model if spec else None, spec.model_deployment if spec else None, served))
    return configs


def _placeholders(facts: RunFacts) -> str:
    cut = f"use_think={facts.use_think}, cut at answer_cap={facts.answer_cap} characters"
    return (
        f"{{note}}: the operative note, its plan section removed; {{answer}}: the model's answer as the judges read "
        f"it ({cut}); {{reference}}: the clinician's plan; {MARKER}: a hash of the three that fences the blocks"
    )


def _llm_scoring(rows: pd.DataFrame, facts: RunFacts) -> dict[str, Any]:
    style = facts.prompt_style
    details = {"aggregation": AGGREGATION, "judge_reward": JUDGE_REWARD, "dimensions": strict_json(QUESTIONS)}
    if style is not None:
        details.update(prompt_style=style, prompt_placeholders=_placeholders(facts))
    template = prompt_template(style) if style is not None else "not recorded: the run was judged by HELM's own jury"
    return {
        "judges": judge_configs(rows, facts),
        "input_prompt": template,
        "aggregation_method": "average",
        "additional_details": details,
    }


def _count(board_row: pd.Series, column: str) -> str:
    value = number(board_row.get(column))
    return "" if value is None else str(int(value))


def reward_result(
    board_row: pd.Series, rows: pd.DataFrame, facts: RunFacts, settings: BootstrapSettings, generation: dict[str, Any]
) -> dict[str, Any]:
    """The ``reward`` result of one (panel, model) whose panel scored at least one note."""
    note_rewards = rows.groupby("note")["note_reward"].first().dropna().to_numpy(dtype=float)
    uncertainty: dict[str, Any] = {"num_samples": int(note_rewards.size), "num_bootstrap_samples": settings.n_resamples}
    if note_rewards.size >= 2:
        uncertainty["standard_deviation"] = float(note_rewards.std(ddof=1))
    low, high = number(board_row["reward_ci_low"]), number(board_row["reward_ci_high"])
    details = {
        **{c: _count(board_row, c) for c in ("rank", "n_notes", "n_judged", "n_unjudged", "n_empty_answers")},
        **{c: _count(board_row, c) for c in ("judge_calls", "judge_failures")},
        "bootstrap_seed": str(settings.seed),
    }
    if low is not None and high is not None:
        uncertainty["confidence_interval"] = {
            "lower": low,
            "upper": high,
            "confidence_level": settings.confidence,
            "method": f"{INTERVAL_METHOD}; seed {settings.seed}",
        }
    else:
        details["confidence_interval"] = (
            f"none: fewer than {MINIMUMS.notes_for_verdict} judged notes, or most resamples tied"
        )
    return {
        "evaluation_result_id": REWARD_ID,
        "evaluation_name": EVALUATION_NAME,
        "source_data": SOURCE_DATA,
        "metric_config": {
            "evaluation_description": "LLM-jury reward of the model's treatment plans against the clinician's",
            "metric_id": REWARD_ID,
            "metric_name": "reward",
            "metric_unit": "proportion",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
            "llm_scoring": _llm_scoring(rows, facts),
        },
        "score_details": {"score": float(board_row["reward"]), "details": details, "uncertainty": uncertainty},
        "generation_config": generation,
    }


def unjudged_result(board_row: pd.Series, generation: dict[str, Any]) -> dict[str, Any]:
    """The ``unjudged`` result: the share of the model's notes no judge of the panel scored (their error in the
    instance records), lower being better."""
    notes, unjudged = int(board_row["n_notes"]), int(board_row["n_unjudged"])
    return {
        "evaluation_result_id": UNJUDGED_ID,
        "evaluation_name": EVALUATION_NAME,
        "source_data": SOURCE_DATA,
        "metric_config": {
            "evaluation_description": "share of the notes no judge of the panel scored (every judge failed)",
            "metric_id": UNJUDGED_ID,
            "metric_name": "unjudged share",
            "metric_unit": "proportion",
            "lower_is_better": True,
            "score_type": "continuous",
            "min_score": 0.0,
            "max_score": 1.0,
        },
        "score_details": {
            "score": unjudged / notes if notes else 0.0,
            "details": {"n_notes": str(notes), "n_unjudged": str(unjudged)},
            "uncertainty": {"num_samples": notes},
        },
        "generation_config": generation,
    }
