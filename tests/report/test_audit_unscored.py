"""A check the audit cannot make says why by name: a control run the suite lacks, or one whose notes the judge
scored none of (the quickstart's padded control, 0 of 10 judged, read "needs reference and padded runs" though
both ran)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.report.audit import PANEL, judge_audit
from helm_mtsamples_ext.stats.intervals import BootstrapSettings

NOTES = [f"n{i}" for i in range(6)]


def instances(controls: dict[str, list[float]]) -> pd.DataFrame:
    """One judge ``j`` of panel ``p``; a control's rewards per note, NaN for a note it did not score."""
    rows = [
        {"panel": "p", "extraction": "helm", "model": f"mtsamples-control/{kind}", "note_id": note, "judge": "j",
         "judge_reward": reward, "note_reward": reward}
        for kind, rewards in controls.items()
        for note, reward in zip(NOTES, rewards, strict=True)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def panel_verdict(controls: dict[str, list[float]]) -> str:
    audit = judge_audit(instances(controls), BootstrapSettings(n_resamples=50, seed=1))
    return str(audit.loc[audit["judge"] == PANEL, "verdict"].iloc[0])


SCORED = [0.9, 0.8, 0.9, 0.7, 0.8, 0.9]
LOW = [0.2, 0.3, 0.2, 0.4, 0.3, 0.2]
NONE = [np.nan] * 6


def test_a_control_that_ran_with_no_note_scored_is_named() -> None:
    said = panel_verdict({"reference": SCORED, "shuffled": LOW, "truncated": LOW, "padded": NONE})
    assert "verbosity not measured: the panel scored no note of mtsamples-control/padded" in said
    assert "needs reference and padded runs" not in said
    assert "discrimination: too few notes (6) to tell (AUROC 1.00)" in said, "25 notes make a verdict (evidence.py)"


def test_a_control_the_suite_lacks_is_still_asked_for() -> None:
    said = panel_verdict({"reference": SCORED, "shuffled": LOW, "truncated": LOW})
    assert "verbosity not measured (needs reference and padded runs)" in said


def test_no_scored_reference_names_the_reference_run_for_every_check() -> None:
    said = panel_verdict({"reference": NONE, "shuffled": LOW, "truncated": LOW, "padded": SCORED})
    assert "discrimination not measured: the panel scored no note of mtsamples-control/reference" in said
    assert "verbosity not measured: the panel scored no note of mtsamples-control/reference" in said


def test_scored_notes_that_never_pair_are_said_to() -> None:
    half = [0.9, 0.8, 0.9, np.nan, np.nan, np.nan]
    other = [np.nan, np.nan, np.nan, 0.3, 0.2, 0.3]
    said = panel_verdict({"reference": half, "shuffled": LOW, "truncated": LOW, "padded": other})
    assert "verbosity not measured: the panel scored no note in both mtsamples-control/reference and padded" in said
