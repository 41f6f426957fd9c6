"""attention_before_transformers: kernel regression as attention pooling, the GRU with additive attention, the
alignment of the two sine models, and the layers a convolution needs to connect a sequence's ends."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from backends.torch_scratch.rnn_seq2seq import AdditiveAttention, GRUSeq2Seq  # noqa: E402
from comparisons.course import attention_before_transformers as lesson  # noqa: E402


def test_leave_one_out_is_each_point_predicted_from_the_others():
    x, y, _, _ = lesson.kernel_data()
    width = 0.3
    by_hand = []
    for i in range(len(x)):
        others = np.arange(len(x)) != i
        weights = lesson.kernel_weights(x[i:i + 1], x[others], width)[0]
        by_hand.append((weights @ y[others] - y[i]) ** 2)
    assert lesson.leave_one_out_mse(x, y, width) == pytest.approx(np.mean(by_hand), rel=1e-9)


def test_the_chosen_kernel_beats_average_pooling_and_weights_are_a_softmax():
    table, kernel = lesson.kernel_regression_table(lesson.WIDTHS, "en")
    test_mse = table.iloc[:, 3].to_numpy()
    chosen_row = table.index[table["sigma"] == kernel["chosen_width"]][0]
    assert test_mse[chosen_row] < test_mse[0], "attention pooling beats average pooling (the query matters)"
    weights = lesson.kernel_weights(np.array([1.0, 2.5]), kernel["x_train"], 0.5)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)


def test_additive_attention_is_a_softmax_over_the_source_and_its_context_a_weighted_sum():
    torch.manual_seed(0)
    attention = AdditiveAttention(4, 6, 5)
    query, keys = torch.randn(2, 4), torch.randn(2, 7, 6)
    context, weights = attention(query, keys)
    torch.testing.assert_close(weights.sum(dim=1), torch.ones(2))
    torch.testing.assert_close(context, torch.einsum("bs,bsk->bk", weights, keys))
    assert sum(p.numel() for p in attention.parameters()) == 4 * 5 + 6 * 5 + 5


def test_the_gru_trains_by_teacher_forcing_and_forecasts_step_by_step():
    torch.manual_seed(0)
    model = GRUSeq2Seq(hidden=8, target_length=5).eval()
    source = torch.randn(3, 12, 1)
    forecast, weights = model.forecast(source, 5, need_weights=True)
    assert forecast.shape == (3, 5, 1) and weights.shape == (3, 5, 12)
    # fed its own previous outputs, teacher forcing reproduces the autoregressive forecast
    decoder_input = torch.cat([source[:, -1:], forecast[:, :-1]], dim=1)
    with torch.no_grad():
        again, again_weights = model(source, decoder_input, need_weights=True)
    torch.testing.assert_close(again, forecast)
    torch.testing.assert_close(again_weights, weights)


def test_an_edge_output_of_a_k3_convolution_needs_n_minus_1_layers_and_attention_one():
    assert lesson.layers_to_connect(lambda: lesson._conv_layer(8), 9, 8, limit=9) == 8
    assert lesson.layers_to_connect(lambda: lesson._attention_layer(8), 9, 8, limit=9) == 1


def test_the_head_table_tells_a_head_that_looks_one_period_back_from_a_uniform_one():
    horizon, history, period = 4, 20, 10.0
    focused = np.zeros((horizon, history))
    for step in range(horizon):
        focused[step, history + step - int(period)] = 1.0  # all weight one period back
    uniform = np.full((horizon, history), 1.0 / history)
    table = lesson.head_table(np.stack([focused, uniform])[None], period, "en")
    entropy, share = table.columns[2], table.columns[3]
    assert table[share].tolist() == pytest.approx([1.0, 5 / history])
    assert table[entropy].tolist() == pytest.approx([0.0, np.log(history)], abs=1e-9)
    assert lesson.plot_heads(np.stack([focused, uniform])[None], period, "en") is not None
