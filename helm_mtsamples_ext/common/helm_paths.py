"""HELM's default paths, written once: where helm-run writes a suite and where it reads its keys and cache.

Every command of ours that reads or writes a suite (report, schema, estimate, recheck, models) takes the same
``-o/--output-path`` and ``--local-path`` as ``helm-run``, with ``helm-run``'s defaults: they are these. Pure.
"""

from __future__ import annotations

OUTPUT_PATH = "benchmark_output"
"""``helm-run``'s ``-o/--output-path`` default: the runs, the scenarios' files (HELM's copy of the notes), our
reports."""
LOCAL_PATH = "prod_env"
"""``helm-run``'s ``--local-path`` default: credentials.conf, model_deployments.yaml, the judges' reply cache."""
