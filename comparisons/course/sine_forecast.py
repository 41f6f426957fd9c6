"""Forecasting a noisy sine wave with the full encoder-decoder Transformer: what the student learns.

The same attention and encoder blocks that classify SMS messages also make a sequence-to-sequence
model (backends/torch_scratch/seq2seq.py): the encoder reads 60 past values, the decoder writes
the next 30, each one looking at the values before it (causal self-attention) and at the encoder's
memory (cross-attention). The student sees:

- teacher forcing in training (the decoder is fed the TRUE previous values, all steps in one pass)
  against autoregressive inference (it is fed its OWN previous predictions, one step at a time),
  and scheduled sampling (`--scheduled-sampling`), which mixes the two while training;
- a warm-up of the learning rate, and pre-LN vs post-LN blocks (both are trained and reported);
- honest baselines: a model is only interesting if it beats "repeat the last value" and "repeat
  the last period" (the period is ESTIMATED from the 60 past values by autocorrelation, as a
  forecaster without the generator's secrets would have to).

Data: synthetic series, each with its own random period (12-30 steps), amplitude, phase and
Gaussian noise, seeded. Each series is cut into NON-overlapping windows of 60 + 30 steps, and
train, valid and test windows come from different series. The epoch is chosen on validation MSE
(autoregressive); test is scored once.

Run: python -m comparisons.course.sine_forecast [--epochs 20] [--scheduled-sampling [P]] [--out DIR]
     [--lang en|zh] [--seeds N] [--quick]
"""
# %%
from __future__ import annotations

import argparse
import copy
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.course.shared import course_parser, report_written, run_course
from comparisons.i18n import label, setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "sine_forecast"
HISTORY, HORIZON = 60, 30
DATA_SEED = 20260812


# %% [markdown]
# ## 1. Data: noisy sine series, cut into non-overlapping (60 past, 30 future) windows

# %%
@dataclass
class Windows:
    """source (N, HISTORY) past values, target (N, HORIZON) future values, the generator's period."""

    source: np.ndarray
    target: np.ndarray
    period: np.ndarray


def make_series(n_series: int, length: int, rng: np.random.Generator, noise: float = 0.1):
    """(n_series, length) noisy sines with a random period, amplitude and phase each; and the periods."""
    period = rng.uniform(12.0, 30.0, size=(n_series, 1))
    amplitude = rng.uniform(0.5, 1.5, size=(n_series, 1))
    phase = rng.uniform(0.0, 2 * math.pi, size=(n_series, 1))
    steps = np.arange(length)[None, :]  # (1, L)
    clean = amplitude * np.sin(2 * math.pi * steps / period + phase)  # (n, L)
    return (clean + noise * rng.standard_normal(clean.shape)).astype(np.float32), period[:, 0]


def cut_windows(series: np.ndarray, period: np.ndarray, history: int = HISTORY, horizon: int = HORIZON) -> Windows:
    """Non-overlapping windows: series [0:90], [90:180], ... each split into 60 past + 30 future."""
    size = history + horizon
    per_series = series.shape[1] // size
    chunks = series[:, : per_series * size].reshape(len(series), per_series, size)  # (n, w, 90)
    chunks = chunks.reshape(-1, size)  # (n * w, 90), windows of a series are consecutive rows
    return Windows(chunks[:, :history], chunks[:, history:], np.repeat(period, per_series))


def make_splits(quick: bool, seed: int = DATA_SEED) -> dict[str, Windows]:
    """Train, valid and test windows from DIFFERENT series (no series is shared between splits)."""
    counts = {"train": 16, "valid": 4, "test": 4} if quick else {"train": 100, "valid": 20, "test": 30}
    length = 2 * (HISTORY + HORIZON) if quick else 10 * (HISTORY + HORIZON)
    rng = np.random.default_rng(seed)
    return {name: cut_windows(*make_series(n, length, rng)) for name, n in counts.items()}


# %% [markdown]
# ## 2. Naive forecasts: last value, and last period (period estimated by autocorrelation)

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
# ## 3. The model and its training loop (teacher forcing, warm-up, optional scheduled sampling)

# %%
def model_config(norm: str, quick: bool, positional: str = "sinusoidal"):
    """The EncoderConfig that sizes the seq2seq model (its vocabulary and pooling fields are unused)."""
    from common.config import EncoderConfig

    if quick:
        return EncoderConfig(d_model=16, num_heads=2, num_layers=1, ff_dim=32, dropout=0.0, norm=norm,
                             positional=positional)
    return EncoderConfig(d_model=32, num_heads=4, num_layers=2, ff_dim=64, dropout=0.0, norm=norm,
                         positional=positional)


def mse_autoregressive(model, windows: Windows, batch_size: int = 512) -> tuple[float, np.ndarray]:
    """Mean squared error of autoregressive forecasts (the model sees only its own predictions)."""
    import torch

    model.eval()
    forecasts = []
    for start in range(0, len(windows.source), batch_size):
        source = torch.as_tensor(windows.source[start : start + batch_size])[..., None]  # (B, S, 1)
        forecasts.append(model.forecast(source, windows.target.shape[1])[..., 0].numpy())  # (B, H)
    forecast = np.concatenate(forecasts)
    return float(np.mean((forecast - windows.target) ** 2)), forecast


