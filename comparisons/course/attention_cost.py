"""The cost of attention grows with the square of the sequence length T.

For T = 64 ... 1024 the student measures, for the scratch attention (which builds the (T, T)
weight matrix) and torch's fused `F.scaled_dot_product_attention` (which on CPU works in tiles
and never holds the whole matrix):

- elements of the attention matrix, B * H * T * T, and its bytes in float32 (computed, exact);
- time per call (median of repeats after a warm-up);
- peak resident memory above the baseline: VmHWM in /proc/self/status, reset by writing "5" to
  /proc/self/clear_refs, measured in a child process started with MALLOC_MMAP_THRESHOLD_=65536
  so that glibc returns every large block to the system when it is freed (otherwise freed
  blocks are reused without touching RSS and the peak hides them). tracemalloc cannot be used:
  it does not see tensor memory.

A straight line fitted to log(cost) against log(T) gives the exponent: about 2 for the matrix.

    python -m comparisons.course.attention_cost [--out DIR] [--lang en|zh] [--lengths 64 128 ...]
"""
# %% [markdown]
# # 第 8 课　注意力的代价：随序列长度 $T$ 的平方增长
#
# 自注意力为每一对 (查询, 键) 算一个得分，得分矩阵是 $T \times T$。批量为 $B$、头数为 $H$ 时，
# 注意力矩阵有 $B \cdot H \cdot T^2$ 个元素，float32 下占 $4 B H T^2$ 字节：**$T$ 翻倍，元素数变为 4 倍**。
# 这就是长文本 Transformer 昂贵的原因 (时间复杂度和空间复杂度都是 $O(T^2)$)。
#
# 本课对 $T = 64 \dots 1024$ 测量两种实现：
# - 从零实现的注意力：真的构造出 $(T, T)$ 权重矩阵；
# - PyTorch 的融合算子 `F.scaled_dot_product_attention`：在 CPU 上分块计算，从不保存整个矩阵。
#
# 测量三样东西：矩阵元素数和字节数 (精确计算)；每次调用的时间 (预热后重复多次取中位数，用套件统一的计时函数
# `comparisons.run.measure.time_calls`)；峰值内存 (常驻内存 RSS 的峰值 VmHWM，在子进程中测量，见 `comparisons.run.measure`)。
# 在双对数坐标中拟合一条直线，斜率就是指数：矩阵的指数约为 2。
#
# <!-- en -->
# # Lesson 8. The cost of attention grows with the square of the sequence length $T$
#
# Self-attention scores every (query, key) pair: the score matrix is $T \times T$. With batch $B$ and $H$
# heads the attention matrix has $B \cdot H \cdot T^2$ elements, $4 B H T^2$ bytes in float32: **double $T$
# and the elements quadruple**. This is why long inputs make Transformers expensive ($O(T^2)$ time and memory).
#
# For $T = 64 \dots 1024$ the lesson measures two implementations:
# - the scratch attention, which builds the $(T, T)$ weight matrix;
# - PyTorch's fused `F.scaled_dot_product_attention`, which on CPU works in tiles and never holds the whole matrix.
#
# Three measurements: the matrix's elements and bytes (computed exactly); time per call (median of repeats
# after warm-up, with the suite's timer `comparisons.run.measure.time_calls`); peak memory (the resident-memory
# peak VmHWM, measured in a child process, see `comparisons.run.measure`). A straight line on log-log axes
# gives the exponent: about 2 for the matrix.

# %% imports
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.course.shared import course_parser, report_written, run_course
from comparisons.report.i18n import setup_matplotlib, text
from comparisons.run.measure import latency_stats, peak_rss_mb, reset_peak_rss, rss_mb, time_calls
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "attention_cost"
LENGTHS = (64, 128, 256, 512, 1024)
QUICK_LENGTHS = (64, 128, 256)
KINDS = ("scratch", "fused")
BYTES_PER_ELEMENT = 4  # float32
MMAP_THRESHOLD = "65536"


# %% the two attentions on random (B, H, T, d_k) inputs
def attention_call(kind: str, q, k, v):
    """One attention call; the scratch one also returns its (B, H, T, T) weights."""
    import torch.nn.functional as F

    from backends.torch_scratch.attention import scaled_dot_product_attention

    if kind == "scratch":
        return scaled_dot_product_attention(q, k, v)
    return F.scaled_dot_product_attention(q, k, v)


def random_qkv(batch: int, heads: int, length: int, head_dim: int, seed: int = 0):
    import torch

    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, heads, length, head_dim, generator=generator) for _ in range(3))


