"""keras_layers -> ONNX with Keras 3's `model.export(format="onnx")` (tf2onnx underneath).

The model must have been called once before it exports. Its exact GELU exports as Erfc, which ONNX
Runtime cannot run ("No Op registered for Erfc"): common.onnx_graph.replace_erfc writes it as
1 - Erf. The shared vocabulary is the tokenizer (vocabulary.json, common.vocabulary); a model
with keras.layers.TextVectorization is refused: that tokenizer needs TensorFlow to run.
"""
from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

from common.onnx_graph import MODEL_FILE, ExportRefused, replace_erfc, write_description


def export_onnx(backend, folder: Path, inference_batch: int, length_bucket: int) -> dict:
    """Write model.onnx, vocabulary.json and serving.json for a fitted KerasLayersBackend."""
    import onnx

    if backend.vectorizer != "shared":
        raise ExportRefused("vectorizer='textvectorization' needs TensorFlow to tokenize; the ONNX path serves "
                            "the shared vocabulary only")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    backend.predict_logits(backend._encode(["an example text"]))  # a model exports only once it has been called
    with tempfile.TemporaryDirectory() as scratch, contextlib.redirect_stdout(io.StringIO()):
        raw = Path(scratch) / "raw.onnx"
        backend.model_.export(str(raw), format="onnx", verbose=False)
        onnx_model = onnx.load(str(raw))
    rewritten = replace_erfc(onnx_model)
    onnx.save(onnx_model, str(folder / MODEL_FILE))
    backend.vocabulary_.save(folder / "vocabulary.json")
    return write_description(folder, backend="keras_layers", tokenizer="vocabulary", vocabulary_file="vocabulary.json",
                             max_len=backend.config_.max_len, trim_multiple=length_bucket, batch_size=inference_batch,
                             sort_by_length=False, inputs=[onnx_model.graph.input[0].name],
                             n_classes=len(backend.classes_), erfc_rewritten=rewritten,
                             exporter="keras model.export(format='onnx')")
