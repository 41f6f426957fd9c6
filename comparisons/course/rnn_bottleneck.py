"""The RNN bottleneck: a GRU encoder-decoder whose only context is the encoder's final state, beside the same GRU
with additive attention, on the sine task at growing input lengths, several seeds, a paired verdict per length.

Before attention (Cho et al. 2014; Sutskever et al. 2014) the decoder of an RNN encoder-decoder saw the source only
through one fixed vector, the encoder's final state; Bahdanau et al. (2015) let each decoder step read every encoder
state through attention, and reported (their figure 2) that the fixed-vector model's translations degraded as
sentences grew longer while the attention model's held up. This lesson asks the same question on lesson 13's sine
task: both models (backends/torch_scratch/rnn_seq2seq.py, GRUSeq2Seq with attention=True / False) train with the same
loop, steps and seeds (comparisons/course/sine_task.py) at input lengths of 30, 60 and 120 past steps; the verdict
per length is the paired difference of test MSE, seed by seed, with a 95% t interval over seeds and the paired t-test's
p corrected by Holm over the lengths.

Run: python -m comparisons.course.rnn_bottleneck [--steps N] [--lengths 30 60 120] [--seeds N] [--lang en|zh] [--quick]
"""
# %% [markdown]
# # 第 17 课　RNN 的瓶颈：没有注意力的编码器-解码器
#
# 在注意力出现之前 (Cho 等 2014；Sutskever 等 2014)，RNN 编码器-解码器的解码器只通过**一个固定的向量**看输入：
# 编码器读完整个序列后的最后一个隐藏状态。不管输入有多长，都要压进这 $h$ 个数里，这就是所谓的"瓶颈"。
# Bahdanau 等 (2015) 让解码器的每一步都能通过注意力读编码器的**每一个**状态，并报告 (他们的图 2)：
# 句子越长，固定向量模型的翻译越差，而带注意力的模型基本保持。第 13 课只训练了带注意力的 GRU；
# 本课把去掉注意力的同一个 GRU 放在旁边，在同一个正弦任务上让输入变长，看瓶颈在这里是否真的出现。
#
# <!-- en -->
# # Lesson 17. The RNN bottleneck: the encoder-decoder without attention
#
# Before attention (Cho et al. 2014; Sutskever et al. 2014), the decoder of an RNN encoder-decoder saw its input only
# through **one fixed vector**: the encoder's last hidden state after reading the whole sequence. However long the
# input, it must fit into those $h$ numbers: the "bottleneck". Bahdanau et al. (2015) let every decoder step read
# **every** encoder state through attention, and reported (their figure 2) that the fixed-vector model's
# translations got worse as sentences grew longer while the attention model's held up. Lesson 13 trained only the
# GRU with attention; this lesson sets the same GRU without attention beside it, on the same sine task, and makes
# the input longer to see whether the bottleneck shows here.

# %%
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.course.shared import course_parser, paired_seed_tests, report_written, run_course
from comparisons.course.sine_task import HORIZON, NORMALISE, make_splits, mse_autoregressive, train_model
from comparisons.outputs import atomic_write_json, save_figure, write_table
from comparisons.report.i18n import setup_matplotlib, text

MODULE = "rnn_bottleneck"
LENGTHS, QUICK_LENGTHS = (30, 60, 120), (12, 24)
STEPS, EVAL_EVERY, QUICK_STEPS, QUICK_EVAL_EVERY = 1000, 250, 6, 3
HIDDEN, QUICK_HIDDEN = 32, 8
SEEDS = 3
MODELS = ("attention", "final state only")


