"""Attention deletion: does removing the most-attended tokens hurt more than removing random ones?

For every test spam message the student deletes the k tokens that receive the most attention in
the last layer (mean over heads and over the real query positions, from `attention_maps`) and,
separately, k tokens drawn at random, and records how far the spam probability falls. The two
deletions of the same message form a pair; the mean paired difference gets a 95% confidence
interval (paired t over messages, and a bootstrap), per model seed.

Whatever the numbers, attention weights are not causal explanations: a weight says how much a
position was mixed into another, not how much the decision depends on it (Jain & Wallace 2019,
"Attention is not Explanation"; Wiegreffe & Pinter 2019). Deletion is an intervention and tests
one thing; it also moves the text off the training distribution.

    python -m comparisons.course.attention_deletion [--out DIR] [--lang en|zh] [--seeds 3] [--k 3] [--quick]
"""
# %% [markdown]
# # 第 10 课　删词实验：删掉最受关注的词，比随机删词伤害更大吗？
#
# 上一课的注意力图容易让人以为"模型因为这些词才判为垃圾短信"。本课用**干预** (intervention) 来检验：
# 对每条测试垃圾短信，删掉最后一层中平均被关注最多的 $k$ 个词，再另外随机删掉 $k$ 个词，
# 比较垃圾短信概率下降了多少：$\Delta p = p_{删后} - p_{删前}$。
#
# 同一条短信的两种删法构成一对 (paired)，所以比较的是**配对差** $\Delta p_{top} - \Delta p_{random}$，
# 并给出均值的 95% 置信区间 (按短信做配对 $t$ 区间，以及自助法 bootstrap 区间)，每个模型随机种子一组，
# 最后把各种子合起来再算一次。如果区间不含 0，才能说两种删法有可检测的差别。
#
# 无论结果如何，注意力权重都**不是因果解释**：权重说明一个位置被混入另一个位置多少，不说明判定依赖它多少
# (Jain & Wallace 2019, "Attention is not Explanation"; Wiegreffe & Pinter 2019)。
#
# <!-- en -->
# # Lesson 10. Attention deletion: does removing the most-attended tokens hurt more than removing random ones?
#
# The last lesson's map invites "the model called it spam because of these words". This lesson tests that by
# **intervention**: for every test spam message, delete the $k$ tokens that receive the most last-layer
# attention, and separately $k$ random tokens, and record how far the spam probability falls:
# $\Delta p = p_{after} - p_{before}$.
#
# The two deletions of one message form a pair, so the lesson compares the **paired difference**
# $\Delta p_{top} - \Delta p_{random}$, with a 95% confidence interval of its mean (paired $t$ over messages,
# and a bootstrap), per model seed and over all seeds. Only an interval that excludes 0 shows a detectable difference.
#
# Whatever the numbers, attention weights are **not causal explanations**: a weight says how much one
# position was mixed into another, not how much the decision depends on it (Jain & Wallace 2019,
# "Attention is not Explanation"; Wiegreffe & Pinter 2019).

# %% imports
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common.errors import UserInputError
from common.vocabulary import PAD_ID
from comparisons.course.shared import (course_parser, load_course_splits, report_written, run_course,
                                       scratch_config)
from comparisons.report.i18n import setup_matplotlib, text
from comparisons.outputs import atomic_write_json, atomic_write_text, save_figure, write_table

MODULE = "attention_deletion"
NOT_CAUSAL = ("Attention weights are not causal explanations: they say how much one position was mixed into "
              "another, not how much the prediction depends on it. Deleting tokens is an intervention that tests "
              "this one model on these messages, and the shortened texts are off the training distribution.")
NOT_CAUSAL_ZH = ("注意力权重不是因果解释：它只说明一个位置的信息被混入另一个位置的比例，并不说明预测在多大程度上依赖于它。"
                 "删除词是一种干预，只检验这一个模型在这些短信上的表现，而且删减后的文本已偏离训练数据的分布。")


