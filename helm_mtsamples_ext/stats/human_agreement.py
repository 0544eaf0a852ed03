"""Every judge measured against the clinicians: judge_human_agreement.csv, the human leaderboard, report.md's section.

Per panel, one row per judge and one for the panel's reward, over the answers both the judge and at least one
clinician scored, against the **mean human reward** of the answer (the mean over raters of each rater's mean
score/5); and one `(clinicians)` row, the human ceiling, over the answers two or more clinicians rated: each rater
against the mean of the others, averaged over raters (ceiling.py: no rater's name matters), and Krippendorff's alpha
(ordinal) across all raters. The verdict is like for like: `icc_in_place` puts the judge in each rater's place
against the same others' mean over the same answers (ceiling.Ceiling.in_place), and its difference from the clinicians'
ICC is drawn on the very same resamples. Only when that difference's interval lies within ±evidence's
`agreement_margin` does a judge agree with them "about as well as they agree with each other", the claim MedHELM
makes for its jury; below 0 it agrees less, above more, and otherwise the verdict says it cannot tell yet and
estimates how many more shared answers would decide (the interval narrows as one over the root of the answers).
`icc_medhelm` is the number computed as MedHELM's script computes its 0.47 against 0.43. No verdict from
nothing: a judge or rater who gave one score to every answer, or fewer answers than evidence.py's minimum, gets a
sentence saying so instead. Pure pandas; the statistics are agreement.py's.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.scoring.reward import ordinal_alpha, ratings_matrix
from helm_mtsamples_ext.stats import evidence
from helm_mtsamples_ext.stats.agreement import (
    bias,
    icc_3_1,
    icc_medhelm,
    kendall,
    quadratic_kappa,
    round_half_up,
    spearman,
    with_ci,
)
from helm_mtsamples_ext.stats.ceiling import Ceiling, Drawn, ceiling_stats, shared_rewards
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import KEYS, BootstrapSettings, mean_ci
from helm_mtsamples_ext.stats.medhelm_pairs import medhelm_baseline
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

PANEL_ROW = "(panel)"
CLINICIANS_ROW = "(clinicians)"
STATS = ["spearman", "spearman_ci_low", "spearman_ci_high", "bias", "bias_ci_low", "bias_ci_high"]
STATS += [*(f"kappa_{d}" for d in DIMENSIONS), "icc", "icc_ci_low", "icc_ci_high"]
STATS += ["icc_medhelm", "icc_medhelm_ci_low", "icc_medhelm_ci_high"]
IN_PLACE = ["icc_in_place", "icc_in_place_ci_low", "icc_in_place_ci_high"]
VS_CEILING = ["icc_vs_ceiling", "icc_vs_ceiling_ci_low", "icc_vs_ceiling_ci_high", "answers_to_decide"]
COLUMNS = ["panel", "judge", "n", *STATS, *IN_PLACE, *VS_CEILING, *(f"alpha_{d}" for d in DIMENSIONS), "n_raters"]
COLUMNS += ["verdict"]
Held = tuple[Ceiling, pd.Index, Drawn]
"""The clinicians' ceiling a judge is held to: its shared answers, their (run, note) index, its ICC's draws."""
HUMAN_COLUMNS = ["human_reward", "human_reward_ci_low", "human_reward_ci_high", "n_human"]


def human_answers(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per rated answer: mean human reward, mean human score per dimension, number of raters."""
    return ratings.groupby(["run", "instance_id"], as_index=False).agg(
        human_reward=("human_reward", "mean"), n_raters=("rater", "nunique"), **{d: (d, "mean") for d in DIMENSIONS}
    )


def compare(
    x: np.ndarray, y: np.ndarray, scores_x: pd.DataFrame, scores_y: pd.DataFrame, settings: BootstrapSettings
) -> dict[str, object]:
    """The statistics of rater x against rater y over the same answers (rewards 0-1; scores 1-5 per dimension)."""
    rho = with_ci(spearman, x, y, settings)
    icc = with_ci(icc_3_1, x, y, settings)
    kappas = []
    for dim in DIMENSIONS:
        both = scores_x[dim].notna().to_numpy() & scores_y[dim].notna().to_numpy()
        pair = (round_half_up(scores_x[dim].to_numpy(dtype=float)[both]), round_half_up(scores_y[dim].to_numpy()[both]))
        kappas.append(quadratic_kappa(*pair))
    values = [*rho, *_no_zero_width(bias(x, y, settings)), *kappas, *icc, *with_ci(icc_medhelm, x, y, settings)]
    return {"n": int(x.size), **dict(zip(STATS, values, strict=True))}


def _no_zero_width(found: tuple[float, float, float]) -> tuple[float, float, float]:
    """An interval of zero width (every answer differs by the same amount) reads as certainty: none is given."""
    value, low, high = found
    return (value, np.nan, np.nan) if rounded_for_ranks(low) == rounded_for_ranks(high) else found


