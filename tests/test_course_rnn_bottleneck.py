"""rnn_bottleneck: the GRU without attention reads the source only through its final state; the paired verdict per
length is a t interval over seeds of the MSE difference; the quick run writes its tables, figure and summary."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from backends.torch_scratch.rnn_seq2seq import GRUSeq2Seq  # noqa: E402
from comparisons.course import rnn_bottleneck as lesson  # noqa: E402


def test_without_attention_the_decoder_sees_only_the_final_state():
    check = lesson.bottleneck_check(hidden=8, length=10)
    assert check["forecast_from_final_state_only"]
    # the attention model's extra parameters are W_q (h x h), W_k (h x h) and v (h)
    assert check["params_attention"] - check["params_final_state"] == 2 * 8 * 8 + 8


def test_the_final_state_model_forecasts_step_by_step_and_has_no_weights():
    torch.manual_seed(0)
    model = GRUSeq2Seq(hidden=8, target_length=5, attention=False).eval()
    source = torch.randn(2, 12, 1)
    forecast = model.forecast(source, 5)
    # teacher forcing fed its own outputs reproduces the forecast, as for the attention model
    with torch.no_grad():
        again = model(source, torch.cat([source[:, -1:], forecast[:, :-1]], dim=1))
    torch.testing.assert_close(again, forecast)
    with pytest.raises(ValueError, match="no attention weights"):
        model.forecast(source, 5, need_weights=True)


def test_the_verdict_is_a_paired_t_interval_over_seeds():
    differences = {30: [0.010, 0.012, 0.014], 60: [0.02, -0.03, 0.01]}
    rows = []
    for length, diffs in differences.items():
        for seed, d in enumerate(diffs):
            base = 0.1 + 0.05 * seed  # seed-to-seed spread shared by both models: pairing removes it
            rows += [{"length": length, "seed": seed, "model": lesson.MODELS[0], "test_mse": base},
                     {"length": length, "seed": seed, "model": lesson.MODELS[1], "test_mse": base + d}]
    verdicts = lesson.paired_verdicts(pd.DataFrame(rows), "en")
    first = verdicts.iloc[0]
    half = 4.302653 * np.std([0.010, 0.012, 0.014], ddof=1) / np.sqrt(3)
    assert first.iloc[4] == pytest.approx(0.012)
    assert first["95% low"] == pytest.approx(0.012 - half, rel=1e-5)
    assert first["verdict"] == "attention lower"
    assert verdicts.iloc[1]["verdict"] == "inconclusive"
    # the verdict reads Holm over the lengths: p's from scipy's paired t-test, corrected by statsmodels' Holm
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    wide = pd.DataFrame(rows).pivot_table(index=["length", "seed"], columns="model", values="test_mse")
    p = [ttest_rel(wide.loc[n][lesson.MODELS[1]], wide.loc[n][lesson.MODELS[0]]).pvalue for n in (30, 60)]
    assert verdicts["p"].to_numpy() == pytest.approx(p, rel=1e-9)
    assert verdicts["p (Holm over lengths)"].to_numpy() == pytest.approx(multipletests(p, method="holm")[1], rel=1e-9)


def test_an_interval_that_excludes_zero_alone_can_be_inconclusive_after_holm():
    rows = []
    for length, diffs in {30: [0.015, 0.020, 0.025], 60: [0.014, 0.020, 0.026], 120: [0.013, 0.020, 0.027]}.items():
        for seed, d in enumerate(diffs):
            rows += [{"length": length, "seed": seed, "model": lesson.MODELS[0], "test_mse": 0.05},
                     {"length": length, "seed": seed, "model": lesson.MODELS[1], "test_mse": 0.05 + d}]
    verdicts = lesson.paired_verdicts(pd.DataFrame(rows), "en")
    assert (verdicts["95% low"] > 0).all()  # each interval alone excludes 0
    assert (verdicts["p"] < 0.05).all() and (verdicts["p (Holm over lengths)"] > 0.05).all()
    assert set(verdicts["verdict"]) == {"inconclusive"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_quick_run_writes_tables_figure_and_summary(tmp_path, lang):
    assert lesson.main(["--quick", "--lang", lang, "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "rnn_bottleneck.json").read_text(encoding="utf-8"))
    assert summary["lengths"] == list(lesson.QUICK_LENGTHS) and summary["seeds"] == 2
    assert len(summary["verdicts"]) == len(lesson.QUICK_LENGTHS)
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == len(lesson.QUICK_LENGTHS) * 2 * 2
    assert (tmp_path / "rnn_bottleneck.png").stat().st_size > 0


def test_bad_options_are_one_line_errors(tmp_path, capsys):
    assert lesson.main(["--quick", "--steps", "0", "--out", str(tmp_path)]) == 2
    assert lesson.main(["--quick", "--lengths", "1", "--out", str(tmp_path)]) == 2
    assert "error:" in capsys.readouterr().err
