"""Quality over seeds and predict_proba latency (scratch vs fused attention) on the default SMS split.

    python -m comparisons.studies.torch_scratch_benchmark --seeds 0 1 2 --threads 1

Fits the default-budget encoder once per seed (test split used only for the final metrics), then
times predict_proba at batch 1 and 32 for both attention kinds on the seed-0 model, the calls
interleaved so machine noise hits both alike. Prints one JSON object; no message text.
"""
from __future__ import annotations

import json
import statistics
import time

import torch

from common.arguments import OneLineParser
from comparisons.studies.benchmarking import interleaved_latency
from backends.torch_scratch.backend import TorchScratchBackend
from backends.torch_scratch.encoder import build_model
from common.datasets import load_sms_spam
from common.metrics import classification_metrics
from common.splits import stratified_split


def with_attention(backend: TorchScratchBackend, attention: str) -> TorchScratchBackend:
    """A shallow copy of a fitted backend whose model uses `attention`, weights shared."""
    twin = TorchScratchBackend(**{**backend.get_params(), "attention": attention})
    twin.__dict__.update({k: v for k, v in backend.__dict__.items() if k.endswith("_")})
    twin.model_ = build_model(backend.config_, attention).to(backend.device_).eval()
    twin.model_.load_state_dict(backend.model_.state_dict())
    return twin


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: leave as is)")
    parser.add_argument("--config", type=json.loads, default=None, help="EncoderConfig overrides as JSON")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    data = load_sms_spam()
    split = stratified_split(data)
    train, valid, test = (data.subset(getattr(split, name)) for name in ("train", "valid", "test"))
    report = {"threads": torch.get_num_threads(), "split_sha256": split.sha256, "runs": []}
    fitted = {}
    for seed in args.seeds:
        start = time.perf_counter()
        backend = TorchScratchBackend(config=args.config, seed=seed, device="cpu", progress=False).fit(train, valid)
        seconds = time.perf_counter() - start
        metrics = classification_metrics(test.labels, backend.predict_proba(test.texts), test.positive_index)
        report["runs"].append({"seed": seed, "train_seconds": round(seconds, 1), **backend.fit_info_,
                               **{k: metrics[k] for k in ("accuracy", "macro_f1", "average_precision")}})
        fitted[seed] = backend
        print(json.dumps(report["runs"][-1]), flush=True)
    for key in ("accuracy", "macro_f1", "average_precision"):
        values = [run[key] for run in report["runs"]]
        report[f"test_{key}"] = {"mean": statistics.mean(values),
                                 "std": statistics.stdev(values) if len(values) > 1 else 0.0}
    model = fitted[args.seeds[0]]
    kinds = {kind: with_attention(model, kind) for kind in ("scratch", "fused")}
    for batch in (1, 32):
        result = interleaved_latency(kinds, test.texts, batch, args.repeats)
        result["fused_over_scratch"] = result["fused"]["p50_ms"] / result["scratch"]["p50_ms"]
        report[f"latency_batch_{batch}"] = result
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
