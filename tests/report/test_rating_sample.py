"""Which answers clinicians are offered (rating_sample.py): stratified, weighted toward disagreement, seeded, shared."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.report.rating_sample import allocate, answers_table, choose


def pool(
    models: tuple[str, ...] = ("acme/a", "acme/b"),
    specialties: tuple[str, ...] = ("Ortho", "Neuro"),
    per_stratum: int = 10,
    spreads: tuple[float, ...] = (0.0,),
) -> pd.DataFrame:
    """A per-judge table (two judges per answer) whose judges differ by `spread` on each answer, cycling spreads."""
    rows = []
    for model in models:
        for specialty in specialties:
            for k in range(per_stratum):
                spread = spreads[k % len(spreads)]
                note = f"id_{specialty}_{k}"
                for judge, reward in (("j1", 0.4), ("j2", 0.4 + spread)):
                    rows.append(
                        {"run": f"run:{model}", "note_id": note, "model": model, "specialty": specialty,
                         "judge": judge, "judge_reward": reward, "note_reward": 0.4 + spread / 2}
                    )  # fmt: skip
    return pd.DataFrame(rows)


def test_the_same_seed_gives_the_same_sample_and_another_seed_another() -> None:
    table = pool()
    first, again, other = (choose(table, 8, seed, 0.25) for seed in (3, 3, 4))
    pd.testing.assert_frame_equal(first, again)
    assert first.values.tolist() != other.values.tolist()


def test_every_model_and_specialty_gets_its_share() -> None:
    chosen = choose(pool(), 8, 0, 0.25).merge(answers_table(pool()), on=["run", "note_id"])
    assert chosen.groupby(["model", "specialty"]).size().tolist() == [2, 2, 2, 2]


def test_strata_share_the_sample_in_proportion_to_their_size_by_largest_remainder() -> None:
    # exact shares 2, 1.6, .4: floors 2, 1, 0; the one left goes to the largest remainder (.6)
    counts = allocate(pd.Series([5, 4, 1]), 4, np.random.default_rng(0))
    assert counts.tolist() == [2, 2, 0]


def test_answers_where_the_judges_disagree_are_chosen_more_often() -> None:
    """Half the pool has spread 1, half 0; unweighted, a sample would be half contested on average."""
    table = pool(models=("acme/a",), specialties=("Ortho",), per_stratum=40, spreads=(0.0, 1.0))
    spreads = answers_table(table).set_index("note_id")["spread"]
    shares = [spreads[choose(table, 10, seed, 0.0)["note_id"]].mean() for seed in range(40)]
    assert np.mean(shares) > 0.65  # weights 5:1 give about 0.75


def test_the_overlap_share_is_shown_to_every_rater_first() -> None:
    chosen = choose(pool(), 10, 0, 0.2)
    assert chosen["shared"].tolist() == [True, True] + [False] * 8


def test_without_a_sample_size_every_answer_is_offered_to_everyone() -> None:
    chosen = choose(pool(), None, 0, 0.2)
    assert len(chosen) == 40 and chosen["shared"].all()


@pytest.mark.parametrize(
    "change, left_out",
    [
        (lambda t: t.assign(note_reward=t["note_reward"].where(t["note_id"] != "id_Ortho_0")), 2),  # unjudged
        (lambda t: t.assign(model=t["model"].replace("acme/b", "mtsamples-control/reference")), 20),  # a control
    ],
)
def test_unjudged_answers_and_control_runs_are_not_offered(change, left_out: int) -> None:  # type: ignore[no-untyped-def]
    assert len(choose(change(pool()), None, 0, 0.2)) == 40 - left_out
