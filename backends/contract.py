"""The backend contract as checks anyone runs against a backend class (as scikit-learn's `check_estimator`).

    from backends.contract import check_backend
    check_backend(lambda seed: MyBackend(seed=seed), (train, valid, test), folder)

`make(seed)` returns an unfitted backend on settings small enough for a test; `splits` are three
LabelledTexts on which the classes can be told apart from the texts (the suite's tests use a small
stratified subset of the SMS data); `folder` an empty folder for `save`. Every built-in backend passes
it in its test file (tests/backend_contract.py); an outside backend's author runs the same checks
(docs/adding_a_backend.md). A failed check raises ContractError naming the rule it broke:

- the constructor's parameters round-trip through get_params; predict_proba and param_count before
  fit raise NotFittedError; fit returns self;
- probabilities have one row per text and one column per class, are finite, lie in [0, 1] and sum
  to 1, also for empty, blank, symbol-only and all-unknown texts;
- they depend on the input: after fit on texts whose classes differ, not every test text gets the
  same probabilities (a constant predictor, a prior, fails);
- the same seed gives the same probabilities on CPU (to 1e-6);
- parameter counts are positive integers, trainable at most total;
- save writes what `load` (a classmethod) reads back into a backend that gives the same
  probabilities (to 1e-5: a copy that answers differently fails).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from backends.base import Backend, NotFittedError

ODD_TEXTS = ["", "zzqxv qqzxw vvqzz", "   ", "!!!"]  # empty, all-unknown, blank, symbols only


class ContractError(AssertionError):
    """A backend broke a rule of the contract (the message names it)."""


def _require(condition: bool, rule: str) -> None:
    if not condition:
        raise ContractError(rule)


def _raises_not_fitted(call) -> bool:
    try:
        call()
    except NotFittedError:
        return True
    except Exception:
        return False
    return False


def check_probabilities(proba, n_texts: int, n_classes: int, where: str) -> None:
    proba = np.asarray(proba)
    _require(proba.shape == (n_texts, n_classes),
             f"predict_proba on {where} must give shape ({n_texts}, {n_classes}), gave {proba.shape}")
    _require(bool(np.isfinite(proba).all()), f"predict_proba on {where} gave values that are not finite")
    _require(bool((proba >= 0).all() and (proba <= 1).all()), f"predict_proba on {where} gave values outside [0, 1]")
    _require(bool(np.allclose(proba.sum(axis=1), 1.0, atol=1e-5)), f"predict_proba rows on {where} must sum to 1")


def check_backend(make: Callable[[int], Backend], splits, folder: Path) -> None:
    """Every rule above, in order; raises ContractError at the first one broken."""
    train, valid, test = splits
    unfitted = make(0)
    _require(isinstance(unfitted, Backend), f"{type(unfitted).__name__} is not a backends.base.Backend")
    cls = type(unfitted)
    _require(cls(**unfitted.get_params()).get_params() == unfitted.get_params(),
             "the constructor's parameters must round-trip through get_params")
    _require(_raises_not_fitted(lambda: unfitted.predict_proba(test.texts[:2])),
             "predict_proba before fit must raise NotFittedError")
    _require(_raises_not_fitted(unfitted.param_count), "param_count before fit must raise NotFittedError")

    first = make(0)
    _require(first.fit(train, valid) is first, "fit must return self")
    proba = first.predict_proba(test.texts)
    check_probabilities(proba, len(test), train.n_classes, "the test texts")
    check_probabilities(first.predict_proba(ODD_TEXTS), len(ODD_TEXTS), train.n_classes,
                        "empty, blank, symbol-only and all-unknown texts")
    _require(float(np.ptp(np.asarray(proba), axis=0).max()) > 1e-6,
             "probabilities must depend on the input: every test text got the same ones after fit on texts whose "
             "classes differ (a constant predictor)")

    again = make(0).fit(train, valid).predict_proba(test.texts)
    _require(bool(np.allclose(again, proba, atol=1e-6, rtol=0)), "the same seed must give the same probabilities on CPU")

    count = first.param_count()
    _require(isinstance(count.total, int) and isinstance(count.trainable, int), "param_count must give integers")
    _require(0 < count.trainable <= count.total, "param_count: 0 < trainable <= total")

    folder = Path(folder)
    saved = first.save(folder)
    _require(Path(saved).exists(), "save must write the model and return the path it wrote")
    _require(callable(getattr(cls, "load", None)), "a backend needs a classmethod load(directory) reading what save wrote")
    from backends.plugins import takes_device

    _require(takes_device(cls.load), "load must take the serving device: load(directory, device=None)")
    loaded = cls.load(folder, device="cpu")
    reloaded = loaded.predict_proba(test.texts)
    _require(bool(np.allclose(reloaded, proba, atol=1e-5, rtol=0)),
             "the copy load reads back must give the same probabilities as the saved backend "
             f"(largest difference {float(np.max(np.abs(np.asarray(reloaded) - proba))):.3g})")
