"""The training-size sweep: nested stratified subsets, and an end-to-end sweep with two sizes."""
from __future__ import annotations

import numpy as np
import pytest

from common.datasets import DataSpec, load
from common.errors import UserInputError
from common.splits import (MIN_PER_CLASS, stratified_split, train_subset, train_subsets_record)

SIZES = [10, 50, 100, 200, 500, 1000]


@pytest.fixture(scope="module")
def sms():
    data = load(DataSpec())
    return data, stratified_split(data)


def test_subsets_are_nested_and_inside_train(sms):
    data, split = sms
    previous = np.array([], dtype=np.int64)
    for size in SIZES + [None]:
        subset = train_subset(split, data.labels, size)
        assert len(subset) == (size or len(split.train)) == len(set(subset.tolist()))
        assert set(subset.tolist()) <= set(split.train.tolist())
        assert set(previous.tolist()) <= set(subset.tolist()), f"size {size} does not contain the smaller subset"
        previous = subset


def test_subsets_are_stratified_with_a_minimum_per_class(sms):
    data, split = sms
    share = np.bincount(data.labels[split.train]) / len(split.train)
    for size in SIZES:
        counts = np.bincount(data.labels[train_subset(split, data.labels, size)], minlength=data.n_classes)
        assert (counts >= MIN_PER_CLASS).all(), (size, counts)
        if (share * size >= MIN_PER_CLASS).all():  # the minimum does not bind: each class at its share
            assert (np.abs(counts - share * size) <= 1).all(), (size, counts, share * size)


def test_subsets_are_deterministic_for_a_seed_and_change_with_it(sms):
    data, split = sms
    again = stratified_split(data)
    assert np.array_equal(train_subset(split, data.labels, 200), train_subset(again, data.labels, 200))
    other = stratified_split(data, seed=1)
    assert not np.array_equal(np.sort(train_subset(split, data.labels, 200)),
                              np.sort(train_subset(other, data.labels, 200)))


def test_subsets_are_recorded_and_leave_the_split_unchanged(sms):
    data, split = sms
    record = train_subsets_record(split, data.labels, [200, 50, None])
    assert list(record["sizes"]) == ["50", "200"] and record["seed"] == split.seed
    assert record["sizes"]["50"] == train_subset(split, data.labels, 50).tolist()
    assert split.sha256.startswith("lsfbifsu524t"), "the default split changed"


def test_impossible_sizes_say_what_to_do(sms):
    data, split = sms
    with pytest.raises(UserInputError, match="per class"):
        train_subset(split, data.labels, 3)
    with pytest.raises(UserInputError, match="larger than the split's training part"):
        train_subsets_record(split, data.labels, [len(split.train) + 1])


@pytest.mark.parametrize("binary_runs", [False, True])
def test_learning_curves_from_a_run_folder(tmp_path, binary_runs):
    """Predictions that improve with size: the curve rises, each size has its table and verdicts, figures drawn.

    Runs of two classes record macro-F1 at the validation threshold too: the curve shows both cuts."""
    import io

    import pandas as pd

    from common.metrics import classification_metrics
    from comparisons.report.learning_curves import write_learning_curves
    from comparisons.outputs import atomic_write_bytes
    from comparisons.report.split_tables import summary_frame
    from comparisons.run_folder import prediction_path

    rng = np.random.default_rng(0)
    labels = (rng.random(300) < 0.2).astype(int)
    test_ids = np.arange(1000, 1300)
    records = []
    for variant, skill in (("tfidf_logreg", 1.0), ("hf_bert:full", 2.0)):
        for size, noise in ((50, 2.5), (200, 1.5), (None, 1.0)):
            for seed in (0, 1):
                score = 1 / (1 + np.exp(-(skill * (2 * labels - 1) + noise * rng.normal(size=300))))
                proba = np.column_stack([1 - score, score])
                buffer = io.BytesIO()
                np.savez(buffer, test=test_ids, proba=proba)
                atomic_write_bytes(prediction_path(tmp_path, variant, seed, size), buffer.getvalue())
                records.append({"variant": variant, "seed": seed, "train_size": size, "status": "ok",
                                "train_seconds": 1.0, "threshold": 0.5, **classification_metrics(labels, proba, 1)})
                if binary_runs:
                    records[-1]["macro_f1_at_threshold"] = records[-1]["macro_f1"]
    summary = summary_frame(records)
    assert summary["train_size"].astype(str).tolist()[:3] == ["50", "50", "200"]
    paths = write_learning_curves(tmp_path, summary, test_ids, labels, 1, full_size=1000, languages=("en", "zh"))
    assert all(path.exists() for path in paths)
    curve = pd.read_csv(tmp_path / "learning_curve.csv")
    assert sorted(curve["train_size"].unique()) == [50, 200, 1000]
    for _, row in curve.iterrows():
        assert row["average_precision_ci_low"] <= row["average_precision_mean"] <= row["average_precision_ci_high"]
        assert row["seeds"] == 2 and row["average_precision_std"] > 0
    full = curve[curve["variant"] == "hf_bert:full"].sort_values("train_size")
    assert full["average_precision_mean"].is_monotonic_increasing
    for name in ("size_50", "size_200", "size_all"):
        assert "±" in (tmp_path / "learning_curves" / f"{name}.md").read_text()
        assert "−" in (tmp_path / "learning_curves" / f"{name.replace('size', 'verdicts')}.md").read_text()
    assert "训练样本数" in (tmp_path / "zh" / "learning_curves" / "size_all.md").read_text()
    table = (tmp_path / "learning_curves" / "size_all.md").read_text()
    verdicts = (tmp_path / "learning_curves" / "verdicts_all.md").read_text()
    shown = "macro_f1_at_threshold_mean" in curve
    assert shown == binary_runs and ("macro-F1 (validation threshold)" in table) == binary_runs
    assert ("macro-F1 (0.5 cut)" in table) == binary_runs == ("macro-F1 (validation threshold)" in verdicts)
    headline = pd.read_csv(tmp_path / "pretrained_vs_scratch.csv")
    assert list(headline["train_size"]) == [50, 200, 1000]
    assert set(headline["verdict"]) == {"pretrained better"}, headline  # skill 2 against 1 on 300 items
    assert set(headline["best_without_pretraining"]) == {"tfidf_logreg"}
    for figure in (tmp_path / "figures", tmp_path / "zh" / "figures"):
        assert (figure / "learning_curves.png").stat().st_size > 5000


