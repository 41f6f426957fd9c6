"""End to end: every variant (tiny budgets) in its own worker on a small stratified subset."""
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score

from backends.base import DEFAULT_VARIANTS as VARIANTS
from common.datasets import DataSpec, load
from tests.test_cli import REQUIRED_COLUMNS, assert_no_raw_text, expected_tfidf_ap, run_cli


def test_every_variant_runs_on_the_identical_split(tmp_path):
    out = tmp_path / "run"
    result = run_cli("run", "--profile", "tiny", "--limit-per-class", "40", "--threads", "1", "--out", str(out),
                     timeout=1800)  # 1 thread: the two xdist workers share 2 cores (no assertion reads the count)
    assert result.returncode == 0, result.stderr[-3000:]
    # a quiet terminal: the suite's progress lines, none of TensorFlow's C++ start-up lines (kept in the log)
    assert "keras_layers__seed0: done" in result.stderr and "keras_layers__seed0: ok  AP" in result.stderr
    assert "cuInit" not in result.stderr and "oneDNN" not in result.stderr and "absl::" not in result.stderr
    summary = pd.read_csv(out / "summary.csv")
    assert set(REQUIRED_COLUMNS) <= set(summary.columns)
    assert list(summary["variant"]) == list(VARIANTS)
    assert (summary["status"] == "ok").all(), summary[["variant", "status", "reason"]]
    split = json.loads((out / "splits.json").read_text())
    assert set(summary["split_sha256"]) == {split["sha256"]}
    # every recorded AP is the AP of the predictions the worker saved, on the split's test labels in order;
    # TF-IDF's equals a fit made here, in-process, on the same split
    data = load(DataSpec(limit_per_class=40))
    positive = data.labels[split["test"]] == data.positive_index
    for row in summary.itertuples():
        with np.load(out / "predictions" / f"{row.variant.replace(':', '-')}__seed0.npz") as saved:
            assert saved["test"].tolist() == split["test"]
            recomputed = average_precision_score(positive, saved["proba"][:, data.positive_index])
        assert row.average_precision == pytest.approx(recomputed, abs=1e-6), row.variant
    assert summary.set_index("variant").loc["tfidf_logreg", "average_precision"] == pytest.approx(
        expected_tfidf_ap(40), abs=1e-6)
    assert (summary["params_trainable"] <= summary["params_total"]).all()
    frozen, full = (summary.set_index("variant").loc[v] for v in ("hf_bert:frozen", "hf_bert:full"))
    assert frozen["params_trainable"] < full["params_trainable"] == full["params_total"]
    # memory is this worker's own reading: the framework import shows, and training's peak (VmHWM reset on
    # entry) is at least the memory held when it began; a missing, stale or mis-scaled reading fails here
    assert summary["peak_rss_train_mb"].notna().all()
    assert (summary["peak_rss_train_mb"] >= 0.95 * summary["rss_after_import_mb"]).all()
    for run in (out / "runs").glob("*.json"):  # cold start and serving memory: a fresh process per run
        record = json.loads(run.read_text())
        assert record["serve_pid"] != record["worker_pid"] and record["serve_max_abs_diff"] < 1e-4, run.name
        assert record["cold_start_s"] > record["serve_import_s"] + record["serve_load_s"] > 0, run.name
        assert record["peak_rss_serve_mb"] >= record["rss_serve_loaded_mb"] > 50, run.name
    for run in (out / "runs").glob("*.json"):  # every backend that trains by epochs says what validation chose
        record = json.loads(run.read_text())
        assert record["rss_after_import_mb"] > record["rss_process_start_mb"], run.name
        # compilation is a column only where the inference path compiles (Keras's tf.function)
        assert (record["compile_seconds"] is not None) == (record["backend"] == "keras_layers"), run.name
        assert record["first_pass_seconds"] > 0, run.name
        if record["backend"] != "tfidf_logreg":
            info = record["fit_info"]
            assert info.get("selection", {}).get("rule", "validation") != "validation" or \
                    1 <= info["best_epoch"] <= info["epochs_run"], (run.name, info)  # other rules choose no epoch
    for figure in ("metrics.png", "pareto.png", "pr_curves.png", "confusion_matrices.png", "forest.png"):
        assert (out / "figures" / figure).stat().st_size > 5000
    verdicts = pd.read_csv(out / "verdicts.csv")  # every pair of the five variants, for each metric
    assert len(verdicts) == 10 * verdicts["metric"].nunique() and verdicts["p_holm"].between(0, 1).all()
    assert_no_raw_text(out)