# %% train, and score id sequences directly
def train_classifier(train, valid, seed: int, quick: bool):
    from backends.torch_scratch import TorchScratchBackend

    return TorchScratchBackend(config=scratch_config(quick), seed=seed, device="cpu", choose_on="validation",
                               progress=False).fit(train, valid)


def spam_probability(backend, sequences: list[list[int]]) -> np.ndarray:
    """(n,) spam probability of token-id lists (right-padded here; masks as the model uses them)."""
    import torch

    width = max(1, max(len(s) for s in sequences))
    ids = np.full((len(sequences), width), PAD_ID, dtype=np.int64)  # (n, T)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = sequence
    with torch.inference_mode():
        logits = backend.model_.eval()(torch.as_tensor(ids, device=backend.device_))
        return torch.softmax(logits.double(), dim=-1)[:, 1].cpu().numpy()


# %% [markdown]
# ## 1. 两种删法
#
# `attention_received` 计算每个真实词元平均收到的关注 (最后一层，对头和真实查询位置取平均)。
# `deletion_effects` 对每条短信删掉最受关注的 $k$ 个词和随机 $k$ 个词，记录删前概率和两个 $\Delta p$。
# 删掉后至少要剩一个词，所以太短的短信被跳过。
#
# <!-- en -->
# ## 1. The two deletions
#
# `attention_received` is the mean attention each real token receives (last layer, averaged over heads and
# real query positions). `deletion_effects` deletes the top-$k$ and $k$ random tokens of each message and
# records the probability before and both $\Delta p$. Something must be left, so very short messages are skipped.

# %% the two deletions
def attention_received(weights: np.ndarray, length: int) -> np.ndarray:
    """(T,) mean weight each real token receives: last layer (H, T, T) averaged over heads and real queries."""
    return weights[:, :length, :length].mean(axis=0).mean(axis=0)


def deletion_effects(backend, texts, k: int, rng: np.random.Generator) -> pd.DataFrame:
    """Per message: spam probability before, after deleting the top-k attended and k random tokens."""
    if backend.config_.pooling != "mean":
        raise UserInputError("attention deletion expects mean pooling (no <cls> token to protect)")
    ids = backend.vocabulary_.encode(list(texts), backend.config_.max_len)  # (n, max_len)
    sequences = [[int(i) for i in row if i != PAD_ID] for row in ids]
    keep = [i for i, s in enumerate(sequences) if len(s) > k + 1]  # something is left after deleting k
    sequences = [sequences[i] for i in keep]
    _, per_layer = backend.attention_maps([texts[i] for i in keep])
    last = per_layer[-1]  # (n, H, T, T)
    top, random = [], []
    for row, sequence in enumerate(sequences):
        received = attention_received(last[row], len(sequence))
        most = set(np.argsort(-received, kind="stable")[:k].tolist())
        drawn = set(rng.choice(len(sequence), size=k, replace=False).tolist())
        top.append([t for i, t in enumerate(sequence) if i not in most])
        random.append([t for i, t in enumerate(sequence) if i not in drawn])
    before = spam_probability(backend, sequences)
    return pd.DataFrame({
        "message": keep, "tokens": [len(s) for s in sequences], "p_before": before,
        "delta_top": spam_probability(backend, top) - before,
        "delta_random": spam_probability(backend, random) - before,
    })


# %% [markdown]
# ## 2. 配对差的 95% 置信区间
#
# 配对 $t$ 区间：$\bar d \pm t_{0.975,\,n-1}\, s_d/\sqrt{n}$，其中 $d_i$ 是第 $i$ 条短信的配对差。
# 自助法：对短信有放回地重采样 5000 次，取均值的 2.5% 和 97.5% 分位数。两种区间应大致一致。
#
# <!-- en -->
# ## 2. 95% confidence intervals of the paired difference
#
# Paired $t$: $\bar d \pm t_{0.975,\,n-1}\, s_d/\sqrt{n}$, with $d_i$ the paired difference of message $i$.
# Bootstrap: resample messages with replacement 5000 times and take the 2.5% and 97.5% quantiles of the
# mean. The two intervals should roughly agree.

