"""The reduced-precision copies: ONNX Runtime dynamic quantization of an exported graph, torch.ao dynamic
quantization, and bf16 autocast of the native model (native-bf16: no weight changes, only the arithmetic).

Both quantize the weights of linear layers to int8 ahead of time and the activations per batch at
run time (their scale is the batch's range), so an int8 model's output for a text depends on the
texts it is scored with: measure_paths.py records that batch dependence.
"""
from __future__ import annotations

import copy
from pathlib import Path

from common.onnx_graph import ExportRefused

INT8_OPS = ("MatMulInteger", "DynamicQuantizeMatMul", "QLinearMatMul", "ConvInteger", "DynamicQuantizeLinear")


def quantize_onnx(folder: Path, per_channel: bool) -> str:
    """model.onnx -> model.int8[.per_channel].onnx beside it; returns the file name. Refuses a graph
    with nothing to quantize (the TF-IDF pipeline: its linear model is an ai.onnx.ml op, no MatMul)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = Path(folder)
    name = f"model.int8{'.per_channel' if per_channel else ''}.onnx"
    quantize_dynamic(str(folder / "model.onnx"), str(folder / name), weight_type=QuantType.QInt8,
                     per_channel=per_channel)
    if not any(node.op_type in INT8_OPS for node in onnx.load(str(folder / name)).graph.node):
        (folder / name).unlink()
        raise ExportRefused("quantize_dynamic found no MatMul or Gemm weights to quantize in this graph")
    return name


TORCH_MODULES = ("model_", "encoder_", "head_")  # the nn.Modules a PyTorch backend predicts with


def torch_int8_copy(backend):
    """A copy of a fitted PyTorch backend whose nn.Linear layers are int8 (torch.ao dynamic), on CPU."""
    import warnings

    import torch

    quantized = copy.copy(backend)
    found = False
    for name in TORCH_MODULES:
        module = getattr(backend, name, None)
        if isinstance(module, torch.nn.Module):
            with warnings.catch_warnings():  # torch.ao's deprecation notice (it moves to torchao)
                warnings.simplefilter("ignore")
                setattr(quantized, name, torch.ao.quantization.quantize_dynamic(
                    copy.deepcopy(module).cpu().eval(), {torch.nn.Linear}, dtype=torch.qint8))
            found = True
    if not found:
        raise ExportRefused("no PyTorch module to quantize")
    if hasattr(quantized, "device_"):
        quantized.device_ = torch.device("cpu")
    if getattr(backend, "mode", None) == "full" and hasattr(quantized, "encoder_"):
        quantized.encoder_ = quantized.model_.base_model
    return quantized


def save_torch_int8(quantized, folder: Path) -> float:
    """torch.save the int8 modules' state (what a deployer would ship); returns its size in MB."""
    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "torch_int8.pt"
    state = {name: getattr(quantized, name).state_dict() for name in TORCH_MODULES
             if isinstance(getattr(quantized, name, None), torch.nn.Module)
             and not (name == "encoder_" and getattr(quantized, "mode", None) == "full")}
    torch.save(state, path)
    return path.stat().st_size / 2**20


def bf16_copy(backend):
    """A copy of a fitted PyTorch backend that predicts under bf16 autocast (its fp32 weights shared, not copied)."""
    if not hasattr(backend, "precision_"):
        raise ExportRefused(f"{type(backend).__name__} has no bf16 inference path (precision_)")
    served = copy.copy(backend)
    served.precision_ = "bf16"
    return served
