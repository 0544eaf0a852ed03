"""A model's family (families.py): its creator in HELM's metadata, compared without case; a judge's declared one."""

from __future__ import annotations

from datetime import date

import pytest
from helm.benchmark.model_metadata_registry import ModelMetadata, get_unknown_model_metadata

from helm_mtsamples_ext.common import families
from helm_mtsamples_ext.common.families import creator_of, declared_families, family_key

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


@pytest.mark.parametrize(("family", "key"), [("Meta", "meta"), (" META ", "meta"), ("Unknown", ""), (None, "")])
def test_families_compare_without_case(family: object, key: str) -> None:
    assert family_key(family) == key


def test_judge_family_declares_one_for_all_or_one_each() -> None:
    assert declared_families(None, 2) == [None, None]
    assert declared_families("Meta", 2) == ["Meta", "Meta"]
    assert declared_families("Meta+Alibaba", 2) == ["Meta", "Alibaba"]


@pytest.mark.parametrize(("text", "message"), [("Meta+", "a family per judge"), ("a+b+c", "3 families for 2 judges")])
def test_a_judge_family_that_does_not_fit_the_panel_is_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        declared_families(text, 2)
