"""Attention map: what the last layer looked at for one test message, with redacted tokens.

The student trains a small torch_scratch classifier, asks it for `attention_maps` of one test
spam message and draws the last layer's weights, averaged over heads, as a heatmap: row = the
token that looks, column = the token looked at. Tick labels are the model's tokens with phone
numbers, links and e-mail addresses shown as <NUM>, <URL>, <EMAIL> (the raw message is never
printed or written). A map shows where weight went, not why the model decided: see
`comparisons.course.attention_deletion`.

    python -m comparisons.course.attention_map [--out DIR] [--lang en|zh] [--message N] [--quick]
"""
# %% [markdown]
# # 第 9 课　注意力图：最后一层看了哪里
#
# 训练一个小的从零实现的分类器，取一条测试垃圾短信在**最后一层**的注意力权重，把各头取平均，
# 画成热图：行是发出关注的词 (查询)，列是被关注的词 (键)。坐标轴上的词经过脱敏：电话号码、链接、
# 邮箱显示为 `<NUM>`、`<URL>`、`<EMAIL>`，原文从不输出。
#
# 只训练一两轮的模型几乎均匀地关注每个词，热图是"平的"，看不出什么。所以本课让模型最多训练 20 轮，
# 在验证集上按平均精度 (AP) 选出**最好的轮次** (validation early stopping，连续 4 轮没有提高就停止)，
# 画的是这一轮的权重。我们还用**平坦度** (每行权重的熵除以 $\log T$) 量化热图有多平：1 表示完全均匀，越小越集中。
#
# 注意：注意力图显示权重流向了哪里，**不**说明模型为什么这样判定 (见第 10 课)。
#
# <!-- en -->
# # Lesson 9. The attention map: where the last layer looked
#
# A small scratch classifier is trained; for one test spam message its **last layer's** attention
# weights, averaged over heads, are drawn as a heatmap: rows are the tokens that look (queries), columns
# the tokens looked at (keys). Tick labels are redacted: phone numbers, links and e-mails appear as
# `<NUM>`, `<URL>`, `<EMAIL>`; the raw message is never printed or written.
#
# A model trained for one or two epochs attends almost uniformly and its map is flat. So the lesson trains
# up to 20 epochs and validation average precision (AP) chooses the **best epoch** (early stopping after 4
# epochs without gain); the map is that epoch's. **Flatness** (mean row entropy over $\log T$) says how flat
# the map is: 1 is uniform, lower is more focused.
#
# A map shows where weight went, **not** why the model decided (see lesson 10).

# %% imports
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.course.shared import (attention_figure, choose_message, course_parser, display_tokens,
                                       load_course_splits, report_written, run_course, scratch_config)
from comparisons.report.i18n import setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "attention_map"


# %% [markdown]
# ## 1. 训练到验证集上最好的轮次，取最后一层的权重
#
# `train_classifier` 使用套件的 `torch_scratch` 后端：每轮结束在验证集上计算 AP，保留最好一轮的权重
# (`common.selection.BestEpoch`)。`last_layer_mean` 取出最后一层 $(H, T, T)$ 的权重并对头取平均，得到 $(T, T)$。
# `flatness` 计算平坦度 $\frac{1}{T}\sum_t \frac{-\sum_s w_{ts}\log w_{ts}}{\log T}$。
#
# <!-- en -->
# ## 1. Train to the best validation epoch, take the last layer's weights
#
# `train_classifier` uses the suite's `torch_scratch` backend: after every epoch it scores validation AP
# and keeps the best epoch's weights (`common.selection.BestEpoch`). `last_layer_mean` takes the last
# layer's $(H, T, T)$ weights and averages the heads into $(T, T)$. `flatness` is
# $\frac{1}{T}\sum_t \frac{-\sum_s w_{ts}\log w_{ts}}{\log T}$.

# %% train the model to its best validation epoch
EPOCHS, QUICK_EPOCHS, PATIENCE = 20, 1, 4


def map_config(quick: bool, epochs: int | None) -> dict:
    """The course's small encoder, trained up to `epochs` with early stopping on validation AP."""
    return scratch_config(quick, epochs=epochs or (QUICK_EPOCHS if quick else EPOCHS), patience=PATIENCE)


def train_classifier(train, valid, seed: int, quick: bool, epochs: int | None = None):
    """Fit; the backend keeps the weights of the epoch with the best validation AP (common.selection)."""
    from backends.torch_scratch import TorchScratchBackend

    return TorchScratchBackend(config=map_config(quick, epochs), seed=seed, device="cpu", choose_on="validation",
                               progress=False).fit(train, valid)  # the lesson shows the epoch validation keeps


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


# %% [markdown]
# ## 2. 怎样读图，以及练习
#
# **怎样读图**：每一行之和为 1。一整列颜色都很亮，说明几乎所有词都在关注这个词 (比如 `<NUM>` 或 "free"
# 这类垃圾短信常见词)；颜色处处相近说明注意力是平的。标题给出选中的轮次、垃圾短信概率和平坦度；
# `training` 表列出每一轮的验证集 AP，星号是选中的一轮。
#
# **练习**
# 1. 用 `--epochs 1` 再跑一次，比较两次的平坦度和热图。训练更久的模型注意力更集中吗？
# 2. 哪几个词得到的平均关注最多 (看 `attention_received` 表)？它们是你认为"像垃圾短信"的词吗？
# 3. 换一条短信 (`--message N`)，模式还一样吗？一张图能说明模型的"理由"吗？
#
# 运行：`python -m comparisons.course.attention_map --lang zh [--message N] [--epochs 20]`。
#
# <!-- en -->
# ## 2. How to read the figure, and exercises
#
# **How to read it**: every row sums to 1. A bright column means almost every token attends to that one
# (often `<NUM>` or a spam word such as "free"); similar colours everywhere mean flat attention. The title
# gives the chosen epoch, the spam probability and the flatness; the `training` table lists validation
# AP per epoch, with a star on the chosen one.
#
# **Exercises**
# 1. Run again with `--epochs 1` and compare flatness and map. Does the longer-trained model attend more sharply?
# 2. Which tokens receive the most attention on average (`attention_received` table)? Are they the ones you would call spammy?
# 3. Pick another message (`--message N`): is the pattern the same? Can one map tell the model's "reason"?
#
# Run: `python -m comparisons.course.attention_map [--message N] [--epochs 20]`.

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