# %% [markdown]
# ## 1. 两个模型：唯一的区别是上下文
#
# 两个模型是同一个类 `GRUSeq2Seq` (`backends/torch_scratch/rnn_seq2seq.py`)：编码器 GRU 读过去的 $S$ 步，解码器
# `GRUCell` 一步一步地预测未来 30 步，每一步的输入是上一步的值和一个**上下文向量** $c_t$：
#
# - 带注意力 (`attention=True`，第 13 课的模型)：$c_t = \sum_s \alpha_{t,s} h_s$，权重由加性得分
#   $v^\top \tanh(W_q s_{t-1} + W_k h_s)$ 的 softmax 给出，每一步不同；
# - 只用最后状态 (`attention=False`)：$c_t = h_S$，对所有步都是同一个向量。
#
# 其余完全相同 (隐藏宽度 32、解码器、输出层)；没有注意力的模型少了 $W_q, W_k, v$ 三组参数。下面的检查说明
# 瓶颈是字面意义上的：没有注意力的模型，解码器从编码器得到的只有 $h_S$ (它的初始状态和每一步的上下文)。
#
# <!-- en -->
# ## 1. Two models that differ only in their context
#
# Both are one class, `GRUSeq2Seq` (`backends/torch_scratch/rnn_seq2seq.py`): an encoder GRU reads the $S$ past steps,
# a decoder `GRUCell` forecasts the 30 future steps one at a time, each step fed the previous value and a **context
# vector** $c_t$:
#
# - with attention (`attention=True`, lesson 13's model): $c_t = \sum_s \alpha_{t,s} h_s$, the weights a softmax of
#   the additive score $v^\top \tanh(W_q s_{t-1} + W_k h_s)$, different at every step;
# - final state only (`attention=False`): $c_t = h_S$, one vector for every step.
#
# Everything else is the same (hidden width 32, the decoder, the output layer); the model without attention lacks
# the parameters $W_q, W_k, v$. The check below shows the bottleneck is literal: the decoder of the model without
# attention receives nothing from the encoder but $h_S$ (its first state and every step's context).

# %%
def build(hidden: int, attention: bool):
    """A builder for sine_task.train_model (called after the seed is set)."""
    def factory(config):
        from backends.torch_scratch.rnn_seq2seq import GRUSeq2Seq

        return GRUSeq2Seq(hidden, HORIZON, attention=attention)
    return factory


def bottleneck_check(hidden: int, length: int) -> dict:
    """Parameters of both models, and the forecast of the model without attention computed from h_S alone."""
    import torch

    torch.manual_seed(0)
    with_attention, without = build(hidden, True)(None), build(hidden, False)(None)
    source = torch.randn(2, length, 1)
    forecast = without.forecast(source, HORIZON)
    _, last = without.encode(source)
    with torch.no_grad():  # decode from (h_S, the last value) only: the encoder's other states play no part
        state, value, steps = last, source[:, -1], []
        for _ in range(HORIZON):
            value, _, state = without.step(value, last[:, None, :], None, state)
            steps.append(value)
    return {"params_attention": sum(p.numel() for p in with_attention.parameters()),
            "params_final_state": sum(p.numel() for p in without.parameters()),
            "forecast_from_final_state_only": bool(torch.allclose(forecast, torch.stack(steps, dim=1)))}


# %% [markdown]
# ## 2. 同一个任务，输入越来越长
#
# 任务与第 13 课相同 (噪声正弦，周期 12 到 30 步，预测未来 30 步，逐窗口归一化，教师强制训练，验证集上自回归 MSE
# 最低的一步保留，测试集只评一次)，只是过去的窗口长度 $S$ 取 30、60、120。每个长度、每个种子，两个模型用**同样的**
# 数据、步数和种子训练 (配对)。预算是每个模型 1000 步 (第 13 课用 3000 步；这里 3 个长度 × 3 个种子 × 2 个模型
# 共 18 次训练，要在几分钟内跑完)：两个模型都还没有训练到头，比较的是同样预算下的结果。
# 注意：$S$ 越大，每条序列越长，训练窗口也越多 (每 10 步一个)；测试集每个长度都是 30 条序列、300 个窗口。
#
# <!-- en -->
# ## 2. One task, longer and longer inputs
#
# The task is lesson 13's (noisy sines with periods of 12 to 30 steps, 30 future steps forecast, per-window
# normalisation, teacher forcing, the step with the lowest validation autoregressive MSE kept, test scored once),
# with the past window $S$ at 30, 60 and 120 steps. At each length and seed, the two models train on the **same**
# data with the same steps and seed (paired). The budget is 1000 steps a model (lesson 13 used 3000; here
# 3 lengths × 3 seeds × 2 models make 18 trainings that must finish in minutes): neither model has finished learning,
# and the comparison is at an equal budget. Note that a larger $S$ means longer series and more training windows
# (one every 10 steps); the test set is 30 series, 300 windows, at every length.

