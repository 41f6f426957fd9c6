"""The one contract every backend passes (like scikit-learn's parametrize_with_checks): the importable checks of
backends/contract.py, run on pytest's temporary folder.

Each backend's test file calls `check_backend_contract(make, splits, tmp_path)` with a
factory `make(seed) -> unfitted backend` on tiny settings.
"""
from __future__ import annotations

from typing import Callable

from backends.base import Backend
from backends.contract import ODD_TEXTS, check_backend  # noqa: F401 (ODD_TEXTS: the odd inputs, for backends' tests)


def check_backend_contract(make: Callable[[int], Backend], splits, tmp_path) -> None:
    check_backend(make, splits, tmp_path / "model")
