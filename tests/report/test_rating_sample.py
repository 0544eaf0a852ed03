"""Which answers clinicians are offered (rating_sample.py): stratified, weighted toward disagreement, seeded, shared."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.report.rating_sample import (
    STRATA,
    allocate,
    allocation_chances,
    answers_table,
    capped_probabilities,
    choose,
    draw,
)


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


def test_the_allocation_chances_are_exact_and_ties_share_the_units_left() -> None:
    floors, chance = allocation_chances(pd.Series([5, 4, 1]), 4)  # remainders 0, .6, .4: the .6 gets the one left
    assert floors.tolist() == [2, 1, 0] and chance.tolist() == [0.0, 1.0, 0.0]
    floors, chance = allocation_chances(pd.Series([5, 5, 5, 5]), 6)  # 1.5 each: two units left, four tied
    assert floors.tolist() == [1, 1, 1, 1] and chance.tolist() == [0.5] * 4


def test_capped_probabilities_sum_to_k_and_take_the_heaviest_for_sure() -> None:
    pi = capped_probabilities(np.array([1.0, 1.0, 1.0, 1.0, 5.0]), 2)  # 2 x 5/9 > 1: taken; 1 left over four
    assert pi.tolist() == pytest.approx([0.25, 0.25, 0.25, 0.25, 1.0])
    assert capped_probabilities(np.array([1.0, 3.0]), 1).tolist() == pytest.approx([0.25, 0.75])
    assert capped_probabilities(np.array([1.0, 3.0]), 2).tolist() == [1.0, 1.0]


def test_the_recorded_inclusion_probability_is_the_chance_each_answer_is_chosen() -> None:
    """Four strata of five answers, one contested answer in each (weight 5 against four of weight 1); 6 answers:
    1.5 per stratum, so each stratum draws 1 or 2 with equal chance, and with 2 the contested one is taken for sure
    (capped). Exact: 0.5 x 5/9 + 0.5 x 1 for the contested, 0.5 x 1/9 + 0.5 x 1/4 for the others. Over 2000 seeded
    draws (choose's own design, rating_sample.draw), each answer's share of samples matches the probability the
    sample records, within 4.5 standard errors (uncapped or unmixed probabilities miss by 5 or more)."""
    table = pool(per_stratum=5, spreads=(0.0, 0.0, 0.0, 0.0, 1.0))
    answers = answers_table(table)
    draws = 2000
    counts = np.zeros(len(answers))
    recorded = np.full(len(answers), np.nan)
    for seed in range(draws):
        chosen = draw(answers, STRATA, 6, np.random.default_rng(seed))
        assert len(chosen) == 6
        at = chosen.index.to_numpy()
        counts[at] += 1
        pi = chosen["inclusion_probability"].to_numpy()
        seen = ~np.isnan(recorded[at])
        assert np.allclose(recorded[at][seen], pi[seen])  # one answer, one probability, whatever else is drawn
        recorded[at] = pi
    contested = answers["spread"].gt(0.5).to_numpy()
    assert recorded[contested].tolist() == pytest.approx([0.5 * 5 / 9 + 0.5] * 4)
    assert recorded[~contested].tolist() == pytest.approx([0.5 / 9 + 0.5 / 4] * 16)
    share = counts / draws
    error = np.sqrt(recorded * (1 - recorded) / draws)
    assert (np.abs(share - recorded) <= 4.5 * error).all(), np.c_[share, recorded]


def test_choose_records_the_designs_probability_with_each_chosen_answer() -> None:
    table = pool(per_stratum=5, spreads=(0.0, 0.0, 0.0, 0.0, 1.0))
    answers = answers_table(table)
    for seed in range(5):
        chosen = choose(table, 6, seed, 0.5).merge(answers, on=["run", "note_id"])
        expected = np.where(chosen["spread"].gt(0.5), 0.5 * 5 / 9 + 0.5, 0.5 / 9 + 0.5 / 4)
        assert chosen["inclusion_probability"].tolist() == pytest.approx(expected.tolist())


def test_every_answer_offered_has_inclusion_probability_one() -> None:
    assert choose(pool(), None, 0, 0.2)["inclusion_probability"].eq(1.0).all()
    assert choose(pool(), 500, 0, 0.2)["inclusion_probability"].eq(1.0).all()


def test_the_plans_quotas_draw_that_many_unrated_answers_per_model() -> None:
    table = pool()  # two models, twenty answers each
    rated = {("run:acme/a", f"id_Ortho_{k}") for k in range(10)}  # every Ortho answer of a is rated
    for seed in range(5):
        chosen = choose(table, None, seed, 0.0, {"run:acme/a": 4, "run:acme/b": 6}, rated)
        models = chosen.merge(answers_table(table), on=["run", "note_id"])
        assert models.groupby("model").size().to_dict() == {"acme/a": 4, "acme/b": 6}
        assert not set(zip(chosen["run"], chosen["note_id"], strict=True)) & rated
        assert models.loc[models["model"] == "acme/a", "specialty"].eq("Neuro").all()
        # equal spreads: a's 4 of its 10 unrated answers, b's 3 of 10 in each specialty
        pi = models.groupby("model")["inclusion_probability"].unique()
        assert pi["acme/a"].tolist() == pytest.approx([0.4]) and pi["acme/b"].tolist() == pytest.approx([0.3])
    quota_over_pool = choose(table, None, 0, 0.0, {"run:acme/a": 50}, rated)
    assert len(quota_over_pool) == 10 and quota_over_pool["inclusion_probability"].eq(1.0).all()
