"""The learning curve's family asked in its natural order: a graphical procedure (framework-free).

A curve asks each declared contrast two questions over its sizes s_1 < ... < s_K:
  is one recipe better?  the difference nulls H_d(s) "A = B", from the smallest budget up: a fixed sequence, each
                         tested only once the one before it is rejected (pretraining's gap is widest where labels
                         are scarce, so that is where the question starts);
  are they equivalent?   the equivalence nulls H_e(s) "|A - B| >= margin", from the largest budget down (recipes
                         converge as labels grow, so equivalence is likeliest there).
Holm over every row's two hypotheses (today's family: 2 x C x K hypotheses, the first step at alpha / (2CK)) spends
its alpha on sizes nobody asks about first. Here each contrast's two chain starts share alpha / C, a rejected
hypothesis passes its level down its chain, and the end of a chain passes it half to the other chain of the same
contrast and half to the other contrasts' chain starts: the contrasts are combined as Holm combines them (a
contrast whose questions are all answered frees its level for the others).

This is a graphical procedure with weighted Bonferroni tests (Bretz, Maurer, Brannath and Posch 2009, Stat. Med.
28:586): for ANY graph whose initial weights sum to at most 1 and whose transition rows sum to at most 1, the
sequentially rejective algorithm controls the family-wise error rate at alpha in the strong sense, under any
dependence between the tests. The graph below is one such graph; the tests simulate its error rate with known
answers (tests/test_graphical_family.py). Shaffer's restriction (a row's two nulls cannot both hold) is not needed
for validity here; it is why a row may carry both a difference and an equivalence hypothesis at all.
Adjusted p-values follow Bretz et al. 2011 (Biometrical Journal 53:894): the smallest alpha at which the
procedure rejects the hypothesis.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from comparisons.stats.atanh import ATANH, atanh_interval

Node = tuple  # (contrast index, "d" | "e", size index)


@dataclass(frozen=True)
class Graph:
    """Hypotheses (nodes), their initial weights (sum <= 1) and transitions (each row sums to <= 1, no self-loop)."""

    nodes: tuple[Node, ...]
    weights: np.ndarray      # (n,)
    transitions: np.ndarray  # (n, n)

    def __post_init__(self) -> None:
        n = len(self.nodes)
        if self.weights.shape != (n,) or self.transitions.shape != (n, n):
            raise ValueError("weights must be (n,) and transitions (n, n) for n nodes")
        if self.weights.min(initial=0.0) < 0 or self.weights.sum() > 1 + 1e-12:
            raise ValueError("initial weights must be non-negative and sum to at most 1")
        if self.transitions.min(initial=0.0) < 0 or (self.transitions.sum(axis=1) > 1 + 1e-12).any():
            raise ValueError("transition weights must be non-negative and each row sum to at most 1")
        if np.any(np.diag(self.transitions) != 0):
            raise ValueError("a hypothesis cannot pass its level to itself")


@lru_cache(maxsize=64)  # a Graph is never modified: the algorithms below work on copies
def curve_graph(n_contrasts: int, n_sizes: int) -> Graph:
    """The natural-order graph for C contrasts over K sizes (sizes indexed from the smallest budget, 0..K-1)."""
    if n_contrasts < 1 or n_sizes < 1:
        raise ValueError("a curve's family needs at least one contrast and one size")
    nodes = tuple((c, kind, k) for c in range(n_contrasts) for kind in ("d", "e") for k in range(n_sizes))
    index = {node: i for i, node in enumerate(nodes)}
    weights = np.zeros(len(nodes))
    transitions = np.zeros((len(nodes), len(nodes)))
    last = n_sizes - 1
    starts = {c: (index[(c, "d", 0)], index[(c, "e", last)]) for c in range(n_contrasts)}
    for c in range(n_contrasts):
        d_start, e_start = starts[c]
        weights[d_start] = weights[e_start] = 1.0 / (2 * n_contrasts)
        for k in range(last):  # down each chain: D from the smallest size up, E from the largest down
            transitions[index[(c, "d", k)], index[(c, "d", k + 1)]] = 1.0
            transitions[index[(c, "e", last - k)], index[(c, "e", last - k - 1)]] = 1.0
        others = [start for other in range(n_contrasts) if other != c for start in starts[other]]
        for end, other_chain_start in ((index[(c, "d", last)], e_start), (index[(c, "e", 0)], d_start)):
            share = 0.5 if others else 1.0  # a lone contrast: the whole level to its other chain
            transitions[end, other_chain_start] = share
            for start in others:
                transitions[end, start] = (1.0 - share) / len(others)
    return Graph(nodes, weights, transitions)


def _remove(weights: np.ndarray, transitions: np.ndarray, active: np.ndarray, j: int) -> None:
    """Reject hypothesis j (already marked inactive): pass its weight along its transitions and reconnect the
    graph (Bretz et al. 2009, algorithm 1), in place:
        w_l <- w_l + w_j g_jl;   g_lk <- (g_lk + g_lj g_jk) / (1 - g_lj g_jl)   for active l != k."""
    weights[active] += weights[j] * transitions[j, active]
    through = transitions[:, j] * transitions[j, :]  # (n,): g_lj g_jl for each l
    numerator = transitions + np.outer(transitions[:, j], transitions[j, :])
    denominator = (1.0 - through)[:, None]
    updated = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 1e-15)
    np.fill_diagonal(updated, 0.0)
    updated[~active, :] = 0.0
    updated[:, ~active] = 0.0
    transitions[:] = updated
    weights[j] = 0.0


def adjusted_p_values(graph: Graph, p_values) -> np.ndarray:
    """Each hypothesis's adjusted p: the smallest alpha at which the sequentially rejective graph rejects it.
    A missing p (NaN) never rejects (treated as 1)."""
    p = np.nan_to_num(np.asarray(p_values, dtype=float), nan=1.0)
    if p.shape != graph.weights.shape:
        raise ValueError(f"{p.size} p-values for {graph.weights.size} hypotheses")
    weights, transitions = graph.weights.astype(float).copy(), graph.transitions.astype(float).copy()
    active = np.ones(p.size, dtype=bool)
    adjusted = np.ones(p.size)
    running = 0.0
    while active.any():
        ratios = np.where(active & (weights > 0), p / np.where(weights > 0, weights, 1.0), np.inf)
        j = int(np.argmin(ratios))
        if not np.isfinite(ratios[j]):
            break  # the rest carry no weight: never rejected (adjusted p 1)
        running = max(running, min(1.0, float(ratios[j])))
        adjusted[j] = running
        active[j] = False
        _remove(weights, transitions, active, j)
    return adjusted


def rejected(graph: Graph, p_values, alpha: float) -> np.ndarray:
    """Which hypotheses the procedure rejects at level alpha (the sequentially rejective algorithm itself)."""
    p = np.nan_to_num(np.asarray(p_values, dtype=float), nan=1.0)
    weights, transitions = graph.weights.astype(float).copy(), graph.transitions.astype(float).copy()
    active = np.ones(p.size, dtype=bool)
    while True:
        candidates = np.flatnonzero(active & (p <= weights * alpha))
        if not candidates.size:
            return ~active
        j = int(candidates[0])
        active[j] = False
        _remove(weights, transitions, active, j)


def size_order(size) -> float:
    """A training size's place on the curve: labelled texts, "all" (the whole labelled part) last."""
    return float("inf") if str(size) == "all" else float(size)


