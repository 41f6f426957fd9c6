"""The selection procedure (comparisons/stats/recipe_selection.py): its pair bounds against the corrected t, its rules on
constructed cases, its replay, its guarantee in a small simulation, and the study's textbook KN against sim-tools'."""
from __future__ import annotations

import json

import numpy as np
import pytest

from comparisons.stats.corrected_t import corrected_t
from comparisons.stats.recipe_selection import (BUDGET, MORE_FOLDS, MORE_LABELS, MOST_REACHED, SELECTED, SelectionPlan,
                                                decide, most_partitions, replay, select)
from comparisons.studies.selection_study import kn


def plan_of(k=3, costs=None, **kwargs) -> SelectionPlan:
    names = tuple(f"c{i}" for i in range(k))
    return SelectionPlan(names, tuple(costs or [float(10 ** i) for i in range(k)]), **kwargs)


def test_pair_bounds_are_the_corrected_t_times_the_sequential_boundary_at_the_look_reached():
    rng = np.random.default_rng(1)
    plan = plan_of(3, ratio=0.1, most=20)
    assert plan.looks == (3, 4, 5, 6, 8, 10, 12, 15, 18, 20)
    scores = 0.9 + 0.02 * rng.standard_normal((8, 3))
    scores[5, 2] = np.nan  # c2 sat out one partition: its pairs have 7 common partitions, look 6 reached
    look = decide(scores, plan)
    for a, b, reached in [(0, 1, 8), (2, 0, 6), (1, 2, 6)]:
        both = np.flatnonzero(~np.isnan(scores[:, a]) & ~np.isnan(scores[:, b]))[:reached]
        mean, se, df = corrected_t(scores[both, a] - scores[both, b], 0.1)
        assert look.common[a, b] == reached == df + 1
        assert look.mean[a, b] == pytest.approx(mean, abs=1e-14)
        assert look.bound[a, b] == pytest.approx(plan.boundaries[plan.looks.index(reached)] * se, rel=1e-12)
    # the boundary shrinks as the looks go on, and stays above the fixed-sample one-sided t at the last look
    from scipy.stats import t as student_t
    assert plan.boundaries[0] > plan.boundaries[-1] > student_t.isf(plan.level, plan.most - 1)


def test_a_clear_winner_is_selected_and_the_losers_eliminated():
    rng = np.random.default_rng(2)
    plan = plan_of(3, most=30)
    truth = np.array([0.80, 0.85, 0.95])
    look, scores = select(plan, lambda p, runs: {n: truth[int(n[1])] + 0.005 * rng.standard_normal() for n in runs})
    assert look.outcome == SELECTED and look.pick == "c2"
    assert set(look.eliminated) == {"c0", "c1"}
    assert scores.shape[0] < 30


def test_near_equal_candidates_pick_the_cheapest_claimable_and_the_target_runs_every_partition():
    rng = np.random.default_rng(3)
    plan = plan_of(3, delta=0.01, most=60)
    truth = np.array([0.903, 0.90, 0.90])  # the cheapest a little ahead, every gap inside delta
    look, scores = select(plan, lambda p, runs: {n: truth[int(n[1])] + 0.002 * rng.standard_normal() for n in runs})
    assert look.outcome == SELECTED and look.pick == look.claimable[0] == "c0"
    assert (~np.isnan(scores[:, 0])).all()  # the target runs every partition
    assert look.behind_best(plan)["c0"] <= 0.01
    assert set(look.claimable) <= set(plan.candidates) - set(look.eliminated)


def test_the_pick_follows_the_preference_among_claimable_candidates():
    """Three recipes indistinguishable to 1e-4 over 6 partitions: every one is claimable; the pick is the first of
    them in the plan's preference (the cheapest to serve, say), not the cheapest to train; a preference that is not
    the candidates is refused."""
    rng = np.random.default_rng(3)
    scores = 0.9 + 1e-4 * rng.standard_normal((6, 3))
    plan = plan_of(3, delta=0.01, most=60, preference=("c2", "c0", "c1"))
    look = decide(scores, plan)
    assert look.outcome == SELECTED and set(look.claimable) == {"c0", "c1", "c2"} and look.pick == "c2"
    assert decide(scores, plan_of(3, delta=0.01, most=60)).pick == "c0"  # no preference: the candidates' order
    assert SelectionPlan.from_dict(json.loads(json.dumps(plan.to_dict()))).preference == plan.preference
    with pytest.raises(ValueError, match="preference"):
        plan_of(3, preference=("c0", "c1"))


def test_an_elimination_cycle_never_puts_everyone_out():
    from comparisons.stats.recipe_selection import eliminations

    mean = np.array([[0.0, 0.05, -0.05], [-0.05, 0.0, 0.05], [0.05, -0.05, 0.0]])  # 0 > 1 > 2 > 0
    bound = np.full((3, 3), 0.01)
    out = eliminations(mean, bound, ("a", "b", "c"))
    assert len(out) == 2 and len(set("abc") - set(out)) == 1


