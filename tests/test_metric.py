"""The reward metric: the seed's 0-1 reward, failures as missing data, judge agreement per run."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.metrics.metric import MetricSpec, create_metric
from helm.benchmark.metrics.statistic import Stat
from helm.benchmark.scenarios.scenario import TEST_SPLIT

from helm_mtsamples_ext.metric import MTSamplesProceduresMetric, UnjudgedNotesError
from tests.states import request_state as make_state

pytestmark = pytest.mark.helm

P = "mtsamples_procedures"
ADAPTER = AdapterSpec(method="generation")


def judge(accuracy: Any = 4, completeness: Any = 4, clarity: Any = 4, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "accuracy": {"score": accuracy, "explanation": "."},
        "completeness": {"score": completeness, "explanation": "."},
        "clarity": {"score": clarity, "explanation": "."},
        "status": "ok",
    }
    entry.update(extra)
    return entry


FAILED = {
    "accuracy": {"score": None, "explanation": ""},
    "completeness": {"score": None, "explanation": ""},
    "clarity": {"score": None, "explanation": ""},
    "status": "failed",
    "failure": "call error: timeout",
}


def request_state(annotation: Any, instance_id: str = "n1", key: str = P) -> RequestState:
    return make_state(instance_id=instance_id, annotations=None if annotation is None else {key: annotation})


def stats_of(judge_names: list[str], annotation: Any, **kwargs: Any) -> dict[str, float]:
    """Per-note stats as {name: value} (each per-note stat holds exactly one value)."""
    metric = MTSamplesProceduresMetric(judge_names=judge_names)
    stats = metric.evaluate_generation(ADAPTER, request_state(annotation, **kwargs), None, "")  # type: ignore[arg-type]
    assert all(s.count == 1 for s in stats)
    assert len({s.name.name for s in stats}) == len(stats), "a stat name was emitted twice"
    return {s.name.name: float(s.mean) for s in stats if s.mean is not None}


def test_all_judges_valid_reward_is_mean_over_judges_of_mean_score_over_five() -> None:
    """Reward = mean over judges of (a/5 + c/5 + l/5)/3; dimensions are the panel's 1-5 means."""
    s = stats_of(["A", "B"], {"A": judge(4, 5, 3), "B": judge(5, 5, 5), "failed_judges": []})
    assert s[f"{P}_reward"] == pytest.approx((0.8 + 1.0) / 2)
    assert s[f"{P}_judge_accuracy"] == pytest.approx(4.5)
    assert s[f"{P}_judge_completeness"] == pytest.approx(5.0)
    assert s[f"{P}_judge_clarity"] == pytest.approx(4.0)
    assert s[f"{P}_judge_failures"] == 0 and s[f"{P}_judge_failure_rate"] == 0
    assert s[f"{P}_unjudged"] == 0 and s[f"{P}_empty_answer"] == 0


def test_partially_valid_judge_averages_only_its_valid_dimensions() -> None:
    """A judge with one invalid dimension still counts, over the dimensions it scored validly."""
    record = {"A": judge(None, 4, 2, invalid={"accuracy": "4.5 is not an integer 1-5"}), "B": judge(5, 5, 5)}
    s = stats_of(["A", "B"], record | {"failed_judges": []})
    assert s[f"{P}_reward_a"] == pytest.approx((4 / 5 + 2 / 5) / 2)
    assert s[f"{P}_reward"] == pytest.approx(((4 / 5 + 2 / 5) / 2 + 1.0) / 2)
    assert s[f"{P}_judge_accuracy"] == pytest.approx(5.0), "A's missing accuracy must not count as anything"
    assert s[f"{P}_judge_completeness"] == pytest.approx(4.5)
    assert s[f"{P}_judge_failures"] == 0


def test_all_judges_failed_gives_no_reward_and_counts_as_unjudged() -> None:
    """No judge answered: no reward stat at all (not 0, not 0.2, not 1), unjudged = 1."""
    s = stats_of(["A", "B"], {"A": FAILED, "B": FAILED, "failed_judges": ["A", "B"]})
    assert f"{P}_reward" not in s
    assert not any(f"{P}_judge_{d}" in s for d in ("accuracy", "completeness", "clarity"))
    assert f"{P}_reward_a" not in s and f"{P}_reward_b" not in s
    assert s[f"{P}_unjudged"] == 1
    assert s[f"{P}_judge_failures"] == 2 and s[f"{P}_judge_failure_rate"] == 1.0


