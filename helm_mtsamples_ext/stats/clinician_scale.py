"""Every model's reward in clinicians' units: the judges' reward on all its answers, corrected by the ratings.

Why: clinicians' ratings used to grade the judges only; every reward stayed in the judges' units, so a panel kinder
than clinicians by 0.1 moved every level by 0.1 and still "agreed" with them (an ICC is blind to a shift). Here a
model's clinician-scale reward is a prediction-powered mean with PPI++'s power tuning (Angelopoulos et al., Science
2023; arXiv 2311.01453), written for our design, where the rated answers are a probability sample of the model's N
judged answers with known inclusion probabilities pi (rating_sample.py draws toward disagreement):

    theta = lambda * mean_N(f) + sum_S w (y - lambda f) / sum_S w,     w = 1 / pi   (Hajek weights)

f is the judges' reward of an answer (note_reward), y its clinician label (the mean of its raters' rewards), S the
rated answers. For any lambda it is unbiased (to first order) for the clinicians' mean whatever the judges' errors:
the second term estimates, from a probability sample, exactly what the first gets wrong. lambda only buys
precision: chosen (clipped to [0, 1]) to minimise the variance below, it is 0 when the judges say nothing about
the clinicians (theta is then the rated answers' weighted mean) and near 1 when they say it all but a shift.

Variance, because S lies inside the N answers: theta - mu = (mean_N(y) - mu) + (design error of the residuals'
mean), so  V = s_y^2 / N + sum_S (1 - pi) w^2 (r - rbar)^2 / (sum_S w)^2  with r = y - lambda f (the Poisson
sampling variance of a Hajek mean; under uniform sampling (1 - n/N) s_r^2 / n). The interval is theta +- t(n - 2)
sqrt(V): two degrees of freedom go to the residuals' mean and lambda. benchmarks/sim_calibration.py measures its
coverage; below `evidence.MINIMUMS.rated_for_clinician_scale` rated answers there is no figure, only the line saying
how many more to rate. Answers rated without a recorded inclusion probability are taken as a uniform sample of the
model's answers, and the `calibration` column says so.

Transport: the correction is each model's own (its own rated answers correct its own judged ones), which is valid
whatever the judges do to other models. `transport` still asks whether a model's residuals (clinician minus judge)
differ from the other models' of its panel beyond noise (Welch's t on the weighted means, step-down:
`transport_panel`), because where they do, the judges err differently on that model's answers: its judge-scale
reward and rank mislead, and a correction pooled across models would not hold for it. Nothing is pooled: the check
has too little power at the floor to guard a pooled correction (docs/ratings.md). Pure numpy/pandas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from helm_mtsamples_ext.stats.pairwise import holm

KEYS = ["panel", "model"]
COLUMNS = ["clinician_reward", "clinician_ci_low", "clinician_ci_high", "n_rated", "calibration"]
"""leaderboard.csv's columns, beside `reward`, only with --ratings."""
RANK_COLUMNS = ["clinician_rank_low", "clinician_rank_high"]
PAIR_COLUMNS = ["clinician_diff", "clinician_ci_low", "clinician_ci_high", "separated_clinician"]
"""pairwise.csv's columns, beside the judges' `difference`, only with --ratings."""
OWN = "ppi++ own ratings"
CONTROL_LINE = "none: a control run (its answers are built, not rated)"
UNIFORM = "; no inclusion probabilities recorded: taken as a uniform sample"
FLAGGED = "judges err differently on this model"
TRANSPORT_ALPHA = 0.05
"""The transport check's false-flag rate per model (two-sided Welch t; 4.5-6.5% in simulation). A model-specific judge
bias of 0.1 is flagged in 87% of simulated rounds at 20 rated answers a model, 54% at 10 (docs/report.md), hence
`evidence.MINIMUMS.rated_for_transport`."""


@dataclass(frozen=True)
class Estimate:
    """One (panel, model)'s clinician-scale reward: the value, its interval, and what went into it."""

    value: float
    low: float
    high: float
    se: float
    lam: float
    n_rated: int
    n_judged: int
    uniform: bool
    """No inclusion probability was recorded for some rated answer: all were taken as a uniform sample."""
    missing: int = 0
    """How many rated answers had no recorded inclusion probability."""


def weights(pi: np.ndarray, n_rated: int, n_judged: int) -> tuple[np.ndarray, bool]:
    """(inclusion probabilities, assumed uniform?) of the rated answers: as recorded, or n/N for all when any is
    missing (NaN)."""
    pi = np.asarray(pi, dtype=float)
    if pi.size and np.isnan(pi).any():
        return np.full(pi.size, n_rated / n_judged), True
    return np.clip(pi, 1e-12, 1.0), False


