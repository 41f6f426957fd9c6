"""The transformer_block lesson's measurements say what its text says (each table is computed, not asserted)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from comparisons.course import transformer_block as lesson  # noqa: E402


def test_layer_norm_ignores_the_batch_and_batch_norm_does_not():
    table, facts = lesson.normalisation_table(16, seed=0, lang="en")
    change = dict(zip(table.iloc[:, 0], table.iloc[:, 1]))
    assert change["LayerNorm"] < 1e-6  # per token: the batch-mate cannot reach it
    assert change["BatchNorm (padding counted)"] > 0.1 and change["BatchNorm (real tokens only)"] > 0.01
    # "LayerNorm pulls values into [-1, 1]" is wrong: about a third fall outside, up to sqrt(d - 1)
    assert 0.2 < facts["share_outside_unit_interval"] < 0.45
    assert 1.0 < facts["largest_abs_value"] <= facts["bound_sqrt_d_minus_1"] + 1e-6


def test_a_feed_forward_without_activation_is_one_linear_map():
    errors = lesson.feed_forward_table(8, seed=0, lang="en").iloc[:, 1].tolist()
    assert errors[0] < 1e-6, "two linear layers without an activation multiply into one"
    assert errors[1] > 0.01, "with GELU no single linear map reproduces the network"


def test_embedding_lengths_show_why_the_paper_scales_by_sqrt_d():
    table = lesson.embedding_scale_table([16, 64], "en")
    sine = table.iloc[:, 4].to_numpy()
    np.testing.assert_allclose(sine, np.sqrt([8, 32]), rtol=1e-5)  # each sin/cos pair has length 1
    token = table.iloc[:, 1].to_numpy()
    np.testing.assert_allclose(token, 0.02 * np.sqrt([16, 64]), rtol=0.1)  # N(0, 0.02) rows
    assert (table.iloc[:, 5] > 20).all(), "sinusoidal positions dwarf N(0, 0.02) token embeddings"


def test_the_b_s_mask_broadcast_as_it_is_masks_the_wrong_rows_silently():
    table, facts = lesson.mask_shape_table(seed=0, lang="en")
    right, wrong = table.iloc[:, 1].to_numpy(), table.iloc[:, 2].to_numpy()
    assert np.all(right == 0.0), "the (B, 1, 1, S) mask gives padding no weight"
    assert wrong[0] == 0.0 and (wrong[1:] > 0).all(), "broadcast as (T, S), padded messages attend to padding"
    assert facts["shapes"]["padding mask"] == [4, 1, 1, 4] and facts["shapes"]["both"] == [4, 1, 4, 4]
    assert facts["B != T with the (B, S) mask"] != "no error"


def test_the_gradient_table_has_every_variant_at_every_depth():
    table = lesson.first_block_gradients([2, 4], 16, "en", init_seeds=1)
    assert list(table.iloc[:, 0]) == list(lesson.VARIANTS)
    values = table.iloc[:, 1:].to_numpy(dtype=float)
    assert values.shape == (5, 2) and np.isfinite(values).all() and (values > 0).all()
