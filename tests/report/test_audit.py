"""The judge audit (audit.py) on a synthetic suite with control runs of known per-judge rewards.

Expected numbers are derived by hand here, never recomputed with the audit's code. Rewards per note
(a judge giving s,s,s has reward s/5; "fail" is a failed judge, which counts for nothing):

  note   reference     shuffled      truncated     padded        (judge-one / judge-two)
  n1     .8 / .6       .2 / .6       .4 / .6       .8 / .8
  n2     .6 / .6       .6 / .6       .4 / .6       .6 / 1.0
  n3     .6 / .6       .4 / .6       .2 / .6       .6 / .8
  n4     1.0 / .6      fail / .6     (not run)     (not run)

judge-one, discrimination on n1-n3 (n4 has no shuffled reward): reference [.8,.6,.6] vs shuffled [.2,.6,.4];
  .8 beats all three (3), each .6 beats .2 and .4 and ties .6 (2.5 + 2.5): AUROC 8/9 = 0.889.
  Same-note comparison: n1 win, n2 tie, n3 win -> 2.5/3 = 0.833.
  padded - reference = [0, 0, 0] -> 0 (not swayed); truncated - reference = [-.4, -.2, -.4] -> -1/3 (noticed).
  Mean rewards: reference (.8+.6+.6+1)/4 = .75, shuffled (.2+.6+.4)/3 = .4, truncated 1/3, padded 2/3.
judge-two: every reference and shuffled reward is .6: AUROC 0.5 on 4 notes (cannot tell);
  padded - reference = [.2, .4, .2] -> .8/3 = .267 (rewards padding); truncated - reference = 0 (does not notice).
The panel (note reward = mean over the judges that counted):
  reference [.7,.6,.6,.8] vs shuffled [.4,.6,.5,.6]: .7 and .8 beat all four (4 + 4); each .6 beats .4 and .5
  and ties both .6 (3 + 3): AUROC 14/16 = 0.875; same note: n1, n3, n4 win, n2 ties -> 3.5/4.
  truncated - reference = [-.2,-.1,-.2] -> -.5/3 = -.167;
  padded - reference = [.1, .2, .1] -> .4/3 = .133.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from helm_mtsamples_ext.report.audit import (
    auroc,
    control_kind,
    paired_win_rate,
    separated_bound,
    shown_blind,
    verdict,
)
from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.figure import _draw_panel
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from tests.report.suites import (
    CONTROL,
    JUDGES,
    NOTES,
    STRONG,
    STRONG_RUN,
    WEAK,
    WEAK_RUN,
    Note,
    Run,
    build_suite,
    control_run,
    ok,
    read,
    row,
    write_run,
)

PANEL_KEY = "judge-one+judge-two"
J1, J2 = JUDGES

REFERENCE = control_run(
    "reference",
    {
        "n1.txt": {J1: 0.8, J2: 0.6},
        "n2.txt": {J1: 0.6, J2: 0.6},
        "n3.txt": {J1: 0.6, J2: 0.6},
        "n4.txt": {J1: 1.0, J2: 0.6},
    },
)
SHUFFLED = control_run(
    "shuffled",
    {
        "n1.txt": {J1: 0.2, J2: 0.6},
        "n2.txt": {J1: 0.6, J2: 0.6},
        "n3.txt": {J1: 0.4, J2: 0.6},
        "n4.txt": {J1: None, J2: 0.6},
    },
)
TRUNCATED = control_run(
    "truncated", {"n1.txt": {J1: 0.4, J2: 0.6}, "n2.txt": {J1: 0.4, J2: 0.6}, "n3.txt": {J1: 0.2, J2: 0.6}}
)
PADDED = control_run(
    "padded", {"n1.txt": {J1: 0.8, J2: 0.8}, "n2.txt": {J1: 0.6, J2: 1.0}, "n3.txt": {J1: 0.6, J2: 0.8}}
)


def build_audit_suite(output: Path) -> Path:
    """Controls and two real models under one panel, plus a panel with no controls (judge-three)."""
    other_panel = Run(STRONG, ["judge-three"], {"n1.txt": {"judge-three": ok(4, 4, 4)}}, extra_args="j=3")
    suite = build_suite(output, [REFERENCE, TRUNCATED, PADDED, STRONG_RUN, WEAK_RUN, other_panel])
    # The shuffled run lists its notes in another order: notes are paired by instance id, not by position.
    write_run(suite, SHUFFLED, list(reversed(NOTES)))
    return suite


@pytest.fixture(scope="module")
def audit_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("audit")
    build_audit_suite(output)
    out = output / "report"
    assert main(["--suite", "v1", "-o", str(output), "--out", str(out), "--bootstrap", "400", "--seed", "0"]) == 0
    return out


@pytest.mark.parametrize(
    ("positive", "negative", "expected"),
    [
        ([0.8, 0.6, 0.6], [0.2, 0.6, 0.4], 8 / 9),  # the worked example in the module docstring
        ([0.6, 0.6], [0.6, 0.6], 0.5),  # all ties: a coin toss
        ([1.0, 0.8], [0.2, 0.4], 1.0),
        ([0.2, 0.4], [1.0, 0.8], 0.0),
    ],
)
def test_auroc_is_mann_whitney_with_ties_half(positive: list[float], negative: list[float], expected: float) -> None:
    assert auroc(np.array(positive), np.array(negative)) == pytest.approx(expected)


def test_paired_win_rate_compares_each_note_with_itself() -> None:
    assert paired_win_rate(np.array([0.8, 0.6, 0.6]), np.array([0.2, 0.6, 0.4])) == pytest.approx(2.5 / 3)


@pytest.mark.parametrize(
    ("model", "kind"),
    [
        (f"{CONTROL}/reference", "reference"),
        (f"{CONTROL}/padded [extraction=helm]", "padded"),  # the report's suffix for two runs of one model
        (f"{CONTROL}/other", ""),
        ("acme/reference", ""),
    ],
)
def test_control_runs_are_known_by_model_name(model: str, kind: str) -> None:
    assert control_kind(model) == kind


def test_mean_reward_per_control_and_judge(audit_report: Path) -> None:
    """Each judge's mean reward per control over the notes it judged; a failed judge's note is left out."""
    audit = read(audit_report, "judge_audit")
    assert list(audit["judge"]) == ["(panel)", J1, J2]  # the panel's row first, then panel order
    assert set(audit["panel"]) == {PANEL_KEY}  # judge-three's panel has no controls: not audited
    one = row(audit, judge=J1)
    expected = {"reference": 0.75, "shuffled": 0.4, "truncated": 1 / 3, "padded": 2 / 3}
    assert {k: one[f"reward_{k}"] for k in expected} == pytest.approx(expected)
    assert row(audit, judge="(panel)")[["reward_reference", "reward_shuffled"]].tolist() == pytest.approx(
        [0.675, 0.525]
    )


@pytest.mark.parametrize(
    ("judge", "n", "value", "win_rate"),
    [(J1, 3, 8 / 9, 2.5 / 3), (J2, 4, 0.5, 0.5), ("(panel)", 4, 14 / 16, 3.5 / 4)],
)
def test_discrimination_auroc_over_notes_paired_by_id(
    audit_report: Path, judge: str, n: int, value: float, win_rate: float
) -> None:
    got = row(read(audit_report, "judge_audit"), judge=judge)
    assert (got["n_discrimination"], got["auroc"], got["paired_win_rate"]) == (
        n,
        pytest.approx(value),
        pytest.approx(win_rate),
    )
    # 3 or 4 notes are below evidence.MINIMUMS.notes_for_verdict: the number stays, its interval is left blank.
    assert math.isnan(got["auroc_ci_low"]) and math.isnan(got["auroc_ci_high"])


@pytest.mark.parametrize(
    ("judge", "verbosity", "completeness"),
    [(J1, 0.0, -1 / 3), (J2, 0.8 / 3, 0.0), ("(panel)", 0.4 / 3, -0.5 / 3)],
)
def test_verbosity_and_completeness_deltas_with_bracketing_ci(
    audit_report: Path, judge: str, verbosity: float, completeness: float
) -> None:
    """padded - reference and truncated - reference on the 3 notes both have; 3 notes give no interval."""
    got = row(read(audit_report, "judge_audit"), judge=judge)
    assert (got["n_padded"], got["n_truncated"]) == (3, 3)
    assert got["verbosity_bias"] == pytest.approx(verbosity, abs=1e-9)
    assert got["completeness_sensitivity"] == pytest.approx(completeness, abs=1e-9)
    for name in ("verbosity", "completeness"):
        assert math.isnan(got[f"{name}_ci_low"]) and math.isnan(got[f"{name}_ci_high"])


def test_verdicts_in_csv_and_report(audit_report: Path) -> None:
    audit = read(audit_report, "judge_audit")
    one, two = row(audit, judge=J1)["verdict"], row(audit, judge=J2)["verdict"]
    # 3 or 4 notes: every check says so instead of a verdict (evidence.MINIMUMS.notes_for_verdict is 5).
    assert one.startswith("discrimination: too few notes (3) to tell (AUROC 0.89)")
    assert "padding: too few notes (3) to tell (+0.00)" in one and "missing content: too few notes (3) to tell" in one
    assert two.startswith("discrimination: too few notes (4) to tell (AUROC 0.50)")
    assert "tells" not in two and "swayed" not in two and "notices" not in two
    md = (audit_report / "report.md").read_text()
    assert "## Judge audit" in md and f"- **{J2}** (panel `{PANEL_KEY}`): discrimination: too few notes (4)" in md


def _verdict_row(auroc_value: float, bias: tuple[float, float, float], drop: tuple[float, float, float]) -> dict:
    return {
        "auroc": auroc_value,
        **dict(zip(("verbosity_bias", "verbosity_ci_low", "verbosity_ci_high"), bias, strict=True)),
        **dict(zip(("completeness_sensitivity", "completeness_ci_low", "completeness_ci_high"), drop, strict=True)),
    }


NONE = (0.0, -0.04, 0.05)
"""An interval holding 0 within the ±0.05 margin: no effect."""


@pytest.mark.parametrize(
    ("auroc_value", "bias", "drop", "says"),
    [
        (0.59, NONE, NONE, "cannot tell the clinician's plan from another patient's: AUROC 0.59"),
        (0.6, NONE, NONE, "only weakly: AUROC 0.60"),
        (0.79, NONE, NONE, "only weakly: AUROC 0.79"),
        (0.8, NONE, NONE, "tells the clinician's plan from another patient's: AUROC 0.80"),
        (math.nan, NONE, NONE, "discrimination not measured"),
        (0.9, (0.1, 0.01, 0.2), NONE, "rewards padding: +0.10 [+0.01, +0.20]"),
        (0.9, (-0.1, -0.2, -0.01), NONE, "penalises padding"),
        (0.9, NONE, NONE, "not swayed by padding: +0.00 [-0.04, +0.05]"),
        (0.9, NONE, NONE, "does not notice missing content: +0.00 [-0.04, +0.05]"),
        (0.9, (0.06, -0.02, 0.15), NONE, "padding: too few notes to tell (+0.06 [-0.02, +0.15], wider than ±0.05)"),
        (0.9, (0.0, -0.06, 0.02), NONE, "padding: too few notes to tell (+0.00 [-0.06, +0.02], wider than ±0.05)"),
        (0.9, NONE, (-0.2, -0.4, 0.01), "missing content: too few notes to tell (-0.20 [-0.40, +0.01], wider than"),
        (0.9, NONE, (0.1, 0.02, 0.2), "does not notice missing content: +0.10 [+0.02, +0.20]"),
        (0.9, NONE, (-0.2, -0.3, -0.01), "notices missing content: -0.20 [-0.30, -0.01]"),
        (0.9, NONE, (math.nan, math.nan, math.nan), "completeness not measured"),
        (0.9, (0.2, math.nan, math.nan), NONE, "padding: too few notes to tell (+0.20)"),
        (0.9, NONE, (0.0, math.nan, math.nan), "missing content: too few notes to tell (+0.00)"),
    ],
)
def test_verdict_thresholds(
    auroc_value: float, bias: tuple[float, float, float], drop: tuple[float, float, float], says: str
) -> None:
    assert says in verdict(_verdict_row(auroc_value, bias, drop))


def test_a_two_note_suite_gives_no_verdict_and_no_interval(tmp_path: Path) -> None:
    """Two notes, so a bootstrap resample is {a, a}, {a, b} or {b, b}: its 95% interval would be the two deltas'
    range, or a single point ("AUROC 1.00 [1.00, 1.00]"), read as certainty. Below 5 notes every check says
    "too few notes (2) to tell" with its point value and no interval, in judge_audit.csv and report.md.

      reference  .6/.6 (both notes, both judges)    shuffled  .2/.2
      padded     judge-one .4 and 1.0, judge-two .6 and .6   -> deltas [-.2, +.4]: mean +.1
      truncated  judge-one .6 and .6,  judge-two .6 and .4   -> deltas [0, 0] and [0, -.2]"""
    same = {J1: 0.6, J2: 0.6}
    runs = [
        control_run("reference", {"n1.txt": same, "n2.txt": same}),
        control_run("shuffled", {"n1.txt": {J1: 0.2, J2: 0.2}, "n2.txt": {J1: 0.2, J2: 0.2}}),
        control_run("padded", {"n1.txt": {J1: 0.4, J2: 0.6}, "n2.txt": {J1: 1.0, J2: 0.6}}),
        control_run("truncated", {"n1.txt": {J1: 0.6, J2: 0.6}, "n2.txt": {J1: 0.6, J2: 0.4}}),
    ]
    build_suite(tmp_path, runs)
    assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), "--bootstrap", "400"]) == 0
    audit = read(tmp_path / "r", "judge_audit")
    one, two = row(audit, judge=J1)["verdict"], row(audit, judge=J2)["verdict"]
    assert one.startswith("discrimination: too few notes (2) to tell (AUROC 1.00)")
    assert "padding: too few notes (2) to tell (+0.10)" in one
    assert "missing content: too few notes (2) to tell (+0.00)" in one
    assert "padding: too few notes (2) to tell (+0.00)" in two
    assert "missing content: too few notes (2) to tell (-0.10)" in two
    for column in ("auroc_ci_low", "verbosity_ci_high", "completeness_ci_low"):
        assert audit[column].isna().all()
    md = (tmp_path / "r" / "report.md").read_text()
    assert "too few notes (2) to tell" in md and "[1.00, 1.00]" not in md


def test_equal_rewards_reached_by_different_judges_tie(tmp_path: Path) -> None:
    """The panel reward (.8 + .4) / 2 equals .6 + .6 / 2: a tie in the AUROC and a delta of exactly 0.

    In floating point the first is 0.6000000000000001, which would count as a win and as a padding penalty.
    """
    split, even = {J1: 0.8, J2: 0.4}, {J1: 0.6, J2: 0.6}
    runs = [control_run(kind, {"n1.txt": rewards, "n2.txt": rewards}) for kind, rewards in
            (("reference", split), ("shuffled", even), ("padded", even), ("truncated", even))]  # fmt: skip
    build_suite(tmp_path, runs)
    assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), "--bootstrap", "50"]) == 0
    panel = row(read(tmp_path / "r", "judge_audit"), judge="(panel)")
    assert (panel["auroc"], panel["verbosity_bias"], panel["completeness_sensitivity"]) == (0.5, 0.0, 0.0)
    # Every control answer got 0.6 from the panel: a constant judge, no information, no interval.
    assert panel["verdict"] == "the panel gave one score to every answer: no information"
    assert math.isnan(panel["auroc_ci_low"]) and math.isnan(panel["verbosity_ci_low"])


def test_suite_without_controls_has_no_audit_file(tmp_path: Path) -> None:
    build_suite(tmp_path, [STRONG_RUN])
    assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), "--bootstrap", "50"]) == 0
    assert not (tmp_path / "r" / "judge_audit.csv").exists()
    assert "No control runs in this suite" in (tmp_path / "r" / "report.md").read_text()


def test_figure_draws_ceiling_and_floor_with_models_between(audit_report: Path) -> None:
    """The panel's controls become vertical lines at their rewards; only real models are rows of points."""
    board = read(audit_report, "leaderboard")
    rows = board[board["panel"] == PANEL_KEY].reset_index(drop=True)
    left, right = Figure().subplots(1, 2)
    _draw_panel(left, right, rows, PANEL_KEY)
    labels = [tick.get_text().replace("\n", "") for tick in left.get_yticklabels()]
    assert labels == [STRONG, WEAK]  # best on top
    lines = {line.get_label().split(" 0.")[0]: line.get_xdata()[0] for line in left.get_lines()}
    assert lines["ceiling: reference"] == pytest.approx(0.675)
    assert lines["floor: shuffled"] == pytest.approx(0.525)
    assert set(lines) >= {"truncated", "padded"}
    assert pd.notna(rows.loc[rows["model"] == STRONG, "reward"]).all()
    keep = os.environ.get("MTSAMPLES_E2E_SCREENSHOTS")
    if keep:  # docs/report.md's audit figure
        shutil.copy(audit_report / "leaderboard.png", Path(keep) / "report_audit.png")


