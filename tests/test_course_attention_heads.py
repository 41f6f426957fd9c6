"""attention_heads: per-head statistics read uniform, diagonal and previous-token maps right; disagreement counts
distinct top words and JS divergence; the quick run writes both models' tables and figures."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from comparisons.course import attention_heads as lesson  # noqa: E402


def test_statistics_of_uniform_diagonal_and_previous_token_heads():
    length = 5
    uniform = np.full((length, length), 1 / length)
    diagonal = np.eye(length)
    previous = np.eye(length, k=-1)
    previous[0, 0] = 1.0  # the first token has no previous one: it looks at itself
    stats = lesson.head_statistics(np.stack([uniform, diagonal, previous]))
    np.testing.assert_allclose(stats["flatness"], [1.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(stats["self"], [1 / length, 1.0, 1 / length])
    np.testing.assert_allclose(stats["previous"], [1 / length, 0.0, 1.0])
    np.testing.assert_allclose(stats["first"], [1 / length, 1 / length, 2 / length])  # rows 0 and 1 look at 0
    np.testing.assert_allclose(stats["distance"], [np.abs(np.subtract.outer(range(5), range(5))).mean(), 0.0, 0.8])


def test_disagreement_counts_distinct_top_words_and_js_divergence():
    same = np.tile([0.1, 0.7, 0.2], (4, 1))
    assert lesson.disagreement(same) == (1, pytest.approx(0.0, abs=1e-12))
    apart = np.eye(3)
    distinct, js = lesson.disagreement(apart)
    assert distinct == 3 and js == pytest.approx(1.0)


def test_quick_run_writes_both_models(tmp_path):
    assert lesson.main(["--quick", "--out", str(tmp_path)]) == 0
    heads = pd.read_csv(tmp_path / "heads.csv")
    assert len(heads) == 2 * 4 + 6 * 12  # every (layer, head) of both models
    summary = json.loads((tmp_path / "attention_heads.json").read_text(encoding="utf-8"))
    minilm = [row for row in summary["disagreement"] if row["model"].startswith("MiniLM")]
    assert len(minilm) == 6 and all(1 <= row["distinct top words"] <= 12 for row in minilm)
    assert (tmp_path / "minilm_heads.png").stat().st_size > 0
