"""Sinusoidal positional encoding: what it looks like, and why a shift by k is a linear map.

Column pair (2i, 2i+1) of PE(pos) is (sin(w_i pos), cos(w_i pos)) with w_i = 10000^(-2i/d).
Moving k positions on rotates each pair by the angle w_i k, whatever pos is, so PE(pos + k) =
PE(pos) M_k for one fixed matrix M_k: attention can learn "k tokens to the left" once for all
positions. The student fits M_k by least squares (and each 2x2 rotation on its own) and sees a
residual at float32 rounding level (~1e-6).

    python -m comparisons.course.positional_encoding [--out DIR] [--lang en|zh] [--length 128] [--d-model 64]
"""
# %% [markdown]
# # 第 3 课　位置编码：正弦位置编码长什么样，为什么"平移 k 步"是一个线性映射
#
# 注意力本身不知道词的顺序：把句子里的词打乱，每个词得到的加权平均不变。所以 Transformer 在词嵌入上
# 加一个**位置编码** (positional encoding, PE)。原论文的正弦位置编码是
#
# $$PE(pos, 2i) = \sin(\omega_i\, pos), \quad PE(pos, 2i+1) = \cos(\omega_i\, pos), \quad \omega_i = 10000^{-2i/d}$$
#
# 每一对维度 $(2i, 2i+1)$ 是一个以频率 $\omega_i$ 转动的"时钟指针"。向后移动 $k$ 个位置，相当于每根指针
# 转过角度 $\omega_i k$，与 $pos$ 无关。所以存在一个固定矩阵 $M_k$ (由 $2\times2$ 旋转矩阵组成)，使
# $PE(pos + k) = PE(pos)\, M_k$ 对所有位置成立：模型只需学一次"向左看 $k$ 个词"。
# 本课用最小二乘拟合 $M_k$，残差应在 float32 舍入误差的量级 (约 $10^{-6}$)。
#
# <!-- en -->
# # Lesson 3. Positional encoding: what the sinusoidal encoding looks like, and why a shift by k is linear
#
# Attention alone does not know word order: shuffle the tokens and each one gets the same weighted
# average. So the Transformer adds a **positional encoding** (PE) to the embeddings. The original
# sinusoidal encoding is
#
# $$PE(pos, 2i) = \sin(\omega_i\, pos), \quad PE(pos, 2i+1) = \cos(\omega_i\, pos), \quad \omega_i = 10000^{-2i/d}$$
#
# Each pair of dimensions $(2i, 2i+1)$ is a clock hand turning at frequency $\omega_i$. Moving $k$
# positions on turns every hand by the angle $\omega_i k$, whatever $pos$ is. So one fixed matrix $M_k$
# (made of $2\times2$ rotations) gives $PE(pos + k) = PE(pos)\, M_k$ at every position: a model can learn
# "look $k$ tokens to the left" once. The lesson fits $M_k$ by least squares; the residual should be at
# float32 rounding level (about $10^{-6}$).

# %% imports
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.course.shared import course_parser, report_written, run_course
from comparisons.report.i18n import setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "positional_encoding"
SHIFTS = (1, 2, 5, 10, 25)


# %% the encoding, from the torch_scratch backend
def encoding(length: int, d_model: int) -> np.ndarray:
    """(length, d_model) float32 sinusoidal encoding from backends.torch_scratch.encoder."""
    from backends.torch_scratch.encoder import sinusoidal_encoding

    return sinusoidal_encoding(length, d_model).numpy()


def frequencies(d_model: int) -> np.ndarray:
    """w_i = 10000^(-2i/d) for i = 0 .. d/2 - 1 (the formula the encoder uses)."""
    return np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))


