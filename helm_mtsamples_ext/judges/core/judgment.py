"""What one judge's turns on one note came to, at every door: the verdict or the failure, the reply, what it cost
and the model the server said it ran; and the record's entry made from it.

Why one type: HELM's call path (threads, HELM's cache) and the doors without HELM (async clients) each kept a copy
of this result with its own entry-making, and two copies drift: one masked the served model's name of the keys it
repeats and the other did not. Each transport fills a ``Judgment`` its own way; the entry is made here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.judges.core.reply.reading import entry_of
from helm_mtsamples_ext.judges.core.reply.served_model import NOT_REPORTED, ServedModel
from helm_mtsamples_ext.judges.core.reply.verdict import Verdict

__all__ = ["Judgment"]


@dataclass
class Judgment:
    """The judgment a judge's turns came to, and what they cost (token counts None until a server reported any)."""

    verdict: Verdict | None = None
    failure: str | None = None
    raw_reply: str | None = None
    tokens: int | None = None
    structured: str | None = None  # the structured-output mode the last turn was sent in
    tokens_in: int | None = None
    tokens_out: int | None = None
    served: ServedModel = NOT_REPORTED

    def count(
        self,
        tokens: int | None = None,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        served: ServedModel = NOT_REPORTED,
    ) -> None:
        """Add a turn's tokens to the judgment's; the model the last reply that named one ran (the verdict's)."""
        self.tokens = _plus(self.tokens, tokens)
        self.tokens_in = _plus(self.tokens_in, tokens_in)
        self.tokens_out = _plus(self.tokens_out, tokens_out)
        if served != NOT_REPORTED:
            self.served = served

    def entry(self, scrub: Callable[[str], str], **extra: object) -> JudgeEntry:
        """The record's entry for this judge (reply/reading.py's ``entry_of``): every text, the served model's
        names too, through ``scrub``; ``extra`` is what the door knows beside (its deployment)."""
        return entry_of(
            self.verdict,
            self.failure,
            self.raw_reply,
            scrub,
            tokens=self.tokens,
            structured=self.structured,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            reported_model=_scrubbed(self.served.reported_model, scrub),
            system_fingerprint=_scrubbed(self.served.system_fingerprint, scrub),
            loaded_model=_scrubbed(self.served.loaded_model, scrub),
            **extra,
        )


def _plus(total: int | None, more: int | None) -> int | None:
    """Token counts over a judgment's turns (None until a server reported any)."""
    return more if total is None else total + (more or 0)


def _scrubbed(text: str | None, scrub: Callable[[str], str]) -> str | None:
    return None if text is None else scrub(text)
