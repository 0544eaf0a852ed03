"""An explanation is the judge's own words or its verdict is not the judge's: placeholders by shape, in any wording."""

from __future__ import annotations

import json

import pytest

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.core.reply.explanations import NOT_OWN_WORDS, VERDICT_REFUSED, explanation_problem
from helm_mtsamples_ext.judges.core.reply.verdict import parse_verdict

OWN = NOT_OWN_WORDS


def reply_with(explanation: str, dimension: str = "clarity") -> str:
    body = {
        "accuracy": {"score": 4, "explanation": "Correct steps for this repair."},
        "completeness": {"score": 3, "explanation": "Antibiotics are not named."},
        "clarity": {"score": 5, "explanation": "Each step is in its own line."},
    }
    body[dimension]["explanation"] = explanation
    return json.dumps(body)


def judged(reply: str) -> tuple[dict[str, int | None], dict[str, str]]:
    parsed = parse_verdict(reply)
    assert parsed is not None
    return {dim: parsed.dimensions[dim].score for dim in DIMENSIONS}, parsed.invalid


REFUSED = [
    # the prompt's own placeholders, and stand-ins in other wordings
    ("<one or two sentences>", f"{OWN}: a placeholder '<one or two sentences>'"),
    ("  <one or two sentences>  ", f"{OWN}: a placeholder '<one or two sentences>'"),
    ('"<one or two sentences>"', f"{OWN}: a placeholder '\"<one or two sentences>\"'"),
    ("<...>", f"{OWN}: a placeholder '<...>'"),
    ("<integer 1-5>", f"{OWN}: a placeholder '<integer 1-5>'"),
    ("<your reasoning about the plan>", f"{OWN}: a placeholder '<your reasoning about the plan>'"),
    ("<other text here", f"{OWN}: a placeholder '<other text here'"),
    ("<...}", f"{OWN}: a placeholder '<...}}'"),
    ("<...", f"{OWN}: a placeholder '<...'"),
    ("<one or two sentences", f"{OWN}: a placeholder '<one or two sentences'"),
    ("one or two sentences>", f"{OWN}: a placeholder 'one or two sentences>'"),
    ("short text here>", f"{OWN}: a placeholder 'short text here>'"),
    ("[your explanation here]", f"{OWN}: a placeholder '[your explanation here]'"),
    ("{explanation}", f"{OWN}: a placeholder '{{explanation}}'"),
    ("{{reason}}", f"{OWN}: a placeholder '{{{{reason}}}}'"),
    ("$EXPLANATION", f"{OWN}: a placeholder '$EXPLANATION'"),
    ("...", f"{OWN}: a placeholder '...'"),
    ("___", f"{OWN}: a placeholder '___'"),
    ("Explain why this score was given.", f"{OWN}: a placeholder 'Explain why this score was given.'"),
    ("explain why this score was given", f"{OWN}: a placeholder 'explain why this score was given'"),
    ("one or two sentences", f"{OWN}: a placeholder 'one or two sentences'"),
    ("Your explanation here.", f"{OWN}: a placeholder 'Your explanation here.'"),
    # pieces of a format line inside longer text
    ("The plan is fine <... and more", f"{OWN}: a fragment of a format line 'The plan is fine <... and more'"),
    ("Good plan overall, <your words", f"{OWN}: a fragment of a format line 'Good plan overall, <your words'"),
    ("Clear plan for {{ reader }} use", f"{OWN}: a fragment of a format line 'Clear plan for {{{{ reader }}}} use'"),
    ('Fine plan", "score": 3', f'{OWN}: a fragment of a format line \'Fine plan", "score": 3\''),
]


@pytest.mark.parametrize(("explanation", "reason"), REFUSED, ids=[e for e, _ in REFUSED])
def test_a_placeholder_in_any_wording_refuses_the_whole_verdict(explanation: str, reason: str) -> None:
    """The judge was copying the format: the score beside a stand-in is the template's, and so are the others."""
    assert explanation_problem(explanation) == reason
    scores, invalid = judged(reply_with(explanation))
    assert scores == dict.fromkeys(DIMENSIONS)
    assert invalid["clarity"] == reason
    assert (
        invalid["accuracy"]
        == invalid["completeness"]
        == f"{VERDICT_REFUSED}: the clarity explanation is " + (reason.split(": ", 1)[1])
    )


def test_the_smollm_judges_placeholder_in_new_words_does_not_keep_its_score() -> None:
    """Issue 23: beside two refused placeholders, clarity 3 with "<other text here" used to count."""
    reply = (
        '{"accuracy": {"score": 1, "explanation": "<one or two sentences>"}, '
        '"completeness": {"score": 2, "explanation": "<...}"}, '
        '"clarity": {"score": 3, "explanation": "<other text here"}}'
    )
    parsed = parse_verdict(reply)
    assert parsed is not None and not parsed.has_valid_dimension


SHORT = [
    ("", f"{OWN}: none, fewer than 3 words"),
    ("ok", f"{OWN}: 1 word 'ok', fewer than 3 words"),
    ("Good plan.", f"{OWN}: 2 words 'Good plan.', fewer than 3 words"),
    ("4/5 !!", f"{OWN}: 0 words '4/5 !!', fewer than 3 words"),
]


@pytest.mark.parametrize(("explanation", "reason"), SHORT, ids=["empty", "one-word", "two-words", "no-letters"])
def test_a_short_explanation_costs_only_its_own_dimension(explanation: str, reason: str) -> None:
    """Too few words is no evidence, but not copying: the other dimensions still count."""
    assert judged(reply_with(explanation)) == ({"accuracy": 4, "completeness": 3, "clarity": None}, {"clarity": reason})


ACCEPTED = [
    "Correct steps, though antibiotics are not named.",
    "Explain why this score was given, then more.",
    "<b>bold</b> plan with clear steps",
    "Fine... mostly, with gaps",
    "It is <one> of two options",
    "Blood loss <50 mL is noted",
    "Margin < 2 cm was reported",
    "Scored 4 of 5: clear",
    "Heart rate > 100 is handled",
    "The text here is clear enough",
]


@pytest.mark.parametrize("explanation", ACCEPTED)
def test_an_explanation_in_the_judges_own_words_counts(explanation: str) -> None:
    """Three or more words of the judge's own; bits resembling a placeholder inside real text do not matter."""
    assert explanation_problem(explanation) is None
    assert judged(reply_with(explanation)) == ({"accuracy": 4, "completeness": 3, "clarity": 5}, {})
