"""Each run's Brier score and ECE (recorded by the worker; from the stored probabilities for an older record:
comparisons/run_folder/record_calibration.py), the per-variant table (comparisons/report/calibration_table.py) and the
reliability diagram's points (pooled runs)."""
from pathlib import Path

import numpy as np
import pytest

from common.metrics import brier_score, expected_calibration_error
from comparisons.report.calibration_table import calibration_table, with_calibration
from comparisons.stats.calibration import reliability_points
from comparisons.report.figures import reliability_diagram
from comparisons.report.split_tables import summary_frame
from comparisons.run_folder import RunFolder

REFERENCE = Path(__file__).resolve().parent.parent / "results" / "single_split_bc0aeaf"


def test_every_run_gets_the_brier_score_and_ece_of_its_own_stored_probabilities():
    folder = RunFolder(REFERENCE)
    records = [r for r in folder.records if r.ok]
    summary = with_calibration(summary_frame(records), folder, records, 1)
    assert summary["brier"].notna().all() and summary["ece"].between(0, 1).all()
    one = summary.iloc[-1]
    with np.load(REFERENCE / "predictions" / f"{one['variant'].replace(':', '-')}__seed{one['seed']}.npz") as saved:
        assert one["brier"] == pytest.approx(brier_score(saved["labels"], saved["proba"], 1))
        assert one["ece"] == pytest.approx(expected_calibration_error(saved["labels"], saved["proba"], 1))
    html = calibration_table(summary, "seed", "en")
    assert "10 equal-mass bins" in html and html.count("<tr>") == 1 + summary["variant"].nunique()
    assert "No calibration figures" in calibration_table(summary.drop(columns=["brier", "ece"]), "seed", "en")


def test_the_reliability_diagram_pools_the_runs_and_is_drawn(tmp_path):
    generator = np.random.default_rng(1)
    labels = generator.integers(0, 2, 400)
    honest = np.where(labels == 1, generator.uniform(0.5, 1, 400), generator.uniform(0, 0.5, 400))
    runs = [(labels[:200], np.column_stack([1 - honest[:200], honest[:200]])),
            (labels[200:], np.column_stack([1 - honest[200:], honest[200:]]))]
    halves = np.repeat([0, 1], 200)  # 0.01 for the 200 negatives, 0.99 for the 200 positives: bins of 40, ECE 0.01
    points = reliability_points({"honest": runs, "sure": [(halves, np.column_stack([1 - halves, halves]) * 0.98 + 0.01)]}, 1)
    assert points["honest"]["count"].sum() == 400 and len(points["honest"]["count"]) == 10
    assert points["sure"]["ece"] == pytest.approx(0.01)
    from PIL import Image

    png = reliability_diagram(points, "zh", tmp_path / "reliability.png")
    pixels = np.asarray(Image.open(png).convert("L"), dtype=float)
    assert pixels.shape[1] > 400 and pixels.std() > 10


def test_the_worker_records_each_runs_brier_and_ece_and_the_reports_read_them_from_the_record(tmp_path):
    """The worker records Brier and ECE as the reports computed them from the stored predictions
    (to the records' 6 decimals); the reports take a record's own figures, and compute them only for an older record."""
    import json

    from comparisons.run_folder.record_calibration import run_calibration
    from tests.test_executors import small_spec_and_inputs, start_worker

    spec, inputs = small_spec_and_inputs()
    worker = start_worker(spec, tmp_path / "out", cwd=tmp_path / "elsewhere")
    log, _ = worker.communicate(inputs.to_json_bytes(), timeout=300)
    assert worker.returncode == 0, log.decode()[-2000:]
    record = json.loads((tmp_path / "out" / "runs" / "tfidf_logreg__seed0.json.worker").read_text())  # the worker's
    with np.load(tmp_path / "out" / "predictions" / "tfidf_logreg__seed0.npz") as saved:
        positive = 1
        assert record["brier"] == pytest.approx(brier_score(saved["labels"], saved["proba"], positive), abs=1e-6)
        assert record["ece"] == pytest.approx(expected_calibration_error(saved["labels"], saved["proba"], positive),
                                              abs=1e-6)
    folder = RunFolder(tmp_path / "out")
    assert run_calibration(folder, {**record, "brier": 0.5}, positive)["brier"] == 0.5  # the record's own figure
    older = {k: v for k, v in record.items() if k not in ("brier", "ece")}
    assert run_calibration(folder, older, positive)["ece"] == pytest.approx(record["ece"], abs=1e-6)
