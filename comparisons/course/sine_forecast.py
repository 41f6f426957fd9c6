"""Forecasting a noisy sine wave with the full encoder-decoder Transformer: what the student learns.

The same attention and encoder blocks that classify SMS messages also make a sequence-to-sequence
model (backends/torch_scratch/seq2seq.py): the encoder reads 60 past values, the decoder writes
the next 30, each one looking at the values before it (causal self-attention) and at the encoder's
memory (cross-attention). The student sees:

- teacher forcing in training (the decoder is fed the TRUE previous values, all steps in one pass)
  against autoregressive inference (it is fed its OWN previous predictions, one step at a time),
  and scheduled sampling (`--scheduled-sampling P`, off by default, as validation chose), which mixes
  the two while training;
- per-window normalisation (`--normalise`: each window scaled by the mean and std of its own PAST
  values, the forecast scaled back; on by default, as validation chose), a warm-up of the learning
  rate, and pre-LN vs post-LN blocks (`--norms`);
- honest baselines: a model is only interesting if it beats "repeat the last value" and "repeat
  the last period" (the period is ESTIMATED from the 60 past values by autocorrelation, as a
  forecaster without the generator's secrets would have to).

Data: synthetic series, each with its own random period (12-30 steps), amplitude, phase and
Gaussian noise, seeded; each split from its own random stream. Each series is cut into windows of
60 + 30 steps: overlapping ones for training (one every 10 steps, `--train-stride`), non-overlapping
ones for validation and test; train, valid and test windows come from different series. The
training step is chosen on validation MSE (autoregressive); test is scored once.

Run: python -m comparisons.course.sine_forecast [--steps N] [--scheduled-sampling [P]] [--norms pre post]
     [--[no-]normalise] [--train-stride N] [--out DIR] [--lang en|zh] [--seeds N] [--quick]
"""
# %% [markdown]
# # 第 12 课　正弦波预测：完整的编码器-解码器 Transformer
#
# 前面几课的注意力层和编码器块也能组成**序列到序列** (sequence-to-sequence, seq2seq) 模型：
# **编码器** (encoder) 读入过去 60 个值，**解码器** (decoder) 写出后面 30 个值。解码器每一步用
# **因果自注意力**只看它前面已经写出的值，再用**交叉注意力** (cross-attention) 去看编码器的输出 (记忆 memory)。
#
# 本课要看到：
# - **教师强制** (teacher forcing)：训练时解码器的输入是**真实的**前一个值，30 步一次算完；
#   **自回归推理** (autoregressive inference)：预测时只能输入**自己**上一步的预测，一步一步来，误差会累积；
#   **计划采样** (scheduled sampling，`--scheduled-sampling P`) 在训练中逐渐混入自己的预测，让模型练习从自己的
#   误差中恢复；在本课的数据和预算下验证集没有选它 (默认关闭，练习 3 比较)。
# - **更多训练数据**：数据是合成的，训练窗口可以互相重叠 (每 10 步开始一个新窗口，`--train-stride`)，
#   同样 100 条训练序列给出 8200 个窗口而不是 1000 个；验证集和测试集的窗口不变。
# - **逐窗口归一化** (per-window normalisation，`--normalise`)：每个窗口减去**过去** 60 个值的均值、除以它们的标准差，
#   预测后再还原，模型只需学"形状"。验证集选了归一化 (默认打开，`--no-normalise` 可比较)。
# - **诚实的基线**：模型只有胜过两种朴素预测才有意义：重复最后一个值；重复上一个周期 (周期由过去 60 个值的
#   自相关估计，和不知道生成器参数的预测者一样)。
#
# 训练的步数由**验证集**上的自回归 MSE 选出，测试集只评一次：$\mathrm{MSE} = \frac{1}{NH}\sum_{i,h}(\hat y_{ih} - y_{ih})^2$。
#
# <!-- en -->
# # Lesson 12. Forecasting a sine wave: the full encoder-decoder Transformer
#
# The attention layers and encoder blocks of the earlier lessons also build a **sequence-to-sequence**
# model: the **encoder** reads 60 past values, the **decoder** writes the next 30. At each step the decoder
# looks at what it has written so far through **causal self-attention**, and at the encoder's output (its
# memory) through **cross-attention**.
#
# What the student sees:
# - **teacher forcing**: in training the decoder is fed the **true** previous values, all 30 steps in one pass;
#   **autoregressive inference**: when forecasting it is fed its **own** previous predictions, one step at a
#   time, and errors accumulate; **scheduled sampling** (`--scheduled-sampling P`) mixes the two while training,
#   so the model practises recovering from its own errors; with this lesson's data and budget validation did not
#   choose it (off by default; exercise 3 compares).
# - **more training data**: the data is synthetic, so training windows may overlap (a new one every 10 steps,
#   `--train-stride`): the same 100 training series give 8200 windows instead of 1000; validation and test
#   windows are unchanged.
# - **per-window normalisation** (`--normalise`): each window is shifted by the mean and scaled by the std of its
#   **past** 60 values, and the forecast is scaled back, so the model learns shapes. Validation chose it (on by
#   default; `--no-normalise` to compare).
# - **honest baselines**: a model matters only if it beats two naive forecasts: repeat the last value, and
#   repeat the last period (the period estimated from the 60 past values by autocorrelation, as a forecaster
#   without the generator's secrets would have to).
#
# Validation autoregressive MSE chooses the training step; test is scored once:
# $\mathrm{MSE} = \frac{1}{NH}\sum_{i,h}(\hat y_{ih} - y_{ih})^2$.

