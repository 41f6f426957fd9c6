"""Padding ablation: with correct masks, padding changes nothing; without them, predictions move.

The student trains a small torch_scratch classifier, then feeds the same test messages padded
to 32, 64 and 128 tokens, twice with the same weights: once as the model is meant to run (the key
mask gives <pad> zero attention weight, mean pooling divides by the number of real tokens) and
once with `ignore_padding=True` (no key mask, pooling divides by T, so padding counts as text).
Each message alone, with no padding at all, is the reference: there the two runs agree.

    python -m comparisons.course.padding_ablation [--out DIR] [--lang en|zh] [--seeds 1] [--quick]
"""
# %% [markdown]
# # 第 4 课　填充与掩码：掩码正确时，填充什么也不改变；没有掩码，预测就会漂移
#
# 一个批次里的短信长短不一，要用填充符 `<pad>` 补齐到同一长度 $T$。填充不是文字，模型必须忽略它，
# 靠两处**掩码** (mask)：
# 1. **键掩码** (key padding mask)：在 softmax 之前把填充位置的得分设为 $-\infty$，于是填充得到的注意力权重为 0；
# 2. **带掩码的平均池化** (masked mean pooling)：句子向量 $= \frac{1}{n}\sum_{t \le n} h_t$，只除以真实词元数 $n$，而不是 $T$。
#
# 本课训练一个小分类器，然后把同样的测试短信分别填充到 32、64、128 个词元，用**同一组权重**跑两遍：
# 一遍带掩码 (模型本来的用法)，一遍 `ignore_padding=True` (不用键掩码，池化除以 $T$)。
# 参照是每条短信单独输入、完全不填充时的垃圾短信概率。
#
# <!-- en -->
# # Lesson 4. Padding and masks: with correct masks padding changes nothing; without them predictions drift
#
# Messages in a batch differ in length, so they are padded with `<pad>` to one length $T$. Padding is not
# text and the model must ignore it, through two **masks**:
# 1. the **key padding mask**: before the softmax, scores of padded positions are set to $-\infty$, so padding gets zero attention weight;
# 2. **masked mean pooling**: the message vector is $\frac{1}{n}\sum_{t \le n} h_t$, divided by the number of real tokens $n$, not by $T$.
#
# The lesson trains a small classifier and feeds the same test messages padded to 32, 64 and 128 tokens
# with **the same weights**, twice: with the masks (as the model is meant to run) and with
# `ignore_padding=True` (no key mask, pooling divides by $T$). The reference is each message alone, not padded at all.

# %% imports
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common.errors import UserInputError
from common.vocabulary import tokenize
from comparisons.course.shared import (course_parser, load_course_splits, report_written, run_course,
                                       scratch_config)
from comparisons.report.i18n import setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "padding_ablation"
PAD_LENGTHS = (32, 64, 128)
MODES = ("masked", "ignore_padding")


# %% train the classifier (the torch_scratch backend, unchanged)
def train_classifier(train, valid, seed: int, quick: bool, max_len: int):
    from backends.torch_scratch import TorchScratchBackend

    config = scratch_config(quick, max_len=max_len)
    return TorchScratchBackend(config=config, seed=seed, device="cpu", choose_on="validation",
                               progress=False).fit(train, valid)


# %% [markdown]
# ## 1. 同一组权重，带掩码或不带掩码，算垃圾短信概率
#
# `padding_shifts` 对每个填充长度和每种模式，计算概率相对参照的变化 $|\Delta p|$ 的最大值、平均值，
# 以及以 0.5 为阈值时判定翻转的短信数。
#
# <!-- en -->
# ## 1. The same weights, with or without the masks: spam probabilities
#
# For each padding length and mode, `padding_shifts` measures how far the probability moves from the
# reference: max and mean $|\Delta p|$, and how many decisions flip at the 0.5 cut-off.

# %% spam probability of ids, with or without the masks
def spam_probability(backend, ids: np.ndarray, ignore_padding: bool) -> np.ndarray:
    """(n,) positive-class probability for (n, T) ids, straight through the fitted model."""
    import torch

    model = backend.model_.eval()
    with torch.inference_mode():
        logits = model(torch.as_tensor(ids, device=backend.device_), ignore_padding=ignore_padding)
        return torch.softmax(logits.double(), dim=-1)[:, 1].cpu().numpy()


