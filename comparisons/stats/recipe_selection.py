"""Which recipe to deploy: a sequential selection with multiple comparisons with the best (framework-free).

The procedure (docs/statistics.md, "Selecting a recipe") runs the candidates on the design's partitions one partition
at a time, every candidate that runs on a partition trained on the same texts with the same seed (paired), and
decides after each partition from the per-partition differences of the primary metric:

- Looks. A pair is looked at when the partitions both of its candidates ran reach a count of the schedule
  `look_schedule(first, most)` (first, first + 1, ... growing by about a fifth each time, to most): a look after every
  partition would split alpha over too many looks to decide early.
- Bounds. For an ordered pair (a, b) at look J (the first J partitions both ran; any beyond the last look reached
  wait for the next), m_ab is the mean of a's score minus b's and se_ab the design's corrected standard error
  s x sqrt(1/J + r) (Nadeau & Bengio; comparisons/stats/corrected_t.py). d_ab = c_J x se_ab, c_J the one-sided
  group-sequential t boundary at look J of total level alpha / (k - 1) (comparisons/stats/t_boundaries.py:
  Lan-DeMets spending of the Pocock shape, so that a losing candidate can go early, under the design's
  equicorrelated model). For the best candidate B (unknown), the event E: "for every other l and at every look,
  m_lB - (mu_l - mu_B) <= d_lB" has probability at least 1 - alpha (Bonferroni over the k - 1 pairs, each bound
  valid over all its looks at once).
- Elimination. i is out once some l still in has m_li - d_li > 0 (l shown better; `eliminations`). Under E, B is
  never out.
- Claim. A candidate i still in is claimable once m_li + d_li <= delta for every other l still in: then, under E,
  mu_B - mu_i <= m_Bi + d_Bi <= delta, i.e. i is the best or within delta of it. So in every configuration the
  chance that a pick is made and is not within delta of the best is at most alpha; if the best leads every other by
  at least delta, the chance that a pick is made and is not the best is at most alpha. A selection stopped by its
  budget makes no pick (unlike KN, which always ends with one), so the chance of a correct pick is at least
  1 - alpha minus the chance of running out. The pick is the first claimable candidate in the plan's `preference`
  (default: the candidates' order, cheapest to train first; `select` puts the cheapest to serve first when it
  measured serving costs); all claimable ones are reported, each carries the guarantee.
- Allocation (cost-aware). The target is the cheapest candidate still in. On the next partition run the target and
  every candidate still in whose advantage over the target is not yet bounded by delta (m_lt + d_lt > delta): the
  others cannot change the target's claim and sit out, so an expensive recipe shown within delta of a cheaper one
  stops consuming CPU. Sitting out depends only on past partitions, and the partitions are exchangeable under the
  design's model (the per-partition score vectors are exchangeable), so each pair's sequence of statistics over its
  common partitions keeps the law the boundaries assume (predictable sampling, Kallenberg 1988); the target runs
  every partition, so the procedure never stalls.
- Stopping. Claimable: selected. Else, once every pair still in has reached `futility_from` partitions, stop when
  the current figures predict that no candidate would be claimable even with every pair at the last look (its mean
  as now, its bound at the last look's boundary on its current spread, `projected_advice`): "more folds needed"
  when unlimited partitions would, at the correlation floor, "more labels needed" when not even they would. A
  stop without a pick cannot break the guarantee; it only gives up the chance of a lucky claim. Else stop when the
  next partition's predicted cost would pass the budget, or at the most partitions planned: "cannot say within
  this budget", the candidates still in with their bounds.

Costs are predictions recorded before they are used (`SelectionPlan`), so the decisions are a function of the
recorded scores and the plan alone: `decide` replayed on the same records gives the same looks on any machine.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from comparisons.stats.spending import POCOCK
from comparisons.stats.t_boundaries import t_boundaries

DELTA = 0.01        # the indifference zone: average-precision differences smaller than this do not matter
CONFIDENCE = 0.95   # 1 - alpha
FIRST = 3           # partitions every candidate runs before the first look (at least 2: a variance needs 2)
SEQUENCES = 200_000  # null sequences behind the boundaries: enough that most looks' shares at alpha / (k - 1) are
                     # read from simulated crossings, not the conservative marginal t quantile
MOST = 40           # the most partitions a selection plans (the boundaries' last look; the data allow more)
FUTILITY_FROM = 6   # common partitions every pair still in needs before a futility stop is judged (a spread on
                    # 2 degrees of freedom is too rough to give up on)

SELECTED, BUDGET, MOST_REACHED, CONTINUE = "selected", "budget", "most partitions", "continue"
MORE_FOLDS, MORE_LABELS = "more folds needed", "more labels needed"  # futility stops: what would decide it


RECORDED_DECIMALS = 6  # the decimals selection.json keeps: the plan decides with exactly what it records


def _recorded(value: float) -> float:
    value = float(value)
    return round(value, RECORDED_DECIMALS) if np.isfinite(value) else value


@dataclass(frozen=True)
class SelectionPlan:
    """What the decisions depend on besides the scores, fixed before the first look and recorded."""

    candidates: tuple[str, ...]   # cheapest to train first: the target of the allocation (and the default preference)
    run_costs: tuple[float, ...]  # predicted CPU minutes of one run of each candidate on one partition
    delta: float = DELTA
    alpha: float = 1 - CONFIDENCE
    ratio: float = 0.0            # the design's correction ratio r (n_test / n_train, or the overlap's)
    first: int = FIRST
    most: int = MOST
    budget: float = float("inf")  # CPU minutes, in predicted run costs
    boundaries: tuple[float, ...] = ()  # c_J for J = first..most; computed once when not given, then recorded
    futility_from: int = FUTILITY_FROM  # 0: never stop for futility (a record written before the rule replays so)
    preference: tuple[str, ...] = ()    # the order the pick is taken in among claimable ones (empty: candidates'):
                                        # e.g. the cheapest to serve first; any claimable one carries the guarantee

    def __post_init__(self):
        for name in ("ratio", "budget"):  # as selection.json holds them (comparisons/outputs.atomic_write_json)
            object.__setattr__(self, name, _recorded(getattr(self, name)))
        object.__setattr__(self, "run_costs", tuple(_recorded(c) for c in self.run_costs))
        if len(self.candidates) < 2 or len(set(self.candidates)) != len(self.candidates):
            raise ValueError("a selection needs at least two distinct candidates")
        if len(self.run_costs) != len(self.candidates) or min(self.run_costs) < 0:
            raise ValueError("one non-negative predicted run cost per candidate")
        if not 0 < self.alpha < 0.5 or not self.delta > 0:
            raise ValueError("confidence must be in (0.5, 1) and delta positive")
        if not 2 <= self.first <= self.most:
            raise ValueError(f"first ({self.first}) must be at least 2 and at most most ({self.most})")
        if self.preference and sorted(self.preference) != sorted(self.candidates):
            raise ValueError("the preference must order exactly the candidates")
        if self.futility_from and self.futility_from < 3:
            raise ValueError(f"futility_from ({self.futility_from}) must be 0 (never) or at least 3")
        if not self.boundaries:  # the t boundaries (a seeded simulation): recorded with the plan, so that a replay
            object.__setattr__(self, "boundaries",  # never depends on the machine's floating point
                               tuple(_recorded(c) for c in _bounds(self.looks, float(self.ratio), float(self.level))))
        elif len(self.boundaries) != len(self.looks):
            raise ValueError(f"{len(self.boundaries)} boundaries for {len(self.looks)} looks")

    @property
    def level(self) -> float:
        """Each pair's one-sided level: alpha over the k - 1 comparisons with the best."""
        return self.alpha / (len(self.candidates) - 1)

    @property
    def looks(self) -> tuple[int, ...]:
        return look_schedule(self.first, self.most)

    def to_dict(self) -> dict:
        return {"candidates": list(self.candidates), "run_costs": list(self.run_costs), "delta": self.delta,
                "alpha": self.alpha, "ratio": self.ratio, "first": self.first, "most": self.most,
                "budget": self.budget, "boundaries": list(self.boundaries), "futility_from": self.futility_from,
                "preference": list(self.preference)}

    @classmethod
    def from_dict(cls, record: dict) -> "SelectionPlan":
        return cls(tuple(record["candidates"]), tuple(record["run_costs"]), record["delta"], record["alpha"],
                   record["ratio"], record["first"], record["most"], record["budget"], tuple(record["boundaries"]),
                   record.get("futility_from", 0), tuple(record.get("preference", ())))


