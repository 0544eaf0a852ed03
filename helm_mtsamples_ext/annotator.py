"""The judge panel as a HELM Annotator: a whole run's judge calls at once, a failure recorded as one.

HELM's ``LLMAsJuryAnnotator`` calls judges one after another through ``AutoClient.make_request``
(5 s·2^n retry waits), accepts any score and lets a note nobody judged look judged. Here the annotator
sets ``use_global_metric``, so HELM hands it every note of the run at once (``annotate_all``) and the
calls in flight to each endpoint are set by that endpoint's limit (``fanout.py``), not by HELM's
``--num-threads``. The panel is made ready by ``judges.session.JudgingSession`` (as the recheck makes it);
each call is made by ``judges.call.JudgeCaller`` (structured output, rate limits,
breaker, retries) through HELM's client and cache, so records, cache keys and resume are those of a
note-by-note run; a judge that did not give a valid verdict is recorded as failed with its reason. A
judge that cannot be used at all (no deployment, no key, a refused key) fails the run with one line.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.annotation.annotator import Annotator
from helm.clients.auto_client import AutoClient
from helm.common.hierarchical_logger import hlog
from tqdm import tqdm

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.answer import first_completion
from helm_mtsamples_ext.common.outside_text import encodable, encodable_text
from helm_mtsamples_ext.common.panel import panel_from_args
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.helm_host.families import creator_of
from helm_mtsamples_ext.judges.core.question import NoteQuestion, ask_about
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.helm_calls.batch.run import BATCH_DIR, BatchItem, BatchSettings, batch_all
from helm_mtsamples_ext.judges.helm_calls.progress import progress_bar
from helm_mtsamples_ext.judges.helm_calls.session import Call, JudgingSession
from helm_mtsamples_ext.judges.helm_calls.suite_progress import suite_position

DEFAULT = RunEntryArgs()
"""The annotator's defaults are the run entry's (run_entry_args.py): a run_spec.json that leaves an argument
out (an earlier release's, or one off no default) gets the value the run entry would have given."""


def make_encodable(state: RequestState) -> int:
    """The model's completions of ``state`` with what no file or hash can hold replaced by U+FFFD, in place (HELM's
    states after annotation share this result, so its own metrics, which encode every token, and
    scenario_state.json get the safe text too); how many characters were replaced. One such character in an
    answer otherwise ended the run, and every re-run of it from HELM's cache."""
    result = state.result
    if result is None or not isinstance(result.completions, list):
        return 0
    replaced = 0
    for i, completion in enumerate(result.completions):
        text = encodable(completion.text)
        tokens = [replace(token, text=encodable_text(token.text)) for token in completion.tokens]
        if text.replaced or tokens != completion.tokens:
            result.completions[i] = replace(completion, text=text.text, tokens=tokens)
            replaced += text.replaced
    if replaced:
        hlog(
            f"mtsamples_procedures: the answer to note {state.instance.id} holds {replaced} character(s) no file can "
            "hold (lone surrogates, control characters): kept and judged with U+FFFD in their place"
        )
    return replaced


def question_of(state: RequestState, args: RunEntryArgs) -> NoteQuestion:
    """What the panel is asked about a note, as every door asks it (judges/core/question.py): the answer cut at
    ``answer_cap``, its reasoning cut off with ``use_think``, and the prompt, or none for an empty answer."""
    instance = state.instance
    reference = instance.references[0].output.text if instance.references else ""
    return ask_about(
        first_completion(state.result.completions if state.result else None), instance.input.text, reference,
        use_think=args.use_think, answer_cap=args.answer_cap, judge_prompt=args.judge_prompt,
    )  # fmt: skip


def prompt_of(state: RequestState, args: RunEntryArgs) -> str | None:
    """The judge prompt of a note; None for an empty answer, which no judge is asked about."""
    question = question_of(state, args).question
    return None if question is None else question[0]


class JudgeAnnotator(Annotator):
    """The ``mtsamples_procedures`` annotation: one record per note, in the format of the package README.

    A thin HELM adapter: it reads HELM's request states and hands the judges wing the notes; the arguments are
    those run_spec.json stores (RunEntryArgs.annotator_args, every release's), plus two knobs of the calls."""

    name = names.ANNOTATION_KEY
    use_global_metric = True
    """HELM then calls ``annotate_all`` with every note of the run (the name is HELM's)."""

    def __init__(
        self,
        auto_client: AutoClient,
        judges: list[dict[str, Any]],
        judge_prompt: str = DEFAULT.judge_prompt,
        use_think: bool = DEFAULT.use_think,
        judge_timeout: float = DEFAULT.judge_timeout,
        judge_structured: str = DEFAULT.judge_structured,
        judge_max_wait: float = DEFAULT.judge_max_wait,
        judge_max_concurrency: int = DEFAULT.judge_max_concurrency,
        judge_rpm: float | None = DEFAULT.judge_rpm,
        max_tokens: int = CallSettings.max_tokens,
        retry_base: float = CallSettings.retry_base,
        judge_batch: bool = DEFAULT.judge_batch,
        judge_batch_fallback: bool = DEFAULT.judge_batch_fallback,
        answer_cap: int = DEFAULT.answer_cap,
        explanation_cap: int | None = DEFAULT.explanation_cap,
    ) -> None:
        panel = panel_from_args(judges)
        args = RunEntryArgs.parse(
            judge_prompt=judge_prompt, use_think=use_think, judge_timeout=judge_timeout,
            judge_structured=judge_structured, judge_max_wait=judge_max_wait,
            judge_max_concurrency=judge_max_concurrency, judge_rpm=judge_rpm,
            judge_batch=judge_batch, judge_batch_fallback=judge_batch_fallback, answer_cap=answer_cap,
            explanation_cap=explanation_cap,
        )  # fmt: skip
        self.args = args
        self.settings = CallSettings.from_args(args, max_tokens=max_tokens, retry_base=retry_base)
        self._session = JudgingSession.open(auto_client, panel, self.settings)
        self._judges = self._session.judges
        self._batch_settings = BatchSettings(fallback=args.judge_batch_fallback)
        self._batch_dir = Path(auto_client.file_storage_path) / BATCH_DIR

    def annotate(self, request_state: RequestState) -> dict[str, Any]:
        """One note (HELM's per-note path, used when another annotator of the run is not global)."""
        make_encodable(request_state)
        return self._judge_notes([request_state])[0]

    def annotate_all(self, request_states: list[RequestState]) -> list[dict[str, Any]]:
        """Every note of the run, in HELM's shape for ``use_global_metric``: ``{name: record}`` per note."""
        for state in request_states:
            make_encodable(state)
        failures = self._batch_first_turns(request_states) if self.args.judge_batch else {}
        judges = "+".join(judge.name for judge in self._judges)
        with progress_bar(len(request_states), judges, suite_position()) as bar:
            records = self._judge_notes(request_states, bar, failures)
        return [{self.name: record} for record in records]

    def _judge_notes(
        self, states: list[RequestState], bar: tqdm | None = None, failures: dict[Any, str] | None = None
    ) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = [{} for _ in states]
        cuts: dict[int, int | None] = {}
        calls = partial(self._calls, states, failures or {}, cuts)
        for i, record in self._session.judge([str(state.instance.id) for state in states], calls, bar):
            # The model under test's maker, for self-preference: HELM's registry (prod_env/ too) is loaded only now.
            cut = cuts.pop(i, None) if not record.empty_answer else None
            records[i] = replace(record, model_family=creator_of(states[i].request.model), answer_cut=cut).to_dict()
            if bar is not None:
                bar.update(1)
        return records

    def _calls(
        self, states: list[RequestState], failures: dict[Any, str], cuts: dict[int, int | None], i: int
    ) -> list[Call]:
        """A note's judge calls (none for an empty answer), the prompt built only when the note's turn comes; a
        judge whose batch request failed gets that failure, named, without a call. ``cuts`` gets the answer's
        length where ``answer_cap`` cut it, for the record."""
        asked = question_of(states[i], self.args)
        cuts[i] = asked.answer.cut_from
        failed = {j.name: failures[(i, j.name)] for j in self._judges if (i, j.name) in failures}
        return self._session.calls(asked.question, failed)

    def _batch_first_turns(self, states: list[RequestState]) -> dict[Any, str]:
        """judge_batch: every first turn not yet in HELM's cache is answered through its endpoint's Batch API
        into that cache, so the direct pass replays it; {(note, judge): failure} for what the error file named."""
        items: dict[str, list[BatchItem]] = {}
        for i, state in enumerate(states):
            prompt = prompt_of(state, self.args)
            for judge in self._judges if prompt is not None else []:
                request = self._session.caller.first_request(judge, prompt or "")
                items.setdefault(judge.model_deployment, []).append(BatchItem((i, judge.name), request))
        return batch_all(self._session.caller.client, items, self._batch_dir, self._batch_settings)
