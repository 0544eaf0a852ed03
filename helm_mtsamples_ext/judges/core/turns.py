"""One judge's turns on one note, for the doors without HELM (Inspect, verifiers): ask, read, repair, stop.

Why one loop: each door had written the repair turns again, and two copies drift (a door that read a refusal as
"no verdict" sent it repair turns). The rules are HELM's path's (``call.py``): a reply is read by
``reply/reading.read_reply``; a reply that may be fixed gets at most ``repair_turns`` more turns (the prompt, the
reply, ``REPAIR_INSTRUCTION``), stopping when the same bad reply comes back; a reply cut at ``max_tokens`` gets
twice as many; a reply over ``REPLY_CAP`` is ``reply too long``, unread and never sent back, at every door; an
exchange that failed (the server's error after its retries, a reply with nothing to read) ends the judgment with
its named failure, never a score. How a door sends one turn (its client, its retries, its
structured-output fallback) is its own ``send``; this module sends nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from helm_mtsamples_ext.common.failure_kinds import reply_too_long
from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.prompt import REPAIR_INSTRUCTION
from helm_mtsamples_ext.judges.core.reply.reading import read_reply
from helm_mtsamples_ext.judges.core.reply.served_model import ServedModel
from helm_mtsamples_ext.judges.core.settings import REPLY_CAP, STORED_REPLY_CAP

__all__ = ["Exchange", "Messages", "Send", "judge_turns"]

Messages = list[dict[str, str]]
"""A turn's chat messages in OpenAI's shape (``role``, ``content``); a door converts them to its own."""


@dataclass(frozen=True)
class Exchange:
    """What one turn got back, in words every door can give: the reply's text and finish reason (OpenAI's), or the
    failure that ends the judgment (the failure kinds of common/failure_kinds.py)."""

    text: str = ""
    finish: str | None = None
    failure: str | None = None
    mode: str | None = None  # the structured-output mode the turn was sent in
    tokens_in: int | None = None
    tokens_out: int | None = None
    reported_model: str | None = None
    system_fingerprint: str | None = None
    length: int | None = None
    """The reply's whole length in characters, when the door clipped ``text`` before it got here (a transport
    that keeps no more than the cap); None: ``text`` is the whole reply."""


Send = Callable[[Messages, int], Awaitable[Exchange]]
"""A door's one turn: the messages and the reply's token budget in, what came back out."""


async def judge_turns(
    send: Send, prompt: str, untrusted: Sequence[str], max_tokens: int, repair_turns: int
) -> Judgment:
    """Ask ``send`` for a verdict on ``prompt`` until one counts, a failure ends it, or the repair turns are spent.
    ``untrusted`` are the prompt's texts a verdict is never read from (the candidate answer, the note)."""
    turns = Judgment()
    messages: Messages = [{"role": "user", "content": prompt}]
    previous: str | None = None
    for _ in range(1 + repair_turns):
        got = await send(messages, max_tokens)
        turns.count(None, got.tokens_in, got.tokens_out, _served(turns.served, got))
        turns.structured = got.mode or turns.structured
        if got.failure is not None:  # nothing to read, and another turn would get nothing again (as call.py)
            turns.failure = got.failure
            turns.raw_reply = got.text[:REPLY_CAP] or turns.raw_reply
            break
        length = max(got.length or 0, len(got.text))
        if length > REPLY_CAP:  # never parsed, never sent back: a verdict is a few hundred characters (call.py)
            turns.failure, turns.raw_reply = reply_too_long(length, REPLY_CAP), got.text[:STORED_REPLY_CAP]
            break
        reading = read_reply(got.text, got.finish, untrusted)
        turns.verdict, turns.failure, turns.raw_reply = reading.verdict, reading.failure, got.text[:REPLY_CAP]
        if not reading.retry or got.text == previous:  # the same bad reply again: more turns would get it again
            break
        previous = got.text
        max_tokens = 2 * max_tokens if reading.more_tokens else max_tokens
        messages = [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": got.text[:REPLY_CAP]},
            {"role": "user", "content": REPAIR_INSTRUCTION},
        ]
    turns.tokens = None if turns.tokens_in is None else turns.tokens_in + (turns.tokens_out or 0)
    return turns


def _served(before: ServedModel, got: Exchange) -> ServedModel:
    """The model the server said it ran, field by field: a reply naming one of them keeps the other's last word."""
    reported = got.reported_model or before.reported_model
    fingerprint = got.system_fingerprint or before.system_fingerprint
    return ServedModel(reported, fingerprint, before.loaded_model) if reported or fingerprint else before