def train_model(config, data: dict[str, Windows], epochs: int, learning_rate: float = 2e-3,
                batch_size: int = 32, warmup_fraction: float = 0.1, scheduled_sampling: float = 0.0,
                seed: int = 0) -> tuple[object, list[dict], int]:
    """Train with teacher forcing (+ scheduled sampling up to the given probability); keep the best epoch.

    Returns (model at the epoch with the lowest validation MSE, history, best epoch).
    """
    import torch

    from backends.torch_scratch.backend import warmup_then_linear_decay
    from backends.torch_scratch.seq2seq import build_seq2seq, shift_right

    torch.manual_seed(seed)
    train = data["train"]
    model = build_seq2seq(config, HISTORY, HORIZON)
    source_all = torch.as_tensor(train.source)[..., None]  # (N, S, 1)
    target_all = torch.as_tensor(train.target)[..., None]  # (N, H, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(source_all) / batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, warmup_then_linear_decay(steps_per_epoch * epochs, warmup_fraction))
    shuffler = torch.Generator().manual_seed(seed)
    history, best_state, best_mse, best_epoch = [], None, math.inf, 0
    for epoch in range(1, epochs + 1):
        # scheduled sampling: the chance of feeding the model's own prediction grows linearly to its maximum
        sampling = scheduled_sampling * (epoch - 1) / max(1, epochs - 1)
        model.train()
        total = 0.0
        order = torch.randperm(len(source_all), generator=shuffler)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            source, target = source_all[rows], target_all[rows]  # (B, S, 1), (B, H, 1)
            decoder_input = shift_right(source, target)  # teacher forcing: true previous values
            if sampling > 0:
                with torch.no_grad():
                    own = shift_right(source, model(source, decoder_input))  # the model's previous predictions
                use_own = torch.rand(decoder_input.shape, generator=shuffler) < sampling  # (B, H, 1)
                use_own[:, 0] = False  # the first input is the last observed value, always known
                decoder_input = torch.where(use_own, own, decoder_input)
            loss = torch.nn.functional.mse_loss(model(source, decoder_input), target)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            total += loss.item() * len(rows)
        valid_mse, _ = mse_autoregressive(model, data["valid"])
        history.append({"epoch": epoch, "train_loss": total / len(source_all), "valid_mse": valid_mse,
                        "sampling_probability": sampling, "learning_rate": schedule.get_last_lr()[0]})
        if valid_mse < best_mse:
            best_mse, best_epoch, best_state = valid_mse, epoch, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    return model.eval(), history, best_epoch


def teacher_forced_mse(model, windows: Windows) -> float:
    """MSE when the decoder is fed the true previous values (what the training loss measures)."""
    import torch

    from backends.torch_scratch.seq2seq import shift_right

    source = torch.as_tensor(windows.source)[..., None]
    target = torch.as_tensor(windows.target)[..., None]
    with torch.no_grad():
        return float(torch.nn.functional.mse_loss(model(source, shift_right(source, target)), target))


# %% [markdown]
# ## 4. Table and figure

# %%
def results_table(rows: list[dict], lang: str) -> pd.DataFrame:
    """Mean (and std over seeds) of test MSE per method, with the parameter count for models."""
    frame = pd.DataFrame(rows)
    out = []
    for method, part in frame.groupby("method", sort=False):
        out.append({label("model", lang): method,
                    label("mse", lang): part["test_mse"].mean(),
                    text("test MSE std (seeds)", "测试集 MSE 标准差 (种子)", lang):
                        part["test_mse"].std(ddof=1) if len(part) > 1 else float("nan"),
                    text("teacher-forced test MSE", "教师强制下的测试集 MSE", lang): part["teacher_forced_mse"].mean(),
                    label("best_epoch", lang): part["best_epoch"].mean(),
                    label("params_total", lang): part["params"].iloc[0],
                    label("seeds", lang): len(part)})
    return pd.DataFrame(out)


def plot(test: Windows, forecasts: dict[str, np.ndarray], histories: dict[str, list[dict]], lang: str,
         count: int = 3):
    """Truth against forecasts for the first window of a few test series, then validation MSE per epoch."""
    import matplotlib.pyplot as plt

    windows = tuple(sorted(np.unique(test.period, return_index=True)[1])[:count])  # one window per series
    fig, axes = plt.subplots(1, len(windows) + 1, figsize=(4.2 * (len(windows) + 1), 3.8))
    past, future = np.arange(-HISTORY, 0), np.arange(HORIZON)
    styles = {0: ("tab:blue", "-"), 1: ("tab:red", "-"), 2: ("tab:grey", ":"), 3: ("tab:green", "--")}
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
        curve.plot([h["epoch"] for h in history], [h["valid_mse"] for h in history],
                   color=styles[k][0], marker=".", label=name)
    curve.set_yscale("log")
    curve.set_xlabel(text("epoch", "轮次", lang))
    curve.set_ylabel(text("validation MSE (autoregressive)", "验证集 MSE (自回归)", lang))
    curve.set_title(text("Learning curves", "学习曲线", lang))
    curve.legend(fontsize=8)
    fig.tight_layout()
    return fig


