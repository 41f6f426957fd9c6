"""Attention map: what the last layer looked at for one test message, with redacted tokens.

The student trains the small torch_scratch classifier twice, pooled by a masked mean and by a
[CLS] token, asks each for `attention_maps` of one test spam message and draws the last layer's
weights, averaged over heads, as heatmaps: row = the token that looks, column = the token looked at.
Flatness (mean row entropy over log T) says how far each map is from uniform; the text reads it, it
does not promise a pattern. Tick labels are the model's tokens with phone
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
# 模型最多训练 20 轮，在验证集上按平均精度 (AP) 选出**最好的轮次** (连续 4 轮没有提高就停止)，画的是这一轮的权重。
# **平坦度** (每行权重的熵除以 $\log T$) 量化热图有多平：1 表示完全均匀，越小越集中。本课把同一个小模型训练两次：
# 一次用课程一直用的**带掩码的平均池化**，一次用 **[CLS] 池化** (只用 `<cls>` 这个位置的输出来分类)，两张图并排。
# 平均池化本来就把每个词的向量都平均进去，模型不必靠注意力挑词；初始化很小 ($N(0, 0.02)$) 又有权重衰减，
# 查询与键的得分一直很小，所以它的图往往接近均匀。[CLS] 池化的模型只看 `<cls>` 一个向量，人们常期望训练会推动
# `<cls>` 这一行去挑选有用的词。提交的运行测得的并非如此：两张图都几乎均匀 (平坦度：平均池化 0.998，[CLS] 池化
# 1.000，`<cls>` 那一行 0.999)，`<cls>` 行权重最高的三个词只在小数点后第四位上领先。这个小模型不靠尖锐的注意力也能
# 分对这条短信 (p(垃圾) 0.995 与 0.94)：一层、两个头、很小的初始化，值向量本身就带着信息。所以不要指望在热图上
# 看到"亮的一列"，也不要把这种图当作解释。
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
# The model trains up to 20 epochs and validation average precision (AP) chooses the **best epoch** (early
# stopping after 4 epochs without gain); the map is that epoch's. **Flatness** (mean row entropy over $\log T$)
# says how flat a map is: 1 is uniform, lower is more focused. The same small model is trained twice: with the
# **masked mean pooling** the course has used so far, and with **[CLS] pooling** (only the `<cls>` position's
# output is classified), the two maps side by side. Mean pooling averages every token's vector anyway, so the
# model need not pick tokens with attention; its small initial weights ($N(0, 0.02)$) and weight decay keep
# query-key scores small, so its map tends to be near-uniform. A [CLS]-pooled model reads one vector, and one
# would expect training to push the `<cls>` row to pick useful tokens. The committed run measures otherwise: both
# maps are near-uniform (flatness 0.998 with mean pooling, 1.000 with [CLS] pooling, the `<cls>` row 0.999), and
# the three tokens the `<cls>` row weights most lead only in the fourth decimal. This small model classifies the
# message right without sharp attention (p(spam) 0.995 and 0.94): one layer, two heads, small initial weights, and
# the value vectors carry the information. So expect no "bright column" here, and do not read such a map as an
# explanation.
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


POOLINGS = ("mean", "cls")


def map_config(quick: bool, epochs: int | None, pooling: str = "mean") -> dict:
    """The course's small encoder, trained up to `epochs` with early stopping on validation AP."""
    return scratch_config(quick, epochs=epochs or (QUICK_EPOCHS if quick else EPOCHS), patience=PATIENCE,
                          pooling=pooling)


