from backends.base import build
from tests.backend_contract import check_backend_contract


def test_tfidf_logreg_passes_the_contract(tiny_splits, tmp_path):
    check_backend_contract(lambda seed: build("tfidf_logreg", seed=seed, min_df=1), tiny_splits, tmp_path)


def test_a_validation_split_of_one_class_is_a_clear_error(tiny_splits):
    import numpy as np
    import pytest

    from common.selection import UnusableValidationError

    train, valid, _ = tiny_splits
    one_class = valid.subset(np.flatnonzero(valid.labels == 0))
    with pytest.raises(UnusableValidationError, match="validation needs at least two classes"):
        build("tfidf_logreg", min_df=1).fit(train, one_class)