# %%
def train_grid(lengths, seeds: int, steps: int, eval_every: int, hidden: int, quick: bool) -> pd.DataFrame:
    """One row per (length, seed, model): validation and test MSE, chosen step, seconds, parameters."""
    rows = []
    for length in lengths:
        data = make_splits(quick, history=length)
        for seed in range(seeds):
            for name, attention in zip(MODELS, (True, False)):
                started = time.perf_counter()
                model, history, best_step = train_model(None, data, steps, seed=seed, eval_every=eval_every,
                                                        factory=build(hidden, attention))
                seconds = time.perf_counter() - started
                test_mse, _ = mse_autoregressive(model, data["test"], NORMALISE)
                rows.append({"length": length, "seed": seed, "model": name, "best_step": best_step,
                             "valid_mse": min(h["valid_mse"] for h in history), "test_mse": test_mse,
                             "seconds": seconds, "params": sum(p.numel() for p in model.parameters())})
                print(f"S = {length}, seed {seed}, {name}: test MSE {test_mse:.4f} (step {best_step}, {seconds:.0f} s)",
                      flush=True)
    return pd.DataFrame(rows)


# %% [markdown]
# ## 3. 配对结论：每个长度一个区间
#
# 对每个长度和种子，取差 $d = \text{MSE}_{\text{最后状态}} - \text{MSE}_{\text{注意力}}$ (正数：注意力更好)。
# 区间是这些差在种子间的 95% $t$ 区间 $\bar d \pm t_{0.975,\,n-1}\, s_d/\sqrt{n}$：它反映训练种子的波动
# (不含测试窗口的抽样)。只有 3 个种子时 $t_{0.975,2} = 4.30$，区间很宽。三个长度就是三次检验：结论看配对 $t$ 检验的 p
# 在三个长度上做 Holm 校正后的值 (与第 6、7、14 课对各对比较做校正一样)，所以单独看不跨 0 的区间也可能"没有定论"；
# "没有定论"不是"一样好"。
#
# <!-- en -->
# ## 3. The paired verdict: one interval per length
#
# At each length and seed, the difference $d = \text{MSE}_{\text{final state}} - \text{MSE}_{\text{attention}}$
# (positive: attention is better). The interval is the 95% $t$ interval of these differences over seeds,
# $\bar d \pm t_{0.975,\,n-1}\, s_d/\sqrt{n}$: it reflects training seeds (not the sampling of test windows). With
# 3 seeds $t_{0.975,2} = 4.30$ and the interval is wide. Three lengths are three tests: the verdict reads the paired
# $t$-test's p corrected by Holm over the lengths (as lessons 6, 7 and 14 correct over their pairs), so an interval
# that excludes 0 on its own can still be "inconclusive"; and "inconclusive" is not "equal".

# %%
def paired_verdicts(runs: pd.DataFrame, lang: str) -> pd.DataFrame:
    """Per length: mean test MSE of each model, the mean paired difference, its 95% t interval over seeds, the paired
    t-test's p and Holm's p over the lengths (shared.paired_seed_tests); the verdict reads Holm's p."""
    cells, rows = [], []
    for length, group in runs.groupby("length", sort=True):
        wide = group.pivot(index="seed", columns="model", values="test_mse")
        cells.append((wide[MODELS[1]] - wide[MODELS[0]]).to_numpy())
        rows.append({"S": int(length), text("seeds", "种子数", lang): len(wide),
                     text("test MSE, attention", "测试 MSE，注意力", lang): float(wide[MODELS[0]].mean()),
                     text("test MSE, final state", "测试 MSE，最后状态", lang): float(wide[MODELS[1]].mean())})
    for row, test in zip(rows, paired_seed_tests(cells)):
        row.update({text("difference (final − attention)", "差 (最后状态 − 注意力)", lang): test["mean"],
                    "95% low": test["low"], "95% high": test["high"], "p": test["p"],
                    text("p (Holm over lengths)", "p（按长度 Holm 校正）", lang): test["p_holm"],
                    text("verdict", "结论", lang): (text("attention lower", "注意力更低", lang) if test["mean"] > 0 else
                                                  text("final state lower", "最后状态更低", lang))
                    if test["p_holm"] < 0.05 else text("inconclusive", "没有定论", lang)})
    return pd.DataFrame(rows)