def unpadded_probability(backend, texts, ignore_padding: bool) -> np.ndarray:
    """Each text alone, exactly as long as its tokens: no padding anywhere (the reference)."""
    probabilities = []
    for text_ in texts:
        length = max(1, len(tokenize(text_)))
        ids = backend.vocabulary_.encode([text_], length)  # (1, length), no <pad>
        probabilities.append(spam_probability(backend, ids, ignore_padding)[0])
    return np.array(probabilities)


def padding_shifts(backend, texts, pad_lengths) -> list[dict]:
    """For each padding length and mode: how far the spam probability moves from the unpadded one."""
    rows = []
    reference = {mode: unpadded_probability(backend, texts, mode == "ignore_padding") for mode in MODES}
    lengths = np.array([len(tokenize(t)) for t in texts])
    for pad_length in pad_lengths:
        ids = backend.vocabulary_.encode(texts, pad_length)  # (n, pad_length), right-padded with 0
        for mode in MODES:
            probability = spam_probability(backend, ids, mode == "ignore_padding")
            shift = probability - reference[mode]
            rows.append({
                "pad_length": pad_length, "mode": mode, "mean_pad_tokens": float((pad_length - lengths).mean()),
                "max_abs_shift": float(np.abs(shift).max()), "mean_abs_shift": float(np.abs(shift).mean()),
                "flipped": int(((probability >= 0.5) != (reference[mode] >= 0.5)).sum()),
                "probability": probability, "reference": reference[mode],
            })
    return rows


# %% [markdown]
# ## 2. 图：填充越多，不带掩码的预测漂得越远
#
# **怎样读图**：左图横轴是填充到的长度，纵轴是概率的最大变化 $|\Delta p|$。带掩码的曲线贴近 0
# (只有浮点舍入误差)，不带掩码的曲线随填充增多而上升。右图每个点是一条测试短信：横轴是无填充的概率，
# 纵轴是填充后的概率；落在对角线上表示没有变化，偏离对角线表示填充改变了预测。
#
# <!-- en -->
# ## 2. Figure: the more padding, the further the unmasked predictions drift
#
# **How to read it**: on the left, x is the padded length and y the largest $|\Delta p|$. The masked
# curve stays near 0 (floating-point rounding only); the unmasked one rises with more padding. On the
# right each dot is a test message: x its probability without padding, y with padding. On the diagonal
# means unchanged; off it, padding changed the prediction.

# %% figure
def shift_figure(frame: pd.DataFrame, example: dict, lang: str):
    """Left: max |Δp| per padding length, both modes (log scale). Right: p unpadded vs p padded."""
    import matplotlib.pyplot as plt

    names = {"masked": text("correct masks", "正确的掩码", lang),
             "ignore_padding": text("masks removed (ignore_padding)", "去掉掩码 (ignore_padding)", lang)}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for mode, marker in zip(MODES, "os"):
        rows = frame[frame["mode"] == mode].groupby("pad_length")["max_abs_shift"].max()
        left.plot(rows.index, rows.to_numpy().clip(min=1e-12), marker=marker, label=names[mode])
    left.set_xscale("log", base=2)
    left.set_xticks(sorted(frame["pad_length"].unique()), [str(n) for n in sorted(frame["pad_length"].unique())])
    left.set_yscale("log")
    left.set_xlabel(text("padded to length", "填充到的长度", lang))
    left.set_ylabel(text("max |Δ spam probability|", "垃圾短信概率的最大变化 |Δp|", lang))
    left.set_title(text("same weights, same messages, more padding", "同样的权重和短信，只是填充更多", lang))
    left.grid(alpha=0.3, which="both")
    left.legend(fontsize=8)
    for mode, marker in zip(MODES, "os"):
        right.scatter(example[mode]["reference"], example[mode]["probability"], s=10, marker=marker,
                      alpha=0.6, label=names[mode])
    right.plot([0, 1], [0, 1], "k--", linewidth=0.8)
    right.set_xlabel(text("spam probability, no padding", "垃圾短信概率 (无填充)", lang))
    right.set_ylabel(text(f"spam probability, padded to {example['pad_length']}",
                          f"垃圾短信概率 (填充到 {example['pad_length']})", lang))
    right.set_title(text("each dot is one test message", "每个点是一条测试短信", lang))
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 练习
#
# 1. 表中带掩码一行的最大 $|\Delta p|$ 是多少？它为什么不是严格的 0？
# 2. 不带掩码时，填充到 128 有多少条短信的判定翻转？短短信还是长短信受影响更大？为什么？
# 3. 只去掉键掩码、保留带掩码的池化 (或反过来)，你预计哪一个影响更大？
#
# 运行：`python -m comparisons.course.padding_ablation --lang zh [--seeds 1]`。
#
# <!-- en -->
# ## Exercises
#
# 1. What is the largest $|\Delta p|$ in the masked rows? Why is it not exactly 0?
# 2. Without masks, how many decisions flip at length 128? Are short or long messages hurt more, and why?
# 3. Dropping only the key mask but keeping masked pooling (or the reverse): which would you expect to matter more?
#
# Run: `python -m comparisons.course.padding_ablation [--seeds 1]`.

