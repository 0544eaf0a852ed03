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

import dataclasses
from collections.abc import Mapping, Sequence

from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.metrics.metric import Metric, MetricMetadata, MetricResult
from helm.benchmark.metrics.metric_name import MetricContext, MetricName
from helm.benchmark.metrics.metric_service import MetricService
from helm.benchmark.metrics.statistic import Stat
from helm.common.hierarchical_logger import hlog, hwarn

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.answer import first_completion
from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.run_spec import RunEntryArgs
from helm_mtsamples_ext.scoring.failure_reasons import reasons_text, record_failure_kinds
from helm_mtsamples_ext.scoring.reward import (
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
from helm_mtsamples_ext.scoring.stat_metadata import metric_metadata
from helm_mtsamples_ext.scoring.unjudged import Unjudged, failure_kinds
from helm_mtsamples_ext.scoring.verdict_view import run_view

DEFAULT_MAX_UNJUDGED = RunEntryArgs().max_unjudged


class UnjudgedNotesError(RuntimeError):
    """More notes went unjudged than the run entry's ``max_unjudged`` allows: the run fails (HELM lists it
    under "Failed runs" and helm-run exits non-zero) instead of reporting a reward over the rest."""


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
    return first_completion(request_state.result.completions if request_state.result else None)


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
        record = (request_state.annotations or {}).get(names.ANNOTATION_KEY)
        if warn and not isinstance(record, Mapping):
            hwarn(f"instance {request_state.instance.id}: no '{names.ANNOTATION_KEY}' annotation; counted as unjudged")
        return score_note(self._run_view.get(id(request_state), record), self.judge_names)

    def _read_run(self, scenario_state: ScenarioState) -> None:
        """The run-level view of the records (verdict_view.py): a verdict a judge gave to three or more different
        answers is invalid, which no single note shows, when voiding it does not raise the run's reward (this run
        is one model's: a low verdict its answers drew is never voided here). Kept by request state for the per-note
        hooks that follow; the records on disk keep the raw verdicts, and the report reads them the same way (plus
        the verdicts crossing models, which only a suite shows)."""
        states = [s for s in scenario_state.request_states if s.reference_index is None]
        notes = [(_answer(s), NoteRecord.from_dict((s.annotations or {}).get(names.ANNOTATION_KEY))) for s in states]
        self._run_view = {id(s): r for s, r in zip(states, run_view(notes, self.judge_names), strict=True)}

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
        records = [self._run_view.get(id(s), (s.annotations or {}).get(names.ANNOTATION_KEY)) for s in states]
        failures = record_failure_kinds(records, len(self.judge_names))
        if failures:
            hwarn(f"{len(failures)} of {calls} judge calls failed: {reasons_text(failures)}")

    def _warn_if_unjudged(self, scenario_state: ScenarioState) -> None:
        """Say how many notes no judge could score and why (unjudged.py); past ``max_unjudged``, fail the run."""
        states = [s for s in scenario_state.request_states if s.reference_index is None]
        notes = [self._score(s, warn=False) for s in states]
        unjudged = sum(note.unjudged for note in notes)
        if not unjudged:
            return
        records = [
            self._run_view.get(id(s), (s.annotations or {}).get(names.ANNOTATION_KEY))
            for s, n in zip(states, notes, strict=True)
            if n.unjudged
        ]
        report = Unjudged(unjudged, len(notes), failure_kinds(records))
        if report.fails_run(self.max_unjudged):
            raise UnjudgedNotesError(report.error(self.max_unjudged))
        hwarn(report.warning())

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
        return [MetricMetadata(**dataclasses.asdict(m)) for m in metric_metadata(self.judge_names)]