# %% [markdown]
# ## 4. 提交的运行显示了什么
#
# (`results/course/<语言>/rnn_bottleneck/`，每个模型 1000 步，3 个种子。) 测试集 MSE 之差 (最后状态 − 注意力)、种子间 95% 区间、
# 配对 $t$ 检验的 p 与三个长度上 Holm 校正后的 p：
#
# | S | 注意力 | 只用最后状态 | 差 [95% 区间] | p | Holm p | 结论 |
# |---:|---:|---:|---|---:|---:|---|
# | 30 | 0.0396 | 0.0608 | +0.0212 [+0.0022, +0.0402] | 0.041 | 0.081 | 没有定论 |
# | 60 | 0.0260 | 0.0488 | +0.0228 [+0.0016, +0.0440] | 0.044 | 0.081 | 没有定论 |
# | 120 | 0.0215 | 0.0385 | +0.0170 [+0.0067, +0.0273] | 0.019 | 0.058 | 没有定论 |
#
# 每个长度单独看，区间都在 0 之上；但三个长度是三次检验，Holm 校正后没有一个长度的 p 低于 0.05：3 个种子还不能判定
# 注意力在哪个长度上更好 ("没有定论"不是"一样好"，差的点估计都偏向注意力)。点估计 (0.021、0.023、0.017) 没有随长度变大，
# 两个模型的 MSE 都随 $S$ 变长而下降：在这个任务上没有看到输入变长让瓶颈更紧的迹象，但这只是点估计的读法，不是结论。
# 这与 Bahdanau 等人的图 2 并不矛盾：预测正弦只需要周期、相位和幅度，32 个数装得下；翻译要把整句话装进去。
# 没有注意力的模型少 2,080 个参数 (9,857 对 11,937)。两个模型在第 1000 步都还没有停止进步 (每次都是最后一步最好)；
# 表中的训练秒数是在一台空闲的 2 核 AMD EPYC 上单线程测的 (2026-12-06)；每个模型每个长度只有 3 次运行，没有算速度的配对结论，
# 所以这里不比较两个模型的速度。
#
# <!-- en -->
# ## 4. What the committed run shows
#
# (`results/course/<lang>/rnn_bottleneck/`, 1000 steps a model, 3 seeds.) Test MSE difference (final state −
# attention) with its 95% interval over seeds, the paired $t$-test's p and Holm's p over the three lengths:
#
# | S | attention | final state only | difference [95% interval] | p | Holm p | verdict |
# |---:|---:|---:|---|---:|---:|---|
# | 30 | 0.0396 | 0.0608 | +0.0212 [+0.0022, +0.0402] | 0.041 | 0.081 | inconclusive |
# | 60 | 0.0260 | 0.0488 | +0.0228 [+0.0016, +0.0440] | 0.044 | 0.081 | inconclusive |
# | 120 | 0.0215 | 0.0385 | +0.0170 [+0.0067, +0.0273] | 0.019 | 0.058 | inconclusive |
#
# Each interval alone excludes 0, but three lengths are three tests, and after Holm's correction no length's p is
# below 0.05: three seeds cannot yet say at which length attention is better ("inconclusive" is not "equal"; every
# point estimate leans towards attention). The point estimates (0.021, 0.023, 0.017) do not grow with length, and both
# models' MSE falls as $S$ grows: on this task nothing suggests a longer input tightened the bottleneck, but that is a
# reading of point estimates, not a verdict. It does not contradict Bahdanau et al.'s figure 2: a sine forecast needs
# a period, a phase and an amplitude, which fit in 32 numbers; a translation must carry the whole sentence. The model
# without attention has 2,080 fewer parameters (9,857 against 11,937). Neither model had stopped improving at step
# 1000 (the last step was the best in every run); the table's training seconds were measured on an idle 2-core AMD EPYC,
# one thread (6 December 2026); with three runs a model and length and no paired speed verdict computed, the lesson
# does not rank the two models' speed.

