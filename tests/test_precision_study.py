"""The precision study's comparison (comparisons/studies/precision_study.py) on synthetic run folders."""
from __future__ import annotations

import json

import numpy as np

from comparisons.studies.precision_study import commands, compare, partition_rows, verdict_rows


def write_partition(folder, name, ap, proba, threshold, epoch_seconds, precision):
    partition = folder / "partitions" / name
    (partition / "runs").mkdir(parents=True)
    (partition / "predictions").mkdir()
    (partition / "manifest.json").write_text(json.dumps({"data": {"positive_index": 1}}))
    (partition / "splits.json").write_text(json.dumps({"train": list(range(30)), "valid": list(range(10)),
                                                       "test": list(range(len(proba)))}))
    record = {"variant": "hf_bert:full", "seed": 0, "status": "ok", "average_precision": ap, "threshold": threshold,
              "precision": precision, "train_seconds": 4 * epoch_seconds, "wall_seconds": 5 * epoch_seconds,
              "fit_info": {"history": [{"epoch": e, "seconds": epoch_seconds} for e in range(1, 5)]}}
    (partition / "runs" / "hf_bert-full__seed0.json").write_text(json.dumps(record))
    np.savez(partition / "predictions" / "hf_bert-full__seed0.npz", test=np.arange(len(proba)),
             proba=np.column_stack([1 - proba, proba]))


def test_pairs_give_delta_ap_flips_at_each_runs_threshold_time_ratios_and_an_equivalence_verdict(tmp_path):
    positive = np.array([0.1, 0.45, 0.55, 0.9])
    for number, (ap32, ap16) in enumerate([(0.990, 0.9902), (0.985, 0.9849), (0.988, 0.9881), (0.991, 0.9909),
                                           (0.987, 0.9871)]):
        write_partition(tmp_path / "fp32", f"r0f{number}", ap32, positive, 0.5, 40.0, "fp32")
        # bf16: the same probabilities, its own validation threshold 0.5 -> 0.4 flips the 0.45 text
        write_partition(tmp_path / "bf16", f"r0f{number}", ap16, positive, 0.4 if number == 0 else 0.5, 20.0, "bf16")
    rows = partition_rows(tmp_path)
    assert list(rows["partition"]) == [f"r0f{n}" for n in range(5)]
    assert list(rows["flips"]) == [1, 0, 0, 0, 0] and set(rows["n_test"]) == {4}
    np.testing.assert_allclose(rows["delta_ap"], [0.0002, -0.0001, 0.0001, -0.0001, 0.0001], atol=1e-9)
    assert set(rows["epoch_ratio"]) == {0.5} and set(rows["train_ratio"]) == {0.5}
    verdicts = verdict_rows(rows)
    assert verdicts.loc[0, "verdict"] == "equivalent" and verdicts.loc[0, "flips"] == 1
    compare(tmp_path)
    assert "equivalent within the margin" in (tmp_path / "equivalence.md").read_text()
    assert {p.name for p in tmp_path.iterdir()} >= {"equivalence.csv", "partitions.csv", "serving.csv"}


def test_a_real_gap_is_not_equivalent():
    import pandas as pd

    rows = pd.DataFrame({"variant": "hf_bert:full", "partition": [f"r0f{n}" for n in range(5)],
                         "delta_ap": [-0.02, -0.021, -0.019, -0.022, -0.018], "n_test": 1115, "n_train": 4459,
                         "ap_fp32": 0.99, "ap_bf16": [0.97, 0.969, 0.971, 0.968, 0.972],
                         "flips": 3, "epoch_ratio": 0.5, "train_ratio": 0.5})
    assert verdict_rows(rows).loc[0, "verdict"] == "B better"  # fp32 (B) better than bf16 (A)


def test_the_two_runs_differ_only_in_precision_and_serving(tmp_path):
    runs = commands(tmp_path, 2, "full", None)
    differ = {i for i, (a, b) in enumerate(zip(runs["fp32"], runs["bf16"])) if a != b}
    assert [runs["fp32"][i] for i in sorted(differ)] == ["fp32", "native,native-bf16", str(tmp_path / "fp32")]
    assert runs["fp32"][:3] == ["run", "--backends", "hf_bert:full,hf_bert:frozen"] and "--cv" in runs["bf16"]
