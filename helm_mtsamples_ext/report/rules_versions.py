"""A WARNING when a suite's notes were scored under more than one version of the rules (common/rules.py).

Why: the scores in a note's record were read from the judge's reply by the rules of the release that judged
it (verdict parsing, masking of copied text), and HELM's stats of its run by that release's reward rules. A
suite extended with a later release can hold runs scored both ways, and nothing in the rewards shows it. The
fix costs nothing: re-running the older runs with the current release re-scores them from HELM's cache, where
the judges' replies already are. Records written before versioning form their own "unversioned" group when
the suite also holds versioned ones; a suite of one version, or all unversioned, gets no line. Pure: the
instances table in, lines out.
"""

from __future__ import annotations

import math
import numbers

import pandas as pd

COLUMN = "rules_version"
UNVERSIONED = "unversioned (before versioning)"


def _label(version: object) -> str:
    """A number reads as "rules N" (a column holding blanks holds floats), a blank as UNVERSIONED."""
    if isinstance(version, numbers.Real) and not math.isnan(float(version)):
        return f"rules {round(float(version))}"
    return UNVERSIONED


def notes_per_version(instances: pd.DataFrame) -> dict[str, int]:
    """{"rules N" or UNVERSIONED: how many notes (a run's instance) were scored under it}, newest first."""
    if instances.empty:
        return {}
    table = instances.reindex(columns=["run", "note_id", COLUMN])  # a table without the column: all unversioned
    notes = table.drop_duplicates(["run", "note_id"])
    counts = notes[COLUMN].map(_label).value_counts(sort=False)
    order = sorted(counts.index, key=lambda label: -1 if label == UNVERSIONED else int(label.split()[-1]))
    return {label: int(counts[label]) for label in reversed(order)}


def rules_warnings(instances: pd.DataFrame) -> list[str]:
    """One WARNING line naming each rules version of the suite and its notes, when there is more than one."""
    counts = notes_per_version(instances)
    if len(counts) < 2:
        return []
    seen = ", ".join(f"{label}: {n} notes" for label, n in counts.items())
    return [
        f"WARNING: this suite's notes were scored under more than one version of the rules ({seen}), so their "
        "rewards may not compare. Re-run the older runs with the current release (the same helm-run command): "
        "they are re-scored from HELM's cache with zero judge calls. instances.csv's rules_version says which."
    ]
