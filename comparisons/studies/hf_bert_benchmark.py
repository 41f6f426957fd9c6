"""One seed of hf_bert:frozen and hf_bert:full on the default split: quality and train time.

    .venv/bin/python -m comparisons.studies.hf_bert_benchmark --threads 2 --out /tmp/hf_bert_benchmark.json

Prints one JSON line per mode (test accuracy, macro-F1, AP, train seconds, seconds per epoch).
Figures on a shared machine are noisy: compare them only with runs made at the same time.
`--speed-steps N` instead times N full fine-tuning steps the old way (every batch padded to
max_length, random batches, for-loop AdamW) against the new way (length-grouped batches, dynamic
padding, fused AdamW), alternating step by step so that both see the same machine load.
"""
from __future__ import annotations

import json
import os
import platform
import sys
import time

from common.arguments import OneLineParser


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["frozen", "full"], choices=["frozen", "full"])
    parser.add_argument("--threads", type=int, default=2, help="torch intra-op threads (set before training)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=None, help="default: the backend's per-mode default")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", default=None, help="also write all results to this JSON file")
    parser.add_argument("--speed-steps", type=int, default=0, help="only time this many full-mode steps each way")
    args = parser.parse_args(argv)

    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    from backends.hf_bert import HfBertBackend
    from common.datasets import load_sms_spam
    from common.metrics import classification_metrics
    from common.splits import stratified_split

    data = load_sms_spam()
    split = stratified_split(data)
    train, valid, test = (data.subset(getattr(split, name)) for name in ("train", "valid", "test"))
    if args.speed_steps:
        row = speed_steps(train, args.speed_steps, args.seed)
        row["machine"] = f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
        print(json.dumps(row), flush=True)
        return 0
    results = []
    for mode in args.modes:
        backend = HfBertBackend(mode=mode, epochs=args.epochs, seed=args.seed, device=args.device)
        started = time.perf_counter()
        backend.fit(train, valid)
        fit_seconds = time.perf_counter() - started
        started = time.perf_counter()
        proba = backend.predict_proba(test.texts)
        predict_seconds = time.perf_counter() - started
        metrics = classification_metrics(test.labels, proba, test.positive_index)
        info = backend.fit_info_
        row = {
            "variant": f"hf_bert:{mode}", "seed": args.seed, "threads": torch.get_num_threads(),
            "device": info["device"], "sizes": split.sizes(), "split_sha256": split.sha256[:12],
            "test_accuracy": round(metrics["accuracy"], 4), "test_macro_f1": round(metrics["macro_f1"], 4),
            "test_average_precision": round(metrics["average_precision"], 4),
            "confusion_matrix": metrics["confusion_matrix"],
            "fit_seconds": round(fit_seconds, 1), "feature_seconds": round(info["feature_seconds"], 1),
            "epoch_seconds": [round(row["seconds"], 1) for row in info["history"]],
            "valid_seconds": [round(row["valid_seconds"], 1) for row in info["history"]],
            "valid_average_precision": [round(row["valid_average_precision"], 4) for row in info["history"]],
            "best_epoch": info["best_epoch"], "epochs_run": info["epochs_run"],
            "test_predict_seconds": round(predict_seconds, 1),
            "params": backend.param_count()._asdict(), "settings": backend.get_params(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}",
        }
        print(json.dumps(row), flush=True)
        results.append(row)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
    return 0


def speed_steps(train, steps: int, seed: int, batch_size: int = 32, max_length: int = 64) -> dict:
    """Seconds per full fine-tuning step, old way against new way, on the same batches' texts."""
    import copy

    import numpy as np
    import torch
    import torch.nn.functional as F

    from backends.hf_bert.batching import collate, encode, lengths_of, training_batches
    from backends.hf_bert.pretrained import load_pretrained

    torch.manual_seed(seed)
    tokenizer, network = load_pretrained(None, train.n_classes)
    encoded = encode(tokenizer, train.texts, max_length)
    labels = torch.as_tensor(train.labels)
    rng = np.random.default_rng(seed)
    ways = {
        "padded_to_max_length": (copy.deepcopy(network), rng.permutation(len(train))[: steps * batch_size]
                                 .reshape(steps, batch_size), False),
        "length_grouped_dynamic": (network, training_batches(lengths_of(encoded), batch_size, rng)[:steps], True),
    }
    timing = {name: {"wall": 0.0, "cpu": 0.0, "tokens": 0} for name in ways}
    optimizers = {name: torch.optim.AdamW(model.parameters(), lr=5e-5, fused=fused)
                  for name, (model, _, fused) in ways.items()}
    for step in range(steps):
        for name, (model, batches, _) in ways.items():
            indices = batches[step]
            if name == "padded_to_max_length":
                batch = tokenizer([train.texts[i] for i in indices], padding="max_length", truncation=True,
                                  max_length=max_length, return_tensors="pt")
            else:
                batch = collate(encoded, indices, tokenizer.pad_token_id, "cpu")
            wall, cpu = time.perf_counter(), time.process_time()
            model.train()
            loss = F.cross_entropy(model(**batch).logits, labels[torch.as_tensor(indices)])
            optimizers[name].zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizers[name].step()
            timing[name]["wall"] += time.perf_counter() - wall
            timing[name]["cpu"] += time.process_time() - cpu
            timing[name]["tokens"] += int(batch["input_ids"].numel())
    steps_per_epoch = -(-len(train) // batch_size)
    row = {"steps_each_way": steps, "threads": torch.get_num_threads(), "steps_per_epoch": steps_per_epoch}
    for name, t in timing.items():
        row[name] = {"wall_s_per_step": round(t["wall"] / steps, 3), "cpu_s_per_step": round(t["cpu"] / steps, 3),
                     "tokens_per_step": round(t["tokens"] / steps, 1),
                     "epoch_wall_s_estimate": round(t["wall"] / steps * steps_per_epoch, 1)}
    row["speedup_wall"] = round(timing["padded_to_max_length"]["wall"] / timing["length_grouped_dynamic"]["wall"], 2)
    row["speedup_cpu"] = round(timing["padded_to_max_length"]["cpu"] / timing["length_grouped_dynamic"]["cpu"], 2)
    return row


if __name__ == "__main__":
    sys.exit(main())
