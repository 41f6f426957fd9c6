"""tfidf_logreg -> ONNX with skl2onnx: the whole pipeline (tokenizer, TF-IDF, logistic regression).

Three fixes make ONNX Runtime give scikit-learn's probabilities (tests/test_serving.py):
- the tokenizer pattern: scikit-learn's `(?u)\\b\\w\\w+\\b` becomes `[\\pL\\pN_][\\pL\\pN_]+` (runs of two
  or more Unicode letters, digits or underscores), since ONNX Runtime's RE2 reads `\\w` and `\\b` as
  ASCII only, which splits accented and CJK words differently;
- the locale of the lower-casing StringNormalizer: C.UTF-8;
- sublinear tf: scikit-learn's 1 + log(tf), not skl2onnx's log(tf + 1) (common/onnx_graph.py).
What is still not the same is refused, text by text (comparisons/run/serving/text_refusal.py).
"""
from __future__ import annotations

from pathlib import Path

from common.onnx_graph import MODEL_FILE, OPSET, ExportRefused, sublinear_tf_as_scikit_learn, write_description

TOKEN_PATTERN = r"[\pL\pN_][\pL\pN_]+"
SCIKIT_LEARN_PATTERN = r"(?u)\b\w\w+\b"


def export_onnx(backend, folder: Path) -> dict:
    """Write model.onnx (string input 'text' (N, 1), outputs label and probabilities) and serving.json."""
    from skl2onnx import convert_sklearn
    from skl2onnx.common.data_types import StringTensorType

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pipeline = backend.pipeline_
    vectorizer, logreg = pipeline.named_steps["tfidf"], pipeline.named_steps["logreg"]
    if vectorizer.token_pattern != SCIKIT_LEARN_PATTERN or vectorizer.analyzer != "word" or vectorizer.strip_accents:
        raise ExportRefused("the ONNX TF-IDF graph reproduces scikit-learn's default word tokenizer only")
    onnx_model = convert_sklearn(pipeline, initial_types=[("text", StringTensorType([None, 1]))], target_opset=OPSET,
                                 options={id(logreg): {"zipmap": False},
                                          id(vectorizer): {"tokenexp": TOKEN_PATTERN, "locale": "C.UTF-8"}})
    if vectorizer.sublinear_tf:
        sublinear_tf_as_scikit_learn(onnx_model)
    (folder / MODEL_FILE).write_bytes(onnx_model.SerializeToString())
    return write_description(folder, backend="tfidf_logreg", tokenizer="in_graph", inputs=["text"],
                             output="probabilities", classes=[int(c) for c in pipeline.classes_],
                             n_classes=int(len(backend.classes_)), batch_size=None, exporter="skl2onnx")
