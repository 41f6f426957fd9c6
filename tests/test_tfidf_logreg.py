from backends.base import build
from tests.backend_contract import check_backend_contract


def test_tfidf_logreg_passes_the_contract(tiny_splits, tmp_path):
    check_backend_contract(lambda seed: build("tfidf_logreg", seed=seed, min_df=1), tiny_splits, tmp_path)
