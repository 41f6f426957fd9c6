"""Choose the scratch recipe on VALIDATION only: a few candidates, 3 model seeds each, validation AP.

    nice .venv/bin/python -m comparisons.studies.recipe_search [--seeds 0 1 2] [--only NAME ...]

Each candidate is a TorchScratchBackend (tokenizer + EncoderConfig overrides) fitted on the default
split's train part; its score is the validation AP of the epoch that validation chose (the test
split is never loaded into a model). One JSON line per (candidate, seed) is appended to
results/studies/recipe_search.jsonl; a rerun skips the lines already there. The chosen
recipe and its figures are written by hand into common/recipe.py.

Run on 2026-11-30 on a shared 2-core machine: subword_e3 (3 seeds) and regex_e3 (seed 0) at 1
thread under load 10 to 25; the later candidates at 2 threads (`--threads 2 --only ...`) under load
3 to 6, after the subword vocabulary became one cached fit per training split (so their train_seconds
are not costs). Chosen then: subword_e3_lr2e-3. Session 4 (later on 2026-11-30, 2 threads, load
under 2): that recipe on seeds 3 and 4, then the pooling, batch, vocabulary-size, dropout and
length candidates below it on seeds 0-4. Chosen: subword_e3_lr2e-3_cls (common/recipe.py says why).
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import torch

from common.arguments import OneLineParser
from common.config import EncoderConfig
from backends.torch_scratch.backend import TorchScratchBackend
from common.datasets import load_sms_spam
from common.recipe import RECIPE
from common.splits import stratified_split

OUT = Path(__file__).resolve().parents[2] / "results" / "studies" / "recipe_search.jsonl"
CANDIDATES: dict[str, dict] = {  # name -> backend keyword arguments, in the order they are run
    "subword_e3": {"tokenizer": "subword", "config": {"epochs": 3}},
    "regex_e3": {"tokenizer": "regex", "config": {"epochs": 3}},
    "subword_e6_p2": {"tokenizer": "subword", "config": {"epochs": 6, "patience": 2}},
    "subword_e6_p2_reg": {"tokenizer": "subword",
                          "config": {"epochs": 6, "patience": 2, "dropout": 0.2, "weight_decay": 0.05}},
    "subword_e6_p2_lr5e-4": {"tokenizer": "subword", "config": {"epochs": 6, "patience": 2, "learning_rate": 5e-4}},
    "subword_e3_lr2e-3": {"tokenizer": "subword", "config": {"epochs": 3, "learning_rate": 2e-3}},
    "subword_e3_len96": {"tokenizer": "subword", "config": {"epochs": 3, "max_len": 96}},
    # from here on every fit reads the one cached vocabulary of the training split (common/subword.py);
    # subword_e3's rows above came from separately trained vocabularies (6,098 to 6,105 pieces)
    "subword_e3_lr1e-3": {"tokenizer": "subword", "config": {"epochs": 3, "learning_rate": 1e-3}},
    "subword_e3_lr3e-3": {"tokenizer": "subword", "config": {"epochs": 3, "learning_rate": 3e-3}},
    # a larger small model at the chosen learning rate (d_model 64 stays unless validation prefers it)
    "subword_e3_lr2e-3_d128": {"tokenizer": "subword",
                               "config": {"epochs": 3, "learning_rate": 2e-3, "d_model": 128, "ff_dim": 512}},
    # session 4: the input representation and the step count around the chosen recipe, seeds 0-4
    "subword_e3_lr2e-3_vocab2k": {"tokenizer": "subword", "vocab_max_size": 2000,
                                  "config": {"epochs": 3, "learning_rate": 2e-3}},
    "subword_e3_lr2e-3_vocab4k": {"tokenizer": "subword", "vocab_max_size": 4000,
                                  "config": {"epochs": 3, "learning_rate": 2e-3}},
    "subword_e3_lr2e-3_batch16": {"tokenizer": "subword", "config": {"epochs": 3, "learning_rate": 2e-3, "batch_size": 16}},
    "subword_e5_lr2e-3": {"tokenizer": "subword", "config": {"epochs": 5, "learning_rate": 2e-3}},
    "subword_e3_lr2e-3_drop0.2": {"tokenizer": "subword", "config": {"epochs": 3, "learning_rate": 2e-3, "dropout": 0.2}},
    "subword_e3_lr2e-3_cls": {"tokenizer": "subword", "config": {"epochs": 3, "learning_rate": 2e-3, "pooling": "cls"}},
    "subword_e3_lr1e-3_batch16": {"tokenizer": "subword", "config": {"epochs": 3, "learning_rate": 1e-3, "batch_size": 16}},
    "subword_e3_lr2e-3_batch16_cls": {"tokenizer": "subword",
                                      "config": {"epochs": 3, "learning_rate": 2e-3, "batch_size": 16, "pooling": "cls"}},
}


def as_searched(candidate: dict) -> dict:
    """A candidate's backend arguments with its config laid over EncoderConfig's own defaults, as when it was searched.
    The backend lays a config over RECIPE["config"], the recipe this search chose afterwards (the <cls> vector at
    2e-3): left to it, every candidate would be fitted with that recipe's settings wherever its name says otherwise."""
    defaults = EncoderConfig()
    baseline = {key: getattr(defaults, key) for key in RECIPE["config"]}
    return {**candidate, "config": {**baseline, **candidate.get("config", {})}}


def done_keys() -> set[tuple[str, int]]:
    if not OUT.exists():
        return set()
    return {(row["candidate"], row["seed"]) for row in map(json.loads, OUT.read_text().splitlines())}


def main() -> None:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--only", nargs="+", default=list(CANDIDATES))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = load_sms_spam()
    split = stratified_split(data)
    train, valid = data.subset(split.train), data.subset(split.valid)  # the test split is not used here
    done = done_keys()
    for name in args.only:
        for seed in args.seeds:
            if (name, seed) in done:
                continue
            started = time.perf_counter()
            backend = TorchScratchBackend(seed=seed, progress=False, **as_searched(CANDIDATES[name])).fit(train, valid)
            info = backend.fit_info_
            row = {"candidate": name, "seed": seed, "valid_ap": info["best_valid_average_precision"],
                   "best_epoch": info["best_epoch"], "epochs_run": info["epochs_run"],
                   "train_seconds": round(time.perf_counter() - started, 1), "threads": args.threads,
                   "vocab_size": info["vocab_size"], "settings": CANDIDATES[name],
                   "history": [round(h["valid_average_precision"], 4) for h in info["history"]]}
            with OUT.open("a") as handle:
                handle.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    rows = [json.loads(line) for line in OUT.read_text().splitlines()]
    for name in CANDIDATES:
        scores = [r["valid_ap"] for r in rows if r["candidate"] == name]
        if scores:
            spread = statistics.stdev(scores) if len(scores) > 1 else 0.0
            print(f"{name:28s} valid AP {statistics.mean(scores):.4f} ± {spread:.4f} over {len(scores)} seeds")


if __name__ == "__main__":
    main()
