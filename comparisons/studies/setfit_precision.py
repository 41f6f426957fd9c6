"""Why hf_bert:setfit trains in fp32 under `--precision auto` (the recipe audit found it below the library).

`python -m comparisons.studies.setfit_precision --config bf16` (then fp32, defaults)

The recipe audit (comparisons/studies/recipe_audit.py) put the SetFit variant, run in bf16, 0.03-0.05 AP below
setfit's defaults (fp32) on 5 of the learning curve's 50-label draws. Which difference is it? Here, on two of those
draws (r0f0 draw 2, r0f1 draw 3: the widest gaps), the variant in bf16, the variant in fp32 and the library's
defaults (comparisons/studies/recipe_audit.setfit_peer) are scored on 1,500 labelled SMS texts of the partition's
training and validation parts outside the draw: never a test fold. One line per fit: config, partition, draw,
AP, seconds (fit and scoring). The figures of 5 December 2026 (2-core Xeon, quiet): bf16 0.9177 / 0.8921
(87 / 85 s), fp32 0.9500 / 0.9559 (127 / 128 s), defaults 0.9488 / 0.9499 (107 / 108 s): bf16 is the gap.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from common.arguments import OneLineParser
from common.datasets import DataSpec, load
from common.metrics import classification_metrics
from comparisons.run_folder.names import PARTITIONS
from comparisons.run_folder.records import SplitsRecord

DRAWS = (("r0f0", "2"), ("r0f1", "3"))
HELD_OUT = 1500


def main(argv=None) -> int:
    from backends.base import build
    from comparisons.studies.recipe_audit import setfit_peer

    parser = OneLineParser(prog="python -m comparisons.studies.setfit_precision", description=__doc__.splitlines()[0])
    parser.add_argument("--config", choices=("bf16", "fp32", "defaults"), required=True)
    parser.add_argument("--curve", default="results/learning_curve")
    args = parser.parse_args(argv)
    data = load(DataSpec())
    for partition, key in DRAWS:
        record = SplitsRecord.read(Path(args.curve) / PARTITIONS / partition).to_dict()
        draw = record["train_subsets"]["draws"]["50"][key]
        budget = set(draw["train"] + draw["valid"])
        pool = [i for i in record["train"] + record["valid"] if i not in budget]  # labelled, not the test fold
        held_out = data.subset(sorted(np.random.default_rng(0).choice(pool, HELD_OUT, replace=False).tolist()))
        started = time.perf_counter()
        if args.config == "defaults":
            texts = data.subset(draw["train"] + draw["valid"])
            proba = setfit_peer(list(texts.texts), np.asarray(texts.labels), list(held_out.texts), seed=int(key))
        else:
            model = build("hf_bert:setfit", seed=int(key), precision=args.config, progress=False)
            proba = model.fit(data.subset(draw["train"]), data.subset(draw["valid"])).predict_proba(held_out.texts)
        ap = classification_metrics(held_out.labels, proba, held_out.positive_index)["average_precision"]
        print(args.config, partition, key, round(ap, 4), round(time.perf_counter() - started, 1), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