# %% [markdown]
# ## 练习
#
# 1. 哪些长度上区间单独看在 0 之上？Holm 校正后呢？差随 $S$ 变大还是变小？与 Bahdanau 等人的图 2 相比，这里的任务有什么不同
#    (预测正弦只需要周期、相位和幅度，翻译要记住整句话)？
# 2. 没有注意力的模型每步训练快了多少？它的参数少了多少？
# 3. 只有 3 个种子时 $t$ 区间为什么这么宽？用 `--seeds 6` 重跑一个长度，区间缩短了多少？
#
# 运行：`python -m comparisons.course.rnn_bottleneck --lang zh [--steps 1000] [--lengths 30 60 120] [--seeds 3]`。
#
# <!-- en -->
# ## Exercises
#
# 1. At which lengths is the interval alone above 0, and after Holm's correction? Does the difference grow or shrink
#    with $S$? How does this task differ
#    from Bahdanau et al.'s figure 2 (a sine forecast needs its period, phase and amplitude; a translation must keep
#    the whole sentence)?
# 2. How much faster does a training step of the model without attention run? How many parameters does it lack?
# 3. Why is the $t$ interval so wide with 3 seeds? Rerun one length with `--seeds 6`: how much narrower is it?
#
# Run: `python -m comparisons.course.rnn_bottleneck [--steps 1000] [--lengths 30 60 120] [--seeds 3]`.