# %%
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.course.shared import course_parser, report_written, run_course
from comparisons.course.sine_task import (  # the sine task, shared with attention_before_transformers
    BATCH_SIZE, DATA_SEED, EVAL_EVERY, HISTORY, HORIZON, LEARNING_RATE, NORMALISE, POSITIONAL, QUICK_EVAL_EVERY,
    QUICK_STEPS, QUICK_TRAIN_STRIDE,
    SCHEDULED_SAMPLING, STEPS, TRAIN_STRIDE, Windows, cut_windows, forecast_windows, make_series, make_splits,
    model_config, mse_autoregressive, teacher_forced_mse, train_model, window_scale)
from comparisons.report.i18n import label, setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "sine_forecast"


# %% [markdown]
# ## 1. 数据：带噪声的正弦序列，切成 (过去 60, 未来 30) 的窗口
#
# 每条序列有自己的随机周期 (12 到 30 步)、振幅、相位和高斯噪声。训练集、验证集、测试集的窗口来自**不同的序列**，
# 而且每个划分用自己的随机数流生成：改变训练集的大小不会改变验证集和测试集。训练窗口每 `TRAIN_STRIDE` = 10 步
# 开始一个 (相邻窗口重叠 80 步，是同一条序列的不同片段)；验证集和测试集的窗口互不重叠，每条序列 10 个。
#
# <!-- en -->
# ## 1. Data: noisy sine series, cut into (60 past, 30 future) windows
#
# Each series has its own random period (12 to 30 steps), amplitude, phase and Gaussian noise. Train,
# validation and test windows come from **different series**, each split from its own random stream:
# changing the size of the training set leaves validation and test unchanged. A training window starts every
# `TRAIN_STRIDE` = 10 steps (neighbours overlap by 80 steps: different stretches of one series); validation and
# test windows do not overlap, 10 per series.

# %%
# The data's code is in comparisons/course/sine_task.py (Windows, make_series, cut_windows, make_splits,
# window_scale), shared with lesson 13; print it with `inspect.getsource(make_splits)`.


# %% [markdown]
# ## 2. 朴素预测：重复最后一个值；重复上一个周期 (周期用自相关估计)
#
# 自相关 (autocorrelation) 在滞后 $P$ 等于周期时最大，所以取 $4 \le P \le 30$ 中自相关最大的 $P$ 作为周期估计，
# 预测 $\hat y_h = x_{S - P + (h \bmod P)}$。这两个基线不需要训练，在真实的时间序列上往往很难打败；在这个平滑、
# 周期已知的正弦任务上 Transformer 远胜过它们 (见下面的表)，重点是先有一个数字可比。
#
# <!-- en -->
# ## 2. Naive forecasts: repeat the last value; repeat the last period (period by autocorrelation)
#
# The autocorrelation peaks at a lag $P$ equal to the period, so the $P$ in $4 \le P \le 30$ with the highest
# autocorrelation is the period estimate, and the forecast is $\hat y_h = x_{S - P + (h \bmod P)}$. Neither
# baseline trains anything; on real series both are often hard to beat, while on this smooth sine task with a
# known period the Transformer beats them by far (the table below): the point is to have a number to beat first.

