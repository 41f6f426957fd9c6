"""Attention cost: the exponent fit, and scratch attention really holds the T x T matrix."""
import json

import numpy as np
import pytest

from comparisons.course import attention_cost as module


def test_loglog_exponent_recovers_powers():
    lengths = np.array([64, 128, 256, 512])
    assert module.loglog_exponent(lengths, 3.0 * lengths**2) == pytest.approx(2.0)
    assert module.loglog_exponent(lengths, lengths**1.0) == pytest.approx(1.0)
    assert np.isnan(module.loglog_exponent(lengths, [0, 0, 0, 1.0]))


def test_main_quick_measures_quadratic_matrix(tmp_path):
    argv = ["--out", str(tmp_path), "--quick", "--lengths", "64", "128", "256", "--batch", "4"]
    assert module.main(argv) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    rows = {(r["kind"], r["T"]): r for r in summary["rows"]}
    assert summary["exponents"]["scratch"]["elements"] == pytest.approx(2.0)
    assert rows[("scratch", 256)]["elements"] == 4 * 4 * 256 * 256
    # the scratch path materialises scores and weights: its peak rise is at least one matrix (4 MiB)
    largest = rows[("scratch", 256)]
    assert largest["peak_rss_mb"] >= 0.9 * largest["matrix_mb"]
    assert rows[("fused", 256)]["peak_rss_mb"] < largest["peak_rss_mb"]
    for name in ("cost.csv", "cost.md", "exponents.md", "attention_cost.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_one_length_is_rejected(tmp_path, capsys):
    assert module.main(["--out", str(tmp_path), "--lengths", "64"]) == 2
    assert "--lengths" in capsys.readouterr().err
