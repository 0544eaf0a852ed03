"""Seeded suites with known truth for the agreement and audit simulations (tests and benchmarks/bench_verdicts.py).

`agreement_draw`: n answers with a latent quality; two clinicians whose ICC with each other is about
`clinician_icc` and one judge whose ICC with a clinician is about `judge_icc`, as the tables the report builds
(instances for human_agreement.agreement_table, ratings). `audit_draw`: a judge's rewards for the reference and
shuffled controls on n notes, blind (the same distribution for both) or decent (AUROC about 0.8, the audit's own
"tells apart" threshold), as the instances judge_audit reads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.data.controls import CONTROL_ORGANIZATION

PANEL = "judge"
RUN = "sim"


def _scores(values: np.ndarray) -> dict[str, np.ndarray]:
    return {d: np.clip(np.round(3 + values), 1, 5) for d in DIMENSIONS}


def agreement_draw(
    rng: np.random.Generator, n: int, clinician_icc: float = 0.65, judge_icc: float = 0.33
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(instances, ratings) of one suite: rater = truth + noise; ICC(3,1) of two such sides is 2 / (2 + both noises)."""
    clinician_noise = 1 / clinician_icc - 1
    judge_noise = 2 / judge_icc - 2 - clinician_noise
    truth = rng.normal(size=n)
    notes = [f"id{k}" for k in range(n)]
    judge = truth + rng.normal(scale=np.sqrt(judge_noise), size=n)
    instances = pd.DataFrame(
        {"panel": PANEL, "run": RUN, "note_id": notes, "judge": PANEL, "judge_reward": judge, "note_reward": judge,
         **_scores(judge)}
    )  # fmt: skip
    frames = []
    for rater in ("alice", "bob"):
        values = truth + rng.normal(scale=np.sqrt(clinician_noise), size=n)
        frames.append(
            pd.DataFrame({"run": RUN, "instance_id": notes, "rater": rater, "human_reward": values, **_scores(values)})
        )
    return instances, pd.concat(frames, ignore_index=True)


DECENT_SHIFT = 1.25
"""Reference minus shuffled score, in units of the judge's noise: a true AUROC of about 0.8 on rewards."""


def audit_draw(rng: np.random.Generator, n: int, blind: bool) -> pd.DataFrame:
    """The instances of a reference and a shuffled control run, one judge, n notes, rewards on the 1-5 grid."""
    rows = []
    for kind, shift in (
        ("reference", 0.0 if blind else DECENT_SHIFT / 2),
        ("shuffled", 0.0 if blind else -DECENT_SHIFT / 2),
    ):
        latent = shift + rng.normal(size=n)
        scores = np.clip(np.round(3 + latent[:, None] + rng.normal(scale=0.5, size=(n, 3))), 1, 5)
        reward = scores.mean(axis=1) / 5
        for k in range(n):
            rows.append(
                {"model": f"{CONTROL_ORGANIZATION}/{kind}", "panel": PANEL, "extraction": "plan", "note_id": f"id{k}",
                 "judge": PANEL, "judge_reward": reward[k], "note_reward": reward[k]}
            )  # fmt: skip
    return pd.DataFrame(rows)