def _no_information(name: str, x: np.ndarray, y: np.ndarray) -> str:
    """Why a row compares nothing (a constant judge, or clinicians who gave one reward throughout), or ""."""
    if not x.size:
        return ""
    return evidence.constant(name, x) or evidence.constant("the clinicians", y) or ""


def _in_place(rewards: pd.Series, held: Held | None, settings: BootstrapSettings) -> dict[str, float]:
    """icc_in_place with its interval, and its difference from the ceiling on the same resamples, with its own.

    `rewards` are indexed by run and note; `held` is the shared answers' ceiling (None without shared answers).
    """
    if held is None:
        return dict.fromkeys([*IN_PLACE, *VS_CEILING], np.nan)
    ceiling, index, icc = held
    judge = rewards.groupby(level=[0, 1]).mean().reindex(index).to_numpy(dtype=float)
    drawn = ceiling.in_place(judge)
    found = dict(zip(IN_PLACE, drawn.interval(settings), strict=True))
    difference = drawn.minus(icc).interval(settings)
    found.update(zip(VS_CEILING, [*difference, answers_to_decide(difference, ceiling.n)], strict=True))
    return found


def answers_to_decide(difference: tuple[float, float, float], n: int) -> float:
    """About how many more shared answers would take the difference's interval out of "cannot tell": NaN when
    it already decides (or has no interval).

    The interval's half-width shrinks as one over the root of the answers. It decides once it is narrower than
    the distance from the difference to 0 (then "less" or "more") or to the nearer edge of the margin (then
    "about as well"), whichever is reached first.
    """
    value, low, high = difference
    if np.isnan(low) or np.isnan(high) or _decided(low, high):
        return np.nan
    half = (high - low) / 2
    target = max(abs(value), MINIMUMS.agreement_margin - abs(value))
    return float(max(1, math.ceil(n * (half / target) ** 2 - n)))


def _decided(low: float, high: float) -> bool:
    margin = MINIMUMS.agreement_margin
    return bool(high < 0 or low > 0 or (low >= -margin and high <= margin))


def _judge_rows(
    instances: pd.DataFrame, humans: pd.DataFrame, held: Held | None, settings: BootstrapSettings
) -> list[dict[str, object]]:
    joined = instances.merge(humans, left_on=["run", "note_id"], right_on=["run", "instance_id"], suffixes=("", "_h"))
    joined = joined[joined["judge_reward"].notna()]
    human_scores = joined[[f"{d}_h" for d in DIMENSIONS]].set_axis(list(DIMENSIONS), axis=1)
    rows = []
    for judge in dict.fromkeys(instances["judge"]):
        mine = (joined["judge"] == judge).to_numpy()
        x, y = joined["judge_reward"].to_numpy(dtype=float)[mine], joined["human_reward"].to_numpy(dtype=float)[mine]
        found = compare(x, y, joined[mine], human_scores[mine], settings)
        found.update(_in_place(joined[mine].set_index(["run", "instance_id"])["judge_reward"], held, settings))
        rows.append({"judge": judge, **found, "note": _no_information(f"judge {judge}", x, y)})
    notes = joined.groupby(["run", "note_id"], sort=True).agg(
        note_reward=("note_reward", "first"), human_reward=("human_reward", "first"),
        **{d: (d, "mean") for d in DIMENSIONS}, **{f"{d}_h": (f"{d}_h", "first") for d in DIMENSIONS},
    )  # fmt: skip
    notes = notes[notes["note_reward"].notna()]
    panel_scores = notes[[f"{d}_h" for d in DIMENSIONS]].set_axis(list(DIMENSIONS), axis=1)
    x, y = notes["note_reward"].to_numpy(dtype=float), notes["human_reward"].to_numpy(dtype=float)
    found = compare(x, y, notes, panel_scores, settings)
    found.update(_in_place(notes["note_reward"], held, settings))
    rows.append({"judge": PANEL_ROW, **found, "note": _no_information("the panel", x, y)})
    return rows


def _shared(ratings: pd.DataFrame) -> pd.DataFrame:
    """The ratings of answers two or more raters rated: what the ceiling, and a judge held to it, are made of."""
    return ratings[ratings.groupby(["run", "instance_id"])["rater"].transform("nunique") >= 2]


