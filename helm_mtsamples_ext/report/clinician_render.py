"""report.md's "Clinician scale" section: each model's reward in clinicians' units, its interval, what it rests on.

Only with --ratings (the leaderboard then carries stats/clinician_scale.py's columns); without, nothing here is
called and report.md stays as it was. The numbers are the tables'; this module only words them.
"""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.common.outside_text import markdown
from helm_mtsamples_ext.report.report_text import interval, markdown_table, num
from helm_mtsamples_ext.stats.clinician_scale import CONTROL_LINE, OWN

WHAT = (
    "`clinician_reward` is each model's reward in clinicians' units: the judges' reward on all its judged answers, "
    "corrected by the clinicians' ratings of the rated ones (a prediction-powered mean with PPI++'s power tuning, "
    "weighted by each rated answer's inclusion probability; docs/ratings.md), with its 95% interval. `reward` "
    "stays the judges'."
)


def _rank(low: float, high: float) -> str:
    return "n/a" if pd.isna(low) else f"{int(low)}-{int(high)}" if low != high else f"{int(low)}"


def clinician_markdown(board: pd.DataFrame, pairs: pd.DataFrame) -> list[str]:
    """The section: the sentence, a table per model, one line per model the correction could not or need not
    be trusted for (below the floor, judges erring differently on it, too few to check), the separated pairs."""
    if "clinician_reward" not in board:
        return []
    ci = zip(board["clinician_ci_low"], board["clinician_ci_high"], strict=True)
    ranks = zip(board["clinician_rank_low"], board["clinician_rank_high"], strict=True)
    table = pd.DataFrame(
        {
            "panel": board["panel"],
            "model": board["model"],
            "reward (judges)": board["reward"].map(num),
            "clinician reward": board["clinician_reward"].map(lambda v: num(v, 3, "none")),
            "95% CI": [interval(lo, hi) for lo, hi in ci],
            "rank 95%": [_rank(lo, hi) for lo, hi in ranks],
            "rated": board["n_rated"].astype(str) + "/" + board["n_judged"].astype(str),
        }
    )
    lines = ["## Clinician scale", "", WHAT, "", markdown_table(table), ""]
    for row in board.itertuples(index=False):
        said = str(row.calibration)
        if said not in (OWN, CONTROL_LINE):
            lines.append(f"- **{markdown(str(row.model))}** (panel `{markdown(str(row.panel))}`): {markdown(said)}.")
    if "separated_clinician" in pairs:
        apart = pairs[pairs["separated_clinician"] == "yes"]
        named = [f"{markdown(str(a))} vs {markdown(str(b))} ({d:+.3f})" for a, b, d in
                 zip(apart["model_a"], apart["model_b"], apart["clinician_diff"], strict=True)]  # fmt: skip
        lines.append(
            "- Pairs separated on the clinician scale (Holm): " + ("; ".join(named) if named else "none")
            + " (`clinician_diff` and its interval in `pairwise.csv`)."
        )  # fmt: skip
    return [*lines, ""]