def test_integral_floats_and_numeric_strings_count_other_values_are_ignored() -> None:
    """4.0 and " 5 " are scores; 4.5, "four", True, 0 and 6 are not (and never crash the metric)."""
    s = stats_of(["A", "B"], {"A": judge(4.0, " 5 ", "3"), "B": judge(4.5, "four", True), "failed_judges": []})
    assert s[f"{P}_reward"] == pytest.approx((4 + 5 + 3) / 15)
    assert f"{P}_reward_b" not in s
    assert s[f"{P}_judge_failures"] == 1


def test_empty_answer_scores_zero_without_blaming_the_judges() -> None:
    """An empty model answer: reward 0, empty_answer 1, unjudged 0, no failures, no dimension stats.

    No judge was called, so the note adds nothing to the failure rate (the share of calls that failed)."""
    s = stats_of(["A", "B"], {"failed_judges": [], "answer": "empty"})
    assert s[f"{P}_reward"] == 0.0
    assert s[f"{P}_empty_answer"] == 1 and s[f"{P}_unjudged"] == 0
    assert s[f"{P}_judge_failures"] == 0 and f"{P}_judge_failure_rate" not in s
    assert not any(f"{P}_judge_{d}" in s for d in ("accuracy", "completeness", "clarity"))
    assert s[f"{P}_reward_a"] == 0.0 and s[f"{P}_reward_b"] == 0.0, "per-judge rewards stay comparable to the reward"


def test_per_judge_rewards_and_failure_rate_over_the_panel() -> None:
    """Each judge gets its own reward (slugged name); a failed judge's is absent; rate = failed / panel."""
    record = {
        "gpt-4o-mini": judge(5, 4, 3),
        "claude": FAILED,
        "Llama 3.3": judge(2, 2, 2),
        "failed_judges": ["claude"],
    }
    s = stats_of(["gpt-4o-mini", "claude", "Llama 3.3"], record)
    assert s[f"{P}_reward_gpt_4o_mini"] == pytest.approx(12 / 15)
    assert s[f"{P}_reward_llama_3_3"] == pytest.approx(6 / 15)
    assert f"{P}_reward_claude" not in s
    assert s[f"{P}_judge_failures"] == 1 and s[f"{P}_judge_failure_rate"] == pytest.approx(1 / 3)
    assert s[f"{P}_reward"] == pytest.approx((12 / 15 + 6 / 15) / 2)


def test_failed_status_or_failed_list_or_missing_entry_means_the_judge_counts_for_nothing() -> None:
    """A judge marked failed (status or failed_judges) or missing from the record adds no score."""
    record = {"A": judge(1, 1, 1, status="failed"), "B": judge(1, 1, 1), "C": judge(5, 5, 5), "failed_judges": ["B"]}
    s = stats_of(["A", "B", "C", "D"], record)
    assert s[f"{P}_reward"] == 1.0
    assert s[f"{P}_judge_failures"] == 4 - 1 and s[f"{P}_judge_failure_rate"] == pytest.approx(3 / 4)


def test_unknown_keys_are_ignored() -> None:
    """Keys outside the contract (extra judges, extra fields) neither crash nor change the reward."""
    record = {"A": judge(5, 5, 5, confidence=9, tokens=12), "X": judge(1, 1, 1), "meta": 3, "failed_judges": []}
    s = stats_of(["A"], record)
    assert s[f"{P}_reward"] == 1.0
    assert f"{P}_reward_x" not in s


@pytest.mark.parametrize("annotation", [None, "garbage", ["A"]])
def test_missing_or_malformed_annotation_is_unjudged_not_a_crash(annotation: Any) -> None:
    """No usable record: the note is unjudged (and every panel judge failed), never scored."""
    s = stats_of(["A"], annotation)
    assert f"{P}_reward" not in s
    assert s[f"{P}_unjudged"] == 1 and s[f"{P}_judge_failures"] == 1


def test_annotation_under_another_key_is_treated_as_missing() -> None:
    """Only the `mtsamples_procedures` annotation is read."""
    s = stats_of(["A"], {"A": judge(5, 5, 5), "failed_judges": []}, key="other")
    assert f"{P}_reward" not in s and s[f"{P}_unjudged"] == 1


def test_colliding_slugs_still_give_each_judge_its_own_stat() -> None:
    """Judges "a.b" and "a-b" slug alike; the second gets a suffix instead of merging into one stat."""
    s = stats_of(["a.b", "a-b"], {"a.b": judge(5, 5, 5), "a-b": judge(1, 1, 1), "failed_judges": []})
    assert s[f"{P}_reward_a_b"] == 1.0 and s[f"{P}_reward_a_b_2"] == pytest.approx(0.2)


