"""The review page: report.html, one self-contained file a clinician opens from disk to read contested notes.

It opens on the leaderboard (page_overview.py: each panel's rewards with their intervals, the clinician scale where
there are ratings, the audit's verdict, the figure); the per-note review is the second tab (``#review`` in the
address opens it), the rating mode a button on both.

Per note: the operative note (collapsed), the reference, each model's answer and each judge's three scores with
explanations side by side; filters by model, specialty and section, search by note name; notes sorted by judge
disagreement, the largest spread of judge rewards first, so the notes where the judges disagree most are read
first. With one judge there is no disagreement: no badge, and notes sorted by name. Long references and answers
show their first lines and fold the rest; control runs are labelled.

The page holds its data once (review_data.py) in a JSON block and its script draws one page of notes at a time,
so it opens at once with 16 models: a page of notes for one model, or one note with every model's answers. The
texts are untrusted: the script only ever sets ``textContent``, never markup, and the JSON block is written with
``<``, ``>`` and ``&`` as ``\\u`` escapes, so no answer can close the block (``</script>``) or open a tag. The
little markup around it is rendered by Jinja2 with autoescaping on. CSS and JS are inline and the page holds no
URL, so it works offline and fetches nothing (the figure is a data: URI).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
import pandas as pd

from helm_mtsamples_ext.common.rubric import DIMENSIONS, QUESTIONS
from helm_mtsamples_ext.report.page_overview import (
    CLINICIAN_SENTENCE,
    Overview,
    figure_uri,
    has_clinician_scale,
    panel_boards,
)
from helm_mtsamples_ext.report.rating_sample import EVERY_ANSWER, RatingRound
from helm_mtsamples_ext.report.review_data import review_data, several_judges
from helm_mtsamples_ext.stats.controls import control_kind

TEMPLATE = "review.html.j2"
SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
"""Characters a JSON string may hold that an HTML parser (or an old JS one) would read; JSON's \\u escapes instead."""


def script_json(data: Any) -> markupsafe.Markup:
    """``data`` as JSON safe inside ``<script type="application/json">``: no ``<`` is left, so no ``</script>``.

    These characters occur only inside JSON strings (JSON's own syntax has none of them), where the escape reads back
    as the same character: the one value the template marks safe, because it holds no markup at all.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escape in SCRIPT_ESCAPES.items():
        text = text.replace(char, escape)
    return markupsafe.Markup(text)  # noqa: S704 - escaped above: holds no <, > or &


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("helm_mtsamples_ext.report", "templates"),
        autoescape=True,  # every value is untrusted text; only script_json's output is marked safe
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def nothing_to_rate(instances: pd.DataFrame) -> str:
    """Why the rating mode offers no answer: only answers of models under test that a judge scored are rated
    (controls are known by construction; an unjudged answer has no verdict to compare a rating with)."""
    models = instances.drop_duplicates(["run", "note_id"])
    tested = models.loc[models["model"].map(control_kind) == ""]
    if tested.empty:
        return "the suite holds only control runs, and controls are not rated"
    return (
        f"no judge scored any of the {len(tested)} answers of the models under test "
        "(see the judge failures in report.md); re-run helm-run to retry the failed calls"
    )


def render_review(
    instances: pd.DataFrame, suite: str, sample: RatingRound = EVERY_ANSWER, overview: Overview | None = None
) -> str:
    """The page; without ``overview`` (the report's tables) it holds the review alone."""
    data = review_data(instances, sample)
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            suite=suite,
            data=script_json(data),
            n_notes=len(data["notes"]),
            models=sorted(instances["model"].astype(str).unique()),
            specialties=sorted(instances["specialty"].astype(str).unique()),
            sections=sorted(instances["extracted_section"].astype(str).unique()),
            several_judges=several_judges(instances),
            dimensions=DIMENSIONS,
            rubric=QUESTIONS,
            n_rating=len(data["rating"]),
            nothing_to_rate=nothing_to_rate(instances) if not data["rating"] else "",
            n_shared=sum(item[1] for item in data["rating"]),
            seed=sample.seed,
            boards=panel_boards(overview.leaderboard) if overview else [],
            clinician=CLINICIAN_SENTENCE if overview and has_clinician_scale(overview.leaderboard) else "",
            verdicts=[line for line in overview.verdicts if line.strip()] if overview else [],
            figure=figure_uri(overview.figure) if overview else "",
            overview=overview is not None,
        )
    )


def write_review(
    instances: pd.DataFrame,
    path: Path,
    suite: str,
    sample: RatingRound = EVERY_ANSWER,
    overview: Overview | None = None,
) -> None:
    path.write_text(render_review(instances, suite, sample, overview), encoding="utf-8")