# %% time (the suite's timer: warm-up, then repeats until a count AND a time are reached)
def median_seconds(kind: str, batch: int, heads: int, length: int, head_dim: int,
                   min_repeats: int = 5, min_seconds: float = 0.2) -> float:
    """Median (p50) wall time of one call, measured with comparisons.run.measure.time_calls."""
    import torch

    q, k, v = random_qkv(batch, heads, length, head_dim)
    with torch.inference_mode():
        times_ms = time_calls(lambda: attention_call(kind, q, k, v), min_calls=min_repeats,
                              min_seconds=min_seconds, warmup=1)
    return latency_stats(times_ms, "attention")["attention_p50"] / 1000


# %% memory (run in a child process, see the module docstring; VmHWM via comparisons.run.measure)
def peak_rss_delta_mb(kind: str, batch: int, heads: int, length: int, head_dim: int) -> float:
    """MiB that VmHWM rises above the current RSS during one call (inputs already allocated)."""
    import torch

    q, k, v = random_qkv(batch, heads, length, head_dim)
    with torch.inference_mode():
        attention_call(kind, q, k, v)  # warm-up: one-time allocations are not the matrix
        gc.collect()
        if not reset_peak_rss():
            raise RuntimeError("cannot reset VmHWM (/proc/self/clear_refs)")
        baseline = rss_mb()
        result = attention_call(kind, q, k, v)
        peak = peak_rss_mb()
    del result
    return peak - baseline


def memory_in_child(lengths, batch: int, heads: int, head_dim: int, out, threads: int) -> dict | None:
    """{kind: {T: MiB}} from a child process with a fixed mmap threshold; None where /proc is unusable."""
    if not reset_peak_rss():
        print("peak memory not measured: cannot reset VmHWM (/proc/self/clear_refs)", file=sys.stderr)
        return None
    command = [sys.executable, "-m", f"comparisons.course.{MODULE}", "--memory-child", "--out", str(out),
               "--threads", str(threads),
               "--batch", str(batch), "--heads", str(heads), "--head-dim", str(head_dim),
               "--lengths", *map(str, lengths)]
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"memory child failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _memory_child(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(args.threads)
    measured = {kind: {str(t): peak_rss_delta_mb(kind, args.batch, args.heads, t, args.head_dim)
                       for t in args.lengths} for kind in KINDS}
    print(json.dumps(measured))
    return 0


# %% [markdown]
# ## 1. 指数：$\log(\text{代价})$ 对 $\log T$ 的斜率
#
# 若代价 $c = a\,T^p$，则 $\log c = \log a + p \log T$：在双对数坐标中是斜率为 $p$ 的直线。
# `loglog_exponent` 用最小二乘求这个斜率。
#
# <!-- en -->
# ## 1. The exponent: the slope of $\log(\text{cost})$ against $\log T$
#
# If the cost is $c = a\,T^p$ then $\log c = \log a + p \log T$, a straight line of slope $p$ on log-log
# axes. `loglog_exponent` finds that slope by least squares.

# %% the exponent: slope of log(cost) against log(T)
def loglog_exponent(lengths, costs) -> float:
    """Least-squares slope of log(cost) on log(T); NaN with fewer than two positive costs."""
    lengths, costs = np.asarray(lengths, dtype=float), np.asarray(costs, dtype=float)
    keep = np.isfinite(costs) & (costs > 0)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(lengths[keep]), np.log(costs[keep]), 1)[0])


# %% [markdown]
# ## 2. 图：时间和内存随 $T$ 的变化 (双对数坐标)
#
# **怎样读图**：两个坐标轴都是对数刻度，所以 $T^2$ 是一条直线。左图是每次调用的时间，灰色点线是
# $\propto T^2$ 的参考线；短序列时时间由固定开销主导，曲线较平，序列变长后逐渐贴近参考线的斜率。
# 右图黑色虚线是一个 $T\times T$ 矩阵的大小；从零实现的峰值内存增量跟着它增长，融合算子的增量小得多
# (提交的运行里最多不到 1 MiB，而从零实现到 32 MiB；多数长度上是 0，指数表里融合算子的内存指数只由两三个点拟合，说明不了形状)。
#
# <!-- en -->
# ## 2. Figure: time and memory against $T$ (log-log)
#
# **How to read it**: both axes are logarithmic, so $T^2$ is a straight line. Left: time per call, the grey
# dotted line is a $\propto T^2$ reference; at short lengths fixed overheads dominate and the curve is
# flatter, at longer ones it approaches the reference slope. Right: the dashed black line is the size of one
# $T\times T$ matrix; the scratch attention's peak-memory rise follows it, the fused kernel's stays far lower (under
# 1 MiB in the committed runs where the scratch one reaches 32 MiB, and 0 at most lengths: the exponent table's memory
# slope for the fused kernel is fitted through two or three points and says nothing of a shape).

