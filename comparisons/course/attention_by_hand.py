"""Attention by hand: three tokens, two dimensions, one head, every step printed.

The student computes scores = Q K^T, scales them by 1/sqrt(d_k), turns each row into weights
with a softmax and mixes the value vectors with those weights, all in numpy, and then checks
that the library function `backends.torch_scratch.attention.scaled_dot_product_attention`
gives the same numbers.

    python -m comparisons.course.attention_by_hand [--out DIR] [--lang en|zh]
"""
# %% [markdown]
# # 第 2 课　手算注意力：三个词、两维、一个头，每一步都打印出来
#
# 注意力 (attention) 是 Transformer 的核心运算。每个词元有三个向量：查询 (query, Q)、键 (key, K)、值 (value, V)。
# 缩放点积注意力 (scaled dot-product attention) 的公式是
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V$$
#
# 分四步：
# 1. **得分** (score)：$QK^\top$，查询 $t$ 与键 $s$ 的点积，越大表示越"匹配"；
# 2. **缩放** (scaling)：除以 $\sqrt{d_k}$ ($d_k$ 是键向量的维度)，防止维度大时得分过大、softmax 饱和；
# 3. **softmax**：把每一行得分变成权重，权重非负、每行之和为 1；
# 4. **加权求和**：输出是值向量按权重的加权平均。
#
# 本课用 numpy 手算这四步，再与套件的库函数 `scaled_dot_product_attention` 比较：两者应完全一致。
#
# <!-- en -->
# # Lesson 2. Attention by hand: three tokens, two dimensions, one head, every step printed
#
# Attention is the core operation of the Transformer. Each token has a query (Q), a key (K) and a
# value (V). Scaled dot-product attention is
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V$$
#
# in four steps:
# 1. **scores**: $QK^\top$, the dot product of query $t$ with key $s$, larger means a better match;
# 2. **scaling**: divide by $\sqrt{d_k}$ (the key width) so that the softmax does not saturate when $d_k$ is large;
# 3. **softmax**: each row of scores becomes weights, non-negative and summing to 1;
# 4. **weighted sum**: the output is the average of the value vectors under those weights.
#
# The lesson does the four steps in numpy and checks that the suite's library function
# `scaled_dot_product_attention` gives the same numbers.

# %% imports
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from comparisons.course.shared import course_parser, report_written, run_course
from comparisons.report.i18n import setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "attention_by_hand"

# %% [markdown]
# ## 1. 例子：三个词元 free、prize、now
#
# 每个词元的查询、键、值都是 2 维向量 ($d_k = d_v = 2$)，只有一个注意力头。
# 以第一个词 free 为例：$q = (1, 0)$，与三个键的点积是 $(1, 0, 1)$，除以 $\sqrt{2}$ 得 $(0.707, 0, 0.707)$，
# softmax 后权重约为 $(0.401, 0.198, 0.401)$，输出 $= 0.401\,v_1 + 0.198\,v_2 + 0.401\,v_3 \approx (1.203, 1.000)$。
# 运行本课，检查打印出的表格是否与这个手算结果相同。
#
# <!-- en -->
# ## 1. The example: three tokens, free, prize, now
#
# Queries, keys and values are 2-dimensional ($d_k = d_v = 2$), one head. For the first token, free:
# $q = (1, 0)$, its dot products with the three keys are $(1, 0, 1)$, divided by $\sqrt{2}$ they are
# $(0.707, 0, 0.707)$, the softmax gives weights of about $(0.401, 0.198, 0.401)$ and the output is
# $0.401\,v_1 + 0.198\,v_2 + 0.401\,v_3 \approx (1.203, 1.000)$. Run the lesson and check the printed table against it.

# %% the example: three tokens with 2-dimensional queries, keys and values (one head, d_k = 2)
TOKENS = ("free", "prize", "now")
QUERIES = np.array([[1.0, 0.0], [0.5, 1.0], [0.0, 2.0]])  # (T, d_k) one query per token
KEYS = np.array([[1.0, 0.5], [0.0, 1.0], [1.0, 1.0]])  # (T, d_k) one key per token
VALUES = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])  # (T, d_v) one value per token


