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


# %% train the model
def train_classifier(train, valid, seed: int, quick: bool):
    from backends.torch_scratch import TorchScratchBackend

    return TorchScratchBackend(config=scratch_config(quick), seed=seed, device="cpu", progress=False).fit(train, valid)


def last_layer_mean(backend, message: str) -> tuple[list[str], np.ndarray]:
    """(model tokens, (T, T) last-layer weights averaged over heads) for one message."""
    tokens, per_layer = backend.attention_maps([message])
    length = len(tokens[0])
    weights = per_layer[-1][0].mean(axis=0)[:length, :length]  # (T, T)
    return tokens[0], weights


# %% main
def _run(args: argparse.Namespace) -> int:
    setup_matplotlib(args.lang)
    train, valid, test = load_course_splits(args.quick)
    row = choose_message(test, args.message)
    message = test.texts[row]
    backend = train_classifier(train, valid, seed=0, quick=args.quick)
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
    title = text(f"last layer, mean over {backend.config_.num_heads} heads — test #{row}, p(spam) = {probability:.2f}",
                 f"最后一层，{backend.config_.num_heads} 个头的平均 — 测试短信 #{row}，p(垃圾) = {probability:.2f}",
                 args.lang)
    paths = [
        *write_table(table, args.out, "attention_received",
                     text("Mean attention each token receives (last layer)", "每个词平均被关注的权重 (最后一层)",
                          args.lang)),
        save_figure(attention_figure(weights, labels, title, args.lang), args.out / "attention_map.png"),
        atomic_write_json(args.out / "summary.json", {
            "test_row": row, "label": label_name, "spam_probability": probability, "tokens_redacted": labels,
            "weights": weights, "config": scratch_config(args.quick),
        }),
    ]
    report_written(paths)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__)
    parser.add_argument("--message", type=int, default=None,
                        help="row of the test split to show (default: the first spam of 6-24 tokens)")
    return run_course(parser, argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
