"""How many more answers clinicians should rate: per model, to reach a target interval, and to decide the leading pair.

Rating is the scarce resource, so the report plans the next round from what it has (pure; numpy, pandas, scipy).
The clinician-scale reward (stats/clinician_scale.py) is a prediction-powered mean; with n of a model's N judged
answers rated (taken as a uniform sample; the plan's own draw leans toward contested answers, which narrows the
interval where those are the answers the judges get most wrong and widens it somewhat where they are not), its
variance is

    V(n) = var(y - lam f) (1/n - 1/N) + var(y) / N,        lam = rho sd(y) / sd(f), clipped to [0, 1],

which with the best lambda is var(y - lam f) / n + lam^2 var(f) / N up to the finite-population correction: the
rated answers' residuals carry the error, the judges' rewards on every answer carry the rest. f is an answer's
judges' reward, y its clinician label, rho their correlation. The half-width at n is t(0.975, n - 2) sqrt(V(n)).

What the plan knows of y: a model's own rated answers when it has at least ``FLOOR`` (10, the clinician-scale
floor); else the rated answers of its panel pooled over models when they reach ``FLOOR``; else nothing, and then
a stated prior: rho = ``PRIOR_RHO`` (0.5) and the clinicians' spread equal to the judges' (var(y) = var(f)). The
``rho_from`` column says which. The answers a model needs:

- ``more_for_target``: the fewest further ratings that bring its half-width to ``target`` (at least up to the
  floor); NaN when even rating all N answers leaves it wider (var(y)/N alone is too large) or N is below the floor;
- ``more_for_pair``: for the two leading models of a panel (by the clinician-scale reward where both have the
  floor, else by the judges' reward), the fewest further ratings for each that make a 95% interval of their
  difference exclude 0, if the difference is what it looks like now. The two models are rated independently and
  their shared notes' covariance is ignored, so this errs on the side of more ratings; NaN when rating everything
  would not do.
- ``quota``: what ``--rating-sample plan`` draws: the larger of the two, at most the unrated answers; a target out
  of reach counts as all the unrated answers (rating everything comes closest), a pair ratings cannot decide as 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from helm_mtsamples_ext.stats.clinician_scale import answers
from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.evidence import MINIMUMS

PRIOR_RHO = 0.5
"""The judge-clinician correlation assumed where no ratings say otherwise (a moderate one: MedHELM reports
judge-clinician agreement of about this size for its LLM juries)."""
FLOOR = MINIMUMS.rated_for_clinician_scale
"""Rated answers a model needs before it gets a clinician-scale figure (10); the plan never asks for fewer."""
CONFIDENCE = 0.95
KEYS = ["panel", "model"]
COLUMNS = [
    "panel", "model", "n_judged", "n_rated", "rho", "rho_from", "halfwidth_now", "target_halfwidth",
    "rated_for_target", "more_for_target", "pair_with", "difference", "more_for_pair", "quota",
]  # fmt: skip
"""rating_plan.csv's columns."""
NO_RATINGS = pd.DataFrame({"run": [], "instance_id": [], "human_reward": []})
"""A round before any rating: every answer unrated."""


@dataclass(frozen=True)
class Variance:
    """A model's variance model: V(n) for n rated of N judged answers."""

    var_y: float
    var_f: float
    rho: float
    n_judged: int

    @property
    def lam(self) -> float:
        if self.var_f <= 0 or self.var_y <= 0:
            return 0.0
        return float(np.clip(self.rho * math.sqrt(self.var_y / self.var_f), 0.0, 1.0))

    @property
    def var_residual(self) -> float:
        lam = self.lam
        cov = self.rho * math.sqrt(max(self.var_y, 0.0) * max(self.var_f, 0.0))
        return max(self.var_y - 2 * lam * cov + lam**2 * self.var_f, 0.0)

    def variance(self, n: int) -> float:
        n = min(max(n, 1), self.n_judged)
        return self.var_residual * (1 / n - 1 / self.n_judged) + self.var_y / self.n_judged

    def halfwidth(self, n: int) -> float:
        """The predicted interval half-width with n answers rated (NaN below 3: no interval)."""
        if n < 3:
            return math.nan
        return float(stats.t.ppf((1 + CONFIDENCE) / 2, n - 2)) * math.sqrt(self.variance(n))

    def rated_for(self, target: float) -> float:
        """The fewest rated answers (at least FLOOR, at most N) whose half-width is at most ``target``; NaN if none."""
        low, high = max(FLOOR, 3), self.n_judged
        if high < low or not self.halfwidth(high) <= target:  # fewer answers than the floor: never a figure
            return math.nan
        while low < high:  # the half-width falls with n: t and V both do
            middle = (low + high) // 2
            if self.halfwidth(middle) <= target:
                high = middle
            else:
                low = middle + 1
        return float(low)


def plan_answers(instances: pd.DataFrame, ratings: pd.DataFrame | None) -> pd.DataFrame:
    """One row per judged answer: panel, model, run, note_id, f (its judges' reward) and y (its clinician label,
    the mean of its raters' human_reward; NaN when unrated), as the estimate reads them (clinician_scale.answers).
    Control runs are left out: they are not rated."""
    found = answers(instances, NO_RATINGS if ratings is None else ratings).drop(columns="pi")
    return found[found["model"].map(control_kind) == ""].reset_index(drop=True)


