"""common/batching.py and common/initial_weights.py: the twins' shared batch order, budget and start."""
import numpy as np
import pytest

from common.batching import MIN_BATCHES_PER_EPOCH, epoch_batches, training_budget
from common.config import EncoderConfig
from common.initial_weights import initial_state, parameter_shapes


def test_epoch_batches_cover_every_row_once_in_a_seeded_order():
    first = epoch_batches(50, 16, seed=3, epoch=1)
    assert [len(b) for b in first] == [16, 16, 16, 2]
    assert sorted(np.concatenate(first).tolist()) == list(range(50))
    again = epoch_batches(50, 16, seed=3, epoch=1)
    assert all((a == b).all() for a, b in zip(first, again)), "same seed and epoch -> same batches"
    assert not (np.concatenate(first) == np.concatenate(epoch_batches(50, 16, 3, 2))).all(), "epochs differ"
    assert not (np.concatenate(first) == np.concatenate(epoch_batches(50, 16, 4, 1))).all(), "seeds differ"
    with pytest.raises(ValueError):
        epoch_batches(0, 16, 0, 1)


@pytest.mark.parametrize("rows", [1, 5, 50, 100, 200, 500, 3901])
def test_budget_scales_with_the_data(rows):
    budget = training_budget(rows, batch_size=32, epochs=3, min_steps=200, max_epochs=60)
    assert 1 <= budget.batch_size <= min(32, rows), "the batch is never larger than the data"
    assert budget.steps_per_epoch == -(-rows // budget.batch_size)
    assert budget.steps_per_epoch >= min(MIN_BATCHES_PER_EPOCH, rows)
    assert budget.epochs >= 3 and budget.epochs <= 60
    assert budget.total_steps >= 200 or budget.epochs == 60
    if rows == 3901:
        assert (budget.batch_size, budget.epochs) == (32, 3), "the full split keeps the configured budget"
    assert training_budget(rows, 32, 3).epochs == 3, "min_steps=0: epochs as configured"


def test_initial_state_is_seeded_named_and_shaped_by_the_config():
    config = EncoderConfig(vocab_size=40, d_model=8, num_heads=2, num_layers=2, ff_dim=16, max_len=10, pooling="cls")
    state = initial_state(config, seed=7)
    assert list(state) == list(parameter_shapes(config))
    assert all(state[name].shape == shape and state[name].dtype == np.float32
               for name, (shape, _) in parameter_shapes(config).items())
    assert (state["embedding.token_embedding.weight"][0] == 0).all(), "the <pad> row starts at zero"
    assert (state["blocks.1.norm2.weight"] == 1).all() and (state["head.bias"] == 0).all()
    assert state["embedding.position_embedding.weight"].shape == (11, 8)  # max_len + the cls slot
    assert 0.015 < state["blocks.0.ff.fc1.weight"].std() < 0.025
    again, other = initial_state(config, seed=7), initial_state(config, seed=8)
    assert all((again[k] == state[k]).all() for k in state)
    assert not (other["head.weight"] == state["head.weight"]).all()
    sinusoidal = EncoderConfig(**{**config.to_dict(), "positional": "sinusoidal", "pooling": "mean"})
    assert not {"embedding.position_embedding.weight", "embedding.cls_token"} & set(initial_state(sinusoidal, 0))
