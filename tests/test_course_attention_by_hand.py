"""The hand computation matches the library, and the module writes its table and figure."""
import json

import numpy as np

from comparisons.course import attention_by_hand as module


def test_steps_match_the_library_on_random_inputs():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    steps = module.attention_steps(q, k, v)
    output, weights = module.library_attention(q, k, v)
    np.testing.assert_allclose(steps["weights"], weights, atol=1e-12)
    np.testing.assert_allclose(steps["output"], output, atol=1e-12)
    np.testing.assert_allclose(steps["weights"].sum(axis=1), 1.0)
    # the scaling step really divides by sqrt(d_k): without it the weights would differ
    np.testing.assert_allclose(steps["scaled"], steps["scores"] / np.sqrt(2))


def test_main_writes_tables_and_figure(tmp_path):
    assert module.main(["--out", str(tmp_path)]) == 0
    for name in ("steps.csv", "steps.md", "output.csv", "output.md", "weights.png", "summary.json"):
        assert (tmp_path / name).stat().st_size > 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["agree"] and summary["max_abs_difference"] < 1e-9
    assert np.allclose(np.array(summary["weights"]).sum(axis=1), 1.0)


def test_chinese_headers(tmp_path):
    assert module.main(["--out", str(tmp_path), "--lang", "zh"]) == 0
    assert "softmax 权重" in (tmp_path / "steps.md").read_text(encoding="utf-8")


def test_bad_language_is_one_line_exit_2(tmp_path, capsys):
    assert module.main(["--out", str(tmp_path), "--lang", "fr"]) == 2
    assert capsys.readouterr().err == "error: unknown language 'fr'; use --lang en or --lang zh\n"