# %% paired 95% confidence intervals
def paired_interval(differences: np.ndarray, level: float = 0.95, resamples: int = 5000, seed: int = 0) -> dict:
    """Mean of paired differences with a t interval and a percentile bootstrap interval."""
    from scipy import stats

    differences = np.asarray(differences, dtype=float)
    n = len(differences)
    mean = float(differences.mean())
    if n < 2:
        return {"mean": mean, "t_low": np.nan, "t_high": np.nan, "boot_low": np.nan, "boot_high": np.nan, "n": n}
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * differences.std(ddof=1) / np.sqrt(n))
    rng = np.random.default_rng(seed)
    means = differences[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, 0.5 + level / 2])
    return {"mean": mean, "t_low": mean - half, "t_high": mean + half, "boot_low": float(low),
            "boot_high": float(high), "n": n}


# %% [markdown]
# ## 3. 图：每个种子的平均 $\Delta p$，以及配对差的分布
#
# **怎样读图**：左图横轴是模型种子，纵轴是垃圾短信概率的平均变化 (负数表示概率下降)，误差棒是 95% 置信区间；
# 圆点是删最受关注的词，方块是随机删词。右图是所有短信、所有种子的配对差 $\Delta p_{top} - \Delta p_{random}$ 的直方图：
# 大部分落在 0 的左边，说明删最受关注的词通常伤害更大；但即使如此，这也只是对这个模型的一次干预，不是"解释"。
#
# <!-- en -->
# ## 3. Figure: mean $\Delta p$ per seed, and the distribution of paired differences
#
# **How to read it**: on the left x is the model seed and y the mean change of the spam probability
# (negative = it fell), with 95% intervals; circles delete the most-attended tokens, squares random ones.
# On the right, the histogram of paired differences $\Delta p_{top} - \Delta p_{random}$ over all messages and
# seeds: mass left of 0 means the top-$k$ deletion usually hurts more. Even so, it is one intervention on one
# model, not an explanation.

