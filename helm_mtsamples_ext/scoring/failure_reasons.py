"""Why judge calls failed, counted and with what to do, where people look: helm-run's end of run, the report's
stdout and the top of report.md.

Why: a key-free first run said "judged 2/10" and "80.0%" failures, and not why (issue 22): 7 calls timed out
in the queue of a server taking one at a time and 9 prompts were too long for its 2048-token context, each
with its own fix. Each failure is recorded with its reason (``record.py``); the kind is the reason's text
before its first ':', with sizes dropped ("prompt too long for the judge's context (2301 tokens)" counts with
the others). Pure functions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.judges.outcome import CONTEXT_FAILURE
from helm_mtsamples_ext.scoring.same_verdict import SAME_VERDICT

NO_ANNOTATION = "no annotation"
NOT_RUN = "not run"
"""A note whose model was never asked (``helm-run --dry-run``): no judge call was made, none failed."""
DRY_RUN = "a dry run (helm-run --dry-run) asks no model and no judge: run the same command without --dry-run"
LARGER_JUDGE_MODEL = "use a larger judge model"
"""The words of every advice that blames the judge's size (the report leaves failures an answer caused out)."""
LARGER_JUDGE = f"a judge this small does not follow the verdict format: {LARGER_JUDGE_MODEL}"

ADVICE: tuple[tuple[str, str], ...] = (
    ("timed out", "raise judge_timeout, or lower judge_max_concurrency for a server that queues calls"),
    ("judge unavailable", "the judge stopped answering and its calls were cut short: check the server, re-run"),
    (CONTEXT_FAILURE, "give the judge a larger context (llama.cpp --n_ctx 8192, vLLM --max-model-len)"),
    ("connection failed", "start the server or fix judge_base_url"),
    ("gave up waiting for the endpoint", "raise judge_max_wait, or set judge_rpm to the endpoint's limit"),
    ("rate limited", "raise judge_max_wait, or set judge_rpm to the endpoint's limit"),
    ("server error repeats", "the server fails on these prompts: see its log"),
    ("not a chat completion", "judge_base_url must be the OpenAI API root, e.g. http://host:port/v1"),
    ("no verdict in reply", LARGER_JUDGE),
    ("no valid dimension", LARGER_JUDGE),
    ("reply cut off", LARGER_JUDGE),
    ("duplicate keys in the verdict", LARGER_JUDGE),
    ("verdict copied from the answer or note", "the answers carry a verdict the judge repeated: read the answers"),
    ("error beside the reply", "the judge's server or gateway reported an error with its reply: see its log, re-run"),
    ("out of memory while reading the verdict", "lower answer_cap, or give the run more memory"),
    (SAME_VERDICT, f"a judge not reading the answer: {LARGER_JUDGE_MODEL}"),
    (NO_ANNOTATION, "re-run the same command: only the missing calls are made"),
    (NOT_RUN, DRY_RUN),
)


def failure_kind(failure: str) -> str:
    """The kind of a recorded failure: its text before the first ':', without a size in parentheses."""
    kind = failure.split(":")[0].strip()
    return re.sub(r"\s*\(\d[^)]*\)$", "", kind) or "failed"


def advice(kind: str) -> str | None:
    """What to do about a kind of failure, when there is something to say."""
    return next((what for prefix, what in ADVICE if kind.startswith(prefix)), None)


def reasons_text(failures: Iterable[str]) -> str:
    """Each kind with its count, most frequent first, and its advice: "7 timed out (raise judge_timeout, ...);
    3 prompt too long for the judge's context (give the judge a larger context ...)"; empty when none."""
    counts = Counter(failure_kind(f) for f in failures)
    parts = []
    for kind, n in counts.most_common():
        what = advice(kind)
        parts.append(f"{n} {kind}" + (f" ({what})" if what else ""))
    return "; ".join(parts)


def record_failures(records: Iterable[object], panel_size: int = 1) -> list[str]:
    """Every failed judge call's reason in these annotation records (a note without a record is a failure of
    each of the panel's ``panel_size`` judges)."""
    failures: list[str] = []
    for raw in records:
        record = raw if isinstance(raw, NoteRecord) else NoteRecord.from_dict(raw)
        if record is None:
            failures += [NO_ANNOTATION] * max(1, panel_size)
            continue
        failures += [record.failure_of(name) for name in record.judges if record.judge_failed(name)]
    return failures


def panel_line(panel: str, failures: list[str], calls: int) -> str | None:
    """One panel's line: how many of its calls failed, and why; None when none failed."""
    if not failures:
        return None
    if all(failure_kind(f) == NOT_RUN for f in failures):
        return f"Judge panel {panel}: nothing was judged ({len(failures)} of {calls} judge calls not made): {DRY_RUN}"
    return f"Judge panel {panel}: {len(failures)} of {calls} judge calls failed: {reasons_text(failures)}"


def panel_lines(rows: Iterable[tuple[str, str, str]]) -> list[str]:
    """A line per panel with failed calls, in panel order; ``rows`` are (panel, status, failure) per judge call
    as report.py's instances table has them ("empty_answer" rows made no call)."""
    calls: Counter[str] = Counter()
    failures: dict[str, list[str]] = {}
    for panel, status, failure in rows:
        if status == "empty_answer":
            continue
        calls[panel] += 1
        failures.setdefault(panel, [])
        if status == "failed":
            failures[panel].append(str(failure or "failed"))
    lines = (panel_line(panel, failed, calls[panel]) for panel, failed in failures.items())
    return [line for line in lines if line is not None]