# %% main
def _headers(lang: str) -> dict[str, str]:
    return {
        "seed": text("seed", "随机种子", lang), "pad_length": text("padded to", "填充到的长度", lang),
        "mode": text("mode", "模式", lang), "mean_pad_tokens": text("mean <pad> tokens", "平均填充数", lang),
        "max_abs_shift": text("max |Δp|", "最大 |Δp|", lang), "mean_abs_shift": text("mean |Δp|", "平均 |Δp|", lang),
        "flipped": text("decisions flipped (p ≥ 0.5)", "判定翻转数 (p ≥ 0.5)", lang),
    }


def _run(args: argparse.Namespace) -> int:
    pad_lengths = tuple(sorted(args.pad_lengths))
    if min(pad_lengths) < 1:
        raise UserInputError("--pad-lengths must be positive, e.g. --pad-lengths 32 64 128")
    setup_matplotlib(args.lang)
    train, valid, test = load_course_splits(args.quick)
    # only messages that fit the shortest length, so no padding length truncates anything
    texts = [t for t in test.texts if 1 <= len(tokenize(t)) <= min(pad_lengths)]
    if not texts:
        raise UserInputError(f"no test message has at most {min(pad_lengths)} tokens; raise --pad-lengths")
    print(text(f"{len(texts)} of {len(test)} test messages fit in {min(pad_lengths)} tokens",
               f"{len(test)} 条测试短信中有 {len(texts)} 条不超过 {min(pad_lengths)} 个词", args.lang))
    rows, example = [], None
    for seed in range(args.seeds):
        backend = train_classifier(train, valid, seed, args.quick, max_len=max(pad_lengths))
        for row in padding_shifts(backend, texts, pad_lengths):
            if seed == 0 and row["pad_length"] == max(pad_lengths):
                example = example or {"pad_length": row["pad_length"]}
                example[row["mode"]] = row
            rows.append({"seed": seed, **row})
    frame = pd.DataFrame([{k: v for k, v in r.items() if k not in ("probability", "reference")} for r in rows])
    print(frame.to_string(index=False))
    masked = frame[frame["mode"] == "masked"]["max_abs_shift"].max()
    broken = frame[frame["mode"] == "ignore_padding"]["max_abs_shift"].max()
    print(text(f"correct masks: max |Δp| = {masked:.1e} (rounding); masks removed: max |Δp| = {broken:.3f}",
               f"正确掩码：最大 |Δp| = {masked:.1e} (舍入误差)；去掉掩码：最大 |Δp| = {broken:.3f}", args.lang))
    paths = [
        *write_table(frame.rename(columns=_headers(args.lang)), args.out, "padding_shift",
                     text("Spam probability shift from padding, same weights", "填充引起的垃圾短信概率变化 (同一组权重)",
                          args.lang), float_format="{:.3g}"),
        save_figure(shift_figure(frame, example, args.lang), args.out / "padding_ablation.png"),
        atomic_write_json(args.out / "summary.json", {
            "messages": len(texts), "pad_lengths": list(pad_lengths), "seeds": args.seeds,
            "config": scratch_config(args.quick, max_len=max(pad_lengths)),
            "max_abs_shift_masked": float(masked), "max_abs_shift_ignore_padding": float(broken),
            "rows": frame.to_dict(orient="records"),
        }),
    ]
    report_written(paths)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=1)
    parser.add_argument("--pad-lengths", type=int, nargs="+", default=list(PAD_LENGTHS),
                        help=f"lengths to pad to (default {' '.join(map(str, PAD_LENGTHS))})")
    return run_course(parser, argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