def test_stops_at_the_budget_and_at_the_most_partitions_without_a_pick():
    rng = np.random.default_rng(4)
    noisy = lambda p, runs: {n: 0.9 + 0.05 * rng.standard_normal() for n in runs}  # noqa: E731
    look, scores = select(plan_of(3, most=10, futility_from=0), noisy)  # no futility stop: to the last partition
    assert look.outcome == MOST_REACHED and look.pick is None and scores.shape[0] == 10
    budget = plan_of(3, most=40, budget=500.0, futility_from=0)  # a partition of all three costs 111
    look, scores = select(budget, noisy)
    assert look.outcome == BUDGET and look.pick is None
    assert look.spent <= 500.0


def test_replay_gives_the_same_look_and_names_a_record_the_procedure_did_not_ask_for():
    rng = np.random.default_rng(5)
    truth = np.array([0.90, 0.905, 0.93, 0.90])
    plan = plan_of(4, most=40)
    look, scores = select(plan, lambda p, runs: {n: truth[int(n[1])] + 0.01 * rng.standard_normal() for n in runs})
    again = replay(scores, SelectionPlan.from_dict(json.loads(json.dumps(plan.to_dict()))))
    assert (again.outcome, again.pick, again.claimable) == (look.outcome, look.pick, look.claimable)
    assert np.array_equal(again.bound, look.bound)
    tampered = scores.copy()
    asked = np.flatnonzero(~np.isnan(scores[-1]))
    tampered[-1, asked[0]] = np.nan  # a run the procedure asked for, missing from the records
    with pytest.raises(ValueError, match=f"partition {len(scores)}"):
        replay(tampered, plan)


def test_equal_candidates_above_the_correlation_floor_stop_early_asking_for_more_labels():
    """Two equal recipes whose folds share their texts (r = 1): however many folds run, the bound stays near
    c * s * sqrt(r) = 2.3 * 0.014, above delta, so the selection stops at the first look it may judge (6 common
    partitions), not at the 40th, and says more labels are needed. Without the rule it runs all 40."""
    rng = np.random.default_rng(8)
    draws = 0.9 + 0.01 * rng.standard_normal((40, 2))
    run = lambda p, runs: {n: draws[p, int(n[1])] for n in runs}  # noqa: E731
    look, scores = select(plan_of(2, costs=[1.0, 2.0], ratio=1.0, most=40), run)
    assert look.outcome == MORE_LABELS and look.pick is None and scores.shape[0] == 6
    assert replay(scores, plan_of(2, costs=[1.0, 2.0], ratio=1.0, most=40)).outcome == MORE_LABELS
    look, scores = select(plan_of(2, costs=[1.0, 2.0], ratio=1.0, most=40, futility_from=0), run)
    assert look.outcome == MOST_REACHED and scores.shape[0] == 40


def test_a_small_plan_on_independent_folds_stops_early_asking_for_more_folds():
    """r = 0 (no floor): two equal recipes with a spread of 0.03 cannot be told within delta in 8 folds (the bound at
    the last look is about 2.3 * 0.042 / sqrt(8) = 0.034, above delta plus the gap the 6 folds show), but enough folds
    would: more folds needed."""
    rng = np.random.default_rng(9)
    draws = 0.9 + 0.03 * rng.standard_normal((8, 2))
    look, scores = select(plan_of(2, costs=[1.0, 2.0], most=8), lambda p, runs: {n: draws[p, int(n[1])] for n in runs})
    assert look.outcome == MORE_FOLDS and look.pick is None and scores.shape[0] == 6


def test_the_futility_stop_never_fires_where_the_last_look_would_decide():
    """A best one leading by 5 delta with a small spread: the projection at the last look claims it, so the procedure
    goes on to a pick rather than giving up."""
    rng = np.random.default_rng(10)
    truth = np.array([0.85, 0.90])
    look, _ = select(plan_of(2, ratio=0.05, most=40),
                     lambda p, runs: {n: truth[int(n[1])] + 0.01 * rng.standard_normal() for n in runs})
    assert look.outcome == SELECTED and look.pick == "c1"


def test_a_record_written_before_the_futility_rule_replays_without_it():
    record = plan_of(3).to_dict()
    assert record["futility_from"] == 6
    del record["futility_from"]
    assert SelectionPlan.from_dict(record).futility_from == 0


def test_most_partitions_follows_the_budget():
    assert most_partitions([1, 10, 100], budget=333, first=3) == 3  # the first partitions take it all
    assert most_partitions([1, 10, 100], budget=333 + 11 * 5, first=3) == 8  # then the two cheapest
    assert most_partitions([0, 0, 1], budget=10, first=3, cap=40) == 40


def test_bad_plans_are_refused():
    with pytest.raises(ValueError, match="two distinct"):
        SelectionPlan(("a",), (1.0,))
    with pytest.raises(ValueError, match="confidence"):
        plan_of(2, alpha=0.7)
    with pytest.raises(ValueError, match="first"):
        plan_of(2, first=1)
    with pytest.raises(ValueError, match="futility_from"):
        plan_of(2, futility_from=2)