def _moments(f: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(var(y), rho) of rated answers; rho NaN when either side is constant."""
    var_y = float(np.var(y, ddof=1))
    if np.std(f) == 0 or np.std(y) == 0:
        return var_y, math.nan
    return var_y, float(np.corrcoef(f, y)[0, 1])


def variance_model(mine: pd.DataFrame, panel_rated: pd.DataFrame) -> tuple[Variance, str]:
    """A model's Variance from its own ratings, its panel's pooled ones, or the prior; and which (``rho_from``)."""
    var_f = float(np.var(mine["f"].to_numpy(float), ddof=1)) if len(mine) > 1 else 0.0
    rated = mine[mine["y"].notna()]
    for source, rows in (("own ratings", rated), ("panel's ratings pooled", panel_rated)):
        if len(rows) >= FLOOR:
            var_y, rho = _moments(rows["f"].to_numpy(float), rows["y"].to_numpy(float))
            if not math.isnan(rho):
                return Variance(var_y, var_f, rho, len(mine)), f"{source} (n={len(rows)})"
    return Variance(var_f, var_f, PRIOR_RHO, len(mine)), f"prior rho = {PRIOR_RHO}, clinicians' spread = judges'"


def _center(mine: pd.DataFrame, model: Variance) -> float:
    """Where the model stands: its prediction-powered mean when it has the floor, else the judges' mean."""
    rated = mine[mine["y"].notna()]
    f_all = mine["f"].to_numpy(float)
    if len(rated) < FLOOR:
        return float(f_all.mean())
    lam = model.lam
    return float(lam * f_all.mean() + (rated["y"] - lam * rated["f"]).mean())


def _pair_more(a: Variance, n_a: int, b: Variance, n_b: int, difference: float) -> float:
    """The fewest further ratings k for each of two models whose difference's 95% interval excludes 0."""
    most = max(a.n_judged - n_a, b.n_judged - n_b)
    if min(a.n_judged, b.n_judged) < FLOOR:  # one of them can never have a clinician-scale figure
        return math.nan

    def decided(k: int) -> bool:
        na, nb = min(max(n_a + k, FLOOR), a.n_judged), min(max(n_b + k, FLOOR), b.n_judged)
        df = max(min(na, nb) - 2, 1)
        half = float(stats.t.ppf((1 + CONFIDENCE) / 2, df)) * math.sqrt(a.variance(na) + b.variance(nb))
        return half < abs(difference)

    if difference == 0 or not decided(most):
        return math.nan
    low, high = 0, most
    while low < high:
        middle = (low + high) // 2
        if decided(middle):
            high = middle
        else:
            low = middle + 1
    return float(max(low, FLOOR - min(n_a, n_b), 0))


def rating_plan(answers: pd.DataFrame, target: float) -> pd.DataFrame:
    """The plan (COLUMNS), one row per (panel, model) of ``answers`` (plan_answers)."""
    rows = []
    for panel, mine_panel in answers.groupby("panel", sort=True):
        panel_rated = mine_panel[mine_panel["y"].notna()]
        found = []
        for model, mine in mine_panel.groupby("model", sort=True):
            variance, source = variance_model(mine, panel_rated)
            n_rated = int(mine["y"].notna().sum())
            found.append((str(model), mine, variance, source, n_rated, _center(mine, variance)))
        for model, mine, variance, source, n_rated, _ in found:
            needed = variance.rated_for(target)
            more = math.nan if math.isnan(needed) else max(needed - n_rated, 0.0)
            rows.append({
                "panel": panel, "model": model, "n_judged": len(mine), "n_rated": n_rated, "rho": variance.rho,
                "rho_from": source, "halfwidth_now": variance.halfwidth(n_rated), "target_halfwidth": target,
                "rated_for_target": needed, "more_for_target": more, "pair_with": "", "difference": math.nan,
                "more_for_pair": math.nan,
            })  # fmt: skip
        leaders = sorted(range(len(found)), key=lambda k: (-found[k][5], found[k][0]))[:2]
        if len(leaders) == 2:
            first, second = (found[k] for k in leaders)
            difference = first[5] - second[5]
            more = _pair_more(first[2], first[4], second[2], second[4], difference)
            for one, other in ((first, second), (second, first)):
                row = rows[len(rows) - len(found) + found.index(one)]
                row.update(pair_with=other[0], difference=one[5] - other[5], more_for_pair=more)
    plan = pd.DataFrame(rows, columns=COLUMNS[:-1])
    plan["quota"] = [_quota(row) for row in plan.itertuples(index=False)]
    return plan


def _quota(row: object) -> int:
    """The answers to draw for a model: enough for the target (all its unrated answers when the target is out of
    reach: they come closest) and for its pair (where ratings can decide it), at most its unrated answers."""
    unrated = int(row.n_judged) - int(row.n_rated)  # type: ignore[attr-defined]
    target = unrated if math.isnan(row.more_for_target) else row.more_for_target  # type: ignore[attr-defined]
    pair = 0 if math.isnan(row.more_for_pair) else row.more_for_pair  # type: ignore[attr-defined]
    return int(min(max(target, pair), unrated))