def curve_nodes(rows) -> tuple[list, list, Graph]:
    """(pairs, sizes, graph) of a curve's declared primary rows: the contrasts in their order of first appearance,
    the sizes from the smallest budget up, and the natural-order graph over them."""
    pairs = list(dict.fromkeys(zip(rows["variant_a"], rows["variant_b"])))
    sizes = sorted(dict.fromkeys(str(s) for s in rows["train_size"]), key=size_order)
    return pairs, sizes, curve_graph(len(pairs), len(sizes))


def node_key(pair, kind: str, size) -> tuple:
    """How design.json names a node: (variant A, variant B, "d" | "e", size label)."""
    return (str(pair[0]), str(pair[1]), kind, str(size))


def natural_order(rows, dropped=(), alpha: float = 0.05) -> dict[str, np.ndarray]:
    """A curve's declared primary rows under the natural-order graph less the nodes dropped before the runs
    (`dropped`: node_key tuples, design.json's family_graph): the adjusted p-values ("p_holm", "p_equivalence_holm":
    a dropped or missing hypothesis 1) and each row's family interval compatible with the graph's decisions
    ("ci_low_family", "ci_high_family"; Strassburger & Bretz 2008, Bretz et al. 2009 section 4, as gMCP's simConfint
    computes them):
      an equivalence rejected      the margin itself, (-margin, +margin): what the rejection says;
      a difference rejected        from 0 (open) on the side of the estimate to the end of the scale, unless every
                                   hypothesis is rejected, when the bound is the near end of the interval at the
                                   node's initial level, truncated at 0;
      neither                      the two-sided interval at the node's level in the graph left after every
                                   rejection, alpha w_final, by the row's own test (t, or t on the atanh scale where
                                   its p-values were computed there): none (-1, 1) where that level is 0 (the family
                                   never reached the row and says nothing of it).
    So a row reads "A better" only beside an interval above 0, and an interval that excludes 0 only beside a
    rejection. Rows align with `rows`."""

    def interval(d: float, se: float, df: float, level: float, on_atanh: bool) -> tuple[float, float]:
        """The two-sided interval at `level` by the row's own test: the t, or the t on the atanh scale where the
        row's p-values were computed there (family.correct_family's fallback), so interval and p agree."""
        if on_atanh:
            return atanh_interval(d, se, df, level)
        from scipy.stats import norm, t as student_t

        half = (student_t.ppf(1 - level / 2, df) if np.isfinite(df) else norm.ppf(1 - level / 2)) * se
        return max(-1.0, d - half), min(1.0, d + half)

    pairs, sizes, full = curve_nodes(rows)
    dropped = {tuple(map(str, key)) for key in dropped or ()}
    keys = {node: node_key(pairs[node[0]], node[1], sizes[node[2]]) for node in full.nodes}
    graph = reduced_graph(full, [node for node in full.nodes if keys[node] in dropped])
    where = {(pairs.index((a, b)), sizes.index(str(s))): i
             for i, (a, b, s) in enumerate(zip(rows["variant_a"], rows["variant_b"], rows["train_size"]))}
    columns = {"d": rows["p_value"].to_numpy(float), "e": rows["p_equivalence"].to_numpy(float)}
    p = np.array([columns[kind][where[(c, k)]] if (c, k) in where else 1.0 for c, kind, k in graph.nodes])
    adjusted = adjusted_p_values(graph, p) if len(graph.nodes) else np.array([])
    rejected_now, final, _ = final_weights(graph, p, alpha) if len(graph.nodes) else (np.array([], bool),) * 3
    every = bool(rejected_now.all()) if rejected_now.size else False
    n = len(rows)
    out = {"p_holm": np.ones(n), "p_equivalence_holm": np.ones(n),
           "ci_low_family": np.full(n, -1.0), "ci_high_family": np.full(n, 1.0)}
    state = {node: (value, bool(r), float(w), float(w0)) for node, value, r, w, w0
             in zip(graph.nodes, adjusted, rejected_now, final, graph.weights)}
    difference, se, df = (rows[c].to_numpy(float) for c in ("difference", "standard_error", "df"))
    margin = rows["margin"].to_numpy(float)
    atanh = (rows["interval_method"] == ATANH).to_numpy() if "interval_method" in rows else np.zeros(n, bool)
    for (c, k), i in where.items():
        d_state, e_state = state.get((c, "d", k)), state.get((c, "e", k))
        if d_state:
            out["p_holm"][i] = d_state[0]
        if e_state:
            out["p_equivalence_holm"][i] = e_state[0]
        if e_state and e_state[1]:
            low, high = -margin[i], margin[i]
        elif d_state and d_state[1]:
            bound = 0.0
            if every:  # every hypothesis rejected: the near end at the node's initial level, truncated at 0
                below, above = interval(difference[i], se[i], df[i], alpha * d_state[3], atanh[i])
                bound = max(0.0, below if difference[i] > 0 else -above)
            low, high = (bound, 1.0) if difference[i] > 0 else (-1.0, -bound)
        elif d_state and d_state[2] > 0 and np.isfinite(se[i]):
            low, high = interval(difference[i], se[i], df[i], alpha * d_state[2], atanh[i])
        else:
            low, high = -1.0, 1.0
        out["ci_low_family"][i], out["ci_high_family"][i] = low, high
    return out


