"""The panel's judge agreement across all its answers, beside the within-one-model alpha, each named for what it is.

A suite where the judges agree on which model is good but not within either model's answers (all three
dimensions get the same score; judge-one / judge-two on notes a, b, c, d):

  good model: 5/4, 4/5, 5/4, 4/5        bad model: 1/2, 2/1, 1/2, 2/1
  shuffled control: 1/5 on every note (left out of the panel's figure)

Within one model (values 4 and 5, four each, n = 8; every pair disagrees): Do = delta, De = 2*4*4*delta/(8*7) =
4/7 delta, alpha = 1 - 7/4 = -0.75 (the bad model alike).
Across the panel's 8 answers (n1 = n2 = n4 = n5 = 4, n = 16), ordinal delta(c,k) = (sum n_c..n_k - (n_c+n_k)/2)^2:
d12 = d45 = d24 = 16, d14 = d25 = 64, d15 = 144. Do = (2*4*16 + 2*4*16) / 16 = 16;
De = 2*4*4*(16+64+144+16+64+16) / (16*15) = 128/3; alpha = 1 - 16*3/128 = 0.625.
With the control's answers it would be lower (1 beside 5 on four more answers): the figure is about real answers.
"""

from __future__ import annotations

import pandas as pd
import pytest

from helm_mtsamples_ext.stats.panel_alpha import NO_REAL_ANSWERS, panel_alphas
from tests.report.reports import run_report
from tests.report.suites import JUDGES, Note, Run, build_suite, control_run, ok, read, row

NOTES = [Note(f"{name}.txt", "Orthopedic") for name in "abcd"]
GOOD, BAD, SHUFFLED = "acme/good", "acme/bad", "mtsamples-control/shuffled"
PANEL = "+".join(JUDGES)


def _run(model: str, pairs: list[tuple[int, int]]) -> Run:
    verdicts = {
        note.filename: {JUDGES[0]: ok(one, one, one), JUDGES[1]: ok(two, two, two)}
        for note, (one, two) in zip(NOTES, pairs, strict=True)
    }
    return Run(model, JUDGES, verdicts)


RUNS = [
    _run(GOOD, [(5, 4), (4, 5), (5, 4), (4, 5)]),
    _run(BAD, [(1, 2), (2, 1), (1, 2), (2, 1)]),
    control_run("shuffled", {note.filename: {JUDGES[0]: 0.2, JUDGES[1]: 1.0} for note in NOTES}),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, str]:
    output = tmp_path_factory.mktemp("bench")
    build_suite(output, RUNS, NOTES)
    out = output / "report"
    assert run_report(output, out) == 0
    return read(out, "leaderboard"), (out / "report.md").read_text()


def test_leaderboard_gives_the_panels_alpha_across_its_answers_beside_the_within_model_alpha(
    report: tuple[pd.DataFrame, str],
) -> None:
    board, _ = report
    for model in (GOOD, BAD):
        entry = row(board, model=model)
        for dim in ("accuracy", "completeness", "clarity"):
            assert entry[f"alpha_{dim}"] == pytest.approx(-0.75), (model, dim)
            assert entry[f"panel_alpha_{dim}"] == pytest.approx(0.625), (model, dim)
        assert entry["panel_alpha_answers"] == 8


def test_the_panels_alpha_leaves_the_controls_answers_out_and_every_row_of_the_panel_shows_it(
    report: tuple[pd.DataFrame, str],
) -> None:
    board, _ = report
    control = row(board, model=SHUFFLED)
    assert control["panel_alpha_accuracy"] == pytest.approx(0.625) and control["panel_alpha_answers"] == 8


def test_the_panel_columns_sit_right_after_the_within_model_ones(report: tuple[pd.DataFrame, str]) -> None:
    columns = list(report[0].columns)
    at = columns.index("alpha_clarity")
    assert columns[at + 1 : at + 5] == [
        "panel_alpha_accuracy",
        "panel_alpha_completeness",
        "panel_alpha_clarity",
        "panel_alpha_answers",
    ]


def test_report_md_names_each_alpha_for_what_it_is(report: tuple[pd.DataFrame, str]) -> None:
    _, markdown = report
    assert "alpha within model (acc/comp/clar)" in markdown
    assert "Judge agreement** (Krippendorff's alpha, ordinal" in markdown
    line = next(text for text in markdown.splitlines() if text.startswith(f"- Panel `{PANEL}`"))
    assert "across the panel's 8 answers: accuracy 0.62, completeness 0.62, clarity 0.62;" in line
    assert "within one model's answers (2 model(s)): accuracy -0.75, completeness -0.75, clarity -0.75" in line


def test_a_panel_with_only_control_answers_has_no_panel_alpha_and_says_why() -> None:
    instances = pd.DataFrame(
        {
            "panel": [PANEL] * 2,
            "model": [SHUFFLED] * 2,
            "note": ["a.txt"] * 2,
            "judge": JUDGES,
            "status": ["ok"] * 2,
            **{dim: [1.0, 5.0] for dim in ("accuracy", "completeness", "clarity")},
        }
    )
    result = panel_alphas(instances)[PANEL]["accuracy"]
    assert result.value is None and result.reason == NO_REAL_ANSWERS


def test_report_md_formats_the_tables_alpha_and_never_computes_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel alpha is computed once, by tables.py: rendering report.md reads its table and the leaderboard, so a
    reason planted in the table is the one shown, and computing alphas during rendering fails the test."""
    from helm_mtsamples_ext.stats import panel_alpha
    from helm_mtsamples_ext.stats.panel_alpha import panel_alpha_markdown

    board = pd.DataFrame(
        {
            "panel": [PANEL],
            "model": [GOOD],
            "panel_alpha_answers": [0],
            **{f"panel_alpha_{d}": [float("nan")] for d in ("accuracy", "completeness", "clarity")},
            **{f"alpha_{d}": [float("nan")] for d in ("accuracy", "completeness", "clarity")},
        }
    )
    table = pd.DataFrame(
        [(PANEL, d, float("nan"), 0, "a planted reason") for d in ("accuracy", "completeness", "clarity")],
        columns=panel_alpha.TABLE_COLUMNS,
    )

    def computed(*_: object) -> None:
        raise AssertionError("report.md computed a panel alpha")

    monkeypatch.setattr(panel_alpha, "panel_alphas", computed)
    (line,) = [text for text in panel_alpha_markdown(board, table) if text.startswith("- Panel")]
    assert "(n/a: a planted reason)" in line