def test_a_sweep_with_two_sizes_writes_curves_tables_and_resumes(tmp_path, capfd):
    """tfidf_logreg and torch_scratch (tiny) at 20 messages and all, on the tests' small subset."""
    import json

    import pandas as pd

    from tests.test_cli import assert_no_raw_text, run_main

    out = tmp_path / "sweep"
    command = ("run", "--profile", "tiny", "--limit-per-class", "40", "--backends", "tfidf_logreg,torch_scratch",
               "--train-sizes", "20,all", "--threads", "1", "--out", str(out), "--lang", "zh",
               "--margin-ap", "0.02", "--contrasts", "tfidf_logreg-torch_scratch")
    result = run_main(capfd, *command)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(summary["train_size"].astype(str)) == ["20", "20", "all", "all"]
    assert (summary["status"] == "ok").all(), summary[["variant", "train_size", "status", "reason"]]
    names = sorted(p.stem for p in (out / "runs").glob("*.json"))
    assert names == ["tfidf_logreg__n20__seed0", "tfidf_logreg__seed0",
                     "torch_scratch__n20__seed0", "torch_scratch__seed0"]
    splits = json.loads((out / "splits.json").read_text())
    subset, valid = splits["train_subsets"]["sizes"]["20"], splits["train_subsets"]["valid"]["20"]
    assert len(subset) + len(valid) == 20 and set(subset) | set(valid) <= set(splits["train"]) | set(splits["valid"])
    assert splits["train_subsets"]["label_budget"] == "train+valid"
    record = json.loads((out / "runs" / "torch_scratch__n20__seed0.json").read_text())
    assert record["train_size"] == 20 and record["n_train_texts"] + record["n_valid_texts"] == 20
    # serving costs are the model's, measured once at the whole split; a subset run records quality and training
    assert "latency_ms_b32_p50" not in record and "cold_start_s" not in record and record["train_seconds"] > 0
    whole = json.loads((out / "runs" / "torch_scratch__seed0.json").read_text())
    assert whole["latency_ms_b32_p50"] > 0 and whole["cold_start_s"] > 0 and whole["serve_max_abs_diff"] < 1e-4
    curve = pd.read_csv(out / "learning_curve.csv")
    assert sorted(curve["train_size"].unique()) == [20, len(splits["train"]) + len(splits["valid"])]
    for folder in (out, out / "zh"):
        assert {p.name for p in (folder / "learning_curves").glob("size_*.md")} == {"size_20.md", "size_all.md"}
        assert (folder / "learning_curves" / "verdicts_20.md").exists()
        assert (folder / "figures" / "learning_curves.png").stat().st_size > 5000
    sweep_verdicts = pd.read_csv(out / "learning_curve_verdicts.csv")
    assert set(sweep_verdicts["train_size"]) == set(curve["train_size"])
    # the margin given on the command line reaches the sweep's verdicts as the split's, and the declared pair
    # keeps its orientation (A = tfidf_logreg) in every file of the folder
    for verdicts in (sweep_verdicts, pd.read_csv(out / "verdicts.csv")):
        ap = verdicts[verdicts["metric"] == "average_precision"]
        assert (ap["margin"] == 0.02).all() and set(ap["contrast"]) == {"declared"}
        assert set(zip(verdicts["variant_a"], verdicts["variant_b"])) == {("tfidf_logreg", "torch_scratch")}
    assert (sweep_verdicts.loc[sweep_verdicts["metric"] == "average_precision", "family_size"] == 4).all(), \
        "one family over both sizes: 2 rows x (difference, equivalence)"
    for page in out.rglob("report.html"):  # its embedded PNGs (base64) trip the phone-number pattern
        page.unlink()                       # the page's own privacy is tested in its own tests
    assert_no_raw_text(out)
    again = run_main(capfd, *command)  # resume: every (variant, size, seed) kept, each by its own name
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr.count("finished earlier, kept") == 4, again.stderr[-2000:]


@pytest.mark.parametrize("sizes, message", [("50,abc", "not a positive whole number"), ("4,all", "per class"),
                                            ("99999", "larger than the split's labelled part"), (",", "is empty"),
                                            ("100,50", "50 after 100; give increasing sizes")])
def test_bad_train_sizes_are_one_line_and_write_nothing(tmp_path, capsys, sizes, message):
    from comparisons.cli import main  # in-process, as test_cli: the same dispatch and refusal

    code = main(["run", "--backends", "tfidf_logreg", "--train-sizes", sizes, "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert err.strip().count("\n") == 0 and err.startswith("error: ")
    assert not (tmp_path / "run").exists()
