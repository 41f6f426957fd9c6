"""Seq2seq Transformer (backends/torch_scratch/seq2seq.py) and comparisons.course.sine_forecast."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from backends.torch_scratch.attention import MultiHeadAttention  # noqa: E402
from backends.torch_scratch.encoder import EncoderBlock, FeedForward  # noqa: E402
from backends.torch_scratch.seq2seq import DecoderBlock, Seq2SeqTransformer, build_seq2seq, shift_right  # noqa: E402
from common.config import EncoderConfig  # noqa: E402
from comparisons.course import sine_forecast  # noqa: E402


def tiny_config(norm: str = "pre", dropout: float = 0.0) -> EncoderConfig:
    return EncoderConfig(d_model=16, num_heads=2, num_layers=1, ff_dim=32, dropout=dropout, norm=norm)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_decoder_is_causal(norm):
    """Changing decoder input t (and later) must not change outputs before t, and must change t."""
    torch.manual_seed(0)
    model = build_seq2seq(tiny_config(norm), source_length=12, target_length=8).eval()
    source, decoder_input = torch.randn(3, 12, 1), torch.randn(3, 8, 1)
    changed = decoder_input.clone()
    changed[:, 5] += 3.0
    with torch.no_grad():
        before, after = model(source, decoder_input), model(source, changed)
    assert torch.equal(before[:, :5], after[:, :5])
    assert (before[:, 5:] - after[:, 5:]).abs().amax() > 1e-4


def test_decoder_block_shapes_and_reuse():
    torch.manual_seed(0)
    config = tiny_config()
    block = DecoderBlock(config)
    assert isinstance(block.self_attn, MultiHeadAttention) and isinstance(block.cross_attn, MultiHeadAttention)
    assert isinstance(block.ff, FeedForward)
    out, self_weights, cross_weights = block(torch.randn(2, 7, 16), torch.randn(2, 11, 16), need_weights=True)
    assert out.shape == (2, 7, 16)
    assert self_weights.shape == (2, 2, 7, 7) and cross_weights.shape == (2, 2, 7, 11)
    assert torch.all(self_weights.triu(diagonal=1) == 0)  # no weight on future positions
    assert torch.allclose(cross_weights.sum(-1), torch.ones(2, 2, 7))

    model = Seq2SeqTransformer(config, source_length=11, target_length=7)
    assert all(isinstance(b, EncoderBlock) for b in model.encoder_blocks)
    source = torch.randn(4, 11, 1)
    assert model.encode(source).shape == (4, 11, 16)
    assert model(source, torch.randn(4, 7, 1)).shape == (4, 7, 1)
    assert model.forecast(source).shape == (4, 7, 1)
    assert model.forecast(source, steps=3).shape == (4, 3, 1)


def test_forecast_feeds_back_its_own_predictions():
    """Autoregressive forecast == teacher forcing on [last value, own predictions]."""
    torch.manual_seed(0)
    model = build_seq2seq(tiny_config(), 10, 6).eval()
    source = torch.randn(2, 10, 1)
    forecast = model.forecast(source)
    with torch.no_grad():
        again = model(source, shift_right(source, forecast))
    assert torch.allclose(forecast, again, atol=1e-5)


def test_windows_do_not_overlap_and_series_are_split():
    rng = np.random.default_rng(0)
    series, period = sine_forecast.make_series(3, 200, rng)
    windows = sine_forecast.cut_windows(series, period, history=60, horizon=30)
    assert windows.source.shape == (6, 60) and windows.target.shape == (6, 30)  # 2 whole windows per series
    np.testing.assert_array_equal(windows.source[1], series[0, 90:150])
    np.testing.assert_array_equal(windows.target[1], series[0, 150:180])
    np.testing.assert_array_equal(windows.source[2], series[1, :60])
    splits = sine_forecast.make_splits(quick=True)
    rows = {name: {w.tobytes() for w in s.source} for name, s in splits.items()}
    assert not (rows["train"] & rows["test"]) and not (rows["train"] & rows["valid"])


def test_training_windows_overlap_by_stride_and_leave_valid_and_test_unchanged():
    rng = np.random.default_rng(0)
    series, period = sine_forecast.make_series(2, 200, rng)
    windows = sine_forecast.cut_windows(series, period, history=60, horizon=30, stride=10)
    assert windows.source.shape == (2 * 12, 60)  # starts 0, 10, ..., 110: 12 whole windows per series
    np.testing.assert_array_equal(windows.source[1], series[0, 10:70])
    np.testing.assert_array_equal(windows.target[11], series[0, 170:200])
    np.testing.assert_array_equal(windows.source[12], series[1, :60])
    assert np.all(windows.period[:12] == period[0]) and np.all(windows.period[12:] == period[1])
    dense, sparse = (sine_forecast.make_splits(quick=True, train_stride=s) for s in (10, 90))
    assert len(dense["train"].source) == 5 * len(sparse["train"].source)  # 10 starts per series of 180, not 2
    for name in ("valid", "test"):  # the stride touches training windows only
        np.testing.assert_array_equal(dense[name].source, sparse[name].source)
        np.testing.assert_array_equal(dense[name].target, sparse[name].target)
    rows = {name: {w.tobytes() for w in s.source} for name, s in dense.items()}
    assert not (rows["train"] & rows["test"]) and not (rows["train"] & rows["valid"])


def test_naive_forecasts_on_a_clean_sine():
    steps = np.arange(90, dtype=np.float32)
    clean = np.sin(2 * np.pi * steps / 20)[None, :]
    assert sine_forecast.estimate_period(clean[0, :60]) == 20
    forecast, periods = sine_forecast.seasonal_naive_forecast(clean[:, :60])
    assert periods[0] == 20
    np.testing.assert_allclose(forecast, clean[:, 60:], atol=1e-5)
    assert np.all(sine_forecast.last_value_forecast(clean[:, :60]) == clean[0, 59])


def test_tiny_training_reduces_the_loss():
    data = sine_forecast.make_splits(quick=True)
    _, history, best = sine_forecast.train_model(tiny_config(), data, steps=12, learning_rate=3e-3, seed=0,
                                                 normalise=True, eval_every=3)
    assert [h["step"] for h in history] == [3, 6, 9, 12]
    assert history[-1]["train_loss"] < 0.7 * history[0]["train_loss"]
    assert best == min(history, key=lambda h: h["valid_mse"])["step"]


def test_splits_have_their_own_streams_and_scaling_uses_the_past_only():
    splits = sine_forecast.make_splits(quick=True)
    length = 2 * (sine_forecast.HISTORY + sine_forecast.HORIZON)
    rng = np.random.default_rng([sine_forecast.DATA_SEED, 1])  # the validation stream, whatever train holds
    valid = sine_forecast.cut_windows(*sine_forecast.make_series(4, length, rng))
    np.testing.assert_array_equal(splits["valid"].source, valid.source)
    source = splits["test"].source
    mean, scale = sine_forecast.window_scale(source)
    np.testing.assert_allclose(mean[:, 0], source.mean(axis=1), rtol=1e-6)
    np.testing.assert_allclose(scale[:, 0], source.std(axis=1) + 1e-3, rtol=1e-6)


def test_normalised_forecast_is_scaled_back():
    class Zero(torch.nn.Module):  # predicts 0 in normalised units: the window's past mean in data units
        def forecast(self, source, horizon):
            return torch.zeros(source.shape[0], horizon, 1)

    windows = sine_forecast.make_splits(quick=True)["test"]
    forecast = sine_forecast.forecast_windows(Zero(), windows, normalise=True)
    np.testing.assert_allclose(forecast, np.repeat(windows.source.mean(axis=1, keepdims=True), 30, axis=1),
                               rtol=1e-5, atol=1e-6)


def test_module_quick_runs(tmp_path):
    argv = ["--quick", "--out", str(tmp_path), "--scheduled-sampling", "--lang", "zh", "--norms", "pre", "post"]
    assert sine_forecast.main(argv) == 0
    for name in ("sine_forecast.csv", "sine_forecast.md", "sine_forecast.json", "sine_forecast.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    table = pd.read_csv(tmp_path / "sine_forecast.csv")
    assert len(table) == 4  # two naive forecasts, pre-LN, post-LN
    report = json.loads((tmp_path / "sine_forecast.json").read_text())
    assert report["scheduled_sampling"] == 0.5
    assert report["rows"][2]["history"][-1]["sampling_probability"] == pytest.approx(0.5)
    assert report["normalise"] is sine_forecast.NORMALISE and report["steps"] == sine_forecast.QUICK_STEPS
    assert report["train_stride"] == sine_forecast.QUICK_TRAIN_STRIDE
    assert all(np.isfinite(row["valid_mse"]) for row in report["rows"])  # validation shown for every method
    assert all(np.isfinite(row["test_mse"]) for row in report["rows"])


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    assert sine_forecast.main(["--quick", "--out", str(tmp_path), "--scheduled-sampling", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert sine_forecast.main(["--quick", "--out", str(tmp_path / "s"), "--train-stride", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --train-stride") and err.count("\n") == 1, err
