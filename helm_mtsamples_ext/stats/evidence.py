"""How much evidence a verdict needs: one table of minimums, and the words for falling short.

A statistic computed from too little evidence still prints a number, and a bootstrap over two notes
prints an interval of zero width that reads as certainty. Every verdict of the report (the audit's words,
pairwise win shares, reward intervals, the clinicians' agreement) asks these functions first; each
returns the sentence to print instead, or None when the evidence suffices. The table is repeated in
docs/report.md ("How much evidence a verdict needs"), and a test keeps the two equal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from helm_mtsamples_ext.stats.ties import rounded_for_ranks


@dataclass(frozen=True)
class Minimums:
    """The thresholds, each with why it has that value."""

    notes_for_verdict: int = 5
    """Notes (or runs of one note each) below which no interval and no verdict is given. With n notes a
    bootstrap has at most C(2n-1, n) distinct resamples; at n = 2 that is 3, so its 95% interval is the
    two notes' range or a single point. From 5 notes (126 distinct resamples, the smallest resample
    still drawing about 2/3 of the notes) a percentile interval starts to mean something. Five is a
    floor, not a recommendation: the docs advise 20 or more."""

    notes_for_audit: int = 25
    """Notes with both the reference and the shuffled control below which the audit gives no discrimination
    verdict and no warning. Measured (benchmarks/bench_verdicts.py, docs/report.md's table): the smallest n at
    which a blind judge is warned in at least 90% of simulated suites and a decent one (true AUROC about 0.8)
    wrongly warned in at most 5% (at 20 notes 3.5-7.5% across runs of the simulation; at 25, 1.5-2%). Under the
    former rule (point AUROC below 0.6 from 5 notes) a blind judge went unwarned in a quarter of the suites at 5
    notes and a decent one was warned in a tenth."""

    answers_for_agreement: int = 5
    """Answers rated by both sides (or by two raters) below which no agreement figure or verdict is
    given, for the same reason as notes: fewer than 5 pairs leave a correlation or ICC free to be
    anything from -1 to 1 by chance."""

    agreement_margin: float = 0.1
    """The equivalence margin, in ICC, for "agrees with clinicians about as well as clinicians agree with each
    other": said only when the 95% interval of the judge's ICC minus the clinicians' (on the same resamples) lies
    within ±0.1. Overlapping intervals are no evidence of equality: a judge with half the clinicians' ICC (0.33
    vs 0.65) has overlapping intervals in most draws at 12-60 shared answers."""

    rated_for_clinician_scale: int = 10
    """Rated answers of a model below which it gets no clinician-scale reward (stats/clinician_scale.py), only a
    line saying how many more to rate. Measured (benchmarks/sim_calibration.py, docs/report.md's table): from 10
    rated answers the interval covers the clinicians' mean in 94.6-95.2% of simulated rounds (judges kinder by 0.1, a
    monotone distortion, one model distorted; 94-96% at 13 and 26). Coverage alone would allow fewer (95-96% at 6-7),
    but there the interval is 0.16-0.20 wide, rests on a normal approximation of a mean of 6 residuals, and lambda
    is fitted on the same few answers; 10 is the issue's floor and the simulations do not ask for more."""

    rated_for_transport: int = 20
    """Rated answers of a model below which the transport check (stats/clinician_scale.py) cannot clear it: a
    model-specific judge bias of 0.1 is flagged (p < 0.05) in 87% of simulated rounds at 20 rated answers, 74% at
    15 and 54% at 10, with a false flag in 4.5-6.5% (benchmarks/sim_calibration.py, docs/report.md's table;
    tests/stats/test_clinician_scale_sim.py holds it at 20). Below, a flag still stands (its false rate is the
    same), but no flag is no evidence, and the report says so."""

    max_tied_resample_share: float = 0.5
    """The largest share of bootstrap resamples whose statistic equals the point estimate exactly (after
    ties.rounded_for_ranks) that still gives an interval. When most resamples tie, the interval's width comes
    from the few that do not, and a zero or near-zero width says nothing about the population."""


MINIMUMS = Minimums()


def too_few(n: int, what: str = "notes", minimum: int | None = None) -> str | None:
    """ "too few notes (2) to tell" when ``n`` is below the minimum for ``what``; None otherwise.

    ``what`` is "notes" (or any unit counted like notes) or "answers", which uses the agreement minimum;
    ``minimum`` overrides either (the audit's discrimination asks for MINIMUMS.notes_for_audit).
    """
    if minimum is None:
        minimum = MINIMUMS.answers_for_agreement if what == "answers" else MINIMUMS.notes_for_verdict
    if n < minimum:
        return f"too few {what} ({n}) to tell"
    return None


def constant(name: str, values: Iterable[float]) -> str | None:
    """ "<name> gave one score to every answer: no information" when every value is the same; else None.

    A constant column has no variance, so a correlation or ICC against it is undefined (or 0 by
    convention), and its bootstrap interval has zero width. NaNs are ignored; no values counts as
    constant too (there is nothing to compare).
    """
    distinct = {rounded_for_ranks(float(v)) for v in values if v == v}
    if len(distinct) <= 1:
        return f"{name} gave one score to every answer: no information"
    return None


def mostly_tied(resamples: Iterable[float], point: float | None = None) -> str | None:
    """ "most bootstrap resamples tie: no interval" when more than the allowed share of ``resamples``
    equal ``point`` (by default their most common value) after ties.rounded_for_ranks; None otherwise."""
    values = [rounded_for_ranks(float(v)) for v in resamples if v == v]
    if not values:
        return "most bootstrap resamples tie: no interval"
    if point is None:
        target = max(set(values), key=values.count)
    else:
        target = rounded_for_ranks(float(point))
    share = sum(v == target for v in values) / len(values)
    if share > MINIMUMS.max_tied_resample_share:
        return "most bootstrap resamples tie: no interval"
    return None
