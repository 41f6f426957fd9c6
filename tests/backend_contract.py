"""The one contract every backend passes (like scikit-learn's parametrize_with_checks).

Each backend's test file calls `check_backend_contract(make, splits, tmp_path)` with a
factory `make(seed) -> unfitted backend` on tiny settings.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

from backends.base import Backend, NotFittedError

ODD_TEXTS = ["", "zzqxv qqzxw vvqzz", "   ", "!!!"]  # empty, all-unknown, blank, symbols only


def check_backend_contract(make: Callable[[int], Backend], splits, tmp_path) -> None:
    train, valid, test = splits
    unfitted = make(0)
    assert isinstance(unfitted, Backend)
    assert type(unfitted)(**unfitted.get_params()).get_params() == unfitted.get_params()
    with pytest.raises(NotFittedError):
        unfitted.predict_proba(test.texts[:2])
    with pytest.raises(NotFittedError):
        unfitted.param_count()

    first = make(0)
    assert first.fit(train, valid) is first, "fit must return self"
    proba = first.predict_proba(test.texts)
    assert proba.shape == (len(test), train.n_classes)
    assert np.isfinite(proba).all()
    assert (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)

    odd = first.predict_proba(ODD_TEXTS)
    assert odd.shape == (len(ODD_TEXTS), train.n_classes) and np.isfinite(odd).all()
    np.testing.assert_allclose(odd.sum(axis=1), 1.0, atol=1e-5)

    again = make(0).fit(train, valid).predict_proba(test.texts)
    np.testing.assert_allclose(again, proba, atol=1e-6, err_msg="same seed must give the same probabilities on CPU")

    count = first.param_count()
    assert isinstance(count.total, int) and isinstance(count.trainable, int)
    assert 0 < count.trainable <= count.total

    saved = first.save(tmp_path / "model")
    assert saved.exists()
