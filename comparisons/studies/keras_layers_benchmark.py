"""Quality and predict_proba latency of keras_layers next to torch_scratch, on the default SMS split.

    python -m comparisons.studies.keras_layers_benchmark --seeds 0 --threads 2

Fits each backend with the default EncoderConfig (the test split is used only for the final
metrics), then times predict_proba (raw strings in, probabilities out) at batch 1 and 32, the
backends' calls interleaved so machine noise hits both alike; the first call of each is timed
apart (cold start: tracing/XLA compile for Keras). Prints one JSON object; no message text.
Both frameworks share this process, so compare the ratios, not the absolute numbers.
"""
from __future__ import annotations

import importlib.util
import json
import time

from common.arguments import OneLineParser
from comparisons.studies.benchmarking import interleaved_latency


def set_threads(threads: int | None) -> dict:
    """The same intra-op thread count for TensorFlow and torch (before either runs an op)."""
    import tensorflow as tf

    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    found = {"tf_intra_op": tf.config.threading.get_intra_op_parallelism_threads(),
             "tf_inter_op": tf.config.threading.get_inter_op_parallelism_threads()}
    if importlib.util.find_spec("torch"):
        import torch

        if threads:
            torch.set_num_threads(threads)
        found["torch"] = torch.get_num_threads()
    return found


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads for TF and torch")
    parser.add_argument("--config", type=json.loads, default=None, help="EncoderConfig overrides as JSON")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--vectorizers", nargs="+", default=["shared"], choices=["shared", "textvectorization"])
    parser.add_argument("--no-torch", action="store_true", help="skip the torch_scratch comparison")
    args = parser.parse_args()
    threads = set_threads(args.threads)

    import keras

    from backends.keras_layers.backend import KerasLayersBackend
    from common.datasets import load_sms_spam
    from common.metrics import classification_metrics
    from common.splits import stratified_split

    factories = {f"keras_layers:{v}": (lambda seed, v=v: KerasLayersBackend(
        config=args.config, seed=seed, device="cpu", vectorizer=v, progress=False)) for v in args.vectorizers}
    if not args.no_torch and importlib.util.find_spec("torch"):
        from backends.torch_scratch.backend import TorchScratchBackend

        factories["torch_scratch"] = lambda seed: TorchScratchBackend(config=args.config, seed=seed, device="cpu",
                                                                      progress=False)

    data = load_sms_spam()
    split = stratified_split(data)
    train, valid, test = (data.subset(getattr(split, name)) for name in ("train", "valid", "test"))
    report = {"keras": keras.__version__, "keras_backend": keras.backend.backend(), "threads": threads,
              "split_sha256": split.sha256, "config_overrides": args.config, "runs": []}
    fitted = {}
    for name, make in factories.items():
        for seed in args.seeds:
            start = time.perf_counter()
            backend = make(seed).fit(train, valid)
            seconds = time.perf_counter() - start
            metrics = classification_metrics(test.labels, backend.predict_proba(test.texts), test.positive_index)
            count = backend.param_count()
            report["runs"].append({"backend": name, "seed": seed, "train_seconds": round(seconds, 1),
                                   "params": count.total, "best_epoch": backend.fit_info_["best_epoch"],
                                   "history": backend.fit_info_["history"],
                                   **{k: round(metrics[k], 4) for k in ("accuracy", "macro_f1", "average_precision")}})
            fitted.setdefault(name, backend)
            print(json.dumps(report["runs"][-1]), flush=True)
    for batch in (1, 32):
        result = interleaved_latency(fitted, test.texts, batch, args.repeats)
        if "torch_scratch" in result:
            for name in fitted:
                if name != "torch_scratch":
                    ratio = result[name]["p50_ms"] / result["torch_scratch"]["p50_ms"]
                    result[f"{name}_over_torch_p50"] = round(ratio, 2)
        report[f"latency_batch_{batch}"] = result
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