# %%
def last_value_forecast(source: np.ndarray, horizon: int = HORIZON) -> np.ndarray:
    """(N, S) -> (N, horizon): the last observed value, repeated."""
    return np.repeat(source[:, -1:], horizon, axis=1)


def estimate_period(history: np.ndarray, min_lag: int = 4, max_lag: int | None = None) -> int:
    """The lag (in steps) with the highest autocorrelation of one de-meaned history."""
    x = history - history.mean()
    max_lag = max_lag or len(x) // 2
    lags = np.arange(min_lag, max_lag + 1)
    acf = np.array([np.dot(x[:-lag], x[lag:]) / (len(x) - lag) for lag in lags])
    return int(lags[np.argmax(acf)])


def seasonal_naive_forecast(source: np.ndarray, horizon: int = HORIZON) -> tuple[np.ndarray, np.ndarray]:
    """Repeat the last estimated period: forecast[h] = source[S - P + (h mod P)]; returns (forecast, P)."""
    periods = np.array([estimate_period(row) for row in source])
    length = source.shape[1]
    forecast = np.stack([row[length - p + (np.arange(horizon) % p)] for row, p in zip(source, periods)])
    return forecast, periods



# %% [markdown]
# ## 3. 模型和训练循环：教师强制、学习率预热、计划采样
#
# 解码器的输入是"右移一位"的目标：$[x_{S-1}, y_0, \dots, y_{H-2}]$ (`shift_right`)，输出是 $[y_0, \dots, y_{H-1}]$。
# 教师强制时，一次前向就算出全部 30 步的损失。**计划采样**：第 $k$ 步以概率 $p_k = P \cdot k / K$ 把某个输入
# 换成模型自己 (教师强制一次前向) 的预测，$P$ 是 `--scheduled-sampling`，$K$ 是总步数。学习率先线性**预热** (warm-up) 再线性下降。
# 位置信息用**可学习的位置嵌入** (验证集上胜过正弦位置编码，`--positional sinusoidal` 可比较)。
# 每隔 `EVAL_EVERY` 步在验证集上做一次**自回归**预测，保留验证 MSE 最低的那一步的权重。
# 打开归一化时，模型在归一化后的数值上训练和预测，MSE 总是在还原后的原始尺度上计算。
#
# <!-- en -->
# ## 3. The model and its training loop: teacher forcing, learning-rate warm-up, scheduled sampling
#
# The decoder's input is the target shifted right by one, $[x_{S-1}, y_0, \dots, y_{H-2}]$ (`shift_right`), its
# output $[y_0, \dots, y_{H-1}]$. With teacher forcing one forward pass gives the loss of all 30 steps. **Scheduled
# sampling**: at step $k$ each input is replaced, with probability $p_k = P \cdot k / K$, by the model's own
# prediction (from one teacher-forced pass), $P$ being `--scheduled-sampling` and $K$ the number of steps. The
# learning rate **warms up** linearly, then decays linearly. Positions come from a **learned position embedding**
# (it beat the sinusoidal encoding on validation; `--positional sinusoidal` to compare). Every `EVAL_EVERY` steps the model forecasts the
# validation windows **autoregressively**, and the weights of the step with the lowest validation MSE are kept.
# With normalisation the model trains and forecasts in normalised units; MSE is always computed after scaling back.

# %%
# model_config, forecast_windows, train_model and teacher_forced_mse live in comparisons/course/sine_task.py.


