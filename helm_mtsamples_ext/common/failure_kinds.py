"""Every kind of failed judgment, named once, with what to do about it written once.

A recorded failure is ``"<kind>: <detail>"`` (record.py keeps it per judge), and beside it the kind itself, a
constant of ``KINDS`` (the judge entry's ``failure_kind``). judges/ makes each failure from the kind constants here,
and the one place that writes a judge entry (reply/reading.py's ``entry_of``) stores its kind (``kind_of``);
scoring/ (the end-of-run lines, the unjudged summary) and report/ (the failure warnings) compare that stored kind
with the same constants, so no kind is written as free text in two places and no reader splits text, and its
advice (``ADVICE``) is the one every reader prints. A record written before kinds were stored has the text alone:
``failure_kind`` reads its kind from the text, as every reader did then. Pure: strings only.
"""

from __future__ import annotations

import re

__all__ = [
    "ADVICE",
    "CONTEXT_FAILURE",
    "KINDS",
    "REPLY_TOO_LONG",
    "advice",
    "context_failure",
    "door_failure",
    "failure_kind",
    "http_failure",
    "kind_of",
    "reply_too_long",
]

TIMED_OUT = "timed out"
JUDGE_UNAVAILABLE = "judge unavailable"
CONTEXT_FAILURE = "prompt too long for the judge's context"
"""No re-run fixes it, only a larger context: the unjudged summary counts it apart from what a re-run fixes."""
CONNECTION_FAILED = "connection failed"
GAVE_UP_WAITING = "gave up waiting for the endpoint"
RATE_LIMITED = "rate limited"
SERVER_ERROR_REPEATS = "server error repeats"
NOT_A_COMPLETION = "not a chat completion"
NO_VERDICT = "no verdict in reply"
NO_VALID_DIMENSION = "no valid dimension"
REPLY_CUT_OFF = "reply cut off"
REPLY_TOO_LONG = "reply too long"
"""A reply over the size cap: never parsed, never sent back in a repair turn, stored clipped."""
DUPLICATE_KEYS = "duplicate keys in the verdict"
"""A verdict that writes a key twice (JSON parsers keep the last silently)."""
ECHOED = "verdict copied from the answer or note"
"""A reply that is, as a whole, a verdict the candidate answer or the note wrote: the answer's doing."""
ERROR_BESIDE = "error beside the reply"
"""A 200 holding an ``error`` object beside its choices."""
REFUSED = "refused"
REQUEST_REFUSED = "request refused"
"""An HTTP 4xx no retry fixes (not a key, not a context overflow): the server refused what it was sent."""
OUT_OF_MEMORY = "out of memory while reading the verdict"
"""A reply the process had no memory to read (never "no verdict in reply": the reply may hold a valid one)."""
SAME_VERDICT = "same verdict for different answers"
"""Set after the run, not by a call: one verdict given to several different answers (scoring/same_verdict.py)."""
MARKED_FAILED = "marked failed"
NO_ANNOTATION = "no annotation"
"""A note without our record: each judge of the panel counts as failed on it."""
DOOR_FAILED = "failed in the door"
"""Our own code raised while judging at a door without HELM (a bug): counted as a failed judgment, never a 0."""
NOT_RUN = "not run"
"""A note whose model was never asked (``helm-run --dry-run``): no judge call was made, none failed."""
NO_RECORD = "no record in annotation"
"""A judge of the panel without an entry in a note's record."""
NO_TEXT = "no text"
"""A 200 whose reply holds no text but a tool call (reply/shape.py)."""
EMPTY_REPLY = "empty reply"
"""A 200 whose reply's text is empty (null content, "", blanks)."""
NO_MESSAGE = "no message in the reply"
"""A 200 whose first choice holds no message."""
SERVER_ERROR = "server error"
"""HELM's path: a server error (5xx, or a retriable error without a status) still coming back at judge_max_wait.
Its text is the server's (``HTTP 500: ...``, ``call error: ...``), so only the stored kind names it."""
BATCH_REQUEST_FAILED = "batch request failed"
"""A request the Batch API's error file (or a non-200 line of its output) named (judges/helm_calls/batch/)."""
BATCH_UNANSWERED = "request unanswered by its judge batch"
"""A batch that ended (expired, failed, cancelled) without answering, under judge_batch_fallback=false."""
NO_BATCH = "no judge batch"
"""A judge whose batches could not be made, under judge_batch_fallback=false."""
NOT_OWN_WORDS = "explanation is not the judge's own words"
"""A dimension's reason (the record's ``invalid``), not a judge's: every refused explanation (reply/explanations.py),
which table and log group by it."""
VERDICT_REFUSED = "verdict refused whole"
"""A dimension's reason: the kind given to a verdict's other dimensions when one of them shows the judge copying."""
UNNAMED = "unnamed failure"
"""A failure text that begins with no kind of this table: a bug of ours (tests/common/test_failure_kinds.py walks
every writer's failures so none is written)."""

