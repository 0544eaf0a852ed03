"""The judge audit: can each judge of a panel tell a right plan from a wrong one?

Control runs answer every note with fixed text built from the note itself (model `mtsamples-control/<kind>`):
`reference` is the clinician's own section (the ceiling), `shuffled` another note's section (the floor),
`truncated` the first third of the reference, `padded` the reference plus generic filler. A fair judge scores
reference well above shuffled, truncated below reference, and padded no higher than reference. Each comparison
is made on the same notes, paired by instance id, per judge and for the panel's reward, and bootstrapped over
notes with the report's own settings (`stats/intervals.py`), so its uncertainty reads like the leaderboard's.

Pure pandas/numpy on the report's per-judge instance table; no I/O. The verdict thresholds are module constants,
documented in the README ("Judge audit").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from helm_mtsamples_ext.data.controls import CONTROL_KINDS
from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.evidence import MINIMUMS, constant, mostly_tied, too_few
from helm_mtsamples_ext.stats.intervals import BootstrapSettings, paired_ci, paired_difference
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

REFERENCE, SHUFFLED, TRUNCATED, PADDED = CONTROL_KINDS
PANEL = "(panel)"
"""The judge column of the row auditing the panel's note reward (the mean over its judges)."""
AUDIT_KEYS = ["panel", "extraction"]
"""Controls are paired within one panel and one instance set (an id means another note in the other mode)."""

# The verdict's thresholds, all of them (the README's "Judge audit" table lists the same):
AUROC_BLIND = 0.6
"""Below this AUROC a judge cannot tell the clinician's plan from another patient's (0.5 is a coin toss)."""
AUROC_STRONG = 0.8
"""From this AUROC on, a judge discriminates; in between it does so only weakly."""
COIN_TOSS = 0.5
"""An AUROC interval reaching down to this has not shown the judge tells the plans apart at all: a warning, like
a point AUROC below AUROC_BLIND (benchmarks/bench_verdicts.py measures both rules on simulated judges)."""
DELTA_MARGIN = 0.05
"""A delta (reward, 0-1) whose 95% interval holds 0 shows no effect only when the interval also lies within
±DELTA_MARGIN; a wider one that holds 0 is "too few notes to tell": it merely failed to find an effect."""

COLUMNS = [
    *AUDIT_KEYS, "judge", *(f"reward_{kind}" for kind in CONTROL_KINDS),
    "n_discrimination", "auroc", "auroc_ci_low", "auroc_ci_high", "paired_win_rate",
    "n_padded", "verbosity_bias", "verbosity_ci_low", "verbosity_ci_high",
    "n_truncated", "completeness_sensitivity", "completeness_ci_low", "completeness_ci_high", "verdict",
]  # fmt: skip


