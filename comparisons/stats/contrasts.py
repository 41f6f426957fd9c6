"""The declared contrasts of a report, and the one rule that orients every pair (framework-free).

A plan may name, before its runs, the pairs its report is about (`--contrasts`): a comma-separated list of
`A-B` pairs (A − B is the difference reported) or a named preset. Those pairs are the declared family: the
family correction runs over them only (comparisons/stats/family.correct_family); every other pair is
reported as exploratory. Without `--contrasts` every pair is the family.

Presets:
  course   the four questions of the course: the fine-tuned MiniLM against the scratch encoder and
           against the frozen MiniLM (what pretraining and fine-tuning buy), the scratch encoder against
           TF-IDF (what an encoder buys over the baseline), and the twins (Keras against PyTorch, the
           same model in two frameworks).

Orientation (`pair_order`): a declared pair keeps its declared orientation; any other pair has the later
variant of the plan as A and the earlier as B. Every file of a folder uses this one order, so a pair never
changes sign between verdicts.csv, the learning curve's and the page.

A variant name may hold a hyphen (`hf_bert:full`'s backends do not, but a plugin's may): a pair is split at
the hyphen whose two sides are both variants of the plan.
"""
from __future__ import annotations

from common.errors import UserInputError

PRESETS = {
    "course": (("hf_bert:full", "torch_scratch"), ("hf_bert:full", "hf_bert:frozen"),
               ("torch_scratch", "tfidf_logreg"), ("keras_layers", "torch_scratch")),
}
Pair = tuple[str, str]


def parse_contrasts(value: str | None, variants: list[str]) -> list[Pair] | None:
    """'course' or 'A-B,C-D' -> the declared pairs, checked against the plan's variants; None when not given.

    Raises UserInputError (one line: what is wrong and what to write instead) for a preset that does not
    exist, a pair naming a variant not in the plan, a pair with itself, or a pair given twice.
    """
    if value is None or not str(value).strip():
        return None
    planned = list(variants)
    pairs: list[Pair] = []
    for item in (part.strip() for part in str(value).split(",")):
        if not item:
            continue
        if "-" not in item:
            if item not in PRESETS:
                raise UserInputError(f"--contrasts {item!r}: no such preset; write one of {', '.join(PRESETS)} "
                                     "or pairs such as hf_bert:full-torch_scratch")
            missing = sorted({v for pair in PRESETS[item] for v in pair} - set(planned))
            if missing:
                raise UserInputError(f"--contrasts {item}: the preset compares {', '.join(missing)}, not in the plan "
                                     f"({', '.join(planned)}); add them to --backends or list the pairs you mean")
            pairs += list(PRESETS[item])
            continue
        pairs.append(_split_pair(item, planned))
    seen: set[frozenset] = set()
    for a, b in pairs:
        if a == b:
            raise UserInputError(f"--contrasts {a}-{b}: a pair of a variant with itself; name two different variants")
        key = frozenset((a, b))
        if key in seen:
            raise UserInputError(f"--contrasts names the pair {a} / {b} twice; give each pair once")
        seen.add(key)
    return pairs or None


def _split_pair(item: str, planned: list[str]) -> Pair:
    """'hf_bert:full-torch_scratch' -> ('hf_bert:full', 'torch_scratch'), both sides variants of the plan."""
    cuts = [i for i, char in enumerate(item) if char == "-"]
    for cut in cuts:
        a, b = item[:cut].strip(), item[cut + 1:].strip()
        if a in planned and b in planned:
            return a, b
    a, b = item[:cuts[0]].strip(), item[cuts[0] + 1:].strip()
    unknown = [v for v in (a, b) if v not in planned] or [item]
    raise UserInputError(f"--contrasts {item}: {', '.join(unknown)} is not a variant of the plan; write pairs of "
                         f"{', '.join(planned)} as A-B, comma-separated")


def as_pairs(recorded) -> list[Pair] | None:
    """The declared pairs as manifest.json / design.json record them ([[A, B], ...] or None)."""
    if not recorded:
        return None
    return [(str(a), str(b)) for a, b in recorded]


def pair_order(variants: list[str], contrasts: list[Pair] | None = None) -> list[Pair]:
    """Every pair of `variants` (plan order) as (A, B): the declared ones first, as declared; then the rest,
    the later variant of the plan as A. A declared pair whose variants did not both finish is left out."""
    present = list(dict.fromkeys(variants))
    declared = [(a, b) for a, b in (contrasts or []) if a in present and b in present]
    taken = {frozenset(pair) for pair in declared}
    rest = [(a, b) for i, b in enumerate(present) for a in present[i + 1:] if frozenset((a, b)) not in taken]
    return declared + rest


def contrast_label(pair: Pair, contrasts: list[Pair] | None) -> str:
    """'declared' (a pair of the declared family), 'exploratory' (outside it) or 'every pair' (none declared)."""
    if not contrasts:
        return "every pair"
    return "declared" if frozenset(pair) in {frozenset(p) for p in contrasts} else "exploratory"