def test_five_notes_give_the_deltas_but_discrimination_waits_for_the_audit_minimum(tmp_path: Path) -> None:
    """At evidence.MINIMUMS.notes_for_verdict notes the deltas get their words again, with intervals; the
    discrimination verdict (and its warning) waits for MINIMUMS.notes_for_audit notes.

    One judge, 5 notes: reference [.8,.8,.6,1,.8] always above shuffled [.2,.4,.2,.6,.4] (AUROC 24.5/25 = .98: the .6
    reference ties the .6 shuffled once); truncated - reference = [-.4,-.2,-.2,-.4,-.2], every resample below 0."""
    notes = [f"n{k}.txt" for k in range(1, 6)]
    rewards = {
        "reference": [0.8, 0.8, 0.6, 1.0, 0.8],
        "shuffled": [0.2, 0.4, 0.2, 0.6, 0.4],
        "truncated": [0.4, 0.6, 0.4, 0.6, 0.6],
        "padded": [0.8, 1.0, 0.6, 1.0, 0.6],
    }
    runs = [control_run(kind, {n: {J1: r} for n, r in zip(notes, values, strict=True)}, judges=[J1])
            for kind, values in rewards.items()]  # fmt: skip
    build_suite(tmp_path, runs)
    assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), "--bootstrap", "400"]) == 0
    one = row(read(tmp_path / "r", "judge_audit"), judge=J1)
    assert one["n_discrimination"] == 5 and one["auroc"] == pytest.approx(24.5 / 25)
    assert one["verdict"].startswith("discrimination: too few notes (5) to tell (AUROC 0.98)")
    assert "notices missing content: -0.28 [" in one["verdict"]
    assert one["completeness_ci_high"] < 0