def scenario_state(records: list[Any], answers: list[str] | None = None) -> ScenarioState:
    """One request state per record; every answer is "plan" unless ``answers`` says otherwise."""
    texts = answers or ["plan"] * len(records)
    states = [
        make_state(answer=text, instance_id=f"n{i}", annotations={P: r})
        for i, (r, text) in enumerate(zip(records, texts, strict=True))
    ]
    return ScenarioState(ADAPTER, states)


def run_evaluate(
    judge_names: list[str], records: list[Any], answers: list[str] | None = None, **args: Any
) -> tuple[dict[str, Stat], list[str]]:
    spec = MetricSpec(
        class_name="helm_mtsamples_ext.metric.MTSamplesProceduresMetric", args={"judge_names": judge_names, **args}
    )
    state = scenario_state(records, answers)
    result = create_metric(spec).evaluate(state, None, "", parallelism=1)  # type: ignore[arg-type]
    per_instance = [s.name.name for p in result.per_instance_stats for s in p.stats]
    return {s.name.name: s for s in result.aggregated_stats}, per_instance


def test_ordinal_alpha_matches_the_coincidence_matrix_by_hand() -> None:
    """Run-level alpha equals Krippendorff's ordinal alpha worked out by hand; undefined alphas are absent.

    Accuracy, judges A and B over three notes: (1,1), (2,3), (3,3). Every note has two ratings, so
    each ordered pair adds 1/(2-1) to the coincidence matrix: o11 = 2, o23 = o32 = 1, o33 = 2.
    Marginals n1 = 2, n2 = 1, n3 = 3, n = 6. Ordinal distance d(c,k) = (sum_{g=c..k} n_g - (n_c+n_k)/2)^2:
    d12 = (3 - 1.5)^2 = 2.25, d13 = (6 - 2.5)^2 = 12.25, d23 = (4 - 2)^2 = 4.
    Observed D_o = (o23 d23 + o32 d32) / n = 8/6; expected D_e = 2 (n1 n2 d12 + n1 n3 d13 + n2 n3 d23) / (n(n-1))
    = 2 (4.5 + 73.5 + 12) / 30 = 6. alpha = 1 - D_o / D_e = 1 - 8/36 = 7/9.
    Completeness is 4 everywhere (no variation) and clarity was rated by one judge only: no stat for either.
    """
    d_o = (1 * 4 + 1 * 4) / 6
    d_e = 2 * (2 * 1 * 2.25 + 2 * 3 * 12.25 + 1 * 3 * 4) / (6 * 5)
    expected = 1 - d_o / d_e
    assert expected == pytest.approx(7 / 9)

    records = [
        {"A": judge(a, 4, 5), "B": judge(b, 4, None), "failed_judges": []} for a, b in [(1, 1), (2, 3), (3, 3)]
    ] + [{"failed_judges": [], "answer": "empty"}]
    aggregated, _ = run_evaluate(["A", "B"], records)
    alpha = aggregated[f"{P}_alpha_accuracy"]
    assert alpha.mean == pytest.approx(expected) and alpha.count == 1
    assert alpha.name.split == TEST_SPLIT and alpha.name.perturbation is None, "the schema matches split=test"
    assert f"{P}_alpha_completeness" not in aggregated
    assert f"{P}_alpha_clarity" not in aggregated
    # The empty answer counts as 0 in the run's reward: three judged notes and a zero, over four notes.
    rewards = [(1 + 4 + 5) / 15 + (1 + 4) / 10, (2 + 4 + 5) / 15 + (3 + 4) / 10, (3 + 4 + 5) / 15 + (3 + 4) / 10]
    assert aggregated[f"{P}_reward"].mean == pytest.approx(sum(r / 2 for r in rewards) / 4)
    assert aggregated[f"{P}_reward"].name.split == TEST_SPLIT


def test_one_judge_panel_reports_no_alpha() -> None:
    """Agreement needs two judges: a one-judge panel gets no alpha stat (and no crash)."""
    aggregated, _ = run_evaluate(["A"], [{"A": judge(i, i, i), "failed_judges": []} for i in (1, 3, 5)])
    assert not any(name.startswith(f"{P}_alpha_") for name in aggregated)
    assert aggregated[f"{P}_reward"].mean == pytest.approx((0.2 + 0.6 + 1.0) / 3)


