"""The curve's natural-order family (comparisons/stats/graphical.py): the algorithm against independent
implementations on graphs with known answers, and its family-wise error simulated where the answer is known."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from comparisons.stats.graphical import Graph, adjusted_p_values, curve_graph, rejected
from comparisons.studies.family_error import (SCENARIOS, curve_procedure, holm_procedure, naive_decided_chain,
                                            simulate)

ALPHA = 0.05


def holm_graph(n: int) -> Graph:
    transitions = np.full((n, n), 1.0 / (n - 1))
    np.fill_diagonal(transitions, 0.0)
    return Graph(tuple(range(n)), np.full(n, 1.0 / n), transitions)


def test_the_holm_graph_gives_statsmodels_holm():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    rng = np.random.default_rng(0)
    for n, draws in ((2, 20), (3, 20), (5, 10), (6, 3)):  # the closure grows as 2^n: 6 nodes are enough here
        for _ in range(draws):
            p = rng.uniform(0, 0.2, n) ** 2
            expected = multipletests(p, alpha=ALPHA, method="holm")[1]
            np.testing.assert_allclose(adjusted_p_values(holm_graph(n), p), expected, rtol=1e-12)


def test_a_chain_graph_is_the_fixed_sequence_test():
    n = 5
    transitions = np.diag(np.ones(n - 1), k=1)  # 0 -> 1 -> 2 -> ...
    chain = Graph(tuple(range(n)), np.r_[1.0, np.zeros(n - 1)], transitions)
    p = np.array([0.01, 0.03, 0.02, 0.2, 0.001])
    np.testing.assert_allclose(adjusted_p_values(chain, p), np.maximum.accumulate(p))
    assert rejected(chain, p, ALPHA).tolist() == [True, True, True, False, False]  # stops at the first failure


def test_the_curve_graph_is_a_valid_graph_and_rejects_what_its_adjusted_p_says():
    graph = curve_graph(4, 5)
    assert len(graph.nodes) == 40 and graph.weights.sum() == pytest.approx(1.0)
    assert graph.weights[graph.weights > 0].tolist() == [1 / 8] * 8  # each contrast's two chain starts
    assert (graph.transitions.sum(axis=1) <= 1 + 1e-12).all()
    rng = np.random.default_rng(1)
    for _ in range(200):
        p = rng.uniform(0, 0.1, 40) ** 1.5
        np.testing.assert_array_equal(rejected(graph, p, ALPHA), adjusted_p_values(graph, p) <= ALPHA)
    lone = curve_graph(1, 1)  # one contrast, one size: its difference and equivalence nulls by Holm
    np.testing.assert_allclose(adjusted_p_values(lone, [0.03, 0.02]), [0.04, 0.04])


def test_bad_graphs_are_refused():
    with pytest.raises(ValueError, match="sum to at most 1"):
        Graph((0, 1), np.array([0.7, 0.7]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="itself"):
        Graph((0,), np.array([1.0]), np.array([[1.0]]))


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_curve_family_keeps_its_error_at_alpha(scenario):
    """comparisons/studies/family_error.py's simulation (results/calibration/family_error.md), fewer curves."""
    n_sim = 1500
    error, _ = simulate(SCENARIOS[scenario], n_sim, curve_procedure)
    assert error <= ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / n_sim), f"{scenario}: family-wise error {error:.3f}"


def test_the_simulation_catches_a_family_that_does_not_hold():
    error, _ = simulate(SCENARIOS["gap at the margin"], 600, naive_decided_chain)
    assert error > 2 * ALPHA, f"the naive chain's error {error:.3f}: the simulation would not catch a broken family"


def test_the_natural_order_decides_more_of_the_closing_gaps_than_holm_over_every_row():
    """What the order buys: where the gaps are widest at the smallest budgets, the graph rejects more of
    the false nulls than Holm over all 2CK hypotheses, at the same error control."""
    graph = simulate(SCENARIOS["closing gaps"], 300, curve_procedure, se=0.01)[1]  # a noisier curve: the study's
    flat = simulate(SCENARIOS["closing gaps"], 300, holm_procedure, se=0.01)[1]    # se decides nearly every row
    assert graph > flat, (graph, flat)