def test_a_judge_that_separates_every_note_gets_the_exact_bound_not_a_missing_interval(tmp_path: Path) -> None:
    """Every reference above every shuffled answer: each resample's AUROC is 1, so no percentile interval; the
    exact bound for n same-note comparisons all won, 0.025 ** (1 / n), takes its place."""
    n = MINIMUMS.notes_for_audit
    notes = [Note(f"n{k}.txt", "Orthopedic") for k in range(1, n + 1)]
    rewards = {"reference": [0.8, 1.0], "shuffled": [0.2, 0.4]}
    runs = [control_run(kind, {note.filename: {J1: values[k % 2]} for k, note in enumerate(notes)}, judges=[J1])
            for kind, values in rewards.items()]  # fmt: skip
    build_suite(tmp_path, runs, notes)
    assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), "--bootstrap", "200"]) == 0
    one = row(read(tmp_path / "r", "judge_audit"), judge=J1)
    assert one["auroc"] == 1.0
    assert (one["auroc_ci_low"], one["auroc_ci_high"]) == pytest.approx((0.025 ** (1 / n), 1.0))
    assert one["verdict"].startswith("tells the clinician's plan from another patient's: AUROC 1.00")


def test_the_exact_bound_is_clopper_pearson_for_all_won() -> None:
    assert separated_bound(1.0, 131, 0.95)[0] == pytest.approx(0.9722, abs=1e-4)
    assert separated_bound(0.0, 131, 0.95) == pytest.approx((0.0, 1 - 0.025 ** (1 / 131)))
    assert all(math.isnan(v) for v in separated_bound(0.98, 131, 0.95))


@pytest.mark.parametrize(
    ("low", "says", "warned"),
    [
        (0.45, "not shown to tell the clinician's plan from another patient's: AUROC 0.70 [0.45, 0.90] holds 0.5",
         True),
        (0.5, "not shown to tell", True),
        (0.55, "tells the clinician's plan from another patient's only weakly: AUROC 0.70", False),
    ],
)  # fmt: skip
def test_an_interval_reaching_a_coin_toss_is_a_warning_whatever_the_point(low: float, says: str, warned: bool) -> None:
    audit_row = {**_verdict_row(0.7, NONE, NONE), "auroc_ci_low": low, "auroc_ci_high": 0.9}
    audit_row["n_discrimination"] = MINIMUMS.notes_for_audit
    audit_row["verdict"] = verdict(audit_row)
    assert says in audit_row["verdict"]
    assert shown_blind(audit_row) is warned
