"""Attention map: what the last layer looked at for one test message, with redacted tokens.

The student trains a small torch_scratch classifier, asks it for `attention_maps` of one test
spam message and draws the last layer's weights, averaged over heads, as a heatmap: row = the
token that looks, column = the token looked at. Tick labels are the model's tokens with phone
numbers, links and e-mail addresses shown as <NUM>, <URL>, <EMAIL> (the raw message is never
printed or written). A map shows where weight went, not why the model decided: see
`comparisons.course.attention_deletion`.

    python -m comparisons.course.attention_map [--out DIR] [--lang en|zh] [--message N] [--quick]
"""
# %% imports
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.course.shared import (attention_figure, choose_message, course_parser, display_tokens,
                                       load_course_splits, report_written, run_course, scratch_config)
from comparisons.i18n import setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "attention_map"


# %% train the model to its best validation epoch
EPOCHS, QUICK_EPOCHS, PATIENCE = 20, 1, 4


def map_config(quick: bool, epochs: int | None) -> dict:
    """The course's small encoder, trained up to `epochs` with early stopping on validation AP."""
    return scratch_config(quick, epochs=epochs or (QUICK_EPOCHS if quick else EPOCHS), patience=PATIENCE)


def train_classifier(train, valid, seed: int, quick: bool, epochs: int | None = None):
    """Fit; the backend keeps the weights of the epoch with the best validation AP (common.selection)."""
    from backends.torch_scratch import TorchScratchBackend

    return TorchScratchBackend(config=map_config(quick, epochs), seed=seed, device="cpu",
                               progress=False).fit(train, valid)


def last_layer_mean(backend, message: str) -> tuple[list[str], np.ndarray]:
    """(model tokens, (T, T) last-layer weights averaged over heads) for one message."""
    tokens, per_layer = backend.attention_maps([message])
    length = len(tokens[0])
    weights = per_layer[-1][0].mean(axis=0)[:length, :length]  # (T, T)
    return tokens[0], weights


def flatness(weights: np.ndarray) -> float:
    """Mean row entropy over log(T): 1.0 is a uniform (flat) map, lower is more focused."""
    length = weights.shape[-1]
    if length < 2:
        return float("nan")
    entropy = -(weights * np.log(np.clip(weights, 1e-12, None))).sum(axis=-1)  # (T,)
    return float(entropy.mean() / np.log(length))


# %% main
def _run(args: argparse.Namespace) -> int:
    if args.epochs is not None and args.epochs < 1:
        raise UserInputError(f"--epochs {args.epochs} must be at least 1")
    setup_matplotlib(args.lang)
    train, valid, test = load_course_splits(args.quick)
    row = choose_message(test, args.message)
    message = test.texts[row]
    backend = train_classifier(train, valid, seed=0, quick=args.quick, epochs=args.epochs)
    info = backend.fit_info_
    best_epoch, epochs_run = info["best_epoch"], info["epochs_run"]
    print(text(f"best validation epoch {best_epoch} of {epochs_run} run (AP {info['best_valid_average_precision']:.4f})",
               f"验证集上最好的轮次 {best_epoch} (共训练 {epochs_run} 轮，AP {info['best_valid_average_precision']:.4f})",
               args.lang))
    tokens, weights = last_layer_mean(backend, message)
    labels = display_tokens(message, tokens)
    probability = float(backend.predict_proba([message])[0, 1])
    label_name = test.class_names[test.labels[row]]
    print(text(f"test message #{row} ({label_name}), shown redacted: {' '.join(labels)}",
               f"测试短信 #{row} ({label_name})，已脱敏显示：{' '.join(labels)}", args.lang))
    print(text(f"spam probability {probability:.3f}; rows of the map sum to 1",
               f"垃圾短信概率 {probability:.3f}；热图每行之和为 1", args.lang))
    received = weights.mean(axis=0)  # (T,) mean weight each token receives
    table = pd.DataFrame({
        text("position", "位置", args.lang): range(len(labels)),
        text("token (redacted)", "词 (已脱敏)", args.lang): labels,
        text("mean attention received", "平均被关注权重", args.lang): received,
    })
    flat = flatness(weights)
    print(text(f"flatness (mean row entropy / log T, 1 = uniform): {flat:.3f}",
               f"平坦度 (每行熵的均值 / log T，1 = 完全均匀)：{flat:.3f}", args.lang))
    title = text(f"last layer, mean over {backend.config_.num_heads} heads, epoch {best_epoch} (best on validation)\n"
                 f"test #{row}, p(spam) = {probability:.2f}, flatness {flat:.2f}",
                 f"最后一层，{backend.config_.num_heads} 个头的平均，第 {best_epoch} 轮 (验证集上最好)\n"
                 f"测试短信 #{row}，p(垃圾) = {probability:.2f}，平坦度 {flat:.2f}", args.lang)
    curve = pd.DataFrame({
        text("epoch", "轮次", args.lang): [h["epoch"] for h in info["history"]],
        text("validation AP", "验证集平均精度 (AP)", args.lang): [h["valid_average_precision"] for h in info["history"]],
        text("chosen", "选中", args.lang): ["*" if h["epoch"] == best_epoch else "" for h in info["history"]],
    })
    paths = [
        *write_table(table, args.out, "attention_received",
                     text("Mean attention each token receives (last layer)", "每个词平均被关注的权重 (最后一层)",
                          args.lang)),
        *write_table(curve, args.out, "training",
                     text("Validation AP per epoch; the map is drawn from the chosen (*) epoch",
                          "每轮的验证集 AP；热图来自选中 (*) 的轮次", args.lang)),
        save_figure(attention_figure(weights, labels, title, args.lang), args.out / "attention_map.png"),
        atomic_write_json(args.out / "summary.json", {
            "test_row": row, "label": label_name, "spam_probability": probability, "tokens_redacted": labels,
            "weights": weights, "flatness": flat, "best_epoch": best_epoch, "epochs_run": epochs_run,
            "history": info["history"], "config": map_config(args.quick, args.epochs),
        }),
    ]
    report_written(paths)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__)
    parser.add_argument("--message", type=int, default=None,
                        help="row of the test split to show (default: the first spam of 6-24 tokens)")
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"most epochs; validation AP chooses the best, early stop after {PATIENCE} without "
                             f"gain (default {EPOCHS}; {QUICK_EPOCHS} with --quick)")
    return run_course(parser, argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
