"""figure.py: the report's figure, drawn on matplotlib's object API (no display, no pyplot state)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from helm_mtsamples_ext.report.figure import _draw_panel, wrap_name


def test_a_long_model_name_wraps_after_its_separators_never_inside_a_word() -> None:
    """textwrap alone would cut "org/model" anywhere; here each line ends at "/", "-", "_", "+" or a space."""
    name = "some-organisation/a-very-long-model-name-v2+judge"
    lines = wrap_name(name, width=20).split("\n")
    assert "".join(lines) == name and all(len(line) <= 20 for line in lines)
    assert len(lines) > 1 and all(line[-1] in "/-_+ " for line in lines[:-1])


def test_a_model_no_judge_could_score_is_a_row_saying_so_not_a_point_at_zero() -> None:
    board = pd.DataFrame(
        {
            "model": ["acme/good", "acme/unjudged"],
            "reward": [0.7, float("nan")],
            "reward_ci_low": [0.6, float("nan")],
            "reward_ci_high": [0.8, float("nan")],
            "accuracy": [4.0, float("nan")],
            "completeness": [3.0, float("nan")],
            "clarity": [3.5, float("nan")],
        }
    )
    left, right = Figure().subplots(1, 2)
    _draw_panel(left, right, board, "p")
    assert [t.get_text() for t in left.get_yticklabels()] == ["acme/good", "acme/unjudged"]  # first on top
    assert [t.get_text() for t in left.texts] == ["0.700", "no valid judgement (reward missing)"]
    points = left.containers[0].lines[0].get_xdata()  # the errorbar's points: the scored model alone
    assert list(points) == [0.7]