# %% [markdown]
# ## 4. 表格和图
#
# **怎样读图**：前几张小图各是一个测试窗口：黑细线是过去 60 步，灰粗线是真实的未来 30 步，彩色线是各方法的预测
# (Transformer 是自回归预测)。最后一张是学习曲线：横轴训练步数，纵轴验证集自回归 MSE (对数刻度)，
# 曲线最低点就是被选中的一步；绿色虚线是"重复上一周期"在验证集上的 MSE，曲线要降到它下面，模型才有意义。
# 表格先列验证集 MSE (选择步数和配方的依据)，再列测试集 MSE，比较 Transformer 与两种朴素预测；"教师强制下的测试集 MSE"
# 一列说明：喂给模型真实的前一个值时误差小多少，差距就是自回归误差累积的代价。
#
# <!-- en -->
# ## 4. Table and figure
#
# **How to read it**: each small panel is one test window: the thin black line is the past 60 steps, the thick
# grey line the true next 30, coloured lines each method's forecast (the Transformer's autoregressive). The last
# panel is the learning curve: x the training step, y the validation autoregressive MSE (log scale); its lowest
# point is the chosen step; the green dashed line is "repeat the last period" on validation, which the curve must
# go below for the model to matter. The table gives validation MSE first (what chose the step and the recipe),
# then test MSE, for the Transformer and both naive forecasts; the "teacher-forced test MSE" column shows how much
# smaller the error is when the model is fed the true previous values: the gap is the price of errors
# accumulating autoregressively.

# %%
def results_table(rows: list[dict], lang: str) -> pd.DataFrame:
    """Mean validation MSE (what chose the step), mean (and std over seeds) of test MSE per method, parameters."""
    frame = pd.DataFrame(rows)
    out = []
    for method, part in frame.groupby("method", sort=False):
        out.append({label("model", lang): method,
                    text("validation MSE", "验证集 MSE", lang): part["valid_mse"].mean(),
                    label("mse", lang): part["test_mse"].mean(),
                    text("test MSE std (seeds)", "测试集 MSE 标准差 (种子)", lang):
                        part["test_mse"].std(ddof=1) if len(part) > 1 else float("nan"),
                    text("teacher-forced test MSE", "教师强制下的测试集 MSE", lang): part["teacher_forced_mse"].mean(),
                    text("chosen step", "选中的步数", lang): part["best_step"].mean(),
                    label("params_total", lang): part["params"].iloc[0],
                    label("seeds", lang): len(part)})
    return pd.DataFrame(out)


