"""The AutoML side by side's part in this environment: the CSVs it hands the tools (a held-out test apart from every
text they or select learn from, the label budget kept), its table (no text in it), and the anchor script's own
figures (the suite's AP, its imports limited to what the tools' environments have). The tools themselves run only
in `make anchors` (their own environments)."""
from __future__ import annotations

import ast
import json

import numpy as np
import pandas as pd
import pytest

from common.datasets import DataSpec, LabelledTexts, load
from common.metrics import classification_metrics
from comparisons.studies import automl_anchor
from comparisons.studies.automl_side_by_side import prepare_cell, run_anchor, table_rows, write_table


def synthetic(n: int = 100) -> LabelledTexts:
    """Texts over two lines (flattened on every side), a tenth of them twice (a group to keep on one side)."""
    texts = [f"message number {i}\nsecond line of {i}" for i in range(n - n // 10)]
    texts += texts[: n // 10]
    labels = np.array([i % 2 for i in range(n - n // 10)] + [i % 2 for i in range(n // 10)])
    return LabelledTexts(texts, labels, ("ham", "spam"), 1)


def read(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_cell_holds_the_test_apart_and_the_label_budget(tmp_path):
    data = synthetic()
    cell = prepare_cell(data, 30, tmp_path / "cell")
    train, test = read(tmp_path / "cell" / "train.csv"), read(tmp_path / "cell" / "test.csv")
    pool = load(DataSpec(source="file", path=str(cell["pool"])))  # as select reads it
    assert len(train) == cell["n_train"] == 30
    assert len(pool) + len(test) == len(data) and 15 <= len(test) <= 25  # one fold in 5 held out
    assert set(test["text"]).isdisjoint(pool.texts)  # select never sees a test text, nor an equal one
    assert set(test["text"]).isdisjoint(train["text"])
    assert set(train["text"]) <= set(pool.texts)  # the tools learn from the pool's texts only
    assert set(train["label"]) == set(test["label"]) == {"ham", "spam"} and cell["positive"] == "spam"
    assert not any("\n" in t for t in list(train["text"]) + list(test["text"]) + pool.texts)
    assert pool.class_names == data.class_names


def test_cell_on_real_texts_is_group_aware(tmp_path, tiny_data):
    cell = prepare_cell(tiny_data, 40, tmp_path / "sms")
    test = read(tmp_path / "sms" / "test.csv")
    pool = load(DataSpec(source="file", path=str(cell["pool"])))
    assert len(read(tmp_path / "sms" / "train.csv")) == 40
    assert set(test["text"]).isdisjoint(pool.texts)
    assert len(pool) + len(test) == len(tiny_data)


def test_a_tool_without_its_environment_is_a_row_that_says_so(tmp_path):
    cell = prepare_cell(synthetic(), 30, tmp_path / "cell")
    result = run_anchor("flaml", cell, 60, 1, tmp_path / "no-venv")
    assert "make anchors-venvs" in result["failed"]
    assert not (tmp_path / "cell" / "flaml.json").exists()  # nothing on file: the next run tries again


def test_table_holds_figures_and_no_text(tmp_path, tiny_data):
    results = [
        {"tool": "autogluon", "version": "1.6.3", "pick": "WeightedEnsemble_L2", "time_limit_seconds": 60,
         "wall_seconds": 90.0, "overrun_ratio": 1.5, "validation_score": 0.99, "test_ap": 0.90,
         "validation_optimism": 0.09},
        {"tool": "flaml", "version": "2.7.0", "pick": "lgbm", "time_limit_seconds": 60, "wall_seconds": 59.0,
         "overrun_ratio": 59 / 60, "validation_score": 0.95, "test_ap": 0.93, "validation_optimism": 0.02},
        {"tool": "select", "failed": "no pick (budget)", "time_limit_seconds": 60, "wall_seconds": 50.0,
         "overrun_ratio": 50 / 60},
    ]
    rows = table_rows("sms", 40, results)
    assert [r["behind_best"] for r in rows[:2]] == [pytest.approx(0.03), 0.0] and rows[2]["behind_best"] is None
    assert [r["worse_than_delta"] for r in rows] == [True, False, None]
    write_table(rows, tmp_path)
    written = (tmp_path / "anchors.md").read_text() + (tmp_path / "anchors.csv").read_text()
    assert "WeightedEnsemble_L2" in written and "overran the budget: 1 of the tools' 2, 0 of select's 1;" in written
    assert not [t for t in tiny_data.texts if len(t) > 20 and t in written]


def test_the_anchor_scores_ap_as_the_suite_does():
    rng = np.random.default_rng(0)
    for classes in (2, 3):
        y = np.arange(60) % classes
        proba = rng.dirichlet(np.ones(classes), size=60)
        suite = classification_metrics(y, proba, 1 if classes == 2 else None)["average_precision"]
        assert automl_anchor.held_out_ap(y, proba) == pytest.approx(suite)


def test_the_anchor_puts_the_positive_class_at_code_1():
    train, test = pd.Series(["spam", "ham", "ham"]), pd.Series(["ham", "spam"])
    codes, test_codes, classes = automl_anchor.encode_labels(train, test, "ham")
    assert classes == ["spam", "ham"] and list(codes) == [0, 1, 1] and list(test_codes) == [1, 0]
    with pytest.raises(SystemExit):
        automl_anchor.encode_labels(train, pd.Series(["other"]), None)  # a test class the tool never saw


def test_the_anchor_imports_only_what_the_tools_environments_have():
    tree = ast.parse(open(automl_anchor.__file__, encoding="utf-8").read())
    imported = {(node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
                for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    allowed = {"__future__", "argparse", "importlib", "json", "os", "sys", "tempfile", "time", "traceback", "pathlib",
               "numpy", "pandas", "sklearn", "autogluon", "flaml"}
    assert imported <= allowed, imported - allowed


def test_a_selection_refused_before_its_record_is_a_row_with_its_wall_and_its_line(tmp_path):
    from comparisons.studies.automl_side_by_side import select_result

    folder = tmp_path / "sms-200"
    folder.mkdir()
    cell = {"folder": folder, "test": None}
    assert select_result(cell, 2) is None  # select did not run here
    (folder / "select_process.json").write_text(json.dumps(
        {"process_seconds": 252.0, "exit_code": 2, "refusal": "error: --budget-minutes 2 cannot hold the pilot fold"}))
    row = select_result(cell, 2)
    assert row["overrun_ratio"] == pytest.approx(2.1) and row["failed"].startswith("error: --budget-minutes 2")
    assert table_rows("sms", 200, [row])[0]["failed"] == row["failed"]