# %% [markdown]
# ## 1. 检验：$PE(pos + k) = PE(pos)\,M_k$
#
# `linear_shift_fit` 做两种拟合：一个完整的 $d \times d$ 矩阵，以及每个频率单独一个 $2\times2$ 矩阵；
# 并把拟合出的 $2\times2$ 矩阵与精确的旋转矩阵 $\begin{pmatrix}\cos\omega_i k & -\sin\omega_i k\\ \sin\omega_i k & \cos\omega_i k\end{pmatrix}$ 比较。
#
# <!-- en -->
# ## 1. The check: $PE(pos + k) = PE(pos)\,M_k$
#
# `linear_shift_fit` fits one full $d \times d$ matrix and, separately, one $2\times2$ matrix per
# frequency, and compares each fitted $2\times2$ block with the exact rotation
# $\begin{pmatrix}\cos\omega_i k & -\sin\omega_i k\\ \sin\omega_i k & \cos\omega_i k\end{pmatrix}$.

# %% the check: PE(pos + k) = PE(pos) M_k
def linear_shift_fit(pe: np.ndarray, shift: int) -> dict[str, float]:
    """Fit M_k (d x d) and each 2x2 block by least squares over all positions; report residuals.

    full_residual: max |PE[k:] - PE[:-k] M_k| for one full matrix fitted across positions.
    pair_residual: the same with one 2x2 matrix per frequency (the other entries forced to 0).
    rotation_error: max |fitted 2x2 - the exact rotation by w_i k|.
    """
    source = pe[:-shift].astype(np.float64)  # (L - k, d) rows PE(pos)
    target = pe[shift:].astype(np.float64)  # (L - k, d) rows PE(pos + k)
    full_map, *_ = np.linalg.lstsq(source, target, rcond=None)  # (d, d)
    full_residual = float(np.abs(source @ full_map - target).max())
    pair_residual, rotation_error = 0.0, 0.0
    for i, w in enumerate(frequencies(pe.shape[1])):
        columns = slice(2 * i, 2 * i + 2)
        block, *_ = np.linalg.lstsq(source[:, columns], target[:, columns], rcond=None)  # (2, 2)
        pair_residual = max(pair_residual, float(np.abs(source[:, columns] @ block - target[:, columns]).max()))
        angle = w * shift
        # row vectors: [sin(a+b), cos(a+b)] = [sin a, cos a] @ [[cos b, -sin b], [sin b, cos b]]
        exact = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        rotation_error = max(rotation_error, float(np.abs(block - exact).max()))
    return {"full_residual": full_residual, "pair_residual": pair_residual, "rotation_error": rotation_error}


def shift_table(pe: np.ndarray, shifts, lang: str) -> pd.DataFrame:
    rows = []
    for shift in shifts:
        fit = linear_shift_fit(pe, shift)
        rows.append({
            text("shift k", "平移 k", lang): shift,
            text("max residual, one d×d map", "最大残差 (一个 d×d 矩阵)", lang): fit["full_residual"],
            text("max residual, 2×2 per frequency", "最大残差 (每个频率一个 2×2)", lang): fit["pair_residual"],
            text("max |fitted 2×2 − rotation|", "最大 |拟合的 2×2 − 旋转矩阵|", lang): fit["rotation_error"],
        })
    return pd.DataFrame(rows)


# %% [markdown]
# ## 2. 图：位置编码热图，和位置之间的点积
#
# **怎样读图**：左图每一行是一个位置的编码向量，每一列是一个维度。左边的维度频率高 (颜色变化快)，
# 右边的维度频率低 (变化慢)，像时钟的秒针和时针。右图是位置 $i$ 与位置 $j$ 编码的点积：
# 沿对角线方向颜色不变，说明点积只取决于距离 $i - j$，而不是绝对位置。
#
# <!-- en -->
# ## 2. Figure: the encoding as a heatmap, and the dot products between positions
#
# **How to read it**: on the left each row is one position's vector, each column a dimension. Left
# columns turn fast (high frequency), right columns slowly, like the second and hour hands of a clock.
# On the right is the dot product of positions $i$ and $j$: colours are constant along each diagonal,
# so the dot product depends only on the distance $i - j$, not on where the pair sits.