# %% figure
def cost_figure(frame: pd.DataFrame, lang: str):
    """Log-log: time against T (left), bytes of the matrix and peak RSS rise against T (right)."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    lengths = frame["T"].to_numpy(dtype=float)
    for kind, marker in zip(KINDS, "os"):
        rows = frame[frame["kind"] == kind]
        left.plot(rows["T"], rows["ms"], marker=marker, label=kind)
        if rows["peak_rss_mb"].notna().any():
            right.plot(rows["T"], rows["peak_rss_mb"].where(rows["peak_rss_mb"] > 0), marker=marker,
                       label=text(f"{kind}: peak RSS rise", f"{kind}：峰值 RSS 增量", lang))
    scratch = frame[frame["kind"] == "scratch"]
    right.plot(scratch["T"], scratch["matrix_mb"], "k--",
               label=text("one T×T matrix (B·H·T²·4 bytes)", "一个 T×T 矩阵 (B·H·T²·4 字节)", lang))
    reference = scratch["ms"].iloc[0] * (lengths[: len(scratch)] / lengths[0]) ** 2
    left.plot(scratch["T"], reference, ":", color="grey", label=text("∝ T² (reference)", "∝ T² (参考线)", lang))
    for axis in (left, right):
        axis.set_xscale("log", base=2)
        axis.set_xticks(sorted(frame["T"].unique()), [str(n) for n in sorted(frame["T"].unique())])
        axis.set_yscale("log")
        axis.set_xlabel(text("sequence length T", "序列长度 T", lang))
        axis.legend(fontsize=8)
        axis.grid(alpha=0.3, which="both")
    left.set_ylabel(text("time per call (ms)", "每次调用时间 (毫秒)", lang))
    left.set_title(text("time", "时间", lang))
    right.set_ylabel("MiB")
    right.set_title(text("memory", "内存", lang))
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 3. 对 $T^2$ 能做什么：高效注意力
#
# 来源 001 在它的比较表后面说，自注意力的 $O(n^2)$ 是主要瓶颈，催生了"稀疏注意力"、"线性注意力"等变体。
# 它们分三类，代价和代价各不相同：
#
# - **省内存、结果不变** (本课测的就是这一类)：FlashAttention (Dao 等 2022，arXiv:2205.14135) 和
#   Rabe 与 Staats (2021，"Self-attention Does Not Need $O(n^2)$ Memory"，arXiv:2112.05682) 分块计算 softmax，
#   不保存 $T\times T$ 矩阵：乘法一次不少，时间仍是 $O(T^2)$，额外内存只随 $T$ 线性增长，结果与普通注意力相同
#   (到浮点误差)。PyTorch 的 `F.scaled_dot_product_attention` 按设备选算子：本机 CPU 上下表记录了哪些能运行
#   (FLASH_ATTENTION 能运行且与默认调用的结果完全相同，即默认用的是它；EFFICIENT_ATTENTION，即 xFormers 的
#   memory-efficient 算子，只有 GPU 版，在 CPU 上不能运行)。
# - **稀疏注意力，改变结果**：每个查询只看一部分键 (局部窗口、跨步、少数全局词元)：Sparse Transformer
#   (Child 等 2019，arXiv:1904.10509)、Longformer (Beltagy 等 2020，arXiv:2004.05150)、BigBird (Zaheer 等 2020，
#   arXiv:2007.14062)。时间和内存约为 $O(T \sqrt{T})$ 或 $O(T)$，但模型不再是同一个函数。
# - **线性注意力，近似**：用核特征映射或低秩投影代替 softmax 矩阵：线性 Transformer (Katharopoulos 等 2020，
#   arXiv:2006.16236)、Performer (Choromanski 等 2021，arXiv:2009.14794)、Linformer (Wang 等 2020，arXiv:2006.04768)。
#   代价 $O(T)$，结果是近似。
#
# 本课只测了第一类 (融合算子)；后两类改变了模型，要和质量一起比较，本课程没有实现它们。
#
# <!-- en -->
# ## 3. What is done about $T^2$: efficient attention
#
# Source 001, after its comparison table, says self-attention's $O(n^2)$ is the main bottleneck and the reason for
# "sparse attention" and "linear attention" variants. There are three families, at different prices:
#
# - **memory-efficient, the same result** (the family this lesson measures): FlashAttention (Dao et al. 2022,
#   arXiv:2205.14135) and Rabe and Staats (2021, "Self-attention Does Not Need $O(n^2)$ Memory", arXiv:2112.05682)
#   compute the softmax in tiles and never hold the $T\times T$ matrix: not one multiplication fewer, time still
#   $O(T^2)$, extra memory linear in $T$, the result that of plain attention (to rounding). PyTorch's
#   `F.scaled_dot_product_attention` picks a kernel per device: the table below records which run on this CPU
#   (FLASH_ATTENTION runs and gives exactly the default call's result, so it is the one the default uses;
#   EFFICIENT_ATTENTION, xFormers' memory-efficient kernel, exists for GPUs only and does not run on the CPU).
# - **sparse attention, another result**: each query looks at some keys only (a local window, strides, a few global
#   tokens): the Sparse Transformer (Child et al. 2019, arXiv:1904.10509), Longformer (Beltagy et al. 2020,
#   arXiv:2004.05150), BigBird (Zaheer et al. 2020, arXiv:2007.14062). About $O(T \sqrt{T})$ or $O(T)$ time and
#   memory, but the model is no longer the same function.
# - **linear attention, an approximation**: a kernel feature map or a low-rank projection in place of the softmax
#   matrix: the linear Transformer (Katharopoulos et al. 2020, arXiv:2006.16236), Performer (Choromanski et al. 2021,
#   arXiv:2009.14794), Linformer (Wang et al. 2020, arXiv:2006.04768). $O(T)$ cost, an approximate result.
#
# The lesson measures only the first family (the fused kernel); the other two change the model and must be compared
# on quality too; the course does not implement them.

# %% which of PyTorch's attention kernels run on this machine's CPU
def sdpa_backends(length: int = 256) -> pd.DataFrame:
    """Each SDPA backend alone on one input: runs or not, and its largest difference from the default call."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = random_qkv(1, 4, length, 16)
    default = F.scaled_dot_product_attention(q, k, v)
    rows = []
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
        try:
            with sdpa_kernel(backend):
                difference = float((F.scaled_dot_product_attention(q, k, v) - default).abs().max())
            rows.append({"backend": backend.name, "runs": True, "max_abs_difference_from_default": difference,
                         "note": ""})
        except RuntimeError:  # PyTorch: "No viable backend for scaled_dot_product_attention was found"
            rows.append({"backend": backend.name, "runs": False, "max_abs_difference_from_default": float("nan"),
                         "note": "no kernel for this device and input"})
    return pd.DataFrame(rows)


