"""A panel ready to judge: its keys found and masked, its call targets, the caller checked, the fan-out built.

Why one place: the annotator (a run's first verdicts) and the recheck (the same panel asked again, live) must
ask alike, or a recheck would measure a difference of wiring, not of the judges. Both hand a panel and the
call settings to ``JudgingSession.open`` and the notes to ``judge``; how each finds its notes stays theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from helm.clients.auto_client import AutoClient
from tqdm import tqdm

from helm_mtsamples_ext.common.outside_text import encodable_text
from helm_mtsamples_ext.common.panel import JudgeSpec, JudgeTarget
from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.common.secrets import mask
from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.helm_calls.call import JudgeCaller
from helm_mtsamples_ext.judges.helm_calls.deployments import judge_target
from helm_mtsamples_ext.judges.helm_calls.entries import note_record
from helm_mtsamples_ext.judges.helm_calls.fanout import FanOut
from helm_mtsamples_ext.judges.helm_calls.keys import install_panel_keys
from helm_mtsamples_ext.judges.helm_calls.progress import ticker

Question = tuple[str, tuple[str, ...]]
"""(the judge prompt, the texts in it no verdict is read from): what the panel is asked about one note."""

Call = tuple[str, Callable[[], Judgment]]


def kept_text(secrets: tuple[str, ...], text: str) -> str:
    """What is kept of a judge's text (its reply, its error): keys masked, and what no file can hold replaced
    (outside_text.py), before HELM caches it or a record keeps it."""
    return encodable_text(mask(text, secrets))


@dataclass
class JudgingSession:
    """The panel's call targets, the one caller (cache, retries, repair turns, the verdict parser) and the
    per-endpoint fan-out, with the keys every kept text is masked of."""

    settings: CallSettings
    judges: list[JudgeTarget]
    caller: JudgeCaller
    fanout: FanOut
    secrets: tuple[str, ...]

    @classmethod
    def open(cls, auto_client: AutoClient, panel: Sequence[JudgeSpec], settings: CallSettings) -> JudgingSession:
        """Find and bind each endpoint's key (``keys.install_panel_keys``), register each judge's deployment and
        build its client now: a judge that cannot be used raises ``JudgeAccessError`` before any call."""
        keys = install_panel_keys(list(panel), auto_client)
        judges = [judge_target(spec, keys.by_url) for spec in panel]
        caller = JudgeCaller(auto_client, settings, partial(kept_text, keys.secrets))
        for judge in judges:
            caller.preflight(judge)
        fanout = FanOut([j.endpoint for j in judges], settings.max_concurrency, limit_of=caller.limit_of)
        return cls(settings, judges, caller, fanout, keys.secrets)

    def keep(self, text: str) -> str:
        """``text`` as a record keeps it (``kept_text``)."""
        return kept_text(self.secrets, text)

    def calls(self, question: Question | None, failures: Mapping[str, str] | None = None) -> list[Call]:
        """One note's calls, one per judge (none without a question: an empty answer is asked about to no one);
        a judge named in ``failures`` gets that failure without a call. A fatal failure of an earlier call
        (a refused key) ends the run here."""
        if self.caller.fatal is not None:
            raise self.caller.fatal
        if question is None:
            return []
        prompt, untrusted = question
        failed = failures or {}
        return [
            (judge.endpoint, partial(Judgment, failure=failed[judge.name]))
            if judge.name in failed
            else (judge.endpoint, partial(self.caller.call, judge, prompt, untrusted))
            for judge in self.judges
        ]

    def judge(
        self, note_ids: Sequence[str], calls_of: Callable[[int], list[Call]], bar: tqdm | None = None
    ) -> Iterator[tuple[int, NoteRecord]]:
        """Each note's record (``entries.note_record``, every text kept as ``keep`` keeps it), as its calls end,
        with its index in ``note_ids``; ``bar``, if any, is told which endpoints hold calls back."""
        names: dict[str, list[str]] = {}
        for judge in self.judges:
            names.setdefault(judge.endpoint, []).append(judge.name)
        tick = ticker(bar, self.caller.gates, {endpoint: "+".join(n) for endpoint, n in names.items()})
        for i, outcomes in self.fanout.run(range(len(note_ids)), calls_of, tick):
            yield i, note_record(note_ids[i], self.judges, outcomes, self.keep)