def auroc(positive: np.ndarray, negative: np.ndarray, axis: int = -1) -> Any:
    """P(a random reference reward > a random shuffled one), ties counted half: Mann-Whitney U / (n1 n2).

    Along ``axis`` (the bootstrap passes every resample at once, one per row): U from the positives' mid-ranks
    in the pooled values, which counts a tie half as the pairwise comparison does.
    """
    positive, negative = np.moveaxis(np.asarray(positive), axis, -1), np.moveaxis(np.asarray(negative), axis, -1)
    n_pos, n_neg = positive.shape[-1], negative.shape[-1]
    if n_pos == 0 or n_neg == 0:
        return np.nan
    ranks = stats.rankdata(np.concatenate([positive, negative], axis=-1), axis=-1)
    value = (ranks[..., :n_pos].sum(axis=-1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return float(value) if np.ndim(value) == 0 else value


def separated_bound(value: float, n: int, confidence: float) -> tuple[float, float]:
    """The interval of an AUROC of 1 (or 0) on n notes, where every bootstrap resample separates alike.

    The resamples then all give 1 and no percentile interval exists; yet n notes whose reference each beat the
    shuffled answer are n comparisons all won, and the exact (Clopper-Pearson) bound for n wins of n is
    ((1 - confidence) / 2) ** (1 / n): at least 0.972 at 131 notes for 95%. NaN for any other value.
    """
    if n < 1 or value not in (0.0, 1.0):
        return (np.nan, np.nan)
    bound = float(((1 - confidence) / 2) ** (1 / n))
    return (bound, 1.0) if value == 1.0 else (0.0, 1 - bound)


def paired_win_rate(positive: np.ndarray, negative: np.ndarray) -> float:
    """Share of notes whose reference beat the same note's shuffled answer, ties counted half."""
    return float(np.mean((positive > negative) + 0.5 * (positive == negative))) if positive.size else np.nan


def control_rewards(instances: pd.DataFrame) -> pd.DataFrame:
    """Rewards of the control runs, long: one row per (panel, extraction, judge, control, note id).

    Per judge its own reward (a failed judge has none, so that note drops out of its comparisons), plus one
    `PANEL` row per note with the panel's note reward.
    """
    kinds = instances["model"].map(control_kind)
    rows = instances.loc[kinds != ""].assign(control=kinds[kinds != ""])
    keys = [*AUDIT_KEYS, "control", "note_id"]
    judges = rows[[*keys, "judge", "judge_reward"]].rename(columns={"judge_reward": "reward"})
    panel = rows.groupby(keys, as_index=False, sort=False)["note_reward"].first()
    panel = panel.rename(columns={"note_reward": "reward"}).assign(judge=PANEL)
    rewards = pd.concat([panel, judges], ignore_index=True).dropna(subset=["reward"])
    # Rewards are means of score/5: equal on paper, (0.8 + 0.4) / 2 and 0.6 differ in the last bit. Settled, they
    # tie in the AUROC and their difference is exactly 0, so float noise never decides a verdict.
    return rewards.assign(reward=rounded_for_ranks(rewards["reward"]))


def _paired(wide: pd.DataFrame, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Reference and `kind` rewards on the notes both have."""
    if REFERENCE not in wide or kind not in wide:
        return (np.array([]), np.array([]))
    both = wide[[REFERENCE, kind]].dropna()
    return (both[REFERENCE].to_numpy(dtype=float), both[kind].to_numpy(dtype=float))


def _audit_one(wide: pd.DataFrame, settings: BootstrapSettings) -> dict[str, float]:
    """The audit numbers of one judge (or the panel) from its note id x control reward table.

    A judge that gave every control answer the same reward carries no information: its numbers stay, its
    intervals are NaN (never zero-width) and `constant_reward` makes the verdict say so.
    """
    flat = constant("judge", wide.to_numpy(dtype=float).ravel()) is not None
    result: dict[str, float] = {"constant_reward": float(flat)}
    result |= {f"reward_{kind}": wide[kind].mean() for kind in CONTROL_KINDS if kind in wide}
    ref, shuffled = _paired(wide, SHUFFLED)
    low, high = (np.nan, np.nan) if flat else paired_ci((ref, shuffled), auroc, settings, vectorized=True)
    if not flat and np.isnan(low) and too_few(ref.size, minimum=MINIMUMS.notes_for_audit) is None:
        low, high = separated_bound(auroc(ref, shuffled), ref.size, settings.confidence)
    result.update(
        n_discrimination=ref.size, auroc=auroc(ref, shuffled), auroc_ci_low=low, auroc_ci_high=high,
        paired_win_rate=paired_win_rate(ref, shuffled),
    )  # fmt: skip
    for kind, name in ((PADDED, "verbosity"), (TRUNCATED, "completeness")):
        ref, other = _paired(wide, kind)
        mean, low, high, _ = paired_difference(other - ref, settings)
        low, high = (np.nan, np.nan) if flat else (low, high)
        label = "verbosity_bias" if kind == PADDED else "completeness_sensitivity"
        result.update({f"n_{kind}": ref.size, label: mean, f"{name}_ci_low": low, f"{name}_ci_high": high})
    return result


def judge_audit(instances: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """One row per (panel, extraction, judge) that has control runs, the panel's own row first; empty if none."""
    rewards = control_rewards(instances)
    kinds = instances["model"].map(control_kind)
    controls = instances.loc[kinds != ""].assign(control=kinds[kinds != ""])
    ran = {key: frozenset(group["control"]) for key, group in controls.groupby(AUDIT_KEYS, sort=False)}
    judge_order = {name: k for k, name in enumerate([PANEL, *dict.fromkeys(instances["judge"])])}
    rows = []
    for (panel, extraction, judge), group in rewards.groupby([*AUDIT_KEYS, "judge"], sort=False):
        wide = group.pivot_table(index="note_id", columns="control", values="reward", aggfunc="mean")
        row = {"panel": panel, "extraction": extraction, "judge": judge, **_audit_one(wide, settings)}
        name = "the panel" if judge == PANEL else str(judge)
        rows.append({**row, "verdict": verdict(row, name, ran.get((panel, extraction)))})
    table = pd.DataFrame(rows, columns=COLUMNS)
    order = table["judge"].map(judge_order)
    return table.assign(_order=order).sort_values([*AUDIT_KEYS, "_order"]).drop(columns="_order").reset_index(drop=True)


def shown_blind(row: Mapping[str, object]) -> bool:
    """The audit warns this judge blind: on enough notes to tell (MINIMUMS.notes_for_audit), an AUROC below
    AUROC_BLIND or an interval reaching down to a coin toss (COIN_TOSS); or one reward for every control answer
    (a constant judge cannot tell anything apart, however few the notes)."""
    value = row.get("auroc")
    if value is None or pd.isna(value):
        return False
    low = row.get("auroc_ci_low")
    unshown = low is not None and not pd.isna(low) and float(low) <= COIN_TOSS  # type: ignore[arg-type]
    if float(value) >= AUROC_BLIND and not unshown:  # type: ignore[arg-type]
        return False
    return _too_few(row, "n_discrimination") is None or str(row.get("verdict", "")).endswith("no information")


def _coin_toss_shown(row: Mapping[str, object], value: float) -> str:
    """How the AUROC sits on a coin toss, on notes enough for an interval: its interval holding 0.5, or 0.5 or
    less in most resamples (no interval: they tie); "" when neither."""
    low, high = _floats(row, "auroc_ci_low", "auroc_ci_high")
    if not (np.isnan(low) or np.isnan(high)) and low <= COIN_TOSS:
        return f"{delta_text(value, low, high, signed=False)} holds 0.5"
    enough = int(row["n_discrimination"]) >= MINIMUMS.notes_for_verdict  # type: ignore[call-overload]
    return f"{value:.2f} in most resamples" if enough and value <= COIN_TOSS else ""


def delta_text(value: float, low: float, high: float, signed: bool = True) -> str:
    """`+0.27 [+0.20, +0.33]`: a number with its 95% interval (left out when there is none)."""
    if pd.isna(value):
        return "n/a"
    spec = "+.2f" if signed else ".2f"
    ci = "" if pd.isna(low) or pd.isna(high) else f" [{low:{spec}}, {high:{spec}}]"
    return f"{value:{spec}}{ci}"


def _floats(row: Mapping[str, object], *keys: str) -> list[float]:
    return [float(row[key]) for key in keys]  # type: ignore[arg-type]


def _too_few(row: Mapping[str, object], key: str) -> str | None:
    """evidence.too_few for the row's note count under ``key`` (discrimination: MINIMUMS.notes_for_audit);
    None when the row does not count its notes."""
    n = row.get(key)
    minimum = MINIMUMS.notes_for_audit if key == "n_discrimination" else None
    return None if n is None or pd.isna(n) else too_few(int(n), minimum=minimum)  # type: ignore[call-overload]


_DELTA_VERDICTS = (
    # delta column, CI column prefix, control it needs, topic, sentence when the 95% CI is above 0 / below 0 /
    # holds 0 within ±DELTA_MARGIN (wider: "too few notes to tell")
    ("verbosity_bias", "verbosity", PADDED, "padding",
     ("rewards padding", "penalises padding", "not swayed by padding")),
    (
        "completeness_sensitivity",
        "completeness",
        TRUNCATED,
        "missing content",
        ("does not notice missing content", "notices missing content", "does not notice missing content"),
    ),
)  # fmt: skip


def _not_measured(row: Mapping[str, object], what: str, control: str, ran: frozenset[str] | None, name: str) -> str:
    """Why a check has no number: a control run missing from the suite, or one whose notes ``name`` scored none of
    (said by the control's name), or no note scored in both."""
    needed = (REFERENCE, control)
    missing = [kind for kind in needed if ran is not None and kind not in ran]
    if ran is None or missing:
        return f"{what} not measured (needs reference and {control} runs)"
    unscored = [kind for kind in needed if pd.isna(row.get(f"reward_{kind}", np.nan))]
    if unscored:
        runs = " and ".join(f"mtsamples-control/{kind}" for kind in unscored)
        return f"{what} not measured: {name} scored no note of {runs}"
    return f"{what} not measured: {name} scored no note in both mtsamples-control/{REFERENCE} and {control}"


def verdict(row: Mapping[str, object], name: str = "the judge", ran: frozenset[str] | None = None) -> str:
    """A plain sentence per check, from the AUROC with its 95% interval and the 95% intervals of the two deltas.

    Discrimination warns (shown_blind) below AUROC_BLIND and also when the interval reaches down to COIN_TOSS:
    a point estimate on few notes would call a blind judge discriminating, and an interval holding 0.5 has not
    shown it tells the plans apart at all. Below MINIMUMS.notes_for_audit that interval is still said ("not
    shown to tell"), a fact about the evidence, but no warning is given: too many decent judges would be named.

    A delta's words match its evidence: an interval above or below 0 shows an effect; one holding 0 shows none
    only when it lies within ±DELTA_MARGIN. A wider interval holding 0 decides nothing: "not swayed" or "does
    not notice" would be a finding the notes do not support. Fewer notes than `evidence.MINIMUMS` asks for give
    "too few notes (N) to tell", and a judge with one reward for every control answer gives "no information".
    ``ran``: the control runs the suite holds for this panel, so a check with no number says which control
    it lacks, or which one the judge scored no note of.
    """
    if row.get("constant_reward"):
        return str(constant(name, [0.0]))
    parts = []
    (value,) = _floats(row, "auroc")
    short = _too_few(row, "n_discrimination")
    if np.isnan(value):
        parts.append(_not_measured(row, "discrimination", SHUFFLED, ran, name))
    elif short and (shown := _coin_toss_shown(row, value)):
        parts.append(
            f"not shown to tell the clinician's plan from another patient's: AUROC {shown} "
            f"({int(row['n_discrimination'])} notes; a verdict needs {MINIMUMS.notes_for_audit})"  # type: ignore[call-overload]
        )
    elif short:
        parts.append(f"discrimination: {short} (AUROC {value:.2f})")
    elif value < AUROC_BLIND:
        parts.append(f"cannot tell the clinician's plan from another patient's: AUROC {value:.2f}")
    elif not pd.isna(row.get("auroc_ci_low")) and float(row["auroc_ci_low"]) <= COIN_TOSS:  # type: ignore[arg-type]
        low, high = _floats(row, "auroc_ci_low", "auroc_ci_high")
        interval = delta_text(value, low, high, signed=False)
        parts.append(f"not shown to tell the clinician's plan from another patient's: AUROC {interval} holds 0.5")
    elif value < AUROC_STRONG:
        parts.append(f"tells the clinician's plan from another patient's only weakly: AUROC {value:.2f}")
    else:
        parts.append(f"tells the clinician's plan from another patient's: AUROC {value:.2f}")
    for column, check, control, topic, (above, below, across) in _DELTA_VERDICTS:
        value, low, high = _floats(row, column, f"{check}_ci_low", f"{check}_ci_high")
        short = _too_few(row, f"n_{control}")
        if np.isnan(value):
            parts.append(_not_measured(row, check, control, ran, name))
        elif short:
            parts.append(f"{topic}: {short} ({delta_text(value, low, high)})")
        elif (np.isnan(low) or np.isnan(high)) and not pd.isna(row.get(f"n_{control}", np.nan)):
            # enough notes, yet no interval: stats found most resamples tied (mostly_tied of nothing is its wording)
            parts.append(f"{topic}: {mostly_tied([])} ({delta_text(value, low, high)})")
        elif np.isnan(low) or np.isnan(high):
            parts.append(f"{topic}: too few notes to tell ({delta_text(value, low, high)})")
        elif low > 0 or high < 0 or (low >= -DELTA_MARGIN and high <= DELTA_MARGIN):
            label = above if low > 0 else below if high < 0 else across
            parts.append(f"{label}: {delta_text(value, low, high)}")
        else:
            parts.append(
                f"{topic}: too few notes to tell ({delta_text(value, low, high)}, wider than ±{DELTA_MARGIN:g})"
            )
    return "; ".join(parts)
