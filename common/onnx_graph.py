"""What the ONNX exporters share: the serving folder's description, the refusal, two graph rewrites.

Each backend's `export_onnx(folder)` writes `model.onnx`, the tokenizer files it needs and
`serving.json` (write_description): how raw text becomes the graph's inputs, in Python, with the
backend's own tokenizer (comparisons/run/serving/onnx_scorer.py reads it with onnxruntime only).

Rewrites, each locked in by a parity test (tests/test_serving.py):
- `replace_erfc`: Keras's exact GELU exports as Erfc, which ONNX Runtime has no kernel for ("No Op
  registered for Erfc"); erfc(x) = 1 - erf(x) is written with Erf and Sub.
- `sublinear_tf_as_scikit_learn`: skl2onnx writes sublinear tf as log(tf + 1); scikit-learn's is
  1 + log(tf) for tf > 0 (and 0 where the n-gram is absent).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

DESCRIPTION_FILE = "serving.json"
MODEL_FILE = "model.onnx"
OPSET = 17


class ExportRefused(RuntimeError):
    """This model cannot be served through ONNX as it is; the message says why (a row's reason)."""


def write_description(folder: Path, **description) -> dict:
    """serving.json: tokenizer kind and files, graph input names, batching; returns what it wrote."""
    description = {"model_file": MODEL_FILE, **description}
    (Path(folder) / DESCRIPTION_FILE).write_text(json.dumps(description, indent=2, ensure_ascii=False) + "\n",
                                                 encoding="utf-8")
    return description


def read_description(folder: Path) -> dict:
    path = Path(folder) / DESCRIPTION_FILE
    if not path.exists():
        raise ExportRefused(f"{folder} holds no {DESCRIPTION_FILE}: export the model first")
    return json.loads(path.read_text(encoding="utf-8"))


def _rebuild(graph, replacements: dict) -> None:
    """Replace nodes in place: replacements maps id(old node) -> list of new nodes ([] drops it)."""
    nodes = list(graph.node)
    del graph.node[:]
    for node in nodes:
        graph.node.extend(replacements.get(id(node), [node]))


def replace_erfc(model) -> int:
    """Rewrite every Erfc(x) as Sub(1, Erf(x)) (float32 graphs); returns how many were rewritten."""
    from onnx import helper, numpy_helper

    graph = model.graph
    found = [node for node in graph.node if node.op_type == "Erfc"]
    if not found:
        return 0
    one = "erfc_rewrite_one"
    graph.initializer.append(numpy_helper.from_array(np.ones((), np.float32), one))
    replacements = {}
    for number, node in enumerate(found):
        erf = f"erfc_rewrite_erf_{number}"
        replacements[id(node)] = [helper.make_node("Erf", [node.input[0]], [erf]),
                                  helper.make_node("Sub", [one, erf], [node.output[0]])]
    _rebuild(graph, replacements)
    return len(found)


def sublinear_tf_as_scikit_learn(model) -> None:
    """skl2onnx's Add(tf, 1) -> Log becomes Where(tf > 0, 1 + Log(tf), 0), scikit-learn's sublinear tf."""
    from onnx import helper, numpy_helper

    graph = model.graph
    producers = {output: node for node in graph.node for output in node.output}
    logs = [node for node in graph.node if node.op_type == "Log" and node.input[0] in producers
            and producers[node.input[0]].op_type == "Add"
            and any(producers.get(name) is not None and producers[name].op_type == "TfIdfVectorizer"
                    for name in producers[node.input[0]].input)]
    if len(logs) != 1:
        raise ExportRefused(f"the TF-IDF graph has {len(logs)} sublinear-tf Log steps, not 1: this skl2onnx "
                            "version writes it differently; check common/onnx_graph.py")
    log = logs[0]
    add = producers[log.input[0]]
    counts = next(name for name in add.input if producers.get(name) is not None
                  and producers[name].op_type == "TfIdfVectorizer")
    one = next(name for name in add.input if name != counts)
    zero = "sublinear_zero"
    graph.initializer.append(numpy_helper.from_array(np.zeros(1, np.float32), zero))
    _rebuild(graph, {id(add): [], id(log): [
        helper.make_node("Log", [counts], ["sublinear_log"]),
        helper.make_node("Add", ["sublinear_log", one], ["sublinear_one_plus_log"]),
        helper.make_node("Greater", [counts, zero], ["sublinear_present"]),
        helper.make_node("Where", ["sublinear_present", "sublinear_one_plus_log", zero], [log.output[0]]),
    ]})
