"""Equal rewards reached in different orders tie; real differences survive (stats/ties.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.stats.ties import rounded_for_ranks


def test_the_same_reward_reached_in_two_orders_is_equal() -> None:
    assert 0.1 + 0.2 != 0.3
    assert rounded_for_ranks(0.1 + 0.2) == rounded_for_ranks(0.3)


def test_series_and_arrays_are_settled_elementwise() -> None:
    assert rounded_for_ranks(pd.Series([0.1 + 0.2, 0.3])).nunique() == 1
    assert len(set(rounded_for_ranks(np.array([0.1 + 0.2, 0.3])).tolist())) == 1


def test_the_smallest_difference_a_panel_can_make_survives() -> None:
    step = 1 / 5 / 3 / 16  # one point on one dimension, in a panel of 16 judges
    assert rounded_for_ranks(0.5 + step) > rounded_for_ranks(0.5)