def _clinicians_row(ratings: pd.DataFrame, settings: BootstrapSettings) -> dict[str, object]:
    """The human ceiling over answers with two or more raters: each rater against the others' mean (ceiling.py)."""
    shared = _shared(ratings)
    row: dict[str, object] = {"judge": CLINICIANS_ROW, **{stat: np.nan for stat in STATS}, "n": 0, "note": ""}
    if not shared.empty:
        found = ceiling_stats(shared, settings)
        medhelm = medhelm_baseline(shared_rewards(shared).to_numpy(dtype=float), settings)
        found.update(zip(["icc_medhelm", "icc_medhelm_ci_low", "icc_medhelm_ci_high"], medhelm, strict=True))
        row["note"] = "; ".join(found.pop("uninformative"))  # type: ignore[arg-type]
        row.update(found)
        row.update(zip(IN_PLACE, (found["icc"], found["icc_ci_low"], found["icc_ci_high"]), strict=True))
        row["_index"] = shared_rewards(shared).index
    answers = shared["run"] + "/" + shared["instance_id"]
    for dim in DIMENSIONS:
        triples = zip(shared["rater"], answers, shared[dim], strict=True)
        value = ordinal_alpha(ratings_matrix(triples)[1]).value if len(shared) else None
        row[f"alpha_{dim}"] = np.nan if value is None else value
    row["n_raters"] = shared["rater"].nunique()
    return row


def verdict(
    icc: float,
    low: float,
    high: float,
    ceiling: pd.Series,
    n: int | None = None,
    note: str = "",
    in_place: tuple[float, float, float] | None = None,
    difference: tuple[float, float, float, float] | None = None,
) -> str:
    """Where the judge's ICC with the clinicians falls against the clinicians' ICC with each other.

    Set against the ceiling, the judge's number is `in_place` (the judge in each rater's place, like for like)
    when given, and the verdict reads `difference` (in_place minus the ceiling's ICC on the same resamples, its
    interval, and answers_to_decide): "about as well" only inside ±MINIMUMS.agreement_margin, "less" / "more"
    when the interval is below / above 0, otherwise "cannot tell yet". Its own ICC against all raters is stated
    where there is nothing to compare with. No verdict from nothing: a judge (or clinicians) with one score
    throughout, or fewer answers than evidence.MINIMUMS asks, on either side, get the sentence that says so.
    """
    stated = f"ICC {icc:.2f}" + ("" if pd.isna(low) else f" [{low:.2f}, {high:.2f}]")
    if n is not None and (few := evidence.too_few(n, "answers")):
        return few if pd.isna(icc) else f"{stated}; {few}"
    if note:
        return note
    if pd.isna(icc):
        return "too few answers to tell"
    if pd.isna(ceiling["icc"]):
        why = ceiling.get("note") or "no answer was rated by two clinicians"
        return f"{stated}; {why}, so there is no human ceiling to compare with"
    if in_place is not None:
        icc, low, high = in_place
        if pd.isna(icc):
            return f"{stated}; too few of the answers two clinicians rated to hold it to their ceiling"
        stated = f"ICC {icc:.2f} in a rater's place" + ("" if pd.isna(low) else f" [{low:.2f}, {high:.2f}]")
    ceiling_text = f"clinicians' {ceiling['icc']:.2f}" + (
        "" if pd.isna(ceiling["icc_ci_low"]) else f" [{ceiling['icc_ci_low']:.2f}, {ceiling['icc_ci_high']:.2f}]"
    )
    if "n" in ceiling and (few := evidence.too_few(int(ceiling["n"]), "answers")):
        return f"{stated} vs {ceiling_text}; the clinicians' ceiling: {few}"
    if difference is None or pd.isna(difference[1]) or pd.isna(difference[2]):
        return f"{stated} vs {ceiling_text}; too few answers for intervals, so no telling whether that differs"
    value, d_low, d_high, more = difference
    compared = f"{stated} vs {ceiling_text}, difference {value:+.2f} [{d_low:+.2f}, {d_high:+.2f}]"
    margin = MINIMUMS.agreement_margin
    if d_low >= -margin and d_high <= margin:
        return (
            f"agrees with clinicians about as well as clinicians agree with each other (the difference's interval "
            f"lies within ±{margin:g}): {compared}"
        )
    if d_high < 0:
        return f"agrees with clinicians less than clinicians agree with each other: {compared}"
    if d_low > 0:
        return f"agrees with clinicians more than clinicians agree with each other: {compared}"
    estimate = "" if pd.isna(more) else f"; about {int(more)} more shared answers would decide (estimated)"
    undecided = "cannot tell yet whether it agrees with clinicians as well as they agree with each other"
    return f"{undecided}: {compared}{estimate}"