# %%
def plot(runs: pd.DataFrame, verdicts: pd.DataFrame, lang: str):
    """Left: test MSE by input length, each seed a point, the mean a line; right: paired difference with intervals."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    names = {MODELS[0]: text("GRU + attention", "GRU + 注意力", lang),
             MODELS[1]: text("GRU, final state only", "GRU，只用最后状态", lang)}
    for offset, (model, marker) in zip((-0.03, 0.03), zip(MODELS, ("o", "s"))):
        group = runs[runs["model"] == model]
        means = group.groupby("length")["test_mse"].mean()
        left.plot(means.index, means.values, marker=marker, label=names[model])
        left.scatter(group["length"] * (1 + offset), group["test_mse"], s=12, alpha=0.5, marker=marker)
    left.set_xscale("log", base=2)
    left.set_xlabel(text("input length S (past steps)", "输入长度 S (过去的步数)", lang))
    left.set_ylabel(text("test MSE (autoregressive)", "测试集 MSE (自回归)", lang))
    left.set_title(text("Each seed a point, the mean a line", "每个种子一个点，线是平均", lang), fontsize=10)
    left.legend(fontsize=8)
    difference = verdicts.columns[4]
    centre = verdicts[difference].to_numpy()
    errors = np.vstack([centre - verdicts["95% low"].to_numpy(), verdicts["95% high"].to_numpy() - centre])
    right.errorbar(verdicts["S"], centre, yerr=errors, fmt="o", capsize=4)
    right.axhline(0.0, color="grey", linestyle=":")
    right.set_xscale("log", base=2)
    right.set_xlabel(text("input length S (past steps)", "输入长度 S (过去的步数)", lang))
    right.set_ylabel(text("MSE final state − MSE attention", "MSE 最后状态 − MSE 注意力", lang))
    right.set_title(text("Paired difference, 95% t interval over seeds (> 0: attention better)",
                         "配对差与种子间 95% t 区间 (> 0：注意力更好)", lang), fontsize=10)
    fig.tight_layout()
    return fig


def run(args: argparse.Namespace) -> int:
    """Both GRUs at each length and seed, the paired verdicts, the figure."""
    if args.steps is not None and args.steps < 1:
        raise UserInputError(f"--steps {args.steps} must be at least 1")
    lengths = tuple(args.lengths) if args.lengths else (QUICK_LENGTHS if args.quick else LENGTHS)
    if min(lengths) < 2:
        raise UserInputError(f"--lengths {' '.join(map(str, lengths))}: every length must be at least 2")
    seeds = 2 if args.quick and args.seeds == SEEDS else args.seeds  # quick: 2 seeds unless told otherwise
    setup_matplotlib(args.lang)
    lang, out = args.lang, args.out
    steps = args.steps or (QUICK_STEPS if args.quick else STEPS)
    hidden = QUICK_HIDDEN if args.quick else HIDDEN
    check = bottleneck_check(hidden, lengths[0])
    print(f"parameters: with attention {check['params_attention']}, final state only {check['params_final_state']}; "
          f"forecast from the final state alone: {check['forecast_from_final_state_only']}")
    runs = train_grid(lengths, seeds, steps, min(steps, QUICK_EVAL_EVERY if args.quick else EVAL_EVERY), hidden,
                      args.quick)
    verdicts = paired_verdicts(runs, lang)
    seconds = runs.groupby(["length", "model"])["seconds"].mean().unstack("model")
    shown = runs.replace({"model": {MODELS[0]: text("attention", "注意力", lang),
                                    MODELS[1]: text("final state only", "只用最后状态", lang)}})
    shown.columns = [text(*names, lang) for names in (("length S", "长度 S"), ("seed", "种子"), ("model", "模型"),
                                                     ("chosen step", "选中的步"), ("validation MSE", "验证集 MSE"),
                                                     ("test MSE", "测试集 MSE"), ("train seconds", "训练秒数"),
                                                     ("parameters", "参数量"))]
    written = write_table(shown, out, "runs", text(f"Every run ({steps} steps): validation chooses the step, test scored "
                                                  "once", f"每次运行 ({steps} 步)：验证集选步，测试集只评一次", lang))
    written += write_table(verdicts, out, "verdicts",
                           text("Paired verdict per input length: MSE without attention minus MSE with it, 95% t "
                                "interval over seeds, Holm over the lengths",
                                "每个输入长度的配对结论：无注意力减有注意力的 MSE，种子间 95% t 区间，按长度 Holm 校正",
                                lang), float_format="{:.4f}")
    readings = [text(f"S = {row['S']}: final state − attention test MSE {row.iloc[4]:+.4f} "
                     f"[{row['95% low']:+.4f}, {row['95% high']:+.4f}], Holm p {row.iloc[-2]:.3g}: {row.iloc[-1]}",
                     f"S = {row['S']}：最后状态 − 注意力 测试 MSE {row.iloc[4]:+.4f} "
                     f"[{row['95% low']:+.4f}, {row['95% high']:+.4f}]，Holm p {row.iloc[-2]:.3g}：{row.iloc[-1]}", lang)
                 for _, row in verdicts.iterrows()]
    for line in readings:
        print(line)
    written.append(atomic_write_json(out / "rnn_bottleneck.json", {
        "quick": args.quick, "steps": steps, "seeds": seeds, "lengths": list(lengths), "hidden": hidden, **check,
        "mean_train_seconds": {f"S={length}": {model: float(seconds.loc[length, model]) for model in MODELS}
                               for length in seconds.index},
        "verdicts": paired_verdicts(runs, "en").to_dict(orient="records"), "readings": readings}))
    written.append(save_figure(plot(runs, verdicts, lang), out / "rnn_bottleneck.png"))
    report_written(written)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=SEEDS)
    parser.add_argument("--steps", type=int, default=None, help=f"training steps per model (default {STEPS})")
    parser.add_argument("--lengths", type=int, nargs="+", default=None,
                        help=f"input lengths S to train at (default {' '.join(map(str, LENGTHS))})")
    parser.set_defaults(threads=1)  # one thread: a width-32 GRU gains nothing from a second, only waits on it
    return run_course(parser, argv, run)


# %%
if __name__ == "__main__":
    raise SystemExit(main())