def test_a_curve_declared_natural_order_is_corrected_by_the_graph_and_the_rest_by_holm():
    """correct_family(family="natural-order"): the declared primary rows get the graph's adjusted p-values (sizes
    ordered by budget, "all" last, whatever the rows' order); a secondary metric's rows stay Holm's."""
    from comparisons.stats.family import correct_family, holm

    rng = np.random.default_rng(3)
    sizes, pairs = ["all", 50, 200], [("B", "A"), ("C", "A")]  # shuffled sizes: the graph must sort them
    rows = [{"metric": metric, "variant_a": a, "variant_b": b, "train_size": s, "difference": 0.01,
             "standard_error": 0.01, "df": 4.0, "p_value": float(rng.uniform(0, 0.05)),
             "p_equivalence": float(rng.uniform(0, 0.5)), "margin": 0.005}
            for metric in ("average_precision", "macro_f1_at_threshold") for a, b in pairs for s in sizes]
    frame = pd.DataFrame(rows)
    out = correct_family(frame, pairs, family="natural-order")
    primary = out[out["metric"] == "average_precision"]
    graph = curve_graph(2, 3)
    order = {50: 0, 200: 1, "all": 2}
    lookup = {(pairs.index((r.variant_a, r.variant_b)), order[r.train_size]): r for r in primary.itertuples()}
    p = np.array([getattr(lookup[(c, k)], "p_value" if kind == "d" else "p_equivalence") for c, kind, k in graph.nodes])
    expected = adjusted_p_values(graph, p)
    for (c, kind, k), value in zip(graph.nodes, expected):
        row = lookup[(c, k)]
        assert (row.p_holm if kind == "d" else row.p_equivalence_holm) == pytest.approx(value)
    secondary = out[out["metric"] == "macro_f1_at_threshold"]
    joint = holm(np.r_[secondary["p_value"].to_numpy(), secondary["p_equivalence"].to_numpy()])
    np.testing.assert_allclose(secondary["p_holm"], joint[:len(secondary)])
    holm_out = correct_family(frame, pairs)  # the default family is unchanged
    assert not np.allclose(holm_out.loc[holm_out["metric"] == "average_precision", "p_holm"], primary["p_holm"])


def test_a_plan_refuses_natural_order_without_a_curve_or_with_the_sequential_design():
    from comparisons.plan import Plan  # a plan's checks raise ValueError with the command line's one line

    with pytest.raises(ValueError, match="natural-order orders a learning curve"):
        Plan(backends="tfidf_logreg,torch_scratch", cv=5, contrasts="torch_scratch-tfidf_logreg", family="natural-order")
    with pytest.raises(ValueError, match="cannot be combined"):
        Plan(backends="tfidf_logreg,torch_scratch", cv=5, contrasts="torch_scratch-tfidf_logreg", until_decided=True,
             family="natural-order", train_sizes="50,all")
    with pytest.raises(ValueError, match="--family 'bonferroni'"):
        Plan(backends="tfidf_logreg", family="bonferroni")


def test_a_power_plan_sets_the_designs_folds_draws_and_family_and_refuses_a_contradiction(tmp_path):
    import json

    from comparisons.plan import Plan

    plan_file = tmp_path / "power_plan.json"
    plan_file.write_text(json.dumps({"gap": 0.1, "family": "natural-order", "expected": [],
                                     "proposal": {"folds": 8, "repeats": 1, "draws": 2, "bound": "pessimistic"}}))
    curve = dict(backends="tfidf_logreg,torch_scratch", contrasts="torch_scratch-tfidf_logreg", train_sizes="50,100")
    plan = Plan(**curve, power_plan=str(plan_file))
    assert (plan.cv, plan.repeats, plan.draws, plan.family) == (8, 1, 2, "natural-order")
    assert "--cv" in plan.to_argv() and Plan(**curve, cv=8, power_plan=str(plan_file)).cv == 8  # the same K: accepted
    with pytest.raises(ValueError, match="--cv 5 contradicts --power-plan"):
        Plan(**curve, cv=5, power_plan=str(plan_file))
    with pytest.raises(ValueError, match="no such file"):
        Plan(**curve, power_plan=str(tmp_path / "absent.json"))
    plan_file.write_text("{}")
    with pytest.raises(ValueError, match="is not a power plan's JSON"):
        Plan(**curve, power_plan=str(plan_file))


