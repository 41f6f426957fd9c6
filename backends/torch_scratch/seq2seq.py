"""Full encoder-decoder Transformer for real-valued sequences (time-series forecasting).

Reuses the pieces of the encoder classifier: `MultiHeadAttention` (attention.py), and
`TransformerBlock`, `FeedForward`, `PositionalEmbedding` (encoder.py). New here: `DecoderBlock`
(causal self-attention, cross-attention to the encoder memory, feed-forward) and
`Seq2SeqTransformer` (linear input/output projections instead of token embeddings / a vocabulary
head). The model hyperparameters come from the shared `EncoderConfig` (d_model, num_heads,
num_layers, ff_dim, dropout, norm, activation, positional, layer_norm_eps); its vocabulary,
pooling and training fields are not used here.

Data flow (forecasting H future steps from S past steps):

    source (B, S, in) -> in_proj + position -> encoder blocks -> memory (B, S, d)
    decoder_input (B, H, in) = [last observed value, y_0, ..., y_{H-2}]   (shifted right)
        -> in_proj + position -> decoder blocks (causal self-attn, cross-attn to memory)
        -> out_proj -> prediction (B, H, out) of [y_0, ..., y_{H-1}]

Training feeds the true shifted targets (teacher forcing); `forecast` feeds back its own
predictions one step at a time (autoregressive inference).
"""
from __future__ import annotations

import torch
from torch import nn

from backends.torch_scratch.attention import MultiHeadAttention
from backends.torch_scratch.encoder import FeedForward, PositionalEmbedding, TransformerBlock, TransformerClassifier
from common.config import EncoderConfig
from common.errors import UserInputError


class DecoderBlock(nn.Module):
    """Causal self-attention, cross-attention to the memory, feed-forward; LayerNorm pre or post."""

    def __init__(self, config: EncoderConfig, attention: str = "scratch"):
        super().__init__()
        self.norm_position = config.norm
        d, eps = config.d_model, config.layer_norm_eps
        self.norm1 = nn.LayerNorm(d, eps=eps)
        self.self_attn = MultiHeadAttention(d, config.num_heads, config.dropout, attention)
        self.norm2 = nn.LayerNorm(d, eps=eps)
        self.cross_attn = MultiHeadAttention(d, config.num_heads, config.dropout, attention)
        self.norm3 = nn.LayerNorm(d, eps=eps)
        self.ff = FeedForward(d, config.ff_dim, config.dropout, config.activation)
        self.dropout = nn.Dropout(config.dropout)  # residual dropout, after each sublayer

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        memory_padding_mask: torch.Tensor | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """(B, T, d), memory (B, S, d), mask (B, S) True = real -> ((B, T, d), (B,H,T,T), (B,H,T,S))."""
        if self.norm_position == "pre":
            normed = self.norm1(x)
            attended, self_weights = self.self_attn(normed, normed, normed, causal=True, need_weights=need_weights)
            x = x + self.dropout(attended)
            normed = self.norm2(x)
            attended, cross_weights = self.cross_attn(
                normed, memory, memory, memory_padding_mask, need_weights=need_weights
            )
            x = x + self.dropout(attended)
            x = x + self.dropout(self.ff(self.norm3(x)))
        else:
            attended, self_weights = self.self_attn(x, x, x, causal=True, need_weights=need_weights)
            x = self.norm1(x + self.dropout(attended))
            attended, cross_weights = self.cross_attn(x, memory, memory, memory_padding_mask, need_weights=need_weights)
            x = self.norm2(x + self.dropout(attended))
            x = self.norm3(x + self.dropout(self.ff(x)))
        return x, self_weights, cross_weights