# %% [markdown]
# ## 2. 四个步骤 (numpy) 与库函数
#
# `attention_steps` 逐步计算得分、缩放后的得分、权重和输出。softmax 前先减去每行最大值：结果不变，
# 但避免了指数溢出 (数值稳定的 softmax)。`library_attention` 调用从零实现的 PyTorch 函数，输入形状为
# (批量 B, 头数 H, 长度 T, 维度 d)。
#
# <!-- en -->
# ## 2. The four steps in numpy, and the library function
#
# `attention_steps` computes scores, scaled scores, weights and output. Subtracting each row's maximum
# before the softmax changes nothing but avoids overflow (a numerically stable softmax).
# `library_attention` calls the scratch PyTorch function on inputs shaped (batch B, heads H, length T, width d).

# %% the four steps, in numpy
def attention_steps(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
    """scores = q k^T, scaled = scores / sqrt(d_k), weights = row softmax, output = weights v."""
    d_k = q.shape[-1]
    scores = q @ k.T  # (T, S): how well query t matches key s
    scaled = scores / np.sqrt(d_k)  # (T, S): keeps the softmax from saturating when d_k is large
    shifted = scaled - scaled.max(axis=-1, keepdims=True)  # same softmax, no overflow
    exponentials = np.exp(shifted)  # (T, S)
    weights = exponentials / exponentials.sum(axis=-1, keepdims=True)  # (T, S), rows sum to 1
    output = weights @ v  # (T, d_v): a weighted average of the value vectors
    return {"scores": scores, "scaled": scaled, "weights": weights, "output": output}


def library_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same computation by the suite's torch function; returns (output (T, d_v), weights (T, S))."""
    import torch

    from backends.torch_scratch.attention import scaled_dot_product_attention

    as_tensor = lambda a: torch.tensor(a, dtype=torch.float64)[None, None]  # (1, 1, T, d)
    out, weights = scaled_dot_product_attention(as_tensor(q), as_tensor(k), as_tensor(v))
    return out[0, 0].numpy(), weights[0, 0].numpy()


# %% tables
def steps_table(steps: dict[str, np.ndarray], tokens, lang: str) -> pd.DataFrame:
    """One row per (query, key) pair: the score, the scaled score and the softmax weight."""
    rows = []
    for t, query in enumerate(tokens):
        for s, key in enumerate(tokens):
            rows.append({
                text("query", "查询 (query)", lang): query,
                text("key", "键 (key)", lang): key,
                text("score q·k", "得分 q·k", lang): steps["scores"][t, s],
                text("scaled q·k/√d_k", "缩放后 q·k/√d_k", lang): steps["scaled"][t, s],
                text("softmax weight", "softmax 权重", lang): steps["weights"][t, s],
            })
    return pd.DataFrame(rows)


def output_table(steps: dict[str, np.ndarray], library_output: np.ndarray, tokens, lang: str) -> pd.DataFrame:
    """One row per query: the output by hand, by the library, and their largest difference."""
    rows = []
    for t, query in enumerate(tokens):
        row = {text("query", "查询 (query)", lang): query}
        for i in range(steps["output"].shape[1]):
            row[text(f"output[{i}] by hand", f"手算输出[{i}]", lang)] = steps["output"][t, i]
        for i in range(library_output.shape[1]):
            row[text(f"output[{i}] library", f"库函数输出[{i}]", lang)] = library_output[t, i]
        row[text("max |difference|", "最大绝对差", lang)] = float(np.abs(steps["output"][t] - library_output[t]).max())
        rows.append(row)
    return pd.DataFrame(rows)


# %% [markdown]
# ## 3. 图：注意力权重热图
#
# **怎样读图**：行是发出关注的词 (查询)，列是被关注的词 (键)，格子里的数字是权重。
# 每一行之和为 1：一个词把它的"注意力"分配给所有词 (包括它自己)。颜色越深，权重越大。
#
# <!-- en -->
# ## 3. Figure: the attention weights as a heatmap
#
# **How to read it**: rows are the tokens that look (queries), columns the tokens looked at (keys),
# each cell is a weight. Every row sums to 1: a token shares its attention among all tokens,
# itself included. Darker means more weight.

# %% figure
def weights_figure(weights: np.ndarray, tokens, lang: str):
    """A small annotated heatmap: row = query token, column = key token."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    image = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(len(tokens)), tokens)
    ax.set_yticks(range(len(tokens)), tokens)
    for t in range(weights.shape[0]):
        for s in range(weights.shape[1]):
            ax.text(s, t, f"{weights[t, s]:.2f}", ha="center", va="center",
                    color="white" if weights[t, s] > 0.6 else "black")
    ax.set_xlabel(text("key (attended to)", "键 (被关注的词)", lang))
    ax.set_ylabel(text("query (looking)", "查询 (发出关注的词)", lang))
    formula = r"softmax($QK^T/\sqrt{d_k}$)"
    ax.set_title(text(f"{formula}: each row sums to 1", f"{formula}：每行之和为 1", lang))
    fig.colorbar(image, ax=ax, fraction=0.046)
    return fig


# %% printing, step by step
def print_steps(steps: dict[str, np.ndarray], library_output: np.ndarray, lang: str) -> None:
    np.set_printoptions(precision=4, suppress=True)
    d_k = QUERIES.shape[1]
    print(text(f"tokens: {TOKENS}; d_k = {d_k}", f"词: {TOKENS}; d_k = {d_k}", lang))
    print("Q =\n", QUERIES, "\nK =\n", KEYS, "\nV =\n", VALUES)
    print(text("1) scores = Q Kᵀ", "1) 得分 = Q Kᵀ", lang), "\n", steps["scores"])
    print(text(f"2) scaled = scores / √{d_k}", f"2) 缩放 = 得分 / √{d_k}", lang), "\n", steps["scaled"])
    print(text("3) weights = softmax of each row", "3) 权重 = 每行做 softmax", lang), "\n", steps["weights"])
    print(text("4) output = weights V", "4) 输出 = 权重 × V", lang), "\n", steps["output"])
    print(text("library scaled_dot_product_attention output", "库函数 scaled_dot_product_attention 的输出", lang),
          "\n", library_output)


# %% [markdown]
# ## 练习
#
# 1. 去掉缩放 (不除以 $\sqrt{d_k}$)，重新计算 free 这一行的权重。权重变得更平均还是更集中？为什么？
# 2. 把所有查询乘以 10，权重会怎样？这说明了 softmax 的什么性质 ("饱和")？
# 3. 如果两个词的键完全相同，它们得到的权重有什么关系？
#
# 运行：`python -m comparisons.course.attention_by_hand --lang zh`，结果在 `results/course/zh/attention_by_hand/`。
#
# <!-- en -->
# ## Exercises
#
# 1. Drop the scaling (no division by $\sqrt{d_k}$) and recompute the weights of the free row. More even or more peaked? Why?
# 2. Multiply every query by 10. What happens to the weights, and what does it say about the softmax ("saturation")?
# 3. If two tokens have identical keys, how do the weights they receive compare?
#
# Run: `python -m comparisons.course.attention_by_hand`, results in `results/course/en/attention_by_hand/`.

# %% main
def _run(args: argparse.Namespace) -> int:
    setup_matplotlib(args.lang)
    steps = attention_steps(QUERIES, KEYS, VALUES)
    library_output, library_weights = library_attention(QUERIES, KEYS, VALUES)
    print_steps(steps, library_output, args.lang)
    difference = max(float(np.abs(steps["output"] - library_output).max()),
                     float(np.abs(steps["weights"] - library_weights).max()))
    agree = difference < 1e-9
    print(text(f"largest difference hand vs library: {difference:.2e} -> {'agree' if agree else 'DISAGREE'}",
               f"手算与库函数的最大差: {difference:.2e} -> {'一致' if agree else '不一致'}", args.lang))
    paths = [
        *write_table(steps_table(steps, TOKENS, args.lang), args.out, "steps",
                     text("Attention by hand: scores, scaling, softmax", "手算注意力：得分、缩放、softmax", args.lang)),
        *write_table(output_table(steps, library_output, TOKENS, args.lang), args.out, "output",
                     text("Output: by hand vs library", "输出：手算 vs 库函数", args.lang)),
        save_figure(weights_figure(steps["weights"], TOKENS, args.lang), args.out / "weights.png"),
        atomic_write_json(args.out / "summary.json", {
            "tokens": list(TOKENS), "queries": QUERIES, "keys": KEYS, "values": VALUES,
            **steps, "library_output": library_output, "max_abs_difference": difference, "agree": agree,
        }),
    ]
    report_written(paths)
    return 0 if agree else 1


def main(argv=None) -> int:
    return run_course(course_parser(MODULE, __doc__), argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
