"""torch_scratch -> ONNX with torch.onnx.export (the TorchScript-based exporter, dynamo=False: no
onnxscript needed); ids of any batch and length in, logits out. Tokenization stays in Python: the
model's own vocabulary (vocabulary.json) beside the graph, read by common.vocabulary."""
from __future__ import annotations

import warnings
from pathlib import Path

import torch

from common.onnx_graph import MODEL_FILE, OPSET, write_description
from common.vocabulary import trim_padding


class _IdsToLogits(torch.nn.Module):
    """The classifier with its course-only keyword options fixed at their defaults: the tracer turns every default
    argument of the traced forward into a tensor, and a tensor compared with a Python option cannot be traced."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(ids)


def export_onnx(backend, folder: Path, inference_batch: int) -> dict:
    """Write model.onnx, vocabulary.json and serving.json for a fitted TorchScratchBackend."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = backend.model_.eval()
    example = trim_padding(backend.vocabulary_.encode(["an example text", "another one"], backend.config_.max_len))
    with warnings.catch_warnings():  # the exporter's deprecation and tracer warnings: the parity test is the check
        warnings.simplefilter("ignore")
        torch.onnx.export(_IdsToLogits(model.cpu()), (torch.as_tensor(example),), str(folder / MODEL_FILE), input_names=["ids"],
                          output_names=["logits"], dynamic_axes={"ids": {0: "batch", 1: "length"},
                                                                 "logits": {0: "batch"}},
                          opset_version=OPSET, dynamo=False)
    model.to(backend.device_)
    backend.vocabulary_.save(folder / "vocabulary.json")
    return write_description(folder, backend="torch_scratch", tokenizer="vocabulary", vocabulary_file="vocabulary.json",
                             max_len=backend.config_.max_len, trim_multiple=1, batch_size=inference_batch,
                             sort_by_length=False, inputs=["ids"], n_classes=len(backend.classes_),
                             exporter="torch.onnx.export")