def look_schedule(first: int, most: int) -> tuple[int, ...]:
    """The partition counts a pair is looked at: first, then each about a fifth more than the last (at least one
    more), ending at most: 3, 4, 5, 6, 8, 10, 12, 15, 18, 22, 27, 33, 40 for (3, 40)."""
    looks = [first]
    while looks[-1] < most:
        looks.append(min(most, max(looks[-1] + 1, int(np.ceil(looks[-1] * 1.2)))))
    return tuple(looks)


def most_partitions(run_costs, budget: float, first: int = FIRST, cap: int = MOST) -> int:
    """The most partitions a budget can reach: the first partitions run every candidate, later ones at least the two
    cheapest (a claim needs a pair); capped (beyond it the design's correlation floor leaves little to learn)."""
    costs = sorted(float(c) for c in run_costs)
    after_first = budget - first * sum(costs)
    pair = costs[0] + costs[1]
    if after_first < 0:
        return first
    extra = cap if pair <= 0 else int(after_first // pair)
    return int(min(cap, first + extra))


@lru_cache(maxsize=256)
def _bounds(looks: tuple[int, ...], ratio: float, level: float) -> np.ndarray:
    return t_boundaries(looks, ratio, level, sides=1, shape=POCOCK, by_partitions=True, sequences=SEQUENCES)


def look_reached(plan: SelectionPlan, partitions) -> np.ndarray:
    """The last look of the schedule at or below each count of common partitions (0 before the first look)."""
    looks = np.asarray(plan.looks)
    index = np.searchsorted(looks, np.asarray(partitions), side="right") - 1
    return np.where(index >= 0, looks[np.clip(index, 0, None)], 0)


@dataclass(frozen=True)
class Look:
    """The state after a number of partitions: the pairs' bounds and what happens next."""

    partitions: int
    spent: float                       # predicted minutes of the runs so far
    mean: np.ndarray                   # (k, k): m_ab, a's score minus b's over their common partitions
    bound: np.ndarray                  # (k, k): d_ab (inf when fewer than `first` common partitions)
    common: np.ndarray                 # (k, k): the look each pair reached (partitions of its figures; 0: none yet)
    eliminated: dict = field(default_factory=dict)   # candidate -> the candidate shown better
    claimable: tuple[str, ...] = ()
    outcome: str = CONTINUE
    pick: str | None = None
    next_runs: tuple[str, ...] = ()    # who runs on the next partition (empty once stopped)

    def behind_best(self, plan: SelectionPlan) -> dict[str, float]:
        """For each candidate still in, the most it can be below the best under E: max over the others still in of
        m_li + d_li, at least 0 (a candidate with no other still in: 0)."""
        alive = [i for i, name in enumerate(plan.candidates) if name not in self.eliminated]
        out = {}
        for i in alive:
            others = [self.mean[l, i] + self.bound[l, i] for l in alive if l != i]
            out[plan.candidates[i]] = float(max([0.0, *others]))
        return out


def _pair_statistics(scores: np.ndarray, plan: SelectionPlan) -> tuple[np.ndarray, ...]:
    """(m, d, J, s) of every ordered pair at its last look: J the look reached by the partitions both ran, m, s (the
    standard deviation of the differences) and se over
    the first J of them (a pair's m and se are corrected_t's of those differences, tests/test_recipe_selection.py
    checks it), computed elementwise (no BLAS, whose kernels differ between CPU kinds) so that a replay on another
    machine gives the same bits."""
    differences = scores[:, :, None] - scores[:, None, :]   # (partitions, k, k): a's score minus b's
    both = ~np.isnan(differences)
    look = look_reached(plan, both.sum(axis=0))                # (k, k): J, 0 before the first look
    used = both & (np.cumsum(both, axis=0) <= look)           # the first J common partitions of each pair
    filled = np.where(used, differences, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / np.maximum(look, 1)
        squares = np.where(used, (filled - mean) ** 2, 0.0).sum(axis=0)
        spread = np.sqrt(squares / np.maximum(look - 1, 1))
        se = spread * np.sqrt(1.0 / np.maximum(look, 1) + plan.ratio)
    c = np.asarray(plan.boundaries)
    index = np.clip(np.searchsorted(np.asarray(plan.looks), look), 0, len(c) - 1)
    bound = np.where(look >= plan.first, c[index] * se, np.inf)
    np.fill_diagonal(bound, np.inf)
    return mean, bound, look, spread


def eliminations(mean: np.ndarray, bound: np.ndarray, names) -> dict[str, str]:
    """{candidate: the candidate shown better}: repeatedly, the candidate still in that one still in beats by the
    widest margin (m_li - d_li > 0) goes out, until none still in is beaten by another still in. Only candidates
    still in eliminate, so pairs measured on different partitions cannot eliminate everyone in a cycle (the last of
    a cycle stays); on E the best is never beaten, so it is never out."""
    k = len(names)
    alive, out = list(range(k)), {}
    while True:
        margins = [(mean[l, i] - bound[l, i], -i, i, l) for i in alive for l in alive if l != i]
        beaten = [m for m in margins if m[0] > 0]
        if not beaten:
            return out
        _, _, i, l = max(beaten)
        out[names[i]] = names[l]
        alive.remove(i)


def decide(scores: np.ndarray, plan: SelectionPlan) -> Look:
    """The look after the partitions in `scores` ((partitions, k) primary-metric scores, NaN where a candidate did
    not run), with what to do next. Pure: the same scores and plan give the same look on any machine."""
    scores = np.asarray(scores, dtype=float).reshape(-1, len(plan.candidates))
    mean, bound, common, spread = _pair_statistics(scores, plan)
    names = plan.candidates
    k = len(names)
    eliminated = eliminations(mean, bound, names)
    alive = [i for i in range(k) if names[i] not in eliminated]
    claimable = _claimable(mean, bound, alive, plan.delta)
    state = dict(partitions=scores.shape[0], spent=_spent(scores, plan), mean=mean, bound=bound, common=common,
                 eliminated=eliminated, claimable=tuple(names[i] for i in claimable))
    if claimable:
        order = plan.preference or names
        return Look(**state, outcome=SELECTED, pick=min(state["claimable"], key=order.index))
    advice = projected_advice(mean, spread, common, alive, plan)
    if advice is not None:
        return Look(**state, outcome=advice)
    if scores.shape[0] < plan.first:
        runs = list(range(k))
    else:
        target = alive[0]
        runs = [target] + [l for l in alive if l != target and mean[l, target] + bound[l, target] > plan.delta]
    return _next_step(plan, state, tuple(names[i] for i in runs))


def _claimable(mean: np.ndarray, bound: np.ndarray, alive: list[int], delta: float) -> list[int]:
    """The candidates still in that every other still in cannot beat by more than delta: m_li + d_li <= delta."""
    return [i for i in alive if all(mean[l, i] + bound[l, i] <= delta for l in alive if l != i)]


def projected_advice(mean: np.ndarray, spread: np.ndarray, common: np.ndarray, alive: list[int],
                     plan: SelectionPlan) -> str | None:
    """A futility stop: None to go on, or what would decide the selection when the current figures predict that the
    planned partitions will not. Judged once every pair still in has at least `futility_from` common partitions.
    The projection keeps each pair's mean and spread as they are and puts its bound at the last look,
    c_last * s * sqrt(1/J_max + r): if no candidate would then be claimable (after the eliminations those bounds
    would make), more of the planned partitions are not predicted to decide; if none would be even at the
    correlation floor c_last * s * sqrt(r) (unlimited partitions), more labels (or a wider delta) are needed."""
    if not plan.futility_from or len(alive) < 2:
        return None
    pairs = [(a, b) for a in alive for b in alive if a != b]
    if min(common[a, b] for a, b in pairs) < plan.futility_from:
        return None
    last = plan.boundaries[-1]

    def decides(partitions: float) -> bool:
        reach = 1.0 / partitions if partitions else 0.0
        bound = np.full_like(mean, np.inf)
        for a, b in pairs:
            bound[a, b] = last * spread[a, b] * np.sqrt(reach + plan.ratio)
        out = eliminations(mean, bound, tuple(range(len(mean))))
        return bool(_claimable(mean, bound, [i for i in alive if i not in out], plan.delta))

    if decides(plan.most):
        return None
    return MORE_FOLDS if decides(0) else MORE_LABELS


def _spent(scores: np.ndarray, plan: SelectionPlan) -> float:
    return float((~np.isnan(scores) * np.asarray(plan.run_costs, dtype=float)).sum())


def _next_step(plan: SelectionPlan, state: dict, runs: tuple[str, ...]) -> Look:
    """Continue with `runs` on the next partition, unless the planned partitions have all run or its predicted cost
    would take the spending past the budget."""
    if state["partitions"] >= plan.most:
        return Look(**state, outcome=MOST_REACHED)
    cost = sum(c for name, c in zip(plan.candidates, plan.run_costs) if name in runs)
    if state["spent"] + cost > plan.budget:
        return Look(**state, outcome=BUDGET)
    return Look(**state, next_runs=runs)


def select(plan: SelectionPlan, run_partition) -> tuple[Look, np.ndarray]:
    """Run the procedure: run_partition(index, names) -> {name: score} trains and scores the named candidates on
    partition `index` (0-based). Returns the final look and the (partitions, k) scores it decided on. Between looks
    no pair's figures change, so only the stopping rules are checked again there (the same look `decide` would
    make: tests/test_recipe_selection.py replays every selection it runs)."""
    k = len(plan.candidates)
    scores, counts = np.empty((0, k)), np.zeros((k, k), dtype=int)
    look = decide(scores, plan)
    while look.outcome == CONTINUE:
        results = run_partition(scores.shape[0], look.next_runs)
        row = np.array([float(results[name]) if name in look.next_runs else np.nan for name in plan.candidates])
        scores = np.vstack([scores, row])
        ran = ~np.isnan(row)
        counts = counts + np.outer(ran, ran)
        if np.array_equal(look_reached(plan, counts), look.common):  # no pair reached a look: the same figures
            state = {**{name: getattr(look, name) for name in ("mean", "bound", "common", "eliminated", "claimable")},
                     "partitions": scores.shape[0], "spent": _spent(scores, plan)}
            look = _next_step(plan, state, look.next_runs)
        else:
            look = decide(scores, plan)
    return look, scores


def replay(scores: np.ndarray, plan: SelectionPlan) -> Look:
    """Re-decide from recorded scores alone: every partition's runs must be the ones the look before it asked for
    (else ValueError, naming the first partition that differs); the final look."""
    scores = np.asarray(scores, dtype=float).reshape(-1, len(plan.candidates))
    for p in range(scores.shape[0]):
        look = decide(scores[:p], plan)
        ran = tuple(name for name, value in zip(plan.candidates, scores[p]) if not np.isnan(value))
        if look.outcome != CONTINUE or ran != look.next_runs:
            raise ValueError(f"partition {p + 1}: the records ran {list(ran)}, the procedure asked for "
                             f"{list(look.next_runs) or look.outcome}")
    return decide(scores, plan)