def test_dropping_every_equivalence_chain_gives_each_difference_chain_its_contrasts_whole_share():
    """An unreachable chain's level goes to the chains that can decide (issue: half of alpha spent on chains that
    could not decide): with the equivalence chains dropped, each difference chain starts at alpha / C; at one size
    the reduced graph is Holm over the C differences (statsmodels, an independent implementation)."""
    from comparisons.stats.graphical import reduced_graph

    full = curve_graph(4, 6)
    reduced = reduced_graph(full, [n for n in full.nodes if n[1] == "e"])
    assert len(reduced.nodes) == 24 and all(kind == "d" for _, kind, _ in reduced.nodes)
    starts = {n: w for n, w in zip(reduced.nodes, reduced.weights) if w > 0}
    assert starts == pytest.approx({(c, "d", 0): 0.25 for c in range(4)})
    assert (reduced.transitions.sum(axis=1) <= 1 + 1e-12).all()
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    one_size = reduced_graph(curve_graph(4, 1), [n for n in curve_graph(4, 1).nodes if n[1] == "e"])
    rng = np.random.default_rng(5)
    for _ in range(20):
        p = rng.uniform(0, 0.1, 4) ** 2
        np.testing.assert_allclose(adjusted_p_values(one_size, p), multipletests(p, method="holm")[1], rtol=1e-12)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_reduced_family_keeps_its_error_at_alpha(scenario):
    from comparisons.studies.family_error import reduced_curve_procedure

    n_sim = 1500
    error, _ = simulate(SCENARIOS[scenario], n_sim, reduced_curve_procedure)
    assert error <= ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / n_sim), f"{scenario}: family-wise error {error:.3f}"


