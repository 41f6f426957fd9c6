"""The selected recipe trained on every label and shipped: `select` calls `deploy_pick` once it has a pick.

The labelled texts are all of the data (or `--labels N` of them, drawn as a selection fold draws its budget); a
group-aware stratified fifth is the validation part the recipe uses for its epochs and threshold (the share every
fold's recipe had: common/partitions.VALID_FOLDS), and there is no test part. The training runs in its own process
(comparisons/run/deploy_worker.py); what it writes goes in OUT/deploy/, the model card beside it
(report/model_card.py), and the training record into selection.json under "deployment".
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from common.splits import Split

DEPLOY_FOLDER = "deploy"
DEPLOY_SEED = 0  # the model seed of the shipped model (the selection's folds each had their own: the recipe's
                 # variation over seeds is inside its fold-to-fold spread, which the selection's bounds include)


def deployment_split(data, seed: int) -> Split:
    """Every text labelled: a group-aware stratified fifth for validation, the rest for training, no test part."""
    from common.partitions import VALID_FOLDS, stratified_group_folds, text_groups

    everything = np.arange(len(data))
    valid = np.sort(stratified_group_folds(data.labels, text_groups(data.texts), VALID_FOLDS, seed)[0])
    return Split(np.setdiff1d(everything, valid), valid, np.array([], dtype=np.int64), seed)


def deploy_spec(p, variant: str, split: Split, code: dict):
    """The run spec of the shipped model: the selection's recipe, budget profile, precision and label budget."""
    from common.datasets import fingerprint
    from common.splits import subset_seed
    from comparisons.run.spec import RunSpec

    size = p.train_sizes[0]
    return RunSpec(variant=variant, seed=DEPLOY_SEED, profile=p.plan.profile, threads=p.plan.threads,
                   device=p.plan.device, timeout_s=p.timeout, data=p.spec, data_sha256=fingerprint(p.data),
                   split_seed=split.seed, split_sha256=split.sha256, hf_model=p.plan.hf_model, executor="local",
                   code_commit=code.get("code_commit"), code_dirty=code.get("code_dirty"),
                   code_sha256=code.get("code_sha256"), serve="native", measure_costs=False, train_size=size,
                   label_budget=p.plan.label_budget, precision=p.precisions[variant],
                   subset_seed=subset_seed(split.seed, DEPLOY_SEED) if size is not None else None)


def deploy_pick(p, variant: str, out: Path, code: dict) -> dict:
    """Train `variant` on the labelled texts in a worker process; its training record, or {"failed": reason}. The
    worker's output goes to OUT/deploy/training.log."""
    from comparisons.run.runner import worker_environment
    from comparisons.run.spec import RunInputs

    folder = Path(out) / DEPLOY_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    split = deployment_split(p.data, p.plan.split_seed)
    spec = deploy_spec(p, variant, split, code)
    inputs = RunInputs(p.data, split.to_dict()).to_json_bytes()
    log = folder / "training.log"
    command = [sys.executable, "-m", "comparisons.run.deploy_worker", "--spec", spec.to_json(), "--out", str(folder)]
    try:
        with open(log, "wb") as sink:
            done = subprocess.run(command, input=inputs, stdout=sink, stderr=subprocess.STDOUT,
                                  env=worker_environment(p.plan.threads, ""), timeout=p.timeout)
    except subprocess.TimeoutExpired:
        return {"failed": f"training the pick took longer than {p.timeout:g} s (its log: {log})"}
    if done.returncode != 0:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("failed:")]
        return {"failed": (lines[-1][len("failed:"):].strip() if lines else f"exit {done.returncode}")
                + f" (its log: {log})"}
    from comparisons.run.deploy_worker import TRAINING_FILE

    return json.loads((folder / TRAINING_FILE).read_text())