# -- the graph actually used: chains that cannot decide give their level away before the runs ----------------------
def reduced_graph(graph: Graph, dropped) -> Graph:
    """The graph over the nodes not in `dropped`: each dropped node is taken out as Bretz et al.'s algorithm 1 takes
    out a rejected one (its weight passed along its transitions, the rest reconnected), in node order, before any
    data: the result is again a graph whose weights sum to at most 1 and whose rows sum to at most 1, fixed before
    the runs, so the sequentially rejective procedure on it controls the family-wise error rate at alpha (Bretz et
    al. 2009, theorem 1). An unreachable equivalence chain's level thus flows down its chain, then half to its own
    contrast's difference chain and half to the other contrasts' chain starts, exactly as a rejected chain's would."""
    dropped = set(dropped)
    weights, transitions = graph.weights.astype(float).copy(), graph.transitions.astype(float).copy()
    active = np.ones(len(graph.nodes), dtype=bool)
    for j, node in enumerate(graph.nodes):
        if node in dropped:  # one at a time, as rejections are: the others' paths through it are reconnected first
            active[j] = False
            _remove(weights, transitions, active, j)
    keep = np.flatnonzero(active)
    return Graph(tuple(graph.nodes[i] for i in keep), weights[keep], transitions[np.ix_(keep, keep)])


