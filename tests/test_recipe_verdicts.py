"""comparisons/stats/partition_verdicts.py on synthetic per-partition scores whose answers are known."""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import nct
from scipy.stats import t as student_t

from comparisons.stats.partition_verdicts import COLUMNS, corrected_t, recipe_verdicts

PARTITIONS = 10


def scores(recipes: dict[str, tuple[float, float]], seeds: int = 2, rng_seed: int = 0,
           shared_spread: float = 0.0) -> pd.DataFrame:
    """recipe -> (mean AP, spread over partitions and seeds); `shared_spread`: partition difficulty both share."""
    rng = np.random.default_rng(rng_seed)
    difficulty = rng.normal(0, shared_spread, PARTITIONS)
    rows = []
    for recipe, (mean, spread) in recipes.items():
        for j in range(PARTITIONS):
            for seed in range(seeds):
                value = mean + difficulty[j] + rng.normal(0, spread)
                rows.append({"partition": f"r{j // 5}f{j % 5}", "variant": recipe, "seed": seed, "n_train": 4000,
                             "n_test": 1000, "average_precision": value, "macro_f1_at_threshold": value,
                             "accuracy_at_threshold": value})
    return pd.DataFrame(rows)


def ap(pairs: pd.DataFrame) -> pd.DataFrame:
    return pairs[pairs["metric"] == "average_precision"].set_index(["variant_a", "variant_b"])


def test_equal_recipes_are_never_called_better():
    for rng_seed in range(30):
        _, pairs = recipe_verdicts(scores({"a": (0.98, 0.004), "b": (0.98, 0.004)}, rng_seed=rng_seed))
        assert list(pairs.columns) == list(COLUMNS)
        assert set(ap(pairs)["verdict"]) <= {"equivalent", "inconclusive"}


def test_a_large_planted_gap_is_better_and_a_small_tight_gap_is_equivalent():
    _, pairs = recipe_verdicts(scores({"weak": (0.95, 0.004), "strong": (0.98, 0.004)}))
    row = ap(pairs).loc[("strong", "weak")]
    assert row["verdict"] == "A better" and row["ci_low"] > 0.02 and row["df"] == PARTITIONS - 1
    _, pairs = recipe_verdicts(scores({"a": (0.980, 0.0003), "b": (0.981, 0.0003)}))
    row = ap(pairs).loc[("b", "a")]
    assert abs(row["difference"]) < 0.002 and row["margin"] == 0.005 and row["verdict"] == "equivalent"
    _, pairs = recipe_verdicts(scores({"a": (0.980, 0.02), "b": (0.981, 0.02)}))  # a wide spread: cannot say
    assert ap(pairs).loc[("b", "a"), "verdict"] == "inconclusive"


def test_the_correction_widens_the_plain_t_interval_as_nadeau_and_bengio_say():
    differences = np.array([0.01, 0.02, 0.0, 0.015, 0.005])
    mean, se, df = corrected_t(differences, test_to_train=0.25)
    assert (mean, df) == (pytest.approx(0.01), 4)
    assert se == pytest.approx(np.sqrt((1 / 5 + 0.25) * np.var(differences, ddof=1)))
    assert se > np.std(differences, ddof=1) / np.sqrt(5)


def test_seeds_are_averaged_within_a_partition_and_sdd_uses_the_family():
    frame = scores({"a": (0.97, 0.004), "b": (0.98, 0.004), "c": (0.99, 0.004)}, seeds=3)
    variants, pairs = recipe_verdicts(frame)
    assert list(variants["partitions"]) == [PARTITIONS] * 3 and list(variants["seeds"]) == [3] * 3
    rows = ap(pairs)
    assert (rows["family_size"] == 6).all() and (rows["family"] == "primary").all()
    df, critical = PARTITIONS - 1, student_t.ppf(1 - 0.05 / 12, PARTITIONS - 1)  # Holm's first step: alpha / 6
    shift = rows["smallest_detectable_difference"] / rows["standard_error"]
    assert np.allclose(nct.sf(critical, df, shift) + nct.cdf(-critical, df, shift), 0.8, atol=1e-9), \
        "the noncentral t's power at the reported difference is 80%"
    normal_style = (critical + student_t.ppf(0.8, df)) * rows["standard_error"]
    assert (rows["smallest_detectable_difference"] > normal_style).all(), "t quantile + t power quantile is too small"
    secondary = pairs[pairs["metric"] != "average_precision"]
    assert (secondary["family"] == "secondary").all()


def test_cluster_projection_schedules_longest_first():
    from comparisons.studies.cluster_projection import makespan

    assert makespan([5, 4, 3, 3, 3], 1) == 18
    assert makespan([5, 4, 3, 3, 3], 2) == 10  # LPT: 5+3+... -> {5, 3}, {4, 3, 3}: 8 and 10
    assert makespan([7, 1, 1, 1], 16) == 7, "never below the longest run"


def test_with_more_than_two_classes_the_decision_rows_are_the_arg_max(tmp_path):
    """Runs on 5 topics choose no threshold (their records hold none): the partition design's decision rows use
    the arg-max's macro-F1 and accuracy, not nan; with two classes they stay the validation threshold's."""
    import json

    from comparisons.report.partition_reports import partition_scores

    for classes, folder in ((5, tmp_path / "topics"), (2, tmp_path / "binary")):
        partition = folder / "partitions" / "r0f0"
        (partition / "runs").mkdir(parents=True)
        (folder / "design.json").write_text(json.dumps({"folds": 1, "repeats": 1, "variants": ["tfidf_logreg"]}))
        (partition / "splits.json").write_text(json.dumps({"sha256": "s", "train": [0, 1], "valid": [2], "test": [3]}))
        (partition / "manifest.json").write_text(json.dumps({"data": {"class_names": [f"c{i}" for i in range(classes)]},
                                                             "variants": {"tfidf_logreg": {}}, "seeds": [0]}))
        record = {"variant": "tfidf_logreg", "seed": 0, "status": "ok", "split_sha256": "s", "average_precision": 0.9,
                  "macro_f1": 0.8, "accuracy": 0.85}
        if classes == 2:
            record.update(macro_f1_at_threshold=0.7, accuracy_at_threshold=0.75)
        (partition / "runs" / "tfidf_logreg__seed0.json").write_text(json.dumps(record))
    topics, binary = partition_scores(tmp_path / "topics").iloc[0], partition_scores(tmp_path / "binary").iloc[0]
    assert (topics["macro_f1_at_threshold"], topics["accuracy_at_threshold"]) == (0.8, 0.85)
    assert (binary["macro_f1_at_threshold"], binary["accuracy_at_threshold"]) == (0.7, 0.75)
