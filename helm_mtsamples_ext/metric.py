"""HELM Metric for MTSamples Procedures: the seed's 0-1 reward, reported honestly.

HELM's LLMJuryMetric averages raw 1-5 scores into one number, truncates them with int(), crashes
on keys it does not expect and scores "no judge answered" as 1. This metric reports the 0-1 reward
(scoring.py holds the arithmetic), keeps a note no judge could score out of the mean (and counts
it), reports each dimension and each judge beside the reward, and measures how well the judges
agree (Krippendorff's alpha, ordinal) once per run.

    MetricSpec(class_name="helm_mtsamples_ext.metric.MTSamplesProceduresMetric",
               args={"judge_names": ["gpt-4o-mini"]})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.metrics.metric import Metric, MetricMetadata, MetricResult
from helm.benchmark.metrics.metric_name import MetricContext, MetricName
from helm.benchmark.metrics.metric_service import MetricService
from helm.benchmark.metrics.statistic import Stat
from helm.common.hierarchical_logger import hlog, hwarn

from helm_mtsamples_ext.failure_reasons import reasons_text, record_failures
from helm_mtsamples_ext.judges.classify import CONTEXT_FAILURE
from helm_mtsamples_ext.record import NoteRecord
from helm_mtsamples_ext.run_spec import RunEntryArgs
from helm_mtsamples_ext.same_verdict import without_same_verdicts
from helm_mtsamples_ext.scoring import (
    ANNOTATION_KEY,
    DIMENSIONS,
    EMPTY_ANSWER,
    JUDGE_FAILURE_RATE,
    JUDGE_FAILURES,
    JURY_SCORE,
    REWARD,
    SAME_VERDICT_RATE,
    UNJUDGED,
    NoteScores,
    alpha_stat_name,
    dimension_stat_name,
    judge_reward_stat_name,
    judge_reward_stat_names,
    ordinal_alpha,
    rating_matrix,
    score_note,
)

DEFAULT_MAX_UNJUDGED = RunEntryArgs().max_unjudged


class UnjudgedNotesError(RuntimeError):
    """More notes went unjudged than the run entry's ``max_unjudged`` allows: the run fails (HELM lists it
    under "Failed runs" and helm-run exits non-zero) instead of reporting a reward over the rest."""


def _kind(text: str) -> str:
    return text.split(":")[0].strip()


def failure_kinds(records: Sequence[object]) -> Counter[str]:
    """How often each judge failed for each kind of reason (the reason's text before its first ':'), as
    "judge: kind"; "no valid dimension" names why its dimensions were invalid, so an echoing judge says so."""
    kinds: Counter[str] = Counter()
    for raw in records:
        record = raw if isinstance(raw, NoteRecord) else NoteRecord.from_dict(raw)
        if record is None:
            kinds["no annotation"] += 1
            continue
        for name, entry in record.judges.items():
            if record.judge_failed(name):
                kind = _kind(record.failure_of(name))
                invalid = sorted({_kind(why) for why in entry.invalid.values()})
                if kind == "no valid dimension" and invalid:
                    kind += f" ({'; '.join(invalid)})"
                kinds[f"{name}: {kind}"] += 1
    return kinds


REWARD_GROUP = "mtsamples_procedures_reward"
PER_JUDGE_GROUP = "mtsamples_procedures_per_judge"
RELIABILITY_GROUP = "mtsamples_procedures_judge_reliability"


def metric_metadata(judge_names: Sequence[str]) -> list[MetricMetadata]:
    """Display metadata of every stat the metric can emit for this panel (the schema copies it)."""
    dims = [
        MetricMetadata(
            name=dimension_stat_name(d),
            display_name=f"Judge {d} (1-5)",
            short_display_name=d.capitalize(),
            description=f"Mean {d} score (1-5) given by the judges with a valid {d} score for the note.",
            lower_is_better=False,
            group=REWARD_GROUP,
        )
        for d in DIMENSIONS
    ]
    judges = [
        MetricMetadata(
            name=stat_name,
            display_name=f"Reward by {j}",
            short_display_name=f"Reward ({j})",
            description=f"Reward (0-1) given by judge {j} alone, over the notes it scored "
            "(0 for empty answers); notes it failed on are left out.",
            lower_is_better=False,
            group=PER_JUDGE_GROUP,
        )
        for j, stat_name in judge_reward_stat_names(judge_names).items()
    ]
    alphas = [
        MetricMetadata(
            name=alpha_stat_name(d),
            display_name=f"Judge agreement on {d} (Krippendorff's alpha)",
            short_display_name=f"Alpha {d}",
            description=f"Krippendorff's alpha (ordinal) of the judges' {d} scores over the run's notes; "
            "1 is perfect agreement, 0 is chance. Absent when undefined (one judge, no variation).",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        )
        for d in DIMENSIONS
    ]
    return [
        MetricMetadata(
            name=REWARD,
            display_name="Reward (0-1)",
            short_display_name="Reward",
            description="Mean over judges of the mean of score/5 over Accuracy, Completeness and Clarity; "
            "notes no judge could score are left out (see Unjudged), empty answers score 0.",
            lower_is_better=False,
            group=REWARD_GROUP,
        ),
        *dims,
        MetricMetadata(
            name=JURY_SCORE,
            display_name="Jury score (1-5, as MedHELM)",
            short_display_name="Jury Score",
            description="MedHELM's number for this scenario: the mean of every valid 1-5 score over judges and "
            "dimensions (HELM's LLM jury mean, without its int() truncation); notes no judge could score are left "
            "out, empty answers score 1.",
            lower_is_better=False,
            group=REWARD_GROUP,
        ),
        *judges,
        MetricMetadata(
            name=JUDGE_FAILURES,
            display_name="Judge failures per note",
            short_display_name="Judge failures",
            description="Mean number of judges per note whose call failed or whose reply had no valid score.",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=JUDGE_FAILURE_RATE,
            display_name="Judge failure rate",
            short_display_name="Failure rate",
            description="Share of judge calls that failed or gave no valid score.",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=SAME_VERDICT_RATE,
            display_name="Same verdict for different answers",
            short_display_name="Same verdict",
            description="Share of judge verdicts that the judge gave, scores and explanations alike, to three or "
            "more different answers in the run: a judge not reading the answer. Such verdicts count for nothing "
            "(they are among the judge failures).",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=UNJUDGED,
            display_name="Unjudged notes",
            short_display_name="Unjudged",
            description="Share of notes that no judge could score; they have no reward.",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=EMPTY_ANSWER,
            display_name="Empty answers",
            short_display_name="Empty",
            description="Share of notes where the model's answer was empty (after removing <think> blocks); "
            "they score 0.",
            lower_is_better=True,
            group=RELIABILITY_GROUP,
        ),
        *alphas,
    ]


def note_stats(note: NoteScores, judge_stat_names: Mapping[str, str]) -> list[Stat]:
    """Per-note stats; counts are always present so their means run over every note.

    `judge_stat_names` maps panel judges to their per-judge stat names; a judge missing from it (no
    panel given) gets the plain slugged name.
    """
    stats = [
        Stat(MetricName(EMPTY_ANSWER)).add(int(note.empty_answer)),
        Stat(MetricName(UNJUDGED)).add(int(note.unjudged)),
        Stat(MetricName(JUDGE_FAILURES)).add(note.failures),
    ]
    if note.panel_size and not note.empty_answer:
        # No judge is called for an empty answer: leaving those notes out keeps the run's mean equal
        # to the share of judge calls that failed.
        stats.append(Stat(MetricName(JUDGE_FAILURE_RATE)).add(note.failures / note.panel_size))
        stats.append(Stat(MetricName(SAME_VERDICT_RATE)).add(note.same_verdict / note.panel_size))
    if note.reward is not None:
        stats.append(Stat(MetricName(REWARD)).add(note.reward))
    if note.mean_score is not None:
        stats.append(Stat(MetricName(JURY_SCORE)).add(note.mean_score))
    for dimension in DIMENSIONS:
        mean = note.dimension_mean(dimension)
        if mean is not None:
            stats.append(Stat(MetricName(dimension_stat_name(dimension))).add(mean))
    for judge in note.judges:
        # An empty answer is scored 0 by the whole panel, so each judge's reward includes it too.
        judge_reward = 0.0 if note.empty_answer else judge.reward
        if judge_reward is not None:
            stat_name = judge_stat_names.get(judge.name) or judge_reward_stat_name(judge.name)
            stats.append(Stat(MetricName(stat_name)).add(judge_reward))
    return stats


def _answer(request_state: RequestState) -> str:
    result = request_state.result
    return result.completions[0].text if result is not None and result.completions else ""


class MTSamplesProceduresMetric(Metric):
    """Reward, dimensions, judge failures and per-judge rewards per note; judge agreement per run."""

    def __init__(self, judge_names: Sequence[str] = (), max_unjudged: float = DEFAULT_MAX_UNJUDGED) -> None:
        self.judge_names: list[str] = list(dict.fromkeys(str(name) for name in judge_names))
        self.max_unjudged = float(max_unjudged)
        self.judge_stat_names = judge_reward_stat_names(self.judge_names)
        self._run_view: dict[int, NoteRecord | None] = {}
        if not self.judge_names:
            hwarn("MTSamplesProceduresMetric has no judge_names; the panel is read from each note's record")

    def _score(self, request_state: RequestState, warn: bool) -> NoteScores:
        record = (request_state.annotations or {}).get(ANNOTATION_KEY)
        if warn and not isinstance(record, Mapping):
            hwarn(f"instance {request_state.instance.id}: no '{ANNOTATION_KEY}' annotation; counted as unjudged")
        return score_note(self._run_view.get(id(request_state), record), self.judge_names)

    def _read_run(self, scenario_state: ScenarioState) -> None:
        """The run-level view of the records (same_verdict.py): a verdict a judge gave to three or more different
        answers is invalid, which no single note shows. Kept by request state for the per-note hooks that follow;
        the records on disk keep the raw verdicts, and the report applies the same rule when it reads them."""
        states = [s for s in scenario_state.request_states if s.reference_index is None]
        notes = [(_answer(s), NoteRecord.from_dict((s.annotations or {}).get(ANNOTATION_KEY))) for s in states]
        self._run_view = {id(s): r for s, r in zip(states, without_same_verdicts(notes), strict=True)}

    def evaluate_generation(
        self,
        adapter_spec: AdapterSpec,
        request_state: RequestState,
        metric_service: MetricService,
        eval_cache_path: str,
    ) -> list[Stat]:
        return note_stats(self._score(request_state, warn=True), self.judge_stat_names)

    def evaluate(
        self, scenario_state: ScenarioState, metric_service: MetricService, eval_cache_path: str, parallelism: int
    ) -> MetricResult:
        """HELM's per-note evaluation on the run-level view of the records, plus judge agreement, which only
        exists over many notes."""
        self._read_run(scenario_state)
        result = super().evaluate(scenario_state, metric_service, eval_cache_path, parallelism)
        result.aggregated_stats.extend(self.agreement_stats(scenario_state))
        self._say_why_judges_failed(scenario_state)
        self._warn_if_unjudged(scenario_state)
        return result

    def _say_why_judges_failed(self, scenario_state: ScenarioState) -> None:
        """One line at the end of the run: how many judge calls failed and why, with what to do (failure_reasons)."""
        states = [s for s in scenario_state.request_states if s.reference_index is None]
        notes = [self._score(s, warn=False) for s in states]
        calls = sum(note.panel_size for note in notes if not note.empty_answer)
        records = [self._run_view.get(id(s), (s.annotations or {}).get(ANNOTATION_KEY)) for s in states]
        failures = record_failures(records, len(self.judge_names))
        if failures:
            hwarn(f"{len(failures)} of {calls} judge calls failed: {reasons_text(failures)}")

    def _warn_if_unjudged(self, scenario_state: ScenarioState) -> None:
        """HELM's built-in scores an unjudged run as all 1s and exits 0; ours says plainly what happened, and
        fails the run past ``max_unjudged`` so scripts and CI do not read a half-judged run as a result."""
        states = [s for s in scenario_state.request_states if s.reference_index is None]
        notes = [self._score(s, warn=False) for s in states]
        unjudged = sum(note.unjudged for note in notes)
        if not unjudged:
            return
        records = [
            self._run_view.get(id(s), (s.annotations or {}).get(ANNOTATION_KEY))
            for s, n in zip(states, notes, strict=True)
            if n.unjudged
        ]
        kinds = failure_kinds(records)

        def too_long_for_context(kind: str) -> bool:  # kinds read "judge: reason"
            return kind.partition(": ")[2].startswith(CONTEXT_FAILURE)

        too_long = sum(count for kind, count in kinds.items() if too_long_for_context(kind))
        fixable = Counter({kind: count for kind, count in kinds.items() if not too_long_for_context(kind)})
        reasons = ", ".join(f"{kind} ×{count}" for kind, count in fixable.most_common(3))
        context = (
            f"{too_long} judge calls had a {CONTEXT_FAILURE}, which no re-run fixes: give the judge a larger "
            "context or use a judge with one"
            if too_long
            else ""
        )
        summary = f"{unjudged} of {len(notes)} notes have no reward: every judge failed on them"
        summary += f" ({'; '.join(part for part in (reasons, context) if part)})"
        if unjudged / len(notes) > self.max_unjudged:
            rerun = (
                " Re-running the same command makes only the failed judge calls (the rest replay from HELM's cache);"
                if fixable
                else ""
            )
            raise UnjudgedNotesError(
                f"{summary}; max_unjudged={self.max_unjudged:g}.{rerun} max_unjudged=1 reports such notes instead."
            )
        hwarn(f"{summary}; the reasons are in each note's '{ANNOTATION_KEY}' annotation")

    def agreement_stats(self, scenario_state: ScenarioState) -> list[Stat]:
        """Krippendorff's alpha per dimension, one per split/perturbation context like HELM's own stats."""
        notes_by_context: dict[MetricContext, list[NoteScores]] = {}
        for request_state in scenario_state.request_states:
            if request_state.reference_index is not None:
                continue
            context = MetricContext.from_instance(request_state.instance)
            notes_by_context.setdefault(context, []).append(self._score(request_state, warn=False))
        stats: list[Stat] = []
        for context, notes in notes_by_context.items():
            for dimension in DIMENSIONS:
                name = alpha_stat_name(dimension)
                alpha = ordinal_alpha(rating_matrix(notes, dimension)[1])
                if alpha.value is None:
                    hlog(f"{name} not reported for split {context.split}: {alpha.reason}")
                    continue
                hlog(f"{name} = {alpha.value:.3f} ({alpha.judges} judges, {alpha.pairable_notes} paired notes)")
                metric_name = MetricName(
                    name, split=context.split, sub_split=context.sub_split, perturbation=context.perturbation
                )
                stats.append(Stat(metric_name).add(alpha.value))
        return stats

    def get_metadata(self) -> list[MetricMetadata]:
        return metric_metadata(self.judge_names)
