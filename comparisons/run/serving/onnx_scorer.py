"""Serve an exported folder with ONNX Runtime and the backend's own tokenizer: no torch, no TensorFlow.

`OnnxScorer.load(folder, threads, model_file)` reads serving.json (common.onnx_graph) and opens one
InferenceSession with intra-op threads = the plan's threads (inter-op 1, sequential execution).
`predict_proba(texts)` does what the native backend's does, tokenization included:
- "vocabulary" (torch_scratch, keras_layers): common.vocabulary ids, chunks of the backend's
  inference batch, each trimmed of all-padding columns as the backend trims them;
- "tokenizers" (hf_bert): tokenizer.json through the `tokenizers` library, truncated to max_length,
  texts sorted by length into batches of the backend's batch size, padded to each batch's longest;
- "in_graph" (tfidf_logreg): the strings go into the graph; texts it cannot match are refused first
  (text_refusal.py).
Logits -> float64 softmax, as every backend gives its probabilities.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from common.onnx_graph import read_description


def session(path: Path, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = int(threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # warnings about unused initializers etc. stay out of the run's log
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.asarray(logits, dtype=np.float64)
    logits = logits - logits.max(axis=1, keepdims=True)
    proba = np.exp(logits)
    return proba / proba.sum(axis=1, keepdims=True)


class OnnxScorer:
    """predict_proba(texts) through an ONNX graph; the same texts in, the same (n, C) probabilities out."""

    def __init__(self, folder: Path, description: dict, inference_session):
        self.folder, self.description, self.session = Path(folder), description, inference_session
        first = inference_session.get_inputs()[0]
        self.id_type = np.int64 if first.type == "tensor(int64)" else np.int32  # torch exports int64, Keras int32
        kind = description["tokenizer"]
        if kind == "vocabulary":
            from common.vocabulary import load_vocabulary

            self.vocabulary = load_vocabulary(self.folder / description["vocabulary_file"])
        elif kind == "tokenizers":
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(str(self.folder / description["tokenizer_file"]))
            self.tokenizer.no_padding()
            self.tokenizer.enable_truncation(max_length=int(description["max_len"]))
        elif kind != "in_graph":
            raise ValueError(f"serving.json names an unknown tokenizer kind {kind!r}")

    @classmethod
    def load(cls, folder: Path, threads: int, model_file: str | None = None) -> "OnnxScorer":
        description = read_description(folder)
        return cls(folder, description, session(Path(folder) / (model_file or description["model_file"]), threads))

    @property
    def n_classes(self) -> int:
        return int(self.description["n_classes"])

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.n_classes))
        kind = self.description["tokenizer"]
        if kind == "vocabulary":
            return self._ids(texts)
        if kind == "tokenizers":
            return self._word_pieces(texts)
        return self._strings(texts)

    def _ids(self, texts: list[str]) -> np.ndarray:
        from common.vocabulary import trim_padding

        ids = self.vocabulary.encode(texts, int(self.description["max_len"]))
        name, size = self.description["inputs"][0], int(self.description["batch_size"])
        multiple = int(self.description["trim_multiple"])
        chunks = [self.session.run(None, {name: trim_padding(ids[start:start + size], multiple).astype(self.id_type)})[0]
                  for start in range(0, len(ids), size)]
        return softmax(np.concatenate(chunks))

    def _word_pieces(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")  # the backend's length bucketing (hf_bert/batching.py)
        size, pad = int(self.description["batch_size"]), int(self.description["pad_id"])
        proba = np.empty((len(texts), self.n_classes))
        for start in range(0, len(order), size):
            rows = order[start:start + size]
            width = int(lengths[rows].max())

            def padded(values, fill):
                return np.array([values(i) + [fill] * (width - len(values(i))) for i in rows], dtype=np.int64)

            feed = {"input_ids": padded(lambda i: encodings[i].ids, pad),
                    "attention_mask": padded(lambda i: encodings[i].attention_mask, 0),
                    "token_type_ids": padded(lambda i: encodings[i].type_ids, 0)}
            proba[rows] = softmax(self.session.run(None, feed)[0])
        return proba

    def _strings(self, texts: list[str]) -> np.ndarray:
        from comparisons.run.serving.text_refusal import check_texts

        check_texts(texts)
        outputs = self.session.run([self.description["output"]], {"text": np.array(texts, dtype=object).reshape(-1, 1)})
        proba = np.zeros((len(texts), self.n_classes))
        proba[:, self.description["classes"]] = outputs[0]
        return proba

    def size_mb(self, model_file: str | None = None) -> float:
        """The graph and the tokenizer files it is served with, on disk."""
        names = [model_file or self.description["model_file"], "serving.json",
                 self.description.get("vocabulary_file"), self.description.get("tokenizer_file")]
        return sum(os.path.getsize(self.folder / name) for name in names if name) / 2**20
