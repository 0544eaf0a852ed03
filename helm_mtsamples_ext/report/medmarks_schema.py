"""The columns and Arrow types of Medmarks' processed parquet, which ``--export medmarks`` writes exactly.

Why: ``medarc-eval process`` writes every (model, environment) parquet with one fixed schema and ``winrate`` scans a
panel's files together; a file whose columns or types differ (``example_id`` Int64 beside another's string) stops
the scan (polars: "data type mismatch for column example_id"). Keeping Medmarks' schema, column for column, lets our
files sit in one directory with files Medmarks wrote.

Source: ``EXPECTED_ARROW_SCHEMA`` of ``medarc_verifiers/cli/process/writer.py`` in MedARC-AI/med-lm-envs (commit
0847c7b, the same text medarc-verifiers 0.1.0 ships): 24 columns, strings as ``large_string``, numbers ``float64``
but ``rollout_index``. Medmarks PR #131 is described (issue 45) as making ``example_id`` a string and adding two
columns; its text could not be read, so ``example_id`` is a ``large_string`` here and the two unnamed columns are
not written. Each string id is the decimal of MedARC's id for the note (data/example_ids.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

MEDMARKS_SCHEMA = pa.schema(
    [
        pa.field("env_id", pa.large_string()),
        pa.field("error", pa.large_string()),
        pa.field("example_id", pa.large_string()),
        pa.field("answer", pa.large_string()),
        pa.field("extras", pa.large_string()),
        pa.field("generation_ms", pa.float64()),
        pa.field("job_run_id", pa.large_string()),
        pa.field("judge_cost", pa.float64()),
        pa.field("judge_token_completion", pa.float64()),
        pa.field("judge_token_prompt", pa.float64()),
        pa.field("judge_token_total", pa.float64()),
        pa.field("model_cost", pa.float64()),
        pa.field("model_id", pa.large_string()),
        pa.field("version_info", pa.large_string()),
        pa.field("model_token_completion", pa.float64()),
        pa.field("model_token_prompt", pa.float64()),
        pa.field("model_token_total", pa.float64()),
        pa.field("reward", pa.float64()),
        pa.field("rollout_index", pa.int64()),
        pa.field("run_id", pa.large_string()),
        pa.field("scoring_ms", pa.float64()),
        pa.field("status", pa.large_string()),
        pa.field("task", pa.large_string()),
        pa.field("total_ms", pa.float64()),
    ]
)
COLUMNS: tuple[str, ...] = tuple(MEDMARKS_SCHEMA.names)


def medmarks_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """``rows`` as a table of exactly Medmarks' columns and types: a column a row lacks is null (never NaN: a
    missing number is ``None``); a key outside the schema is a programming error, not dropped silently."""
    unknown = sorted({key for row in rows for key in row} - set(COLUMNS))
    if unknown:
        raise ValueError(f"not Medmarks columns: {unknown}")
    return pa.Table.from_pylist([{name: row.get(name) for name in COLUMNS} for row in rows], schema=MEDMARKS_SCHEMA)


__all__ = ["COLUMNS", "MEDMARKS_SCHEMA", "medmarks_table"]
