"""Which model each judge's verdicts came from, as its server reported it, and a warning when they are mixed.

Why: a hosted judge changes behind a fixed name. A suite extended months later replays its first notes from
HELM's cache (the old model's verdicts) and judges the new ones live (today's model), and nothing in the
rewards shows it. The record keeps, per verdict, the ``model`` and ``system_fingerprint`` the server's reply
named and the model its server said it loaded (judges/core/reply/served_model.py): a local server echoes any name, so
only the last tells a 135M model from a 7B one behind the same name. This table counts them per judge, and a
judge whose verdicts came from more than one of any of them is named in a WARNING line.

Only verdicts that counted (status ``ok``) are counted. A verdict whose server reported nothing, or whose
record predates these fields, has a blank model or fingerprint: it is counted on its own row but never
taken for a second version (unknown is not different). Pure: the instances table in, a table and lines out.
"""

from __future__ import annotations

import pandas as pd

VERSION_COLUMNS = ["panel", "judge", "reported_model", "system_fingerprint", "loaded_model", "n"]
_VALUES = ["reported_model", "system_fingerprint", "loaded_model"]
_WHAT = {
    "reported_model": "reported models",
    "system_fingerprint": "system fingerprints",
    "loaded_model": "loaded models",
}


def judge_versions(instances: pd.DataFrame) -> pd.DataFrame:
    """One row per panel, judge, reported model and fingerprint: how many of the judge's verdicts came from it."""
    verdicts = instances[instances["status"] == "ok"]
    if verdicts.empty:
        return pd.DataFrame(columns=VERSION_COLUMNS)
    table = verdicts.reindex(columns=["panel", "judge", *_VALUES])  # a table without the columns: all blank
    for column in _VALUES:
        table[column] = table[column].map(lambda value: value if isinstance(value, str) else "")
    counted = table.groupby(["panel", "judge", *_VALUES], sort=False).size().reset_index(name="n")
    return counted.sort_values(["panel", "judge", "n"], ascending=[True, True, False], kind="stable")[
        VERSION_COLUMNS
    ].reset_index(drop=True)


def _listed(rows: pd.DataFrame, column: str) -> str:
    counts = rows[rows[column] != ""].groupby(column, sort=False)["n"].sum()
    return ", ".join(f"{value} ({n} verdicts)" for value, n in counts.items())


def version_warnings(versions: pd.DataFrame) -> list[str]:
    """One WARNING line per judge whose verdicts in the suite came from more than one reported model or
    fingerprint (per panel); none when each judge's known values are one."""
    lines = []
    for (panel, judge), rows in versions.groupby(["panel", "judge"], sort=False):
        mixed = [c for c in _VALUES if rows.loc[rows[c] != "", c].nunique() > 1]
        if not mixed:
            continue
        what = " and ".join(_WHAT[c] for c in mixed)
        seen = "; ".join(_listed(rows, c) for c in mixed)
        lines.append(
            f"WARNING: Judge {judge} (panel {panel}): its verdicts came from more than one of its server's {what}: "
            f"{seen}. The judge changed within the suite (e.g. part of it replayed from HELM's cache): compare its "
            "rewards across these only with care; judge_versions.csv lists them."
        )
    return lines