def agreement_table(instances: pd.DataFrame, ratings: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """judge_human_agreement.csv: per panel, its judges, its reward and the clinicians' ceiling."""
    humans = human_answers(ratings)
    rows = []
    for panel, rows_of_panel in instances.groupby("panel", sort=True):
        runs = set(rows_of_panel["run"])
        mine = ratings[ratings["run"].isin(runs)]
        if mine.empty:
            continue
        found = _clinicians_row(mine, settings)
        parts = (found.pop("_ceiling", None), found.pop("_index", None), found.pop("_icc_drawn", None))
        held: Held | None = None if parts[0] is None else parts  # type: ignore[assignment]
        ceiling = pd.Series(found)
        for row in _judge_rows(rows_of_panel, humans[humans["run"].isin(runs)], held, settings):
            icc, low, high = (float(row[key]) for key in ("icc", "icc_ci_low", "icc_ci_high"))  # type: ignore[arg-type]
            in_place = tuple(float(row[key]) for key in IN_PLACE)  # type: ignore[arg-type]
            difference = tuple(float(row[key]) for key in VS_CEILING)  # type: ignore[arg-type]
            note = str(row.pop("note"))
            says = verdict(icc, low, high, ceiling, int(row["n"]), note, in_place, difference)  # type: ignore[call-overload, arg-type]
            rows.append({**row, "panel": panel, "verdict": says})
        rows.append({**ceiling.drop("note").to_dict(), "panel": panel, "verdict": _ceiling_says(ceiling)})
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


def _ceiling_says(ceiling: pd.Series) -> str:
    """The clinicians' row's verdict cell: why (part of) the ceiling carries no information, if it does not."""
    return evidence.too_few(int(ceiling["n"]), "answers") or str(ceiling["note"])


def rated_mean(rated: pd.DataFrame, settings: BootstrapSettings) -> tuple[float, float, float, int]:
    """(mean, CI low, CI high, n) of the rated answers' human rewards, as an estimate of the model's clinician mean.

    The rating sample draws an answer up to five times more often when its judges disagree, so where the ratings
    carry unequal inclusion probabilities the mean is Hajek-weighted (1 / probability) and its interval is t(n - 1)
    on the weighted mean's standard error. Without them (or all equal) it is the plain mean and its bootstrap
    interval, as before."""
    y = rated["human_reward"].to_numpy(dtype=float)
    pi = rated["pi"].to_numpy(dtype=float)
    if np.isnan(pi).any() or np.allclose(pi, pi[0]):
        return (float(y.mean()), *mean_ci(y, settings), int(y.size))
    w = 1 / pi
    mean = float(np.sum(w * y) / np.sum(w))
    if y.size < 2:
        return (mean, np.nan, np.nan, 1)
    se = math.sqrt(y.size / (y.size - 1) * float(np.sum(w**2 * (y - mean) ** 2)) / float(np.sum(w)) ** 2)
    half = float(t_dist.ppf((1 + settings.confidence) / 2, y.size - 1)) * se
    return (mean, max(0.0, mean - half), min(1.0, mean + half), int(y.size))


def human_leaderboard(board: pd.DataFrame, ratings: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """leaderboard.csv plus the human reward per model (answers' mean over raters; design-weighted where the
    ratings carry inclusion probabilities: `rated_mean`), its CI and n."""
    pi = ratings["inclusion_probability"] if "inclusion_probability" in ratings else np.nan
    found = ratings.assign(pi=pi).groupby(["run", "instance_id"], as_index=False)["pi"].first()
    humans = human_answers(ratings).merge(found, on=["run", "instance_id"]).merge(board[["run", *KEYS]], on="run")
    stats = humans.groupby(KEYS)[["human_reward", "pi"]].apply(lambda s: rated_mean(s, settings))
    extra = pd.DataFrame(stats.tolist(), index=stats.index, columns=HUMAN_COLUMNS).reset_index() if len(stats) else (
        pd.DataFrame(columns=[*KEYS, *HUMAN_COLUMNS]))  # fmt: skip
    merged = board.merge(extra, on=KEYS, how="left")
    merged["n_human"] = merged["n_human"].fillna(0).astype(int)
    return merged


def ranking_agreement(board: pd.DataFrame) -> pd.DataFrame:
    """Per panel, Kendall's tau between the panel's ranking of models and the clinicians' (models rated by both)."""
    rows = []
    for panel, models in board.groupby("panel", sort=True):
        both = models.dropna(subset=["reward", "human_reward"])
        tau = kendall(both["reward"].to_numpy(dtype=float), both["human_reward"].to_numpy(dtype=float))
        rows.append({"panel": panel, "n_models": len(both), "kendall_tau": tau})
    return pd.DataFrame(rows, columns=["panel", "n_models", "kendall_tau"])


def human_tables(
    instances: pd.DataFrame, board: pd.DataFrame, ratings: pd.DataFrame, settings: BootstrapSettings
) -> dict[str, pd.DataFrame]:
    """What ratings add to the report: the leaderboard with human rewards, the agreement and ranking tables."""
    human_board = human_leaderboard(board, ratings, settings)
    return {
        "leaderboard": human_board,
        "judge_human_agreement": agreement_table(instances, ratings, settings),
        "ranking_agreement": ranking_agreement(human_board),
    }