def test_metadata_covers_every_stat_the_metric_emits() -> None:
    """get_metadata names every stat name emitted (so --auto-generate-schema labels them); the texts and groups
    are stat_metadata's rules (tests/scoring/test_stat_metadata.py)."""
    panel = ["gpt-4o-mini", "claude"]
    records = [
        {"gpt-4o-mini": judge(1, 2, 3), "claude": judge(2, 2, 4), "failed_judges": []},
        {"gpt-4o-mini": judge(4, 5, 5), "claude": judge(5, 4, 5), "failed_judges": []},
        {"gpt-4o-mini": judge(3, 3, 2), "claude": FAILED, "failed_judges": ["claude"]},
        {"gpt-4o-mini": judge(2, 5, 1), "claude": judge(2, 3, 1), "failed_judges": []},
        {"failed_judges": [], "answer": "empty"},
    ]
    aggregated, per_instance = run_evaluate(panel, records)
    metadata = MTSamplesProceduresMetric(judge_names=panel).get_metadata()
    names = {m.name for m in metadata}
    emitted = set(aggregated) | set(per_instance)
    assert {f"{P}_alpha_accuracy", f"{P}_reward_claude", f"{P}_empty_answer"} <= emitted
    assert emitted <= names


UNJUDGED_RECORDS = [
    {"A": judge(), "B": judge(), "failed_judges": []},
    {
        "A": {**FAILED, "failure": "rate limited (HTTP 429): slow down"},
        "B": {**FAILED, "failure": "timed out: Request timed out."},
        "failed_judges": ["A", "B"],
    },
]


def test_unjudged_notes_past_max_unjudged_fail_the_run_with_the_reasons() -> None:
    """By default (max_unjudged=0) one unjudged note fails the run: one line with the count, the kinds of
    failure, and that a re-run makes only the failed calls."""
    with pytest.raises(UnjudgedNotesError) as raised:
        run_evaluate(["A", "B"], UNJUDGED_RECORDS)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("1 of 2 notes have no reward")
    assert "rate limited (HTTP 429) ×1" in message and "timed out ×1" in message
    assert "Re-running the same command makes only the failed judge calls" in message


TOO_LONG = "prompt too long for the judge's context (1532 tokens): give the judge a larger context"


@pytest.mark.parametrize(
    ("failures", "too_long_calls", "rerun_advice"),
    [([TOO_LONG, TOO_LONG], 4, False), ([TOO_LONG, "HTTP 500: boom"], 2, True)],
    ids=["only prompts too long", "with a failure a re-run can fix"],
)
def test_prompts_too_long_for_the_context_are_grouped_apart_as_what_no_rerun_fixes(
    failures: list[str], too_long_calls: int, rerun_advice: bool
) -> None:
    records = [
        {"A": judge(), "B": judge(), "failed_judges": []},
        *[
            {"A": {**FAILED, "failure": f}, "B": {**FAILED, "failure": f}, "failed_judges": ["A", "B"]}
            for f in failures
        ],
    ]
    with pytest.raises(UnjudgedNotesError) as raised:
        run_evaluate(["A", "B"], records)
    message = str(raised.value)
    assert f"{too_long_calls} judge calls had a prompt too long for the judge's context, which no re-run" in message
    assert ("Re-running the same command" in message) is rerun_advice


def test_unjudged_notes_within_max_unjudged_are_reported_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    """max_unjudged=1 keeps such runs: the stat counts them and the log says how many."""
    with caplog.at_level(logging.WARNING, logger="helm"):
        aggregated, _ = run_evaluate(["A", "B"], UNJUDGED_RECORDS, max_unjudged=0.5)
    assert aggregated[f"{P}_unjudged"].mean == 0.5
    assert any("1 of 2 notes have no reward" in r.getMessage() for r in caplog.records)


def test_the_end_of_a_run_says_how_many_judge_calls_failed_and_why(caplog: pytest.LogCaptureFixture) -> None:
    """One line, even when too many unjudged notes then fail the run: the count of calls, each kind with its
    count and what to do (failure_reasons)."""
    with caplog.at_level(logging.WARNING, logger="helm"), pytest.raises(UnjudgedNotesError):
        run_evaluate(["A", "B"], UNJUDGED_RECORDS)
    (line,) = [r.getMessage() for r in caplog.records if "judge calls failed" in r.getMessage()]
    assert line.startswith("2 of 4 judge calls failed: 1 rate limited (HTTP 429) (raise judge_max_wait")
    assert "; 1 timed out (raise judge_timeout, or lower judge_max_concurrency" in line


