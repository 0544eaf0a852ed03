"""The statistics: intervals, pairwise differences and ranks, agreement (between judges, with clinicians), the
ceiling, leave-one-out, self-preference and the evidence rules. Pure: no I/O and no HELM (a contract checks it), so
the report and every door compute the same figures from a table.
"""

__all__ = [
    "agreement",
    "ceiling",
    "controls",
    "evidence",
    "human_agreement",
    "intervals",
    "leave_one_out",
    "medhelm_pairs",
    "pairwise",
    "panel_alpha",
    "ranks",
    "self_preference",
    "self_preference_fit",
    "ties",
]
"""The modules the doors import."""
