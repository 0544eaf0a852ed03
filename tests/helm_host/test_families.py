"""A model's family as HELM's registry names it (helm_host/families.py): its creator, a placeholder none."""

from __future__ import annotations

from datetime import date

import pytest
from helm.benchmark.model_metadata_registry import ModelMetadata, get_unknown_model_metadata

from helm_mtsamples_ext.helm_host import families
from helm_mtsamples_ext.helm_host.families import creator_of

pytestmark = pytest.mark.helm


def metadata(name: str, creator: str) -> ModelMetadata:
    return ModelMetadata(name=name, creator_organization_name=creator, display_name=name, description=name,
                         access="open", release_date=date(2025, 1, 1))  # fmt: skip


def test_a_models_family_is_its_creator_in_helms_metadata_and_a_placeholder_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry = {"meta/llama": metadata("meta/llama", "Meta"), "x/y": get_unknown_model_metadata("x/y")}
    monkeypatch.setattr(families, "MODEL_NAME_TO_MODEL_METADATA", registry)
    assert creator_of("meta/llama") == "Meta"
    assert creator_of("x/y") is None, "HELM's placeholder for an unknown model says 'Unknown': no family"
    assert creator_of("not/registered") is None
