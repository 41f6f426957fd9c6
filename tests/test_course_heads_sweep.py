"""comparisons.course.heads_sweep: equal parameter counts across head counts, mean ± std, files written."""
from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("torch")

from comparisons.course import heads_sweep  # noqa: E402


def test_configs_change_only_the_head_count():
    configs = heads_sweep.sweep_configs([1, 2, 4, 8], d_model=32, epochs=2, quick=False)
    assert [c["num_heads"] for c in configs.values()] == [1, 2, 4, 8]
    others = [{k: v for k, v in c.items() if k != "num_heads"} for c in configs.values()]
    assert all(o == others[0] for o in others)


def test_summary_mean_and_std():
    rows = [{"num_heads": h, "head_dim": 8 // h, "seed": s, "params_total": 100, "best_epoch": 1,
             "valid_average_precision": 0.5, "test_average_precision": ap, "train_seconds": 1.0}
            for h, s, ap in [(1, 0, 0.8), (1, 1, 0.9), (2, 0, 0.7), (2, 1, 0.7)]]
    summary = heads_sweep.summarize(rows).set_index("num_heads")
    assert summary.loc[1, "ap_mean"] == pytest.approx(0.85)
    assert summary.loc[1, "ap_std"] == pytest.approx(0.0707107, rel=1e-5)  # sample std (ddof=1)
    assert summary.loc[2, "ap_std"] == pytest.approx(0.0)


def test_module_quick_runs(tmp_path):
    argv = ["--quick", "--out", str(tmp_path), "--heads", "1,4", "--seeds", "2", "--lang", "zh"]
    assert heads_sweep.main(argv) == 0
    for name in ("heads_sweep.csv", "heads_sweep.md", "heads_sweep_runs.csv", "heads_sweep.json", "heads_sweep.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    runs = pd.read_csv(tmp_path / "heads_sweep_runs.csv")
    assert sorted(zip(runs.num_heads, runs.seed)) == [(1, 0), (1, 1), (4, 0), (4, 1)]
    assert runs.params_total.nunique() == 1  # d_model fixed: the projections keep their size
    assert runs.test_average_precision.between(0, 1).all()
    summary = pd.read_csv(tmp_path / "heads_sweep.csv")
    assert list(summary["注意力头数"]) == [1, 4]
    report = json.loads((tmp_path / "heads_sweep.json").read_text())
    assert report["seeds"] == 2 and len(report["rows"]) == 4
    verdicts = pd.read_csv(tmp_path / "heads_sweep_verdicts.csv")  # the paired verdict of the one pair, in Chinese
    assert list(verdicts.iloc[:, 0]) == ["4 heads − 1 heads"] and verdicts.shape == (1, 4)


def test_the_lesson_no_longer_teaches_that_overlapping_error_bars_mean_no_difference():
    from pathlib import Path

    source = Path(heads_sweep.__file__).read_text(encoding="utf-8")
    assert "no head count can be called better" not in source and "不能说\"某个头数更好\"" not in source
    assert "bars that overlap do **not** show \"no difference\"" in source and "paired verdicts" in source


@pytest.mark.parametrize("argv", [["--heads", "3"], ["--heads", "a,b"], ["--epochs", "0"]])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, argv):
    assert heads_sweep.main(["--quick", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err
