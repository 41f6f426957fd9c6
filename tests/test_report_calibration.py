"""comparisons/report/calibration.py: each run's Brier score and ECE from its stored probabilities, the
per-variant table and the reliability diagram's points (pooled runs)."""
from pathlib import Path

import numpy as np
import pytest

from common.metrics import brier_score, expected_calibration_error
from comparisons.report.calibration import calibration_table, with_calibration
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
