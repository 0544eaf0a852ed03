"""A model's family (families.py): compared without case; a judge's declared one."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.families import declared_families, family_key


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
