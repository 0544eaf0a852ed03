"""Which control a model name is: the audit, the pairwise table and the self-preference fit all set controls apart."""

from __future__ import annotations

from helm_mtsamples_ext.data.controls import CONTROL_KINDS, CONTROL_ORGANIZATION


def control_kind(model: str) -> str:
    """`reference` for `mtsamples-control/reference` (also with the report's ` [run args]` suffix), else ""."""
    organization, _, rest = model.partition("/")
    kind = rest.split(" [", 1)[0]
    return kind if organization == CONTROL_ORGANIZATION and kind in CONTROL_KINDS else ""