def _curve_rows(rng, truth, se, df, margin, correlation=0.0):
    from scipy.stats import t as student_t

    rows = []
    shared = rng.standard_normal(truth.shape[0])  # a contrast's sizes share folds: their errors correlate
    for (c, k), delta in np.ndenumerate(truth):
        noise = np.sqrt(correlation) * shared[c] + np.sqrt(1 - correlation) * rng.standard_normal()
        estimate = delta + se * noise * np.sqrt(df / rng.chisquare(df))
        rows.append({"metric": "average_precision", "variant_a": f"A{c}", "variant_b": "B", "train_size": [50, 200, "all"][k],
                     "difference": estimate, "standard_error": se, "df": float(df), "margin": margin,
                     "p_value": float(2 * student_t.sf(abs(estimate) / se, df)),
                     "p_equivalence": float(max(student_t.sf((estimate + margin) / se, df),
                                                student_t.cdf((estimate - margin) / se, df)))})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("truth, se, correlation", [
    (np.array([[0.06, 0.03, 0.0], [0.02, 0.0, 0.0]]), 0.012, 0.0),     # differences decided, equivalence never
    (np.array([[0.03, 0.002, 0.0], [0.0, 0.0, 0.001]]), 0.0012, 0.5),  # equivalences rejected too, sizes correlated
    (np.array([[0.04, 0.03, 0.02]]), 0.002, 0.5),                      # every hypothesis rejected most of the time
])
def test_the_family_interval_agrees_with_every_verdict_and_covers_the_truth_simultaneously(truth, se, correlation):
    """The natural-order family's interval is compatible with the graph (Strassburger & Bretz 2008): no row reads
    "A better" beside an interval that holds 0 or goes below it, no equivalent row beside one outside the margin, no
    inconclusive row beside one that excludes 0; and all rows' intervals hold their true differences together in at
    least 95% of simulated curves (checked here, not a theorem for the two-sided adaptation)."""
    from comparisons.stats.family import correct_family

    rng = np.random.default_rng(7)
    pairs = [(f"A{c}", "B") for c in range(truth.shape[0])]
    covered, n_sim, seen = 0, 250, set()
    for _ in range(n_sim):
        out = correct_family(_curve_rows(rng, truth, se, 9, 0.005, correlation), pairs, family="natural-order")
        for row in out.itertuples():
            seen.add(row.verdict)
            if row.verdict == "A better":
                assert row.ci_low_family >= 0 and row.ci_high_family > 0
            elif row.verdict == "B better":
                assert row.ci_high_family <= 0
            elif row.verdict == "equivalent":
                assert -0.005 <= row.ci_low_family <= row.ci_high_family <= 0.005
            else:
                assert row.ci_low_family <= 0 <= row.ci_high_family, row
        true = truth[[int(a[1]) for a in out["variant_a"]], [[50, 200, "all"].index(s) for s in out["train_size"]]]
        better = out["verdict"].isin(["A better", "B better"]).to_numpy()
        low, high = out["ci_low_family"].to_numpy(), out["ci_high_family"].to_numpy()
        right_sign = (np.sign(true) == np.sign(out["difference"].to_numpy())) & (true != 0)
        inside = np.where(better, right_sign, (low <= true) & (true <= high))
        covered += bool(inside.all())
    assert covered / n_sim >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / n_sim), covered / n_sim
    if se < 0.002:
        assert "equivalent" in seen, "the equivalence branch was exercised"


def test_a_row_tested_on_the_atanh_scale_gets_its_family_interval_there_too():
    """A difference whose t interval would leave [-1, 1] is tested on the atanh scale (family.correct_family): its
    family interval must come from the same test, or an inconclusive row could read beside an interval above 0."""
    from scipy.stats import t as student_t

    from comparisons.stats.family import correct_family

    rows = pd.DataFrame([{"metric": "average_precision", "variant_a": "A", "variant_b": "B", "train_size": 50,
                          "difference": 0.5, "standard_error": 0.21, "df": 9.0, "margin": 0.005,
                          "p_value": float(2 * student_t.sf(0.5 / 0.21, 9)), "p_equivalence": 0.9}])
    out = correct_family(rows, [("A", "B")], family="natural-order", dropped=[("A", "B", "e", "50")])
    row = out.iloc[0]
    assert row["interval_method"] == "t on the atanh scale"
    if row["verdict"] == "inconclusive":
        assert row["ci_low_family"] <= 0 <= row["ci_high_family"], (row["ci_low_family"], row["ci_high_family"])
    else:
        assert row["ci_low_family"] >= 0


def test_a_dropped_node_is_never_rejected_and_its_level_reaches_the_others():
    from comparisons.stats.family import correct_family

    rows = _curve_rows(np.random.default_rng(2), np.array([[0.05, 0.0, 0.0]]), 0.01, 9, 0.005)
    pairs = [("A0", "B")]
    dropped = [("A0", "B", "e", s) for s in ("50", "200", "all")]
    kept = correct_family(rows, pairs, family="natural-order")
    reduced = correct_family(rows, pairs, family="natural-order", dropped=dropped)
    assert (reduced["p_equivalence_holm"] == 1).all()
    first = reduced["train_size"] == 50  # its chain start: alpha / 1 instead of alpha / 2
    assert reduced.loc[first, "p_holm"].iloc[0] == pytest.approx(min(1, rows.loc[first, "p_value"].iloc[0]))
    assert kept.loc[first, "p_holm"].iloc[0] >= reduced.loc[first, "p_holm"].iloc[0]