def test_correct_selection_holds_in_the_least_favourable_configuration():
    """The best leads the others by exactly delta, most expensive last: the pick is the best in at least 95% of 300
    simulated selections (the guarantee; the study runs 2,000 a configuration)."""
    rng = np.random.default_rng(6)
    delta, sd = 0.01, 0.01
    truth = np.array([0.0, 0.0, delta])
    plan = plan_of(3, delta=delta, most=120)
    correct = 0
    for _ in range(300):
        common = sd * rng.standard_normal()  # a partition effect shared by every candidate (cancels in pairs)
        look, _ = select(plan, lambda p, runs: {n: truth[int(n[1])] + common + sd * rng.standard_normal()
                                               for n in runs})
        correct += look.pick == "c2"
    assert correct / 300 >= 0.93  # 0.95 less two standard errors of 300


class _Scores:
    """A sim-tools model that hands out a fixed matrix of scores, column by column."""

    def __init__(self, scores):
        self.scores, self.used, self.observers = scores, np.zeros(scores.shape[1], dtype=int), []

    def register_observer(self, observer):
        self.observers.append(observer)

    def simulate(self, design):
        value = self.scores[self.used[design], design]
        self.used[design] += 1
        for observer in self.observers:
            observer.feedback(self, design, value)


@pytest.mark.parametrize("k", [2, 4])
def test_textbook_kn_matches_sim_tools(k):
    from sim_tools.ovs.indifference_zone import KN

    class CorrectedKN(KN):  # sim-tools 1.3.0 looks up var(X_i - X_(l-1)) for l < i; the pair's own variance here
        def _limit_to_distance_from_sample_means(self, design_i, design_l):
            flat = design_i * (self._k - 1) + (design_l if design_l < design_i else design_l - 1)
            w = (self._delta / (2 * self._r)) * (self._h_squared * self._variance_of_diffs[flat] / self._delta ** 2
                                                  - self._r)
            return max(0, w)

    rng = np.random.default_rng(7 + k)
    for _ in range(20):
        truth = np.sort(rng.uniform(0.88, 0.92, k))
        scores = truth + 0.01 * rng.standard_normal((3000, k))
        pick, runs = kn(scores, 0.01, first=10)
        model = _Scores(scores)
        oracle = (KN if k == 2 else CorrectedKN)(model, k, 0.01, alpha=0.05, n_0=10)
        survivors = oracle.solve()
        assert len(survivors) == 1 and pick == int(survivors[0])
        expected = model.used.copy()
        expected[pick] -= 1  # sim-tools' loop replicates the winner once more after its last screening
        assert np.array_equal(runs, expected)


def test_pocock_spending_spends_the_level_evenly_and_the_one_sided_boundaries_hold_it():
    from comparisons.stats.spending import POCOCK, spent
    from comparisons.stats.t_boundaries import t_boundaries

    assert spent(1.0, 0.01, POCOCK) == pytest.approx(0.01)
    assert spent(0.5, 0.01, POCOCK) == pytest.approx(0.01 * np.log1p((np.e - 1) * 0.5))
    looks, ratio, level = (3, 4, 5, 6, 8, 10, 12, 15), 0.1, 0.05
    bounds = t_boundaries(looks, ratio, level, sides=1, shape=POCOCK, by_partitions=True)
    rng = np.random.default_rng(11)  # independent of the boundaries' own simulation
    rho = ratio / (1 + ratio)
    d = np.sqrt(rho) * rng.standard_normal((20000, 1)) + np.sqrt(1 - rho) * rng.standard_normal((20000, looks[-1]))
    crossed = np.zeros(len(d), dtype=bool)
    for j, b in zip(looks, bounds):
        x = d[:, :j]
        t = x.mean(axis=1) / np.sqrt(x.var(axis=1, ddof=1) * (1 / j + ratio))
        crossed |= t >= b
    rate = crossed.mean()
    assert rate <= level + 3 * np.sqrt(level * (1 - level) / len(d))  # the one-sided level over every look
    assert rate >= 0.5 * level  # and not far below it: the marginal fallback is conservative, not wasteful


def test_every_selection_replays_to_the_same_look_from_its_records():
    """select() skips the pair figures between looks; replay() recomputes every look: they must agree."""
    rng = np.random.default_rng(12)
    for trial in range(30):
        k = int(rng.integers(2, 6))
        truth = rng.uniform(0.88, 0.92, k)
        plan = plan_of(k, costs=list(rng.uniform(0.1, 10, k)), delta=0.01, most=int(rng.integers(6, 40)),
                       budget=float(rng.uniform(20, 400)))
        look, scores = select(plan, lambda p, runs: {n: truth[int(n[1])] + 0.01 * rng.standard_normal()
                                                     for n in runs})
        again = replay(scores, plan)
        assert (again.outcome, again.pick, again.claimable, again.partitions) == (
            look.outcome, look.pick, look.claimable, look.partitions), trial
        assert again.spent == look.spent and again.eliminated == look.eliminated