def plot(test: Windows, forecasts: dict[str, np.ndarray], histories: dict[str, list[dict]], lang: str,
         count: int = 3, valid_baseline: tuple[str, float] | None = None):
    """Truth against forecasts for the first window of a few test series, then validation MSE per evaluated
    step, with a naive forecast's validation MSE as a horizontal line (name, value)."""
    import matplotlib.pyplot as plt

    windows = tuple(sorted(np.unique(test.period, return_index=True)[1])[:count])  # one window per series
    fig, axes = plt.subplots(1, len(windows) + 1, figsize=(4.2 * (len(windows) + 1), 3.8))
    past, future = np.arange(-HISTORY, 0), np.arange(HORIZON)
    # models in blue and red; the last two entries are the naive forecasts: last value grey, last period green
    naive_styles = [("tab:grey", ":"), ("tab:green", "--")]
    model_styles = [("tab:blue", "-"), ("tab:red", "-")] * len(forecasts)
    styles = dict(enumerate(model_styles[: len(forecasts) - 2] + naive_styles))
    for axis, w in zip(axes, windows):
        axis.plot(past, test.source[w], color="black", linewidth=1, label=label("history", lang))
        axis.plot(future, test.target[w], color="black", linewidth=2, alpha=0.35, label=label("truth", lang))
        for k, (name, forecast) in enumerate(forecasts.items()):
            color, style = styles[k % len(styles)]
            axis.plot(future, forecast[w], color=color, linestyle=style, linewidth=1.4, label=name)
        axis.axvline(-0.5, color="grey", linewidth=0.8)
        axis.set_title(text(f"test window {w} (period {test.period[w]:.1f})",
                            f"测试窗口 {w} (周期 {test.period[w]:.1f})", lang))
        axis.set_xlabel(label("time_step", lang))
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8, bbox_to_anchor=(0.5, -0.06))
    curve = axes[-1]
    for k, (name, history) in enumerate(histories.items()):
        curve.plot([h["step"] for h in history], [h["valid_mse"] for h in history],
                   color=styles[k][0], marker=".", label=name)
    if valid_baseline is not None:
        curve.axhline(valid_baseline[1], color="tab:green", linestyle="--", linewidth=1, label=valid_baseline[0])
    curve.set_yscale("log")
    curve.set_xlabel(text("training step", "训练步数", lang))
    curve.set_ylabel(text("validation MSE (autoregressive)", "验证集 MSE (自回归)", lang))
    curve.set_title(text("Learning curves", "学习曲线", lang))
    curve.legend(fontsize=8)
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 与原文的不同
#
# 本课照着原文 (手写 Transformer 与正弦预测) 搭模型，但改正了原文代码里的三处问题：
#
# 1. **LayerNorm 从未被调用**：原文 `SublayerConnection.forward` 只计算 `x + dropout(sublayer(x))`，它定义的
#    `self.norm` 只在没有被调用的 `forward_pre` 里出现，所以原文的"post-LN"模型其实没有任何归一化。本项目的块在
#    pre 和 post 两种位置都真正调用 LayerNorm (第 6 课 `transformer_block` 显示代码，并测量去掉 LayerNorm 的代价)。
# 2. **前瞻掩码遮住了过去**：原文用 `torch.triu(ones, diagonal=1)` 把"未来"标为 1，注意力里却用
#    `masked_fill(mask == 0, -1e9)` 遮住等于 0 的位置，也就是遮住了过去和当前，只让解码器看见未来。
#    本项目的掩码统一为 True = 可以看 (`tril`)，第 5 课 `causal_mask` 检查未来的权重严格为 0。
# 3. **解码器的第一个输入在训练和推理时不同**：原文训练时以 `tgt[:, :-1]` 为输入、`tgt[:, 1:]` 为目标，
#    第一个未来值从不是训练目标；推理时却从 `src[:, -1:]` (最后一个观测值) 开始。本项目的 `shift_right`
#    在训练和推理中都以最后一个观测值开头，30 个未来值都是训练目标。
#
# <!-- en -->
# ## How this differs from the source
#
# The lesson builds the model as the source (the hand-written Transformer with the sine forecast) does, and
# corrects three things in its code:
#
# 1. **LayerNorm is never called**: the source's `SublayerConnection.forward` computes only
#    `x + dropout(sublayer(x))`; the `self.norm` it defines appears only in `forward_pre`, which nothing calls, so
#    its "post-LN" model has no normalisation at all. This project's blocks call LayerNorm in both positions
#    (lesson 6, `transformer_block`, shows the code and measures what removing LayerNorm costs).
# 2. **The look-ahead mask hides the past**: the source marks the future with 1 (`torch.triu(ones, diagonal=1)`)
#    but its attention hides the entries equal to 0 (`masked_fill(mask == 0, -1e9)`): the past and the present,
#    so its decoder sees only the future. This project's masks all mean True = may look (`tril`); lesson 5,
#    `causal_mask`, checks that every weight on the future is exactly 0.
# 3. **The decoder's first input differs between training and inference**: the source trains on `tgt[:, :-1]` as
#    input and `tgt[:, 1:]` as target, so the first future value is never a target, yet it starts inference from
#    `src[:, -1:]`, the last observed value. This project's `shift_right` starts with the last observed value in
#    training and inference alike, and all 30 future values are targets.


