"""Do the twins stay together over a full run with dropout 0? (issue 11's open question)

    nice .venv/bin/python -m comparisons.studies.twin_drift [--seed 2] [--dropout 0.0]

Fits torch_scratch and keras_layers on the default split's full training part with the scratch
recipe (one vocabulary, one initial state, one batch order) at the given dropout, and prints each
one's per-epoch training loss and validation AP, the epoch validation chose, and test AP (scored
once, for this diagnosis only; no recipe choice reads it). On the tiny test data one epoch agrees to
1e-4 (tests/test_keras_layers.py); this shows whether that holds over 3 x 122 steps.

Measured on 2026-11-30 (seed 2, dropout 0, 2 threads, quiet machine): first-epoch loss 0.1222 (torch)
against 0.1175 (Keras), validation AP per epoch 0.9812 / 0.9875 / 0.9880 against 0.9807 / 0.9766 /
0.9789, test AP 0.9851 against 0.9816: they drift apart within the first epoch even without dropout.

Why (comparisons/studies/twin_steps.py, step by step): Keras clipped by a wrong global norm.
TensorFlow's embedding gradient is sparse (one row per token occurrence) and Keras's
clip_by_global_norm did not sum a token's repeats (6.358 against torch's 6.393 on step 0, up to
11% off later), so from step 1 every clipped step was scaled differently; their losses parted by
more than 1e-4 at step 12. Fixed in training.dense_gradients: losses now agree to 1e-5 up to step
21 and part by 1e-4 at step 30, which is float rounding amplified: torch against itself with
its initial weights scaled by 1 + 1e-5 N(0, 1) parts at step 34 (1e-7: step 46), and its
first-epoch loss moves from 0.1222 to 0.1175..0.1206 over six such perturbations (1e-7 to 1e-5).
After the fix (same command, 2026-11-30): first-epoch loss 0.1222 against 0.1180, validation AP
0.9812 / 0.9875 / 0.9880 against 0.9789 / 0.9865 / 0.9912, test AP 0.9851 against 0.9856.
"""
from __future__ import annotations

import json

from common.arguments import OneLineParser
from backends.keras_layers.backend import KerasLayersBackend
from backends.torch_scratch.backend import TorchScratchBackend
from common.datasets import load_sms_spam
from common.metrics import classification_metrics
from common.recipe import RECIPE
from common.splits import stratified_split


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.0)
    args = parser.parse_args()
    data = load_sms_spam()
    split = stratified_split(data)
    train, valid, test = (data.subset(getattr(split, name)) for name in ("train", "valid", "test"))
    for make in (TorchScratchBackend, KerasLayersBackend):
        model = make(config={"dropout": args.dropout}, seed=args.seed, tokenizer=RECIPE["tokenizer"],
                     progress=False).fit(train, valid)
        scores = model.predict_proba(test.texts)
        print(json.dumps({
            "backend": make.__name__, "seed": args.seed, "dropout": args.dropout,
            "train_loss": [round(h["train_loss"], 5) for h in model.fit_info_["history"]],
            "valid_ap": [round(h["valid_average_precision"], 5) for h in model.fit_info_["history"]],
            "best_epoch": model.fit_info_["best_epoch"],
            "test_ap": round(classification_metrics(test.labels, scores, data.positive_index)["average_precision"], 5),
        }), flush=True)


if __name__ == "__main__":
    main()
