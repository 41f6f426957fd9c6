"""Attention by hand: three tokens, two dimensions, one head, every step printed.

The student computes scores = Q K^T, scales them by 1/sqrt(d_k), turns each row into weights
with a softmax and mixes the value vectors with those weights, all in numpy, and then checks
that the library function `backends.torch_scratch.attention.scaled_dot_product_attention`
gives the same numbers.

    python -m comparisons.course.attention_by_hand [--out DIR] [--lang en|zh]
"""
# %% imports
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from comparisons.course.shared import course_parser, report_written, run_course
from comparisons.i18n import setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "attention_by_hand"

# %% the example: three tokens with 2-dimensional queries, keys and values (one head, d_k = 2)
TOKENS = ("free", "prize", "now")
QUERIES = np.array([[1.0, 0.0], [0.5, 1.0], [0.0, 2.0]])  # (T, d_k) one query per token
KEYS = np.array([[1.0, 0.5], [0.0, 1.0], [1.0, 1.0]])  # (T, d_k) one key per token
VALUES = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])  # (T, d_v) one value per token


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