class Seq2SeqTransformer(nn.Module):
    """Real-valued source (B, S, in) and shifted target (B, T, in) -> predictions (B, T, out)."""

    def __init__(
        self,
        config: EncoderConfig,
        source_length: int,
        target_length: int,
        input_dim: int = 1,
        output_dim: int = 1,
        num_decoder_layers: int | None = None,
        attention: str = "scratch",
    ):
        super().__init__()
        if config.ablations:
            raise UserInputError(f"the sine forecaster builds the standard blocks only ({', '.join(config.ablations)} "
                                 "is the classifier's ablation in the transformer_block lesson)")
        self.config = config
        self.source_length, self.target_length = source_length, target_length
        d = config.d_model
        self.source_proj = nn.Linear(input_dim, d)  # replaces the token embedding
        self.target_proj = nn.Linear(input_dim, d)
        self.source_position = PositionalEmbedding(source_length, d, config.positional)
        self.target_position = PositionalEmbedding(target_length, d, config.positional)
        self.dropout = nn.Dropout(config.dropout)
        self.encoder_blocks = nn.ModuleList(TransformerBlock(config, attention) for _ in range(config.num_layers))
        decoder_layers = config.num_layers if num_decoder_layers is None else num_decoder_layers
        self.decoder_blocks = nn.ModuleList(DecoderBlock(config, attention) for _ in range(decoder_layers))
        # pre-LN leaves the residual stream un-normalised, so it ends with a LayerNorm; post-LN already is
        final = (lambda: nn.LayerNorm(d, eps=config.layer_norm_eps)) if config.norm == "pre" else nn.Identity
        self.encoder_norm, self.decoder_norm = final(), final()
        self.out_proj = nn.Linear(d, output_dim)  # replaces the vocabulary head
        self.apply(TransformerClassifier._init_weights)  # N(0, 0.02), zero biases

    def encode(self, source: torch.Tensor) -> torch.Tensor:
        """(B, S, in) -> memory (B, S, d)."""
        x = self.source_proj(source)  # (B, S, d)
        x = self.dropout(x + self.source_position(x.size(1)))
        for block in self.encoder_blocks:
            x, _ = block(x)  # no padding: every series step is real
        return self.encoder_norm(x)

    def decode(self, decoder_input: torch.Tensor, memory: torch.Tensor, need_weights: bool = False):
        """(B, T, in), memory (B, S, d) -> predictions (B, T, out); position t sees inputs 0..t only.

        need_weights=True -> (predictions, [cross-attention weights (B, H, T, S) per decoder block]): which
        source steps each target step read (the alignment map of lesson attention_before_transformers)."""
        x = self.target_proj(decoder_input)  # (B, T, d)
        x = self.dropout(x + self.target_position(x.size(1)))
        cross = []
        for block in self.decoder_blocks:
            x, _, weights = block(x, memory, need_weights=need_weights)
            cross.append(weights)
        predictions = self.out_proj(self.decoder_norm(x))  # (B, T, out)
        return (predictions, cross) if need_weights else predictions

    def forward(self, source: torch.Tensor, decoder_input: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: every target position in one pass -> (B, T, out)."""
        return self.decode(decoder_input, self.encode(source))

    @torch.no_grad()
    def forecast(self, source: torch.Tensor, steps: int | None = None) -> torch.Tensor:
        """Autoregressive inference from the last source value: (B, S, in) -> (B, steps, out).

        Needs input_dim == output_dim (each prediction is fed back as the next input).
        """
        steps = self.target_length if steps is None else steps
        memory = self.encode(source)  # encoded once, reused at every step
        decoder_input = source[:, -1:, :]  # (B, 1, in): the last observed value starts the decoder
        for _ in range(steps):
            prediction = self.decode(decoder_input, memory)  # (B, t, out)
            decoder_input = torch.cat([decoder_input, prediction[:, -1:, :]], dim=1)  # (B, t + 1, in)
        return decoder_input[:, 1:, :]  # (B, steps, out)


def shift_right(source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Teacher-forcing decoder input: [last source value, target_0, ..., target_{T-2}] -> (B, T, in)."""
    return torch.cat([source[:, -1:, :], target[:, :-1, :]], dim=1)


def build_seq2seq(config: EncoderConfig, source_length: int, target_length: int, **kwargs) -> Seq2SeqTransformer:
    """The one factory: a Seq2SeqTransformer from an EncoderConfig and the window lengths."""
    return Seq2SeqTransformer(config, source_length, target_length, **kwargs)
