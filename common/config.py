"""One config dataclass shared by the two scratch encoders (torch_scratch and keras_layers).

Same config -> same architecture -> same parameter count in both frameworks.
Defaults follow the seed course.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Literal

from common.errors import UserInputError


@dataclass(frozen=True)
class EncoderConfig:
    """Every hyperparameter of the scratch Transformer encoder classifier and its training."""

    # model
    vocab_size: int = 8002
    num_classes: int = 2
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    ff_dim: int = 256
    dropout: float = 0.1
    max_len: int = 64
    norm: Literal["pre", "post", "none"] = "pre"  # "none": no LayerNorm anywhere (an ablation)
    activation: Literal["gelu", "relu"] = "gelu"
    positional: Literal["learned", "sinusoidal"] = "learned"
    pooling: Literal["mean", "cls"] = "mean"
    layer_norm_eps: float = 1e-5
    # the block's parts the transformer_block lesson removes one at a time (torch_scratch only)
    residual: bool = True  # False: each sublayer's output replaces x instead of being added to it
    feed_forward: bool = True  # False: the block is attention only (no position-wise FFN)
    # training
    epochs: int = 3
    batch_size: int = 32
    learning_rate: float = 1e-3
    weight_decay: float = 0.01
    warmup_fraction: float = 0.1
    clip_norm: float = 1.0
    # budgets that scale with the data (common.batching.training_budget): the batch is never larger
    # than the training set, and a small set trains for more epochs until min_steps optimisation
    # steps (at most max_epochs); patience > 0 stops after that many epochs without a better
    # validation AP (0: run every planned epoch). Validation chooses the epoch kept either way.
    min_steps: int = 200
    max_epochs: int = 60
    patience: int = 0

    def __post_init__(self) -> None:
        if self.d_model % self.num_heads:
            raise UserInputError(
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}: "
                "choose a head count that divides d_model"
            )
        for name, allowed in (
            ("norm", ("pre", "post", "none")),
            ("activation", ("gelu", "relu")),
            ("positional", ("learned", "sinusoidal")),
            ("pooling", ("mean", "cls")),
        ):
            if getattr(self, name) not in allowed:
                raise UserInputError(f"{name}={getattr(self, name)!r} is not one of {allowed}")

        for name in ("residual", "feed_forward"):
            if not isinstance(getattr(self, name), bool):
                raise UserInputError(f"{name}={getattr(self, name)!r} must be true or false")

    @property
    def ablations(self) -> list[str]:
        """The standard block's parts this config removes: [] for every recipe, e.g. ["no residual"] in the lesson."""
        removed = {"no residual": not self.residual, "no feed-forward": not self.feed_forward,
                   "no LayerNorm": self.norm == "none"}
        return [name for name, applies in removed.items() if applies]

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads

    @property
    def sequence_length(self) -> int:
        """Positions the model holds: max_len tokens, plus one for a CLS token."""
        return self.max_len + (1 if self.pooling == "cls" else 0)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "EncoderConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise UserInputError(f"unknown encoder setting(s) {unknown}; known: {sorted(known)}")
        return cls(**values)