# %% figure
def deletion_figure(summary: pd.DataFrame, pooled: pd.DataFrame, lang: str):
    """Left: mean Δp with 95% t intervals per seed, top-k vs random. Right: paired differences."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    seeds = summary["seed"].to_numpy()
    for offset, (column, name) in enumerate((("top", text("top-k attended", "被关注最多的 k 个", lang)),
                                              ("random", text("k random", "随机 k 个", lang)))):
        means = summary[f"{column}_mean"].to_numpy()
        errors = np.vstack([means - summary[f"{column}_t_low"], summary[f"{column}_t_high"] - means])
        left.errorbar(seeds + (offset - 0.5) * 0.2, means, yerr=errors, fmt="os"[offset], capsize=4, label=name)
    left.axhline(0, color="grey", linewidth=0.8)
    left.set_xticks(seeds)
    left.set_xlabel(text("model seed", "模型随机种子", lang))
    left.set_ylabel(text("mean change in spam probability", "垃圾短信概率的平均变化", lang))
    left.set_title(text("deleting k tokens from test spam (95% CI)", "从测试垃圾短信中删除 k 个词 (95% 置信区间)", lang))
    left.legend(fontsize=8)
    right.hist(pooled["delta_top"] - pooled["delta_random"], bins=30, color="tab:purple", alpha=0.8)
    right.axvline(0, color="grey", linewidth=0.8)
    right.set_xlabel(text("Δp(top-k) − Δp(random), per message and seed", "Δp(最受关注) − Δp(随机)，每条短信每个种子",
                          lang))
    right.set_ylabel(text("messages", "短信数", lang))
    right.set_title(text("attention is not a causal explanation", "注意力不是因果解释", lang))
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 练习
#
# 1. 读 `deletion` 表：合并各种子后，配对差的 95% 区间含 0 吗？你能得出什么结论，不能得出什么结论？
# 2. 把 $k$ 从 3 改成 1 和 5 (`--k`)，差别怎样变化？
# 3. 删词后的文本不再像正常短信 (偏离训练分布)。这对结论有什么影响？能想出更好的干预吗？
#
# 运行：`python -m comparisons.course.attention_deletion --lang zh [--seeds 3] [--k 3]`。
#
# <!-- en -->
# ## Exercises
#
# 1. Read the `deletion` table: over all seeds, does the 95% interval of the paired difference hold 0? What can you conclude, and what not?
# 2. Change $k$ from 3 to 1 and 5 (`--k`): how does the difference change?
# 3. Text with tokens deleted no longer looks like a real message (off the training distribution). How does that weaken the conclusion? Can you think of a better intervention?
#
# Run: `python -m comparisons.course.attention_deletion [--seeds 3] [--k 3]`.

# %% main
def _run(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise UserInputError(f"--k {args.k} must be at least 1")
    setup_matplotlib(args.lang)
    train, valid, test = load_course_splits(args.quick)
    spam = [t for t, label in zip(test.texts, test.labels) if label == test.positive_index]
    per_message, rows = [], []
    for seed in range(args.seeds):
        backend = train_classifier(train, valid, seed, args.quick)
        effects = deletion_effects(backend, spam, args.k, np.random.default_rng(1000 + seed))
        effects.insert(0, "seed", seed)
        per_message.append(effects)
        row = {"seed": seed, "messages": len(effects)}
        for name, values in (("top", effects["delta_top"]), ("random", effects["delta_random"]),
                             ("paired", effects["delta_top"] - effects["delta_random"])):
            interval = paired_interval(values.to_numpy(), seed=seed)
            row.update({f"{name}_{key}": value for key, value in interval.items() if key != "n"})
        rows.append(row)
    pooled = pd.concat(per_message, ignore_index=True)
    # all seeds together: each message's paired difference averaged over seeds, then one interval
    averaged = (pooled.assign(paired=pooled["delta_top"] - pooled["delta_random"])
                .groupby("message")["paired"].mean().to_numpy())
    overall = paired_interval(averaged)
    summary = pd.DataFrame(rows)
    shown = summary[["seed", "messages", "top_mean", "random_mean", "paired_mean", "paired_t_low", "paired_t_high",
                     "paired_boot_low", "paired_boot_high"]].astype({"seed": object})
    shown.loc[len(shown)] = [text("all (mean over seeds)", "全部 (种子平均)", args.lang), overall["n"],
                             float(summary["top_mean"].mean()), float(summary["random_mean"].mean()), overall["mean"],
                             overall["t_low"], overall["t_high"], overall["boot_low"], overall["boot_high"]]
    shown.columns = [text(c, z, args.lang) for c, z in (
        ("seed", "随机种子"), ("messages", "短信数"), ("mean Δp top-k", "平均 Δp (最受关注)"),
        ("mean Δp random", "平均 Δp (随机)"), ("mean paired difference", "平均配对差"), ("t 95% low", "t 95% 下限"),
        ("t 95% high", "t 95% 上限"), ("bootstrap 95% low", "自助法 95% 下限"), ("bootstrap 95% high", "自助法 95% 上限"))]
    print(shown.to_string(index=False))
    note = text(NOT_CAUSAL, NOT_CAUSAL_ZH, args.lang)
    print(note)
    paths = [
        *write_table(shown, args.out, "deletion",
                     text(f"Deleting the {args.k} most-attended vs {args.k} random tokens from test spam",
                          f"从测试垃圾短信中删除最受关注的 {args.k} 个词 vs 随机 {args.k} 个词", args.lang)),
        atomic_write_text(args.out / "note.md", f"{note}\n"),
        save_figure(deletion_figure(summary, pooled, args.lang), args.out / "attention_deletion.png"),
        atomic_write_json(args.out / "summary.json", {
            "k": args.k, "seeds": args.seeds, "config": scratch_config(args.quick), "per_seed": rows,
            "all_seeds": overall, "note": NOT_CAUSAL,
            "per_message": pooled.to_dict(orient="records"),  # test-spam positions and numbers only, no text
        }),
    ]
    report_written(paths)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=3)
    parser.add_argument("--k", type=int, default=3, help="tokens to delete per message (default 3)")
    return run_course(parser, argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