# %% [markdown]
# ## 练习
#
# 1. 读指数表：从零实现的时间指数是多少？为什么比 2 小？(提示：固定开销、缓存、短序列。)
# 2. $T = 1024$、$B = 8$、$H = 4$ 时，一个注意力矩阵占多少 MiB？如果 $T = 8192$ 呢？
# 3. 融合算子没有省下任何乘法，它省下的是什么？
#
# 运行：`python -m comparisons.course.attention_cost --lang zh [--lengths 64 128 256 512 1024]`。
#
# <!-- en -->
# ## Exercises
#
# 1. Read the exponent table: what is the scratch attention's time exponent? Why below 2? (Hint: fixed overheads, caches, short lengths.)
# 2. How many MiB is one attention matrix at $T = 1024$, $B = 8$, $H = 4$? At $T = 8192$?
# 3. The fused kernel saves no multiplication. What does it save?
#
# Run: `python -m comparisons.course.attention_cost [--lengths 64 128 256 512 1024]`.

# %% main
def measure(lengths, batch: int, heads: int, head_dim: int, out, threads: int, quick: bool = False) -> pd.DataFrame:
    memory = memory_in_child(lengths, batch, heads, head_dim, out, threads)
    rows = []
    for kind in KINDS:
        for length in lengths:
            elements = batch * heads * length * length
            seconds = median_seconds(kind, batch, heads, length, head_dim, *((2, 0.0) if quick else (5, 0.2)))
            rows.append({
                "kind": kind, "T": length, "elements": elements,
                "matrix_mb": elements * BYTES_PER_ELEMENT / 2**20, "ms": seconds * 1000,
                "peak_rss_mb": memory[kind][str(length)] if memory else float("nan"),
            })
            print(f"{kind:8s} T={length:5d}  {seconds * 1000:8.3f} ms", file=sys.stderr)
    return pd.DataFrame(rows)


