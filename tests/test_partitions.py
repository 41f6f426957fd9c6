"""common/partitions.py: repeated group-aware stratified k-fold partitions on real texts with planted duplicates."""
import numpy as np
import pytest

from common.datasets import DataSpec, LabelledTexts, load
from common.errors import UserInputError
from common.partitions import kfold_partitions, leaked_texts, text_groups


@pytest.fixture(scope="module")
def with_duplicates() -> LabelledTexts:
    """300 real messages, 40 of them copied 2-4 times (planted duplicates, as the SMS data has 403)."""
    data = load(DataSpec(limit_per_class=150))
    rng = np.random.default_rng(0)
    copies = [int(i) for i in rng.choice(len(data), 40, replace=False) for _ in range(rng.integers(1, 4))]
    order = rng.permutation(len(data) + len(copies))  # the copies scattered among the originals
    texts = np.array(list(data.texts) + [data.texts[i] for i in copies], dtype=object)[order]
    labels = np.concatenate([data.labels, data.labels[copies]])[order]
    return LabelledTexts(list(texts), labels, data.class_names, data.positive_index)


def test_no_text_of_a_test_part_occurs_in_its_training_or_validation_part(with_duplicates):
    data = with_duplicates
    assert len(set(data.texts)) < len(data) - 40, "the fixture really holds duplicates"
    partitions = kfold_partitions(data, folds=5, repeats=2, seed=7)
    assert len(partitions) == 10 and [p.name for p in partitions[:2]] == ["r0f0", "r0f1"]
    for partition in partitions:
        split = partition.split
        assert leaked_texts(data, split) == 0
        train_texts = {data.texts[i] for i in split.train}
        assert not train_texts & {data.texts[i] for i in split.valid}, "validation is group-aware too"
        assert len(set(split.train) | set(split.valid) | set(split.test)) == len(data), "every row used once"
    # a plain stratified split of the same data does leak: the check above can fail
    from common.splits import stratified_split
    assert leaked_texts(data, stratified_split(data, 7)) > 0


def test_every_text_is_tested_once_per_repeat_and_classes_keep_their_share(with_duplicates):
    data = with_duplicates
    partitions = kfold_partitions(data, folds=4, repeats=2, seed=1)
    for repeat in (0, 1):
        tested = np.concatenate([p.split.test for p in partitions if p.repeat == repeat])
        assert sorted(tested) == list(range(len(data)))
    share = data.labels.mean()
    for p in partitions:
        assert abs(data.labels[p.split.test].mean() - share) < 0.08
    assert partitions[0].split.sha256 != partitions[4].split.sha256, "repeats reshuffle"


def test_partitions_are_deterministic_and_refuse_too_few_rows(with_duplicates):
    first = kfold_partitions(with_duplicates, 3, 1, seed=5)
    again = kfold_partitions(with_duplicates, 3, 1, seed=5)
    assert [p.split.sha256 for p in first] == [p.split.sha256 for p in again]
    assert text_groups(["a", "b", "a"]).tolist() == [0, 1, 0]
    with pytest.raises(UserInputError, match="too few rows per class"):
        kfold_partitions(load(DataSpec(limit_per_class=12)), 5, 1, seed=0)
    with pytest.raises(UserInputError, match="at least 2 folds"):
        kfold_partitions(with_duplicates, 1, 1, seed=0)


def scikit_learn_folds(labels, groups, folds, seed):
    from sklearn.model_selection import StratifiedGroupKFold

    splitter = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    return [test for _, test in splitter.split(np.zeros(len(labels)), labels, groups)]


@pytest.mark.parametrize("classes", [2, 3, 5, 9])  # 9: beyond 7 classes scikit-learn's own class runs
def test_the_fast_folds_are_scikit_learn_s_stratified_group_k_fold_index_for_index(with_duplicates, classes):
    """stratified_group_folds re-does StratifiedGroupKFold's greedy pass on Python floats: every fold must hold the
    indices scikit-learn's gives, on the planted duplicates (real texts) and on random labels whose many equal
    groups make the ties (np.isclose, then the smaller fold) decide most of the choices."""
    from common.partitions import stratified_group_folds

    groups = text_groups(with_duplicates.texts)
    rng = np.random.default_rng(classes)
    labels = with_duplicates.labels if classes == 2 else rng.integers(0, classes, len(groups))
    for folds, seed in ((5, 0), (3, 11), (10, 2**31 - 1)):
        ours = stratified_group_folds(labels, groups, folds, seed)
        theirs = scikit_learn_folds(labels, groups, folds, seed)
        assert len(ours) == folds and all(np.array_equal(a, b) for a, b in zip(ours, theirs)), (folds, seed)
    few_groups = rng.integers(0, 25, len(groups))  # 25 groups of about 12 rows: ties between whole folds
    assert all(np.array_equal(a, b) for a, b in zip(stratified_group_folds(labels, few_groups, 5, 3),
                                                    scikit_learn_folds(labels, few_groups, 5, 3)))