def power_tuned(f: np.ndarray, y: np.ndarray, pi: np.ndarray) -> float:
    """lambda minimising the design variance of the residuals' Hajek mean, clipped to [0, 1] (0 when f is constant
    on the rated answers or every answer was rated)."""
    w = 1 / pi
    a = (1 - pi) * w**2
    ef = f - np.sum(w * f) / np.sum(w)
    ey = y - np.sum(w * y) / np.sum(w)
    denominator = float(np.sum(a * ef**2))
    if denominator <= 1e-15:
        return 0.0
    return float(np.clip(np.sum(a * ef * ey) / denominator, 0.0, 1.0))


def ppi_mean(
    f_all: np.ndarray, f_rated: np.ndarray, y: np.ndarray, pi: np.ndarray, confidence: float = 0.95
) -> Estimate:
    """The clinician-scale mean of one model: judges' rewards `f_all` on its N judged answers; on the n rated ones
    (a subset) their judges' reward `f_rated`, clinician label `y` and inclusion probability `pi` (NaN: uniform)."""
    f_all, f_rated, y = (np.asarray(v, dtype=float) for v in (f_all, f_rated, y))
    n, big_n = y.size, f_all.size
    missing = int(np.isnan(np.asarray(pi, dtype=float)).sum())
    pi, uniform = weights(pi, n, big_n)
    if n == 0:
        return Estimate(np.nan, np.nan, np.nan, np.nan, np.nan, 0, big_n, uniform, missing)
    lam = power_tuned(f_rated, y, pi)
    w = 1 / pi
    r = y - lam * f_rated
    r_bar = float(np.sum(w * r) / np.sum(w))
    value = lam * float(f_all.mean()) + r_bar
    if n < 3:
        return Estimate(value, np.nan, np.nan, np.nan, lam, n, big_n, uniform, missing)
    y_bar = np.sum(w * y) / np.sum(w)
    s_y2 = n / (n - 1) * float(np.sum(w * (y - y_bar) ** 2) / np.sum(w))
    design = n / (n - 2) * float(np.sum((1 - pi) * w**2 * (r - r_bar) ** 2) / np.sum(w) ** 2)
    se = float(np.sqrt(s_y2 / big_n + design))
    half = float(stats.t.ppf((1 + confidence) / 2, n - 2)) * se
    return Estimate(value, max(0.0, value - half), min(1.0, value + half), se, lam, n, big_n, uniform, missing)