def test_a_fully_judged_run_neither_warns_nor_fails(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="helm"):
        run_evaluate(["A", "B"], UNJUDGED_RECORDS[:1])
    assert not any("have no reward" in r.getMessage() or "calls failed" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"A": judge(4, 3, 5), "B": judge(2, 2, 5), "failed_judges": []}, 21 / 6),
        ({"A": judge(4, 3, 5), "B": FAILED, "failed_judges": ["B"]}, 4.0),
        ({"A": FAILED, "B": FAILED, "failed_judges": ["A", "B"]}, None),
    ],
)
def test_medhelms_jury_score_stat_is_the_pooled_mean_and_absent_for_an_unjudged_note(
    record: dict[str, Any], expected: float | None
) -> None:
    """`mtsamples_procedures_accuracy`, the name MedHELM's schema shows: the 1-5 mean over valid scores only."""
    s = stats_of(["A", "B"], record)
    if expected is None:
        assert f"{P}_accuracy" not in s
    else:
        assert s[f"{P}_accuracy"] == pytest.approx(expected)


# ---------------------------------------------------------------- a judge that does not read the answer


def own(score: int, words: str) -> dict[str, Any]:
    """A judge entry whose three explanations are ``words``."""
    entry = judge(score, score, score)
    for dim in ("accuracy", "completeness", "clarity"):
        entry[dim]["explanation"] = words
    return entry


PARROT = own(4, "The plan is reasonable and clearly written.")
ANSWERS = ["re", "albeit", "Answer:", "re"]


def test_a_judge_giving_one_verdict_to_different_answers_scores_nothing_and_has_its_own_stat() -> None:
    """B writes the same verdict whatever the answer: on each note it counts for nothing (A's reward alone), it
    is a judge failure, and mtsamples_procedures_same_verdict says why: half of the judge calls."""
    records = [{"A": own(2, f"Answer {text!r} is judged."), "B": PARROT, "failed_judges": []} for text in ANSWERS]
    aggregated, _ = run_evaluate(["A", "B"], records, ANSWERS)
    assert aggregated[f"{P}_reward"].mean == pytest.approx(0.4)
    assert f"{P}_reward_b" not in aggregated
    assert aggregated[f"{P}_same_verdict"].mean == pytest.approx(0.5)
    assert aggregated[f"{P}_judge_failure_rate"].mean == pytest.approx(0.5)
    assert aggregated[f"{P}_unjudged"].mean == 0


def test_a_judges_one_low_verdict_on_one_models_junk_is_never_voided_by_the_run() -> None:
    """The attack: B fairly gives its one canned low verdict (1s) to four different junk answers. Voiding it would
    raise the run from (.4+.2)/2 = .3 to A's .4 alone, so the run, seeing one model only, keeps it."""
    canned = own(1, "The answer does not address the procedure.")
    records = [{"A": own(2, f"Answer {text!r} is judged."), "B": canned, "failed_judges": []} for text in ANSWERS]
    aggregated, _ = run_evaluate(["A", "B"], records, ANSWERS)
    assert aggregated[f"{P}_reward"].mean == pytest.approx(0.3)
    assert aggregated[f"{P}_same_verdict"].mean == 0
    assert aggregated[f"{P}_judge_failure_rate"].mean == 0


def test_the_same_verdict_for_identical_answers_is_a_reading() -> None:
    """Every answer is "plan": one verdict for one answer is consistent, not a copy."""
    aggregated, _ = run_evaluate(["B"], [{"B": PARROT, "failed_judges": []}] * 3)
    assert aggregated[f"{P}_reward"].mean == pytest.approx(0.8)
    assert aggregated[f"{P}_same_verdict"].mean == 0


def test_a_lone_copying_judge_leaves_every_note_unjudged_and_fails_the_run_naming_it_and_why() -> None:
    with pytest.raises(UnjudgedNotesError) as raised:
        run_evaluate(["B"], [{"B": PARROT, "failed_judges": []}] * 4, ANSWERS)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("4 of 4 notes have no reward")
    assert "B: same verdict for different answers ×4" in message


def test_an_echoing_judge_is_named_with_why_its_dimensions_were_invalid() -> None:
    """The annotator records "no valid dimension"; the run's one line says the explanations were not the judge's."""
    echo = {
        **FAILED,
        "failure": "no valid dimension",
        "invalid": {"accuracy": "explanation is not the judge's own words: the prompt's placeholder '<...>'"},
    }
    with pytest.raises(UnjudgedNotesError) as raised:
        run_evaluate(["tiny"], [{"tiny": echo, "failed_judges": ["tiny"]}])
    assert "tiny: no valid dimension (explanation is not the judge's own words) ×1" in str(raised.value)