# %%
def run(args: argparse.Namespace) -> int:
    """Make the data, score the naive forecasts, train pre-LN and post-LN seq2seq, write outputs."""
    if args.epochs is not None and args.epochs < 1:
        raise UserInputError(f"--epochs {args.epochs} must be at least 1")
    if not 0.0 <= args.scheduled_sampling <= 1.0:
        raise UserInputError(f"--scheduled-sampling {args.scheduled_sampling} must be a probability in [0, 1]")
    if not 0.0 <= args.warmup_fraction < 1.0:
        raise UserInputError(f"--warmup-fraction {args.warmup_fraction} must be in [0, 1)")
    setup_matplotlib(args.lang)
    epochs = args.epochs or (2 if args.quick else 20)
    data = make_splits(args.quick)
    test = data["test"]

    naive_last = last_value_forecast(test.source)
    naive_season, periods = seasonal_naive_forecast(test.source)
    last_name = text("naive: last value", "朴素: 重复最后一个值", args.lang)
    season_name = text("naive: last period (estimated)", "朴素: 重复上一周期 (估计周期)", args.lang)
    rows = [{"method": last_name, "seed": None, "test_mse": float(np.mean((naive_last - test.target) ** 2)),
             "teacher_forced_mse": float("nan"), "best_epoch": float("nan"), "params": 0},
            {"method": season_name, "seed": None, "test_mse": float(np.mean((naive_season - test.target) ** 2)),
             "teacher_forced_mse": float("nan"), "best_epoch": float("nan"), "params": 0}]
    forecasts, histories = {}, {}
    for norm in ("pre", "post"):
        name = text(f"Transformer {norm}-LN", f"Transformer {norm}-LN", args.lang)
        for seed in range(args.seeds):
            config = model_config(norm, args.quick, args.positional)
            model, history, best_epoch = train_model(
                config, data, epochs, learning_rate=args.learning_rate, warmup_fraction=args.warmup_fraction,
                scheduled_sampling=args.scheduled_sampling, seed=seed)
            test_mse, forecast = mse_autoregressive(model, test)
            rows.append({"method": name, "seed": seed, "test_mse": test_mse,
                         "teacher_forced_mse": teacher_forced_mse(model, test), "best_epoch": best_epoch,
                         "params": sum(p.numel() for p in model.parameters()), "history": history})
            print(f"{name} seed {seed}: test MSE {test_mse:.4f} (best epoch {best_epoch}/{epochs})")
            if seed == 0:
                forecasts[name], histories[name] = forecast, history
    forecasts[last_name], forecasts[season_name] = naive_last, naive_season

    written = write_table(results_table(rows, args.lang), args.out, "sine_forecast",
                          text(f"Test MSE, {HORIZON}-step forecasts from {HISTORY} past steps",
                               f"测试集 MSE: 由过去 {HISTORY} 步预测未来 {HORIZON} 步", args.lang))
    written.append(atomic_write_json(args.out / "sine_forecast.json", {
        "history": HISTORY, "horizon": HORIZON, "epochs": epochs, "scheduled_sampling": args.scheduled_sampling,
        "warmup_fraction": args.warmup_fraction, "learning_rate": args.learning_rate,
        "positional": args.positional, "quick": args.quick,
        "windows": {name: len(w.source) for name, w in data.items()},
        "seasonal_naive_period": "estimated from the 60 past steps by autocorrelation",
        "period_estimation_mean_abs_error": float(np.mean(np.abs(periods - test.period))),
        "rows": rows}))
    written.append(save_figure(plot(test, forecasts, histories, args.lang), args.out / "sine_forecast.png"))
    report_written(written)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=1)
    parser.add_argument("--epochs", type=int, default=None, help="training epochs (default 20; 2 with --quick)")
    parser.add_argument("--learning-rate", type=float, default=2e-3, help="peak learning rate (default 2e-3)")
    parser.add_argument("--warmup-fraction", type=float, default=0.1,
                        help="share of steps with a linear learning-rate warm-up (default 0.1)")
    parser.add_argument("--scheduled-sampling", type=float, nargs="?", const=0.5, default=0.0, metavar="P",
                        help="feed the model's own predictions with a probability rising to P "
                             "(flag alone: 0.5; default 0: pure teacher forcing)")
    parser.add_argument("--positional", default="sinusoidal", choices=("sinusoidal", "learned"),
                        help="position encoding (default sinusoidal)")
    return run_course(parser, argv, run)


# %%
if __name__ == "__main__":
    raise SystemExit(main())
