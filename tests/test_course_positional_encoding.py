"""A shift of the sinusoidal encoding is linear (tiny residual); random vectors are not."""
import json

import numpy as np

from comparisons.course import positional_encoding as module


def test_shift_is_linear_for_sinusoids_only():
    pe = module.encoding(96, 16)
    fit = module.linear_shift_fit(pe, 3)
    assert fit["full_residual"] < 1e-4 and fit["pair_residual"] < 1e-4
    assert fit["rotation_error"] < 1e-4  # the fitted 2x2 blocks are the exact rotations
    noise = np.random.default_rng(0).normal(size=pe.shape).astype(np.float32)
    assert module.linear_shift_fit(noise, 3)["pair_residual"] > 0.5  # the check can fail


def test_frequencies_match_the_encoder():
    pe = module.encoding(8, 6)
    w = module.frequencies(6)
    np.testing.assert_allclose(pe[5, 0::2], np.sin(5 * w), atol=1e-6)
    np.testing.assert_allclose(pe[5, 1::2], np.cos(5 * w), atol=1e-6)


def test_main_writes_outputs(tmp_path):
    assert module.main(["--out", str(tmp_path), "--length", "64", "--d-model", "16", "--lang", "zh"]) == 0
    for name in ("shift_is_linear.csv", "shift_is_linear.md", "positional_encoding.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert json.loads((tmp_path / "summary.json").read_text())["max_residual"] < 1e-4


def test_too_short_length_is_exit_2(tmp_path, capsys):
    assert module.main(["--out", str(tmp_path), "--length", "20"]) == 2
    assert "--length" in capsys.readouterr().err
