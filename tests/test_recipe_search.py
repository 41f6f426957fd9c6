"""comparisons/studies/recipe_search.py fits each candidate as it was searched: its settings over EncoderConfig's
defaults, not over today's recipe (the backend lays a config over RECIPE["config"], which this search chose after
these candidates were run)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from backends.torch_scratch.backend import TorchScratchBackend  # noqa: E402
from common.config import EncoderConfig  # noqa: E402
from comparisons.studies.recipe_search import CANDIDATES, as_searched  # noqa: E402


def settings(name: str) -> EncoderConfig:
    """The EncoderConfig the study's backend would train candidate `name` with."""
    return TorchScratchBackend(**as_searched(CANDIDATES[name]))._settings(vocab_size=100, num_classes=2)


def test_each_candidate_is_fitted_with_its_own_settings_not_the_recipe_chosen_after_it():
    first = settings("subword_e3")
    assert first.learning_rate == EncoderConfig().learning_rate and first.pooling == "mean"
    assert settings("subword_e3_lr2e-3").pooling == "mean", "the masked mean the <cls> vector was compared with"
    chosen = settings("subword_e3_lr2e-3_cls")
    assert chosen.pooling == "cls" and chosen.learning_rate == 2e-3 and chosen.epochs == 3
    assert as_searched(CANDIDATES["subword_e3_lr2e-3_vocab2k"])["vocab_max_size"] == 2000  # beside the config, kept
