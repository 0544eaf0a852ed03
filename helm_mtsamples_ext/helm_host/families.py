"""A model's family as HELM's registry names it: read while helm-run has the registry loaded (the suite's own
``prod_env/`` included), and stored, so the report compares families without HELM (common/families.py).
"""

from __future__ import annotations

from helm.benchmark.model_metadata_registry import MODEL_NAME_TO_MODEL_METADATA

from helm_mtsamples_ext.common.families import NOT_A_FAMILY

__all__ = ["creator_of"]


def creator_of(model_name: str) -> str | None:
    """``creator_organization_name`` of ``model_name`` in HELM's registry; None when HELM has no metadata for
    it or only its placeholder."""
    metadata = MODEL_NAME_TO_MODEL_METADATA.get(model_name)
    creator = str(metadata.creator_organization_name or "").strip() if metadata is not None else ""
    return None if creator.casefold() in NOT_A_FAMILY else creator
