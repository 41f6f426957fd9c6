"""The serving paths a run can measure, and the `--serve` option that names them.

native      the backend as it was trained: PyTorch eager, Keras (compiled predict step), scikit-learn
onnx        ONNX Runtime fp32 on the graph the backend exports (backends/*/onnx_export.py)
onnx-int8   ONNX Runtime on that graph after onnxruntime.quantization.quantize_dynamic (int8 weights,
            activations quantized per batch); per-channel weights where that flips fewer decisions
            on the validation texts
torch-int8  torch.ao.quantization.quantize_dynamic of every nn.Linear (PyTorch models only)
"""
from __future__ import annotations

from common.errors import UserInputError

PATHS = ("native", "onnx", "onnx-int8", "torch-int8")
TORCH_BACKENDS = ("torch_scratch", "hf_bert")


def parse_serve(value: str) -> str:
    """'native,onnx' -> the paths in PATHS order, native always first, as one comma-separated string."""
    names = [name.strip() for name in str(value).split(",") if name.strip()]
    unknown = [name for name in names if name not in PATHS]
    if unknown or not names:
        raise UserInputError(f"--serve {value!r}: unknown serving path {', '.join(unknown) or '(none given)'}; "
                             f"choose from {', '.join(PATHS)}, comma-separated")
    return ",".join(path for path in PATHS if path == "native" or path in names)


def serve_paths(value: str | None) -> list[str]:
    return parse_serve(value or "native").split(",")


def not_applicable(path: str, backend: str) -> str | None:
    """Why a path does not apply to a backend, or None."""
    if path == "torch-int8" and backend not in TORCH_BACKENDS:
        return "torch int8 dynamic quantization applies to PyTorch models only"
    return None
