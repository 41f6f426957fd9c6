"""The fine-tuned and frozen MiniLM's classification head (mean-pooled features -> dropout -> linear; in frozen mode
a logistic regression's weights copied in) and the optimiser's parameter groups (backends/hf_bert/backend.py)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


class MeanPoolHead(nn.Module):
    """Frozen mode's classification head: (L2 normalisation,) dropout, then a linear layer on mean-pooled features."""

    def __init__(self, hidden_size: int, n_classes: int, dropout: float, normalize: bool = False):
        super().__init__()
        self.normalize = normalize
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden_size, n_classes)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        if self.normalize:
            features = F.normalize(features, dim=-1)  # the sentence embedding's unit length
        return self.classifier(self.dropout(features))  # (B, H) -> (B, C)

    def copy_logistic_regression(self, logreg, n_classes: int) -> None:
        """Set the linear layer so that its softmax equals `logreg.predict_proba` (classes it never saw: -30 logit).

        Binary scikit-learn models one weight vector w: P(class 1) = sigmoid(w.x + b) = softmax([0, w.x + b])[1]."""
        coef, intercept = np.asarray(logreg.coef_, np.float64), np.asarray(logreg.intercept_, np.float64)
        weight = np.zeros((n_classes, coef.shape[1]))
        bias = np.full(n_classes, -30.0)
        classes = [int(c) for c in logreg.classes_]
        if len(classes) == 2 and coef.shape[0] == 1:
            weight[classes[1]], bias[classes[0]], bias[classes[1]] = coef[0], 0.0, intercept[0]
        else:
            weight[classes], bias[classes] = coef, intercept
        with torch.no_grad():
            self.classifier.weight.copy_(torch.as_tensor(weight, dtype=self.classifier.weight.dtype))
            self.classifier.bias.copy_(torch.as_tensor(bias, dtype=self.classifier.bias.dtype))


def optimizer_groups(parameters: Sequence[nn.Parameter], weight_decay: float) -> list[dict]:
    """Weight decay on matrices only; biases and LayerNorm weights (1-D) are not decayed."""
    return [
        {"params": [p for p in parameters if p.ndim >= 2], "weight_decay": weight_decay},
        {"params": [p for p in parameters if p.ndim < 2], "weight_decay": 0.0},
    ]
