"""A finished run's judges asked again, live: the run's panel, prompt, settings and parser, and no cache at all.

Why a cache of HELM's own that holds nothing (``BlackHoleCacheBackendConfig``, what HELM's executor uses when no
cache is configured) and not the run's: the question is what the judge says *today*, so a reply must never come
from the run's cache, and a recheck must never write into it either (a later ``helm-run`` of the suite still
replays the verdicts it recorded, with zero calls). Everything else is the run's: the panel is made ready to
judge as the annotator makes it (``session.JudgingSession``: the same keys, caller, verdict parser and per-endpoint
pace), and what comes back is kept as the run's record keeps it, in memory.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import BlackHoleCacheBackendConfig

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.prompt import build_prompt
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.helm_calls.session import JudgingSession, Question


def question(note: str, answer: str, reference: str, style: str) -> Question:
    """One answer as the annotator asked about it: the prompt of the run's ``judge_prompt`` style, and the answer
    and the note as the texts no verdict is read from."""
    return build_prompt(note, answer, reference, style), (answer, note)


@contextmanager
def uncached_client(local_path: str) -> Iterator[AutoClient]:
    """HELM's AutoClient as helm-run builds it from ``local_path`` (prod_env: credentials.conf, its model
    deployments), but with HELM's cache that stores nothing, and files (if a client writes any) in a temporary
    directory: nothing of the run's is read or written."""
    from helm.benchmark.config_registry import (
        register_builtin_configs_from_helm_package,
        register_configs_from_directory,
    )
    from helm.common.general import get_credentials

    register_builtin_configs_from_helm_package()
    register_configs_from_directory(local_path)
    with tempfile.TemporaryDirectory(prefix="mtsamples-recheck-") as files:
        yield AutoClient(get_credentials(local_path), files, BlackHoleCacheBackendConfig())


def ask_again(
    client: AutoClient,
    panel: Sequence[JudgeSpec],
    args: RunEntryArgs,
    knobs: Mapping[str, Any],
    questions: Sequence[Question],
) -> list[dict[str, Any]]:
    """Each judge of ``panel`` asked about each question, live, with the run's call settings (``args`` and the
    stored ``knobs``); the records (as scenario_state.json would hold them), in the order of ``questions``. A judge
    that cannot be used at all (no deployment, no key, a refused key) raises ``JudgeAccessError`` with one line."""
    session = JudgingSession.open(client, panel, CallSettings.from_args(args, **knobs))
    records: list[dict[str, Any]] = [{} for _ in questions]
    for i, record in session.judge([str(i) for i in range(len(questions))], lambda i: session.calls(questions[i])):
        records[i] = record.to_dict()
    return records