# %% figure
def encoding_figure(pe: np.ndarray, lang: str):
    """Left: the encoding as a heatmap; right: PE(pos)·PE(pos') depends only on the distance."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    image = left.imshow(pe, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    left.set_xlabel(text("dimension (even = sin, odd = cos)", "维度 (偶数 = sin，奇数 = cos)", lang))
    left.set_ylabel(text("position", "位置", lang))
    left.set_title(text("sinusoidal positional encoding", "正弦位置编码", lang))
    fig.colorbar(image, ax=left, fraction=0.046)
    similarity = pe @ pe.T  # (L, L)
    image = right.imshow(similarity, cmap="viridis", interpolation="nearest")
    right.set_xlabel(text("position", "位置", lang))
    right.set_ylabel(text("position", "位置", lang))
    right.set_title(text("dot product PE(i)·PE(j): a function of i − j", "点积 PE(i)·PE(j)：只取决于 i − j", lang))
    fig.colorbar(image, ax=right, fraction=0.046)
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 练习
#
# 1. 读残差表：完整矩阵和 $2\times2$ 分块的残差都接近 $10^{-6}$ 吗？这说明了什么？
# 2. 为什么不能只用 $\sin$ 而不用 $\cos$？(提示：只有 $\sin$ 时，平移还能写成线性映射吗？)
# 3. 可学习的位置嵌入 (learned positional embedding) 也满足这个性质吗？它能处理比训练时更长的句子吗？
#
# 运行：`python -m comparisons.course.positional_encoding --lang zh [--length 128] [--d-model 64]`。
#
# <!-- en -->
# ## Exercises
#
# 1. Read the residual table: are both the full-matrix and the $2\times2$ residuals near $10^{-6}$? What does it show?
# 2. Why both $\sin$ and $\cos$, not $\sin$ alone? (Hint: with $\sin$ alone, is a shift still a linear map?)
# 3. Does a learned positional embedding have this property? Can it handle messages longer than in training?
#
# Run: `python -m comparisons.course.positional_encoding [--length 128] [--d-model 64]`.

# %% main
def _run(args: argparse.Namespace) -> int:
    if args.d_model < 2 or args.d_model % 2:
        raise UserInputError(f"--d-model {args.d_model} must be an even number of at least 2")
    if args.length <= max(SHIFTS) + args.d_model:
        raise UserInputError(
            f"--length {args.length} is too short to fit a {args.d_model}x{args.d_model} map for shift "
            f"{max(SHIFTS)}; use at least {max(SHIFTS) + args.d_model + 1}"
        )
    setup_matplotlib(args.lang)
    pe = encoding(args.length, args.d_model)
    table = shift_table(pe, SHIFTS, args.lang)
    print(table.to_string(index=False))
    worst = float(table.iloc[:, 1:3].to_numpy().max())
    print(text(f"largest residual: {worst:.1e} (float32 rounding is ~1e-6): PE(pos+k) is a linear map of PE(pos)",
               f"最大残差: {worst:.1e} (float32 舍入误差约 1e-6)：PE(pos+k) 是 PE(pos) 的线性映射", args.lang))
    paths = [
        *write_table(table, args.out, "shift_is_linear",
                     text("PE(pos+k) = PE(pos) M_k: least-squares residuals", "PE(pos+k) = PE(pos) M_k：最小二乘残差",
                          args.lang), float_format="{:.2e}"),
        save_figure(encoding_figure(pe, args.lang), args.out / "positional_encoding.png"),
        atomic_write_json(args.out / "summary.json", {
            "length": args.length, "d_model": args.d_model, "shifts": list(SHIFTS),
            "max_residual": worst, "fits": {k: linear_shift_fit(pe, k) for k in SHIFTS},
        }),
    ]
    report_written(paths)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__)
    parser.add_argument("--length", type=int, default=128, help="positions to encode (default 128)")
    parser.add_argument("--d-model", type=int, default=64, help="encoding width, even (default 64)")
    return run_course(parser, argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