def train_classifier(train, valid, seed: int, quick: bool, epochs: int | None = None, pooling: str = "mean"):
    """Fit; the backend keeps the weights of the epoch with the best validation AP (common.selection)."""
    from backends.torch_scratch import TorchScratchBackend

    return TorchScratchBackend(config=map_config(quick, epochs, pooling), seed=seed, device="cpu",
                               choose_on="validation", progress=False).fit(train, valid)  # validation's epoch


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
# **怎样读图**：每一行之和为 1。一整列颜色都很亮，说明几乎所有词都在关注这个词；颜色处处相近说明注意力是平的。
# 左图是平均池化的模型，右图是 [CLS] 池化的模型 (第一行是 `<cls>` 的查询，分类只用它)。标题给出选中的轮次、
# 垃圾短信概率和平坦度；程序还打印 `<cls>` 这一行权重最大的三个词 (已脱敏)。`training` 表列出每一轮的验证集 AP。
#
# **练习**
# 1. 两张图的平坦度各是多少？[CLS] 池化让 `<cls>` 那一行更集中了吗？用 `--epochs 1` 再跑一次比较。
# 2. 哪几个词得到的平均关注最多 (看 `attention_received` 表)？它们是你认为"像垃圾短信"的词吗？
# 3. 换一条短信 (`--message N`)，模式还一样吗？一张图能说明模型的"理由"吗？
#
# 运行：`python -m comparisons.course.attention_map --lang zh [--message N] [--epochs 20]`。
#
# <!-- en -->
# ## 2. How to read the figure, and exercises
#
# **How to read it**: every row sums to 1. A bright column means almost every token attends to that one;
# similar colours everywhere mean flat attention. Left, the mean-pooled model; right, the [CLS]-pooled one (its
# first row is the `<cls>` query, the only one classified). Titles give the chosen epoch, the spam probability and
# the flatness; the printout names the three tokens the `<cls>` row weights most (redacted). The `training` table
# lists validation AP per epoch.
#
# **Exercises**
# 1. What is each map's flatness? Did [CLS] pooling make the `<cls>` row sharper? Compare with `--epochs 1`.
# 2. Which tokens receive the most attention on average (`attention_received` table)? Are they the ones you would call spammy?
# 3. Pick another message (`--message N`): is the pattern the same? Can one map tell the model's "reason"?
#
# Run: `python -m comparisons.course.attention_map [--message N] [--epochs 20]`.

# %% main
def one_map(train, valid, message: str, quick: bool, epochs: int | None, pooling: str) -> dict:
    """Train one pooling; its last-layer map of `message` (heads averaged), redacted tokens and flatness."""
    backend = train_classifier(train, valid, seed=0, quick=quick, epochs=epochs, pooling=pooling)
    tokens, weights = last_layer_mean(backend, message)
    labels = display_tokens(message, tokens)
    info = backend.fit_info_
    result = {"pooling": pooling, "backend": backend, "weights": weights, "labels": labels,
              "flatness": flatness(weights), "probability": float(backend.predict_proba([message])[0, 1]),
              "best_epoch": info["best_epoch"], "epochs_run": info["epochs_run"], "history": info["history"],
              "best_valid_average_precision": info["best_valid_average_precision"]}
    if pooling == "cls":  # the one query that is classified: its row, and the tokens it weights most
        row = weights[0]
        result["cls_row_flatness"] = flatness(row[None, :])
        result["cls_row_top"] = [labels[i] for i in np.argsort(-row)[:3]]
    return result