def exponents(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Fitted exponent per kind and per measured quantity."""
    return {kind: {column: loglog_exponent(rows["T"], rows[column])
                   for column in ("elements", "ms", "peak_rss_mb")}
            for kind, rows in frame.groupby("kind", sort=False)}


def _headers(lang: str) -> dict[str, str]:
    return {
        "kind": text("attention", "注意力实现", lang), "T": "T",
        "elements": text("matrix elements B·H·T²", "矩阵元素数 B·H·T²", lang),
        "matrix_mb": text("matrix MiB (float32)", "矩阵大小 MiB (float32)", lang),
        "ms": text("time per call (ms)", "每次调用时间 (毫秒)", lang),
        "peak_rss_mb": text("peak RSS rise (MiB)", "峰值 RSS 增量 (MiB)", lang),
    }


def _run(args: argparse.Namespace) -> int:
    if args.memory_child:
        return _memory_child(args)
    lengths = args.lengths or (QUICK_LENGTHS if args.quick else LENGTHS)
    if len(lengths) < 2 or min(lengths) < 1:
        raise UserInputError("--lengths needs at least two positive lengths, e.g. --lengths 64 128 256")
    setup_matplotlib(args.lang)
    import torch

    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, B={args.batch} H={args.heads} "
          f"d_k={args.head_dim}", file=sys.stderr)
    frame = measure(sorted(lengths), args.batch, args.heads, args.head_dim, args.out, args.threads, args.quick)
    fitted = exponents(frame)
    backends = sdpa_backends()
    print(backends.to_string(index=False))
    slope_rows = [{text("attention", "注意力实现", args.lang): kind,
                   text("exponent: elements", "指数：元素数", args.lang): values["elements"],
                   text("exponent: time", "指数：时间", args.lang): values["ms"],
                   text("exponent: peak RSS", "指数：峰值内存", args.lang): values["peak_rss_mb"]}
                  for kind, values in fitted.items()]
    print(frame.to_string(index=False))
    for kind, values in fitted.items():
        print(text(f"{kind}: cost ∝ T^k with k = {values['elements']:.2f} (elements), {values['ms']:.2f} (time), "
                   f"{values['peak_rss_mb']:.2f} (peak RSS)",
                   f"{kind}：代价 ∝ T^k，k = {values['elements']:.2f} (元素数)，{values['ms']:.2f} (时间)，"
                   f"{values['peak_rss_mb']:.2f} (峰值内存)", args.lang))
    paths = [
        *write_table(frame.rename(columns=_headers(args.lang)), args.out, "cost",
                     text("Cost of attention against sequence length", "注意力代价与序列长度", args.lang)),
        *write_table(pd.DataFrame(slope_rows), args.out, "exponents",
                     text("Fitted log-log exponents (2 = quadratic)", "对数-对数拟合指数 (2 = 平方增长)", args.lang),
                     float_format="{:.2f}"),
        *write_table(backends, args.out, "sdpa_backends",
                     text("PyTorch's scaled_dot_product_attention kernels on this CPU (T = 256): which run, and how far "
                          "each is from the default call", "本机 CPU 上 PyTorch scaled_dot_product_attention 的各算子"
                          " (T = 256)：能否运行，与默认调用差多少", args.lang), float_format="{:.3g}"),
        save_figure(cost_figure(frame, args.lang), args.out / "attention_cost.png"),
        atomic_write_json(args.out / "summary.json", {
            "batch": args.batch, "heads": args.heads, "head_dim": args.head_dim,
            "threads": torch.get_num_threads(), "torch": torch.__version__, "exponents": fitted,
            "rows": frame.to_dict(orient="records"), "sdpa_backends": backends.to_dict(orient="records"),
            "memory_method": "VmHWM minus VmRSS around one call, reset via /proc/self/clear_refs, in a child "
                             f"process with MALLOC_MMAP_THRESHOLD_={MMAP_THRESHOLD}; matrix bytes computed",
        }),
    ]
    report_written(paths)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__)
    parser.add_argument("--lengths", type=int, nargs="+", default=None,
                        help=f"sequence lengths (default {' '.join(map(str, LENGTHS))})")
    parser.add_argument("--batch", type=int, default=1, help="batch size B (default 1)")
    parser.add_argument("--heads", type=int, default=4, help="heads H (default 4)")
    parser.add_argument("--head-dim", type=int, default=16, help="per-head width d_k (default 16)")
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(threads=1)  # one thread: timings on a shared machine stay readable
    return run_course(parser, argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
