"""GRU encoder-decoder with additive (Bahdanau) attention, for the sine task beside the seq2seq Transformer.

The model attention was invented for (Bahdanau, Cho and Bengio 2015), on real-valued sequences: a GRU reads the
source; at every target step the decoder's previous hidden state is the query, the encoder's outputs are keys and
values, and an additive score v^T tanh(W_q q + W_k k) chooses what to read. The interface is the seq2seq
Transformer's (seq2seq.py), so comparisons/course/sine_task.py trains either:

    source (B, S, in) -> GRU -> memory (B, S, h), last state (B, h)
    decoder_input (B, H, in) = [last observed value, y_0, ..., y_{H-2}]  (shifted right, as seq2seq.shift_right)
    for each step t (sequentially): context_t, weights_t = attention(state_{t-1}, memory)
        state_t = GRUCell([input_t, context_t], state_{t-1});  y_t = out_proj([state_t, context_t])

The GRU cells are torch's (nn.GRU, nn.GRUCell); the additive attention is written out, as the course teaches it.
With attention=False the model is the encoder-decoder before attention (Cho et al. 2014; Sutskever et al. 2014): the
context of every step is the encoder's final state, one fixed h-vector for the whole source (the "bottleneck"),
and there are no attention weights (comparisons/course/rnn_bottleneck.py sets the two side by side).
"""
from __future__ import annotations

import torch
from torch import nn


class AdditiveAttention(nn.Module):
    """score(q, k_s) = v^T tanh(W_q q + W_k k_s); weights = softmax over s; context = sum_s weights_s k_s."""

    def __init__(self, query_dim: int, key_dim: int, hidden: int):
        super().__init__()
        self.query_proj = nn.Linear(query_dim, hidden, bias=False)
        self.key_proj = nn.Linear(key_dim, hidden, bias=False)
        self.score = nn.Linear(hidden, 1, bias=False)  # v

    def forward(self, query: torch.Tensor, keys: torch.Tensor,
                projected_keys: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, q), keys (B, S, k) -> (context (B, k), weights (B, S)); projected_keys = key_proj(keys)."""
        projected = self.key_proj(keys) if projected_keys is None else projected_keys  # (B, S, hidden)
        scores = self.score(torch.tanh(projected + self.query_proj(query)[:, None, :])).squeeze(-1)  # (B, S)
        weights = torch.softmax(scores, dim=-1)
        return (weights[:, :, None] * keys).sum(dim=1), weights


class GRUSeq2Seq(nn.Module):
    """Real-valued source (B, S, in) and shifted target (B, T, in) -> predictions (B, T, out), one step at a time."""

    def __init__(self, hidden: int, target_length: int, input_dim: int = 1, output_dim: int = 1,
                 attention: bool = True):
        super().__init__()
        self.hidden, self.target_length = hidden, target_length
        self.encoder = nn.GRU(input_dim, hidden, batch_first=True)
        # attention=False: no attention module; every step's context is the encoder's final state
        self.attention = AdditiveAttention(hidden, hidden, hidden) if attention else None
        self.decoder = nn.GRUCell(input_dim + hidden, hidden)
        self.out_proj = nn.Linear(2 * hidden, output_dim)

    def encode(self, source: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, S, in) -> (memory (B, S, h), the encoder's last state (B, h): the decoder's first state)."""
        memory, last = self.encoder(source)
        return memory, last[0]

    def _projected_keys(self, memory: torch.Tensor) -> torch.Tensor | None:
        """The keys' projection, computed once and reused at every step (None without attention)."""
        return None if self.attention is None else self.attention.key_proj(memory)

    def step(self, value: torch.Tensor, memory: torch.Tensor, projected_keys: torch.Tensor,
             state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One decoder step: value (B, in), state (B, h) -> (prediction (B, out), weights (B, S) or None, new state)."""
        if self.attention is None:  # the bottleneck: the same summary of the source at every step
            context, weights = memory[:, -1], None  # the encoder's final state (one-layer, one-direction GRU)
        else:
            context, weights = self.attention(state, memory, projected_keys)  # the previous state asks
        state = self.decoder(torch.cat([value, context], dim=-1), state)
        return self.out_proj(torch.cat([state, context], dim=-1)), weights, state

    def forward(self, source: torch.Tensor, decoder_input: torch.Tensor,
                need_weights: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing: (B, S, in), (B, T, in) -> predictions (B, T, out) [, weights (B, T, S)]."""
        if need_weights and self.attention is None:
            raise ValueError("a GRUSeq2Seq without attention has no attention weights")
        memory, state = self.encode(source)
        keys = self._projected_keys(memory)
        predictions, weights = [], []
        for t in range(decoder_input.size(1)):  # sequential: step t needs the state of step t - 1
            prediction, step_weights, state = self.step(decoder_input[:, t], memory, keys, state)
            predictions.append(prediction)
            weights.append(step_weights)
        out = torch.stack(predictions, dim=1)
        return (out, torch.stack(weights, dim=1)) if need_weights else out

    @torch.no_grad()
    def forecast(self, source: torch.Tensor, steps: int | None = None,
                 need_weights: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Autoregressive inference from the last source value: (B, S, in) -> (B, steps, out) [, (B, steps, S)]."""
        steps = self.target_length if steps is None else steps
        if need_weights and self.attention is None:
            raise ValueError("a GRUSeq2Seq without attention has no attention weights")
        memory, state = self.encode(source)
        keys = self._projected_keys(memory)
        value, predictions, weights = source[:, -1], [], []
        for _ in range(steps):
            value, step_weights, state = self.step(value, memory, keys, state)
            predictions.append(value)
            weights.append(step_weights)
        out = torch.stack(predictions, dim=1)
        return (out, torch.stack(weights, dim=1)) if need_weights else out