# %% [markdown]
# ## 练习
#
# 1. 读表：Transformer 的测试集 MSE 比"重复上一个周期"低吗？低多少？噪声本身的方差是 $0.1^2 = 0.01$，
#    为什么任何方法的 MSE 都不可能低于它？
# 2. 用 `--no-normalise` 再跑一次 (其他不变)：不做逐窗口归一化时，验证集和测试集的 MSE 怎样变化？为什么？
# 3. 比较"教师强制下的 MSE"和自回归 MSE：差距说明了什么？用 `--scheduled-sampling 0.5` (计划采样) 再跑一次，
#    自回归 MSE 和差距怎样变化？
# 4. 用 `--train-stride 90` (互不重叠的窗口，只有 1000 个训练窗口) 训练同样的步数：验证集 MSE 怎样变化？
# 5. 用 `--norms pre post` 同时训练 pre-LN 和 post-LN：学习曲线有什么不同？
#
# 运行：`python -m comparisons.course.sine_forecast --lang zh [--steps 3000] [--no-normalise] [--train-stride 90] [--norms pre post]`。
#
# <!-- en -->
# ## Exercises
#
# 1. Read the table: is the Transformer's test MSE below "repeat the last period"? By how much? The noise variance
#    is $0.1^2 = 0.01$: why can no method's MSE go below it?
# 2. Run again with `--no-normalise` (nothing else changed): how do validation and test MSE change without
#    per-window normalisation, and why?
# 3. Compare the teacher-forced MSE with the autoregressive one: what does the gap say? Run again with
#    `--scheduled-sampling 0.5` (scheduled sampling): how do the autoregressive MSE and the gap change?
# 4. Train the same number of steps with `--train-stride 90` (non-overlapping windows, only 1000 training
#    windows): how does validation MSE change?
# 5. Train pre-LN and post-LN together with `--norms pre post`: how do the learning curves differ?
#
# Run: `python -m comparisons.course.sine_forecast [--steps 3000] [--no-normalise] [--train-stride 90] [--norms pre post]`.