DRY_RUN = "a dry run (helm-run --dry-run) asks no model and no judge: run the same command without --dry-run"
LARGER_JUDGE_MODEL = "use a larger judge model"
"""The words of every advice that blames the judge's size (the report leaves failures an answer caused out)."""
LARGER_JUDGE = f"a judge this small does not follow the verdict format: {LARGER_JUDGE_MODEL}"
API_ROOT = "judge_base_url must be the OpenAI API root, e.g. http://host:port/v1"
WAIT_OR_PACE = "raise judge_max_wait, or set judge_rpm to the endpoint's limit"
LARGER_CONTEXT = (
    "give the judge a larger context (llama.cpp --n_ctx 8192, vLLM --max-model-len) or use a judge with one"
)

ADVICE: tuple[tuple[str, str | None], ...] = (
    (TIMED_OUT, "raise judge_timeout, or lower judge_max_concurrency for a server that queues calls"),
    (JUDGE_UNAVAILABLE, "the judge stopped answering and its calls were cut short: check the server, re-run"),
    (CONTEXT_FAILURE, LARGER_CONTEXT),
    (CONNECTION_FAILED, "start the server or fix judge_base_url"),
    (GAVE_UP_WAITING, WAIT_OR_PACE),
    (RATE_LIMITED, WAIT_OR_PACE),
    (SERVER_ERROR_REPEATS, "the server fails on these prompts: see its log"),
    (NOT_A_COMPLETION, API_ROOT),
    (NO_VERDICT, LARGER_JUDGE),
    (NO_VALID_DIMENSION, LARGER_JUDGE),
    (REPLY_CUT_OFF, LARGER_JUDGE),
    (DUPLICATE_KEYS, LARGER_JUDGE),
    (ECHOED, "the answers carry a verdict the judge repeated: read the answers"),
    (REQUEST_REFUSED, "the judge's server refused the request: read its message (a model it does not serve?)"),
    (ERROR_BESIDE, "the judge's server or gateway reported an error with its reply: see its log, re-run"),
    (OUT_OF_MEMORY, "lower answer_cap, or give the run more memory"),
    (SAME_VERDICT, f"a judge not reading the answer: {LARGER_JUDGE_MODEL}"),
    (NO_ANNOTATION, "re-run the same command: only the missing calls are made"),
    (NOT_RUN, DRY_RUN),
    (DOOR_FAILED, "a bug of helm-mtsamples-ext: report it with the run's log (eval.log), re-run"),
    # The kinds with nothing to say yet, last: an older record's kind read from its text that began with none of
    # the kinds above still gets no advice, so a report of a stored suite says what it said.
    (SERVER_ERROR, None),
    (REPLY_TOO_LONG, None),
    (REFUSED, None),
    (NO_TEXT, None),
    (EMPTY_REPLY, None),
    (NO_MESSAGE, None),
    (BATCH_REQUEST_FAILED, None),
    (BATCH_UNANSWERED, None),
    (NO_BATCH, None),
    (MARKED_FAILED, None),
    (NO_RECORD, None),
    (NOT_OWN_WORDS, None),
    (VERDICT_REFUSED, None),
    (UNNAMED, None),
)
"""Every kind of failure our code writes, with what to do about it (None: nothing to say), for every place that
prints a failure."""