def final_weights(graph: Graph, p_values, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rejected, weights of the graph left after every rejection, weights at the step each node was rejected): what
    the compatible intervals read."""
    p = np.nan_to_num(np.asarray(p_values, dtype=float), nan=1.0)
    weights, transitions = graph.weights.astype(float).copy(), graph.transitions.astype(float).copy()
    active = np.ones(p.size, dtype=bool)
    at_rejection = np.zeros(p.size)
    while True:
        candidates = np.flatnonzero(active & (p <= weights * alpha))
        if not candidates.size:
            return ~active, np.where(active, weights, 0.0), at_rejection
        j = int(candidates[0])
        at_rejection[j] = weights[j]
        active[j] = False
        _remove(weights, transitions, active, j)


def graph_record(graph: Graph, labels) -> dict:
    """design.json's record of the graph actually used: each node's label, initial weight and transitions."""
    name = {node: label for node, label in zip(graph.nodes, labels)}
    return {"nodes": [name[n] for n in graph.nodes], "weights": [round(float(w), 10) for w in graph.weights],
            "transitions": [[round(float(g), 10) for g in row] for row in graph.transitions]}


def dropped_nodes(record: dict | None) -> list[tuple]:
    """The node keys design.json's family_graph drops (none for a design without one)."""
    return [tuple(map(str, entry["node"])) for entry in (record or {}).get("dropped") or []]
