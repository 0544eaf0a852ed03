"""A model's family: the organization that made it, as HELM's model metadata names it (helm_host/families.py
reads it there), compared without case; and a judge's declared one.

Self-preference (stats/self_preference.py) asks whether a judge favours answers of its own family, so
the run stores each judge's family (panel.py, in run_spec.json) and the model under test's (record.py,
in each note's record) while HELM's registry is loaded: the metadata may come from the suite's own
``prod_env/``, which the report never reads. An endpoint judge's registered metadata names its host,
not a maker, so its family is only what the user declares (``judge_family``).
"""

from __future__ import annotations

NOT_A_FAMILY = frozenset({"", "unknown"})
"""What HELM's placeholder metadata for an unknown model says (``get_unknown_model_metadata``)."""


def family_key(family: object) -> str:
    """What two families are compared by: ``Meta`` and ``meta`` are one family ("" for none)."""
    if not isinstance(family, str):
        return ""
    key = family.strip().casefold()
    return "" if key in NOT_A_FAMILY else key


def declared_families(text: str | None, judges: int) -> list[str | None]:
    """``judge_family``: one family for every judge, or ``F1+F2`` one per judge in panel order; [None, ...]
    when not given."""
    if not text:
        return [None] * judges
    parts: list[str | None] = [part.strip() for part in text.split("+")]
    if not all(parts):
        raise ValueError(f"judge_family must name a family per judge joined by '+' (e.g. Meta+Alibaba), got {text!r}")
    if len(parts) == 1:
        return parts * judges
    if len(parts) != judges:
        raise ValueError(f"judge_family has {len(parts)} families for {judges} judges: give one, or one each")
    return list(parts)
