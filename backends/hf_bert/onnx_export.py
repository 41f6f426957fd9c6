"""hf_bert -> ONNX with torch.onnx.export (dynamo=False; optimum does not support transformers 5).

full: the sequence-classification model's logits. frozen: the encoder, the attention-masked mean
of its last hidden state and the linear head, in one graph. Inputs input_ids, attention_mask,
token_type_ids of any batch and length. Tokenization stays in Python: the model's own fast
tokenizer saved as tokenizer.json (the `tokenizers` library alone reads it, with truncation to
max_length as the backend tokenizes), so the ONNX path needs no transformers and no torch.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import torch
from torch import nn

from backends.hf_bert.pooling import masked_mean
from common.onnx_graph import MODEL_FILE, OPSET, ExportRefused, write_description

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class FullLogits(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits


class FrozenLogits(nn.Module):
    def __init__(self, encoder: nn.Module, head: nn.Module):
        super().__init__()
        self.encoder, self.head = encoder, head

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state  # (B, T, H)
        return self.head(masked_mean(hidden, attention_mask))  # (B, C)


def export_onnx(backend, folder: Path) -> dict:
    """Write model.onnx, tokenizer.json and serving.json for a fitted HfBertBackend."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = backend.tokenizer_
    fast = getattr(tokenizer, "backend_tokenizer", None)
    if fast is None:
        raise ExportRefused(f"{type(tokenizer).__name__} has no fast (tokenizers) twin to tokenize without transformers")
    network = FullLogits(backend.model_) if backend.mode == "full" else FrozenLogits(backend.encoder_, backend.head_)
    network = network.cpu().eval()
    example = tokenizer(["an example text", "another"], truncation=True, max_length=backend.max_length, padding=True,
                        return_tensors="pt")
    if "token_type_ids" not in example:
        raise ExportRefused("this tokenizer gives no token_type_ids; the ONNX path expects BERT's three inputs")
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        torch.onnx.export(network, tuple(example[name] for name in INPUTS), str(folder / MODEL_FILE),
                          input_names=list(INPUTS), output_names=["logits"],
                          dynamic_axes={**{name: {0: "batch", 1: "length"} for name in INPUTS}, "logits": {0: "batch"}},
                          opset_version=OPSET, dynamo=False)
    network.to(backend.device_)
    fast.save(str(folder / "tokenizer.json"))
    return write_description(folder, backend="hf_bert", mode=backend.mode, tokenizer="tokenizers",
                             tokenizer_file="tokenizer.json", max_len=backend.max_length,
                             pad_id=int(backend.pad_id_), batch_size=int(backend.batch_size), sort_by_length=True,
                             inputs=list(INPUTS), n_classes=int(backend.n_classes_), exporter="torch.onnx.export")