# %%
def run(args: argparse.Namespace) -> int:
    """Make the data, score the naive forecasts, train the seq2seq Transformer(s), write outputs."""
    if args.steps is not None and args.steps < 1:
        raise UserInputError(f"--steps {args.steps} must be at least 1")
    if not 0.0 <= args.scheduled_sampling <= 1.0:
        raise UserInputError(f"--scheduled-sampling {args.scheduled_sampling} must be a probability in [0, 1]")
    if not 0.0 <= args.warmup_fraction < 1.0:
        raise UserInputError(f"--warmup-fraction {args.warmup_fraction} must be in [0, 1)")
    setup_matplotlib(args.lang)
    steps = args.steps or (QUICK_STEPS if args.quick else STEPS)
    eval_every = min(steps, QUICK_EVAL_EVERY if args.quick else EVAL_EVERY)
    if args.train_stride is not None and args.train_stride < 1:
        raise UserInputError(f"--train-stride {args.train_stride} must be at least 1")
    data = make_splits(args.quick, train_stride=args.train_stride)
    test = data["test"]

    naive_last = last_value_forecast(test.source)
    naive_season, periods = seasonal_naive_forecast(test.source)
    valid = data["valid"]
    valid_last = float(np.mean((last_value_forecast(valid.source) - valid.target) ** 2))
    valid_season = float(np.mean((seasonal_naive_forecast(valid.source)[0] - valid.target) ** 2))
    last_name = text("naive: last value", "朴素: 重复最后一个值", args.lang)
    season_name = text("naive: last period (estimated)", "朴素: 重复上一周期 (估计周期)", args.lang)
    rows = [{"method": last_name, "seed": None, "valid_mse": valid_last,
             "test_mse": float(np.mean((naive_last - test.target) ** 2)),
             "teacher_forced_mse": float("nan"), "best_step": float("nan"), "params": 0},
            {"method": season_name, "seed": None, "valid_mse": valid_season,
             "test_mse": float(np.mean((naive_season - test.target) ** 2)),
             "teacher_forced_mse": float("nan"), "best_step": float("nan"), "params": 0}]
    forecasts, histories = {}, {}
    for norm in args.norms:
        name = f"Transformer {norm}-LN"
        for seed in range(args.seeds):
            config = model_config(norm, args.quick, args.positional)
            model, history, best_step = train_model(
                config, data, steps, learning_rate=args.learning_rate, warmup_fraction=args.warmup_fraction,
                scheduled_sampling=args.scheduled_sampling, seed=seed, normalise=args.normalise,
                eval_every=eval_every)
            test_mse, forecast = mse_autoregressive(model, test, args.normalise)
            rows.append({"method": name, "seed": seed, "valid_mse": min(h["valid_mse"] for h in history),
                         "test_mse": test_mse,
                         "teacher_forced_mse": teacher_forced_mse(model, test, args.normalise),
                         "best_step": best_step, "params": sum(p.numel() for p in model.parameters()),
                         "history": history})
            print(text(f"{name} seed {seed}: test MSE {test_mse:.4f} (chosen step {best_step}/{steps})",
                       f"{name} 种子 {seed}: 测试集 MSE {test_mse:.4f} (选中第 {best_step}/{steps} 步)", args.lang))
            if seed == 0:
                forecasts[name], histories[name] = forecast, history
    forecasts[last_name], forecasts[season_name] = naive_last, naive_season

    written = write_table(results_table(rows, args.lang), args.out, "sine_forecast",
                          text(f"Test MSE, {HORIZON}-step forecasts from {HISTORY} past steps",
                               f"测试集 MSE: 由过去 {HISTORY} 步预测未来 {HORIZON} 步", args.lang))
    written.append(atomic_write_json(args.out / "sine_forecast.json", {
        "history": HISTORY, "horizon": HORIZON, "steps": steps, "eval_every": eval_every,
        "batch_size": BATCH_SIZE, "normalise": args.normalise, "norms": list(args.norms),
        "scheduled_sampling": args.scheduled_sampling, "warmup_fraction": args.warmup_fraction,
        "learning_rate": args.learning_rate, "positional": args.positional, "quick": args.quick,
        "windows": {name: len(w.source) for name, w in data.items()},
        "train_stride": args.train_stride or (QUICK_TRAIN_STRIDE if args.quick else TRAIN_STRIDE),
        "seasonal_naive_period": "estimated from the 60 past steps by autocorrelation",
        "period_estimation_mean_abs_error": float(np.mean(np.abs(periods - test.period))),
        "rows": rows}))
    figure = plot(test, forecasts, histories, args.lang, valid_baseline=(season_name, valid_season))
    written.append(save_figure(figure, args.out / "sine_forecast.png"))
    report_written(written)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=1)
    parser.set_defaults(threads=1)  # one thread: a d_model-32 model gains nothing from a second, only waits on it
    parser.add_argument("--steps", type=int, default=None,
                        help=f"training steps of batch {BATCH_SIZE} (default {STEPS}; {QUICK_STEPS} with --quick)")
    parser.add_argument("--learning-rate", type=float, default=LEARNING_RATE,
                        help=f"peak learning rate (default {LEARNING_RATE})")
    parser.add_argument("--warmup-fraction", type=float, default=0.1,
                        help="share of steps with a linear learning-rate warm-up (default 0.1)")
    parser.add_argument("--scheduled-sampling", type=float, nargs="?", const=0.5, default=SCHEDULED_SAMPLING,
                        metavar="P", help="feed the model's own predictions with a probability rising to P "
                        f"(flag alone: 0.5; default {SCHEDULED_SAMPLING}; 0: pure teacher forcing)")
    parser.add_argument("--normalise", action=argparse.BooleanOptionalAction, default=NORMALISE,
                        help="scale each window by the mean and std of its past values (default "
                             f"{'on' if NORMALISE else 'off'}, as validation chose; --no-normalise to compare)")
    parser.add_argument("--train-stride", type=int, default=None,
                        help=f"a training window starts every N steps (default {TRAIN_STRIDE}, overlapping; "
                             f"{HISTORY + HORIZON}: non-overlapping; {QUICK_TRAIN_STRIDE} with --quick)")
    parser.add_argument("--norms", nargs="+", default=["pre"], choices=("pre", "post"),
                        help="LayerNorm placements to train (default pre; 'pre post' compares both)")
    parser.add_argument("--positional", default=POSITIONAL, choices=("sinusoidal", "learned"),
                        help=f"position encoding (default {POSITIONAL}, as validation chose)")
    return run_course(parser, argv, run)


# %%
if __name__ == "__main__":
    raise SystemExit(main())
