"""Reading report.html's embedded data back (review_data.py's layout), the way the page's script reads it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

DATA_BLOCK = re.compile(r'<script type="application/json" id="review-data">(.*?)</script>', re.S)
ANSWER_NUMBERS = ("note", "reward", "spread", "judges")
"""The answer fields that are not texts."""


def raw_data(html: str) -> dict[str, Any]:
    (block,) = DATA_BLOCK.findall(html)
    data: dict[str, Any] = json.loads(block)
    return data


@dataclass(frozen=True)
class PageData:
    notes: list[dict[str, Any]]
    """Each note's fields, texts resolved, plus ``answers``: its answers."""
    answers: list[dict[str, Any]]
    """Each answer's fields, texts resolved (``text`` is head + rest; ``note`` is its note's name)."""
    rating: list[dict[str, Any]]
    """The rating items in order, ``answer`` resolved to the answer."""
    several_judges: bool


def page_data(html: str) -> PageData:
    raw = raw_data(html)
    strings, fields = raw["strings"], raw["fields"]
    notes = [
        {**{f: strings[v] for f, v in zip(fields["note"], row, strict=True)}, "answers": []} for row in raw["notes"]
    ]
    answers = []
    for row in raw["answers"]:
        answer = {f: v if f in ANSWER_NUMBERS else strings[v] for f, v in zip(fields["answer"], row, strict=True)}
        judges = [dict(zip(fields["judge"], judge, strict=True)) for judge in answer["judges"]]
        for judge in judges:
            judge.update(
                name=strings[judge["name"]],
                status=strings[judge["status"]],
                failure=strings[judge["failure"]],
                explanations=[strings[e] for e in judge["explanations"]],
            )
        note = notes[answer["note"]]
        answer.update(judges=judges, note=note["name"], text=answer["head"] + answer["rest"])
        note["answers"].append(answer)
        answers.append(answer)
    rating = [dict(zip(fields["rating"], row, strict=True)) for row in raw["rating"]]
    for item in rating:
        item["answer"] = answers[item["answer"]]
    return PageData(notes, answers, rating, raw["several_judges"])
