"""The panel as MedARC's arguments give it: strings or lists matched by position, one value broadcast."""

from __future__ import annotations

from typing import Any

import pytest

from helm_mtsamples_ext.common.judge_lists import ListedJudge, list_judges


def test_one_url_and_one_key_are_broadcast_to_every_judge() -> None:
    assert list_judges(["a", "b"], "http://h/v1", "k") == [
        ListedJudge("a", "a", "http://h/v1", "k"),
        ListedJudge("b", "b", "http://h/v1", "k"),
    ]


def test_a_list_of_one_is_broadcast_too() -> None:
    assert [j.base_url for j in list_judges(["a", "b"], ["http://h/v1"], "k")] == ["http://h/v1", "http://h/v1"]


def test_lists_are_matched_by_position() -> None:
    judges = list_judges(["a", "b"], ["http://1/v1", "http://2/v1"], ["k1", "k2"])
    assert [(j.model, j.base_url, j.api_key) for j in judges] == [
        ("a", "http://1/v1", "k1"),
        ("b", "http://2/v1", "k2"),
    ]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        ((["a", "b", "c"], ["u1", "u2"], None), "judge_base_url has 2 values for 3 judge_model values: give one value "
         "(for every judge) or one per judge, in judge_model's order"),
        ((["a", "b"], None, ["k1", "k2", "k3"]), "judge_api_key has 3 values for 2 judge_model values: give one value "
         "(for every judge) or one per judge, in judge_model's order"),
        ((["", " "], None, None), "judge_model names no judge: give a model name, or a list of them"),
        ((["a", "a"], "u", None), "judge 'a@u' is listed twice at the same judge_base_url: list each judge once"),
    ],
    ids=["urls", "keys", "no model", "twice"],
)  # fmt: skip
def test_a_mismatch_is_one_line_naming_the_argument(args: tuple[Any, Any, Any], line: str) -> None:
    with pytest.raises(ValueError) as raised:
        list_judges(*args)
    assert str(raised.value) == line


def test_the_same_model_at_two_urls_is_two_judges_named_by_url() -> None:
    assert [j.name for j in list_judges(["m", "m"], ["u1", "u2"], "k")] == ["m@u1", "m@u2"]


@pytest.mark.parametrize(
    ("environ", "key"),
    [({"JUDGE_API_KEY": "j", "OPENAI_API_KEY": "o"}, "j"), ({"OPENAI_API_KEY": "o"}, "o"), ({}, None)],
    ids=["JUDGE_API_KEY first", "then OPENAI_API_KEY", "none"],
)
def test_a_missing_key_falls_back_to_the_environment(environ: dict[str, str], key: str | None) -> None:
    assert [j.api_key for j in list_judges(["a", "b"], None, [None, "given"], environ)] == [key, "given"]
