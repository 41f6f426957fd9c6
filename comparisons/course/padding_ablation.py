"""Padding ablation: with correct masks, padding changes nothing; without them, predictions move.

The student trains a small torch_scratch classifier, then feeds the same test messages padded
to 32, 64 and 128 tokens, four times with the same weights: as the model is meant to run (the key
mask gives <pad> zero attention weight, mean pooling divides by the number of real tokens), with
`ignore_padding=True` (no key mask, pooling divides by T, so padding counts as text), and with each
half of that bug alone (`"keys"`: no key mask, masked pooling; `"pooling"`: key mask, pooling over T).
Each message alone, with no padding at all, is the reference: there every run agrees.

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
# 本课训练一个小分类器，然后把同样的测试短信分别填充到 32、64、128 个词元，用**同一组权重**跑四遍：
# 带掩码 (模型本来的用法)；`ignore_padding=True` (不用键掩码，池化除以 $T$)；以及这个错误的两半各自单独出现：
# 只去掉键掩码 (`"keys"`，池化仍带掩码)，只让池化除以 $T$ (`"pooling"`，键掩码仍在)。
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
# with **the same weights**, four times: with the masks (as the model is meant to run); with
# `ignore_padding=True` (no key mask, pooling divides by $T$); and with each half of that bug alone: only the key
# mask dropped (`"keys"`, pooling still masked), only the pooling over $T$ (`"pooling"`, key mask kept). The
# reference is each message alone, not padded at all.

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
MODES = {"masked": False, "keys unmasked": "keys", "pooling over padding": "pooling", "ignore_padding": True}


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
# 以 0.5 为阈值时判定翻转的短信数，以及被判为垃圾短信的比例 (参照下的比例写在旁边)。
#
# <!-- en -->
# ## 1. The same weights, with or without the masks: spam probabilities
#
# For each padding length and mode, `padding_shifts` measures how far the probability moves from the
# reference: max and mean $|\Delta p|$, how many decisions flip at the 0.5 cut-off, and the share of messages
# called spam (beside the reference's share).

# %% spam probability of ids, with or without the masks
def spam_probability(backend, ids: np.ndarray, ignore_padding: bool | str) -> np.ndarray:
    """(n,) positive-class probability for (n, T) ids, straight through the fitted model."""
    import torch

    model = backend.model_.eval()
    with torch.inference_mode():
        logits = model(torch.as_tensor(ids, device=backend.device_), ignore_padding=ignore_padding)
        return torch.softmax(logits.double(), dim=-1)[:, 1].cpu().numpy()


def unpadded_probability(backend, texts, ignore_padding: bool | str) -> np.ndarray:
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
    reference = {mode: unpadded_probability(backend, texts, ignore) for mode, ignore in MODES.items()}
    lengths = np.array([len(tokenize(t)) for t in texts])
    for pad_length in pad_lengths:
        ids = backend.vocabulary_.encode(texts, pad_length)  # (n, pad_length), right-padded with 0
        for mode, ignore in MODES.items():
            probability = spam_probability(backend, ids, ignore)
            shift = probability - reference[mode]
            rows.append({
                "pad_length": pad_length, "mode": mode, "mean_pad_tokens": float((pad_length - lengths).mean()),
                "max_abs_shift": float(np.abs(shift).max()), "mean_abs_shift": float(np.abs(shift).mean()),
                "flipped": int(((probability >= 0.5) != (reference[mode] >= 0.5)).sum()),
                "called_spam": float((probability >= 0.5).mean()), "called_spam_unpadded": float((reference[mode] >= 0.5).mean()),
                "probability": probability, "reference": reference[mode],
            })
    return rows


# %% [markdown]
# ## 2. 图：去掉掩码后，填充多了，模型对几乎每条短信给出同一个答案
#
# **怎样读图**：左图横轴是填充到的长度，纵轴是判定翻转的短信比例 (相对不填充的参照)；右图纵轴是被判为垃圾短信的比例，
# 虚线是不填充时的比例。带掩码的曲线在两幅图中都与参照重合 (只有浮点舍入误差)。
# 去掉掩码后，漂移**不一定**随填充单调增大：填充一旦多过文字，池化得到的向量主要由填充决定，
# 模型就对几乎每条短信给出同一个答案，至于是"垃圾"还是"正常"，取决于填充的表示落在哪一边。
# 所以平均 $|\Delta p|$ 可能随填充变小：如果那个统一的答案恰好是多数类 (正常短信)，大多数短信的概率就变化不大，
# 但少数类 (垃圾短信) 全部判错。要看右图的比例，而不是只看平均变化。两半错误各自的影响也在表和图里。
#
# <!-- en -->
# ## 2. Figure: without the masks, enough padding gives nearly every message the same answer
#
# **How to read it**: on the left, x is the padded length and y the share of decisions flipped against the
# unpadded reference; on the right, y is the share of messages called spam, the dashed line that share without
# padding. The masked curves lie on the reference in both (floating-point rounding only). Without the masks the
# drift need **not** grow with padding: once padding outnumbers the text, the pooled vector is mostly padding and
# the model gives nearly every message one answer, spam or ham depending on where padding's representation falls.
# So the mean $|\Delta p|$ can fall as padding grows: when that one answer is the majority class (ham), most
# probabilities move little while every spam is missed. Read the shares on the right, not only the mean shift.
# Each half of the bug alone is in the table and the figure too.

# %% figure
def shift_figure(frame: pd.DataFrame, lang: str):
    """Left: share of decisions flipped per padding length and mode. Right: share called spam, with the reference."""
    import matplotlib.pyplot as plt

    names = {"masked": text("correct masks", "正确的掩码", lang),
             "keys unmasked": text("key mask dropped, pooling masked", "去掉键掩码，池化仍带掩码", lang),
             "pooling over padding": text("key mask kept, pooling over T", "保留键掩码，池化除以 T", lang),
             "ignore_padding": text("both dropped (ignore_padding)", "两者都去掉 (ignore_padding)", lang)}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    lengths = sorted(frame["pad_length"].unique())
    first_seed = frame[frame["seed"] == frame["seed"].min()]
    for mode, marker in zip(MODES, "osD^"):
        rows = first_seed[first_seed["mode"] == mode].set_index("pad_length").loc[lengths]
        left.plot(lengths, rows["flipped"] / rows["messages"], marker=marker, label=names[mode])
        right.plot(lengths, rows["called_spam"], marker=marker, label=names[mode])
    right.axhline(first_seed["called_spam_unpadded"].iloc[0], color="k", linestyle="--", linewidth=0.8,
                  label=text("no padding (reference)", "不填充 (参照)", lang))
    for axis in (left, right):
        axis.set_xscale("log", base=2)
        axis.set_xticks(lengths, [str(n) for n in lengths])
        axis.set_xlabel(text("padded to length", "填充到的长度", lang))
        axis.set_ylim(-0.03, 1.03)
        axis.grid(alpha=0.3)
    left.set_ylabel(text("share of decisions flipped (p ≥ 0.5)", "判定翻转的比例 (p ≥ 0.5)", lang))
    left.set_title(text("same weights, same messages, more padding", "同样的权重和短信，只是填充更多", lang))
    right.set_ylabel(text("share called spam", "判为垃圾短信的比例", lang))
    right.set_title(text("what the model answers", "模型给出的答案", lang))
    right.legend(fontsize=7)
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 练习
#
# 1. 表中带掩码一行的最大 $|\Delta p|$ 是多少？它为什么不是严格的 0？
# 2. 不带掩码时，填充到 128 有多少条短信的判定翻转？短短信还是长短信受影响更大？为什么？
# 3. 只去掉键掩码、保留带掩码的池化 (或反过来)：哪一半的影响更大？先预测，再读表。为什么只去掉键掩码时，
#    填充位置的表示不进入池化，预测仍会改变？
#
# 运行：`python -m comparisons.course.padding_ablation --lang zh [--seeds 1]`。
#
# <!-- en -->
# ## Exercises
#
# 1. What is the largest $|\Delta p|$ in the masked rows? Why is it not exactly 0?
# 2. Without masks, how many decisions flip at length 128? Are short or long messages hurt more, and why?
# 3. Dropping only the key mask but keeping masked pooling (or the reverse): which half matters more? Predict, then
#    read the table. Why do predictions still move with only the key mask dropped, when padded positions never
#    enter the pooling?
#
# Run: `python -m comparisons.course.padding_ablation [--seeds 1]`.

# %% main
def called_spam_sentences(frame: pd.DataFrame, lang: str) -> str:
    """One line per mode (first seed): the share called spam at each padded length, against the unpadded share."""
    first = frame[frame["seed"] == frame["seed"].min()]
    lines = []
    for mode in MODES:
        rows = first[first["mode"] == mode].sort_values("pad_length")
        shares = ", ".join(f"{n}: {share:.0%}" for n, share in zip(rows["pad_length"], rows["called_spam"]))
        reference = rows["called_spam_unpadded"].iloc[0]
        lines.append(text(f"{mode}: called spam {shares} (no padding: {reference:.0%})",
                          f"{mode}：判为垃圾短信的比例 {shares} (不填充：{reference:.0%})", lang))
    return "\n".join(lines)


def _headers(lang: str) -> dict[str, str]:
    return {
        "seed": text("seed", "随机种子", lang), "pad_length": text("padded to", "填充到的长度", lang),
        "mode": text("mode", "模式", lang), "mean_pad_tokens": text("mean <pad> tokens", "平均填充数", lang),
        "max_abs_shift": text("max |Δp|", "最大 |Δp|", lang), "mean_abs_shift": text("mean |Δp|", "平均 |Δp|", lang),
        "flipped": text("decisions flipped (p ≥ 0.5)", "判定翻转数 (p ≥ 0.5)", lang),
        "called_spam": text("share called spam", "判为垃圾短信的比例", lang),
        "called_spam_unpadded": text("share called spam, no padding", "不填充时判为垃圾短信的比例", lang),
        "messages": text("messages", "短信数", lang),
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
    rows = []
    for seed in range(args.seeds):
        backend = train_classifier(train, valid, seed, args.quick, max_len=max(pad_lengths))
        for row in padding_shifts(backend, texts, pad_lengths):
            rows.append({"seed": seed, "messages": len(texts), **row})
    frame = pd.DataFrame([{k: v for k, v in r.items() if k not in ("probability", "reference")} for r in rows])
    print(frame.to_string(index=False))
    masked = frame[frame["mode"] == "masked"]["max_abs_shift"].max()
    broken = frame[frame["mode"] == "ignore_padding"]["max_abs_shift"].max()
    print(text(f"correct masks: max |Δp| = {masked:.1e} (rounding); masks removed: max |Δp| = {broken:.3f}",
               f"正确掩码：最大 |Δp| = {masked:.1e} (舍入误差)；去掉掩码：最大 |Δp| = {broken:.3f}", args.lang))
    reading = called_spam_sentences(frame, args.lang)
    print(reading)
    paths = [
        *write_table(frame.rename(columns=_headers(args.lang)), args.out, "padding_shift",
                     text("Spam probability shift from padding, same weights", "填充引起的垃圾短信概率变化 (同一组权重)",
                          args.lang), float_format="{:.3g}"),
        save_figure(shift_figure(frame, args.lang), args.out / "padding_ablation.png"),
        atomic_write_json(args.out / "summary.json", {
            "messages": len(texts), "pad_lengths": list(pad_lengths), "seeds": args.seeds,
            "config": scratch_config(args.quick, max_len=max(pad_lengths)),
            "max_abs_shift_masked": float(masked), "max_abs_shift_ignore_padding": float(broken), "reading": reading,
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