def _run(args: argparse.Namespace) -> int:
    if args.epochs is not None and args.epochs < 1:
        raise UserInputError(f"--epochs {args.epochs} must be at least 1")
    setup_matplotlib(args.lang)
    lang = args.lang
    train, valid, test = load_course_splits(args.quick)
    row = choose_message(test, args.message)
    message = test.texts[row]
    label_name = test.class_names[test.labels[row]]
    maps = {pooling: one_map(train, valid, message, args.quick, args.epochs, pooling) for pooling in POOLINGS}
    mean, cls = maps["mean"], maps["cls"]
    for result in maps.values():
        print(text(f"{result['pooling']} pooling: best validation epoch {result['best_epoch']} of "
                   f"{result['epochs_run']} (AP {result['best_valid_average_precision']:.4f}), spam probability "
                   f"{result['probability']:.3f}, flatness {result['flatness']:.3f}",
                   f"{result['pooling']} 池化：验证集上最好的轮次 {result['best_epoch']} (共 {result['epochs_run']} 轮，"
                   f"AP {result['best_valid_average_precision']:.4f})，垃圾短信概率 {result['probability']:.3f}，"
                   f"平坦度 {result['flatness']:.3f}", lang))
    print(text(f"test message #{row} ({label_name}), shown redacted: {' '.join(mean['labels'])}",
               f"测试短信 #{row} ({label_name})，已脱敏显示：{' '.join(mean['labels'])}", lang))
    reading = text(f"flatness (1 = uniform): mean pooling {mean['flatness']:.3f}, [CLS] pooling {cls['flatness']:.3f}, "
                   f"its <cls> row {cls['cls_row_flatness']:.3f}; the <cls> row weights most: "
                   f"{', '.join(cls['cls_row_top'])}",
                   f"平坦度 (1 = 完全均匀)：平均池化 {mean['flatness']:.3f}，[CLS] 池化 {cls['flatness']:.3f}，"
                   f"其中 <cls> 这一行 {cls['cls_row_flatness']:.3f}；<cls> 这一行权重最大的词：{'、'.join(cls['cls_row_top'])}",
                   lang)
    print(reading)
    table = pd.DataFrame({
        text("position", "位置", lang): range(len(mean["labels"])),
        text("token (redacted)", "词 (已脱敏)", lang): mean["labels"],
        text("mean attention received", "平均被关注权重", lang): mean["weights"].mean(axis=0),
    })
    curve = pd.DataFrame([{text("pooling", "池化", lang): result["pooling"],
                           text("epoch", "轮次", lang): h["epoch"],
                           text("validation AP", "验证集平均精度 (AP)", lang): h["valid_average_precision"],
                           text("chosen", "选中", lang): "*" if h["epoch"] == result["best_epoch"] else ""}
                          for result in maps.values() for h in result["history"]])
    import matplotlib.pyplot as plt

    size = 3.0 + 0.28 * len(cls["labels"])
    figure, axes = plt.subplots(1, 2, figsize=(2 * size + 2.0, size))
    for axis, result in zip(axes, maps.values()):
        heads = result["backend"].config_.num_heads
        title = text(f"{result['pooling']} pooling: last layer, mean over {heads} heads, epoch {result['best_epoch']}\n"
                     f"test #{row}, p(spam) = {result['probability']:.2f}, flatness {result['flatness']:.2f}",
                     f"{result['pooling']} 池化：最后一层，{heads} 个头的平均，第 {result['best_epoch']} 轮\n"
                     f"测试短信 #{row}，p(垃圾) = {result['probability']:.2f}，平坦度 {result['flatness']:.2f}", lang)
        attention_figure(result["weights"], result["labels"], title, lang, ax=axis)
    figure.tight_layout()
    paths = [
        *write_table(table, args.out, "attention_received",
                     text("Mean attention each token receives (last layer, mean pooling)",
                          "每个词平均被关注的权重 (最后一层，平均池化)", lang)),
        *write_table(curve, args.out, "training",
                     text("Validation AP per epoch and pooling; each map is drawn from its chosen (*) epoch",
                          "每种池化每轮的验证集 AP；热图来自选中 (*) 的轮次", lang)),
        save_figure(figure, args.out / "attention_map.png"),
        atomic_write_json(args.out / "summary.json", {
            "test_row": row, "label": label_name, "spam_probability": mean["probability"],
            "tokens_redacted": mean["labels"], "weights": mean["weights"], "flatness": mean["flatness"],
            "best_epoch": mean["best_epoch"], "epochs_run": mean["epochs_run"], "history": mean["history"],
            "config": map_config(args.quick, args.epochs),
            "cls": {key: cls[key] for key in ("labels", "weights", "flatness", "cls_row_flatness", "cls_row_top",
                                              "probability", "best_epoch", "epochs_run")},
            "reading": reading,
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