def labels(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per rated answer (run, instance_id): its label (the mean of its raters' human_reward) and its
    inclusion probability (NaN when none was recorded)."""
    pi = ratings["inclusion_probability"] if "inclusion_probability" in ratings else np.nan
    rated = ratings.assign(inclusion_probability=pi)
    return rated.groupby(["run", "instance_id"], as_index=False, sort=True).agg(
        y=("human_reward", "mean"), pi=("inclusion_probability", "first")
    )


def answers(instances: pd.DataFrame, ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per judged answer of a model under a panel: its judges' reward f, and where rated, y and pi."""
    judged = instances.groupby([*KEYS, "run", "note_id"], sort=True, as_index=False).agg(f=("note_reward", "first"))
    judged = judged[judged["f"].notna()]
    found = labels(ratings).rename(columns={"instance_id": "note_id"})
    return judged.merge(found, on=["run", "note_id"], how="left")


def needed_line(n_rated: int) -> str:
    """The `calibration` cell (and report.md's line) of a model below the floor."""
    needed = MINIMUMS.rated_for_clinician_scale
    return f"none: {n_rated} rated, {needed} needed (rate {needed - n_rated} more of its answers)"


def estimate(rows: pd.DataFrame, confidence: float = 0.95) -> Estimate:
    """ppi_mean over one (panel, model)'s rows of `answers`."""
    rated = rows[rows["y"].notna()]
    return ppi_mean(
        rows["f"].to_numpy(float), rated["f"].to_numpy(float), rated["y"].to_numpy(float),
        rated["pi"].to_numpy(float), confidence,
    )  # fmt: skip


def residual_summary(rows: pd.DataFrame) -> tuple[float, float, int]:
    """(weighted mean of y - f, its squared standard error, n) over the rated rows (design weights)."""
    rated = rows[rows["y"].notna()]
    n = len(rated)
    if n < 2:
        return (np.nan, np.nan, n)
    pi, _ = weights(rated["pi"].to_numpy(float), n, max(n, len(rows)))
    w = 1 / pi
    r = rated["y"].to_numpy(float) - rated["f"].to_numpy(float)
    mean = float(np.sum(w * r) / np.sum(w))
    var = n / (n - 1) * float(np.sum(w**2 * (r - mean) ** 2) / np.sum(w) ** 2)
    return (mean, var, n)


def transport(rows: pd.DataFrame, model: str) -> tuple[float, float, float]:
    """(model's mean residual, the panel's other models' pooled mean residual, two-sided p of their difference).

    Welch's t on the design-weighted residual means (clinician minus judge); NaN p when either side has fewer
    than 2 rated answers or no spread."""
    mine, _, n_m = own = residual_summary(rows[rows["model"] == model])
    others, _, n_o = rest = residual_summary(rows[rows["model"] != model])
    if np.isnan(own[1]) or np.isnan(rest[1]) or own[1] + rest[1] <= 0:
        return (mine, others, np.nan)
    se2 = own[1] + rest[1]
    df = se2**2 / (own[1] ** 2 / (n_m - 1) + rest[1] ** 2 / (n_o - 1))
    p = float(2 * stats.t.sf(abs(mine - others) / np.sqrt(se2), df))
    return (mine, others, p)


def transport_panel(rows: pd.DataFrame) -> dict[str, tuple[float, float, float]]:
    """`transport` for every model of one panel's rows, step-down: the model whose residuals differ most (smallest p)
    is flagged first when p < TRANSPORT_ALPHA and then left out of every other model's reference, and so on until
    none differs. A model far off would otherwise pull the others' pooled residuals with it and get its neighbours
    flagged as its mirror image."""
    models = [str(m) for m in dict.fromkeys(rows["model"])]
    found = {m: transport(rows, m) for m in models}
    flagged: set[str] = set()
    while True:
        kept = rows[~rows["model"].isin(flagged)]
        found.update({m: transport(kept, m) for m in models if m not in flagged})
        open_p = {m: found[m][2] for m in models if m not in flagged and not np.isnan(found[m][2])}
        if not open_p or min(open_p.values()) >= TRANSPORT_ALPHA:
            return found
        flagged.add(min(open_p, key=lambda m: open_p[m]))


def transport_word(mine: float, others: float, p: float, n_rated: int) -> str:
    """The `calibration` suffix from the transport check: a flag (p < TRANSPORT_ALPHA), or below
    `MINIMUMS.rated_for_transport` rated answers the warning that no flag is no evidence yet; else empty."""
    if not np.isnan(p) and p < TRANSPORT_ALPHA:
        return (
            f"; {FLAGGED} (clinician minus judge {mine:+.2f} vs {others:+.2f} on the "
            f"panel's other models, p = {p:.3f}): its judge-scale reward misleads"
        )
    if np.isnan(p):
        return "; transport not checked (no other rated model in the panel)"
    needed = MINIMUMS.rated_for_transport
    if n_rated < needed:
        return f"; transport not yet checkable ({n_rated} rated, {needed} needed)"
    return ""


def transport_warnings(board: pd.DataFrame) -> list[str]:
    """One WARNING per model the transport check flagged (stdout and report.md's top): its judge-scale reward and
    rank mislead. None without the clinician scale's columns."""
    if "calibration" not in board:
        return []
    lines = []
    for panel, model, said in zip(board["panel"], board["model"], board["calibration"].astype(str), strict=True):
        if FLAGGED in said:
            why = said[said.index(FLAGGED) :]
            lines.append(f"WARNING: {model} under panel {panel}: {why}; its clinician_reward corrects for it.")
    return lines


def uniform_word(found: Estimate) -> str:
    """The caveat of a model some of whose ratings carry no inclusion probability (all are then taken as uniform)."""
    if found.missing >= found.n_rated:
        return UNIFORM
    some = f"{found.missing} of its {found.n_rated} rated answers"
    return f"; no inclusion probability recorded for {some}: all taken as a uniform sample"


def calibration(found: Estimate, word: str) -> str:
    """What the `calibration` column says: the correction used, or why none."""
    if found.n_rated < MINIMUMS.rated_for_clinician_scale:
        return needed_line(found.n_rated)
    return OWN + (uniform_word(found) if found.uniform else "") + word


def clinician_board(instances: pd.DataFrame, ratings: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per (panel, model) with judged answers: `COLUMNS` (no figure below the floor), plus the estimate's `se`,
    its degrees of freedom `df` and the transport check's `transport_p`."""
    table = answers(instances, ratings)
    checks = {panel: transport_panel(rows) for panel, rows in table.groupby("panel", sort=False)}
    rows = []
    for (panel, model), mine in table.groupby(KEYS, sort=False):
        found = estimate(mine, confidence)
        checked = checks[panel][str(model)]
        enough = found.n_rated >= MINIMUMS.rated_for_clinician_scale
        value = (found.value, found.low, found.high) if enough else (np.nan, np.nan, np.nan)
        rows.append({
            "panel": panel, "model": model, **dict(zip(COLUMNS[:3], value, strict=True)), "n_rated": found.n_rated,
            "calibration": calibration(found, transport_word(*checked, found.n_rated)),
            "se": found.se if enough else np.nan, "df": found.n_rated - 2, "transport_p": checked[2],
        })  # fmt: skip
    return pd.DataFrame(rows, columns=[*KEYS, *COLUMNS, "se", "df", "transport_p"])


def rank_interval(values: np.ndarray, se: np.ndarray, settings: BootstrapSettings) -> tuple[np.ndarray, np.ndarray]:
    """Each model's competition rank (1 + models ahead) in draws of the estimates from their normal sampling
    distributions (independent: a note's difficulty shared by two models' estimates is ignored, which widens the
    interval), its percentile interval; as ranks.py reads the judges' rewards."""
    rng = np.random.default_rng(settings.seed)
    drawn = values + se * rng.standard_normal((settings.n_resamples, values.size))
    ranks = 1 + (drawn[:, None, :] > drawn[:, :, None]).sum(axis=2)
    alpha = (1 - settings.confidence) / 2
    low, high = np.quantile(ranks, [alpha, 1 - alpha], axis=0, method="inverted_cdf")
    return low, high


def with_clinician_scale(board: pd.DataFrame, found: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """leaderboard.csv with `COLUMNS` after `reward_ci_high` and `RANK_COLUMNS` after them (a model without
    judged answers: n_rated 0 and the line)."""
    merged = board.merge(found[[*KEYS, *COLUMNS, "se"]], on=KEYS, how="left")
    merged["n_rated"] = merged["n_rated"].fillna(0).astype(int)
    unrated = merged["n_rated"] == 0
    control = merged["model"].map(lambda m: control_kind(str(m)) != "").astype(bool)
    merged["calibration"] = merged["calibration"].fillna(needed_line(0)).where(~(control & unrated), CONTROL_LINE)
    merged[RANK_COLUMNS] = np.nan
    for _, rows in merged.groupby("panel", sort=False):
        given = rows[rows["clinician_reward"].notna()]
        if len(given) >= 2:
            low, high = rank_interval(given["clinician_reward"].to_numpy(float), given["se"].to_numpy(float), settings)
            merged.loc[given.index, RANK_COLUMNS] = np.column_stack([low, high])
    columns = list(board.columns)
    at = columns.index("reward_ci_high") + 1
    return merged[[*columns[:at], *COLUMNS, *RANK_COLUMNS, *columns[at:]]]


def with_clinician_pairs(pairs: pd.DataFrame, found: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """pairwise.csv with `PAIR_COLUMNS`: A's clinician-scale reward minus B's, its interval (Welch's t on the two
    estimates' standard errors, as if independent: the notes they share would only narrow it), and
    `separated_clinician` after Holm's correction over the panel's pairs with both figures ("" without)."""
    by_model = found.set_index(KEYS)
    frames = []
    for panel, rows in pairs.groupby("panel", sort=False):
        a = by_model.reindex([(panel, m) for m in rows["model_a"]])
        b = by_model.reindex([(panel, m) for m in rows["model_b"]])
        diff = a["clinician_reward"].to_numpy(float) - b["clinician_reward"].to_numpy(float)
        va, vb = a["se"].to_numpy(float) ** 2, b["se"].to_numpy(float) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            df = (va + vb) ** 2 / (va**2 / a["df"].to_numpy(float) + vb**2 / b["df"].to_numpy(float))
            half = stats.t.ppf((1 + confidence) / 2, df) * np.sqrt(va + vb)
            p = 2 * stats.t.sf(np.abs(diff) / np.sqrt(va + vb), df)
        given = ~np.isnan(diff) & (va + vb > 0)
        p_holm = holm(np.where(given, p, np.nan))
        frames.append(rows.assign(
            clinician_diff=diff, clinician_ci_low=np.where(given, diff - half, np.nan),
            clinician_ci_high=np.where(given, diff + half, np.nan),
            separated_clinician=np.where(given, np.where(p_holm < 1 - confidence, "yes", "no"), ""),
        ))  # fmt: skip
    if not frames:
        return pairs.assign(
            **{c: pd.Series(dtype=object if c == "separated_clinician" else float) for c in PAIR_COLUMNS}
        )
    return pd.concat(frames)[[*pairs.columns, *PAIR_COLUMNS]]


def clinician_tables(
    instances: pd.DataFrame, board: pd.DataFrame, pairs: pd.DataFrame, ratings: pd.DataFrame,
    settings: BootstrapSettings,
) -> dict[str, pd.DataFrame]:  # fmt: skip
    """What the clinician scale adds with --ratings: leaderboard.csv's and pairwise.csv's columns."""
    found = clinician_board(instances, ratings, settings.confidence)
    return {
        "leaderboard": with_clinician_scale(board, found, settings),
        "pairwise": with_clinician_pairs(pairs, found, settings.confidence),
    }