KINDS: tuple[str, ...] = tuple(kind for kind, _ in ADVICE)
"""The table: a judge entry's ``failure_kind`` is one of these."""

_BY_LENGTH = sorted(KINDS, key=len, reverse=True)
_SERVER_TEXTS = ("HTTP 5", "call error: ")
"""How HELM's path's server errors begin (judges/helm_calls/outcome.py keeps the server's words)."""


def kind_of(failure: str) -> str:
    """The kind (one of ``KINDS``) of a failure text our code wrote, named once, when its judge entry is written:
    the longest kind the text begins with as a whole phrase, a server's error at judge_max_wait as
    ``SERVER_ERROR``, else ``UNNAMED``."""
    for kind in _BY_LENGTH:
        if failure.startswith(kind) and not failure[len(kind) : len(kind) + 1].isalnum():
            return kind
    return SERVER_ERROR if failure.startswith(_SERVER_TEXTS) else UNNAMED


def failure_kind(failure: str) -> str:
    """The kind of a failure recorded before kinds were stored (an older suite's record), read from its text as
    every reader did then: its text before the first ':', without a size in parentheses."""
    kind = failure.split(":")[0].strip()
    return re.sub(r"\s*\(\d[^)]*\)$", "", kind) or "failed"


def advice(kind: str) -> str | None:
    """What to do about a kind of failure, when there is something to say."""
    return next((what for prefix, what in ADVICE if kind.startswith(prefix)), None)


_CONTEXT = re.compile(
    r"context_length_exceeded|maximum context length|context window|context length|exceeds? the context|"
    r"too many tokens|prompt is too long",
    re.IGNORECASE,
)
_TOKENS = re.compile(r"(?:resulted in|requested|prompt has|input has|got)\D{0,20}(\d+)\s*tokens", re.IGNORECASE)
_REQUESTED = re.compile(r"Requested tokens \((\d+)\)")
CONTEXT_STATUS = (400, 413, 422)
"""The client errors a server answers a prompt too long for its context with (5xx too, for some)."""


def context_failure(message: str) -> str | None:
    """The failure line for a prompt too long for the judge's context, or None when ``message`` is not that."""
    if not _CONTEXT.search(message):
        return None
    found = _TOKENS.search(message) or _REQUESTED.search(message)
    size = f" ({found.group(1)} tokens)" if found else ""
    return f"{CONTEXT_FAILURE}{size}: {LARGER_CONTEXT}"


def reply_too_long(length: int, cap: int) -> str:
    """The failure of a reply of ``length`` characters over the cap, in the same words at every door."""
    return f"{REPLY_TOO_LONG} ({length} characters; the cap is {cap})"


def door_failure(error: BaseException, said: str, where: str = "") -> str:
    """The failure of an exception our own door code raised while judging (its class and first words, already
    scrubbed), the same at every door; ``where`` names the door when its records may be read beside another's."""
    return f"{DOOR_FAILED}: {where + ': ' if where else ''}{type(error).__name__}" + (f": {said}" if said else "")


def http_failure(status: int | None, message: str) -> str:
    """A judge's HTTP error that no retry fixes, in the same words at every door (HELM's path, Inspect, verifiers):
    a prompt too long for the context as such, a 429 as a rate limit, another 4xx as a refused request, the rest as
    an unavailable judge."""
    if status is None or status in CONTEXT_STATUS or status >= 500:
        context = context_failure(message)
        if context is not None:
            return context
    if status == 429:
        return f"{RATE_LIMITED} (HTTP 429): {message}"
    if status is not None and 400 <= status < 500:
        return f"{REQUEST_REFUSED}: HTTP {status}: {message}"
    return f"{JUDGE_UNAVAILABLE}: HTTP {status}: {message}" if status else f"{JUDGE_UNAVAILABLE}: {message}"
