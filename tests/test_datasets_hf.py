"""`--data hf:NAME`: a multi-class dataset the test writes to a local folder, loaded through the same
`datasets.load_dataset` path as a hub id, split, and run through every backend to an ok row."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from common.datasets import DataSpec, load
from common.errors import UserInputError
from common.splits import stratified_split

CLASSES = ["question", "spam", "statement"]  # three classes from real SMS texts


def three_class_rows(per_class: int) -> tuple[list[str], list[int]]:
    """Real SMS messages in three classes: spam, ham asking a question, other ham."""
    sms = load(DataSpec())
    texts, labels = [], []
    for text, label in zip(sms.texts, sms.labels.tolist()):
        name = "spam" if label == sms.positive_index else ("question" if "?" in text else "statement")
        if labels.count(CLASSES.index(name)) < per_class:
            texts.append(text)
            labels.append(CLASSES.index(name))
    return texts, labels


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory):
    """A local dataset folder (parquet files with a ClassLabel column), as the hub would serve it."""
    datasets = pytest.importorskip("datasets")
    folder = tmp_path_factory.mktemp("hf_dataset")
    texts, labels = three_class_rows(per_class=40)
    features = datasets.Features({"sentence": datasets.Value("string"),
                                  "topic": datasets.ClassLabel(names=CLASSES)})
    table = datasets.Dataset.from_dict({"sentence": texts, "topic": labels}, features=features)
    (folder / "data").mkdir()
    table.to_parquet(str(folder / "data" / "train-00000.parquet"))
    table.select(range(12)).to_parquet(str(folder / "data" / "test-00000.parquet"))
    return folder


def test_a_local_dataset_loads_with_class_names(hf_folder):
    data = load(DataSpec(source="hf", path=str(hf_folder), text_col="sentence", label_col="topic"))
    assert data.class_names == tuple(CLASSES) and data.positive_index is None
    assert len(data) == 120 and np.bincount(data.labels).tolist() == [40, 40, 40]
    texts, labels = three_class_rows(per_class=40)
    assert data.texts == texts and [CLASSES[i] for i in data.labels] == [CLASSES[i] for i in labels]
    test = load(DataSpec(source="hf", path=str(hf_folder), text_col="sentence", label_col="topic", hf_split="test"))
    assert len(test) == 12
    split = stratified_split(data)
    assert all(len(np.unique(data.labels[part])) == 3 for part in (split.train, split.valid, split.test))


def test_bad_columns_and_splits_say_what_to_do(hf_folder):
    with pytest.raises(UserInputError, match="columns are: sentence, topic"):
        load(DataSpec(source="hf", path=str(hf_folder)))
    with pytest.raises(UserInputError, match="split 'nope'"):
        load(DataSpec(source="hf", path=str(hf_folder), text_col="sentence", label_col="topic", hf_split="nope"))


def test_a_hub_dataset_missing_offline_gives_one_line(tmp_path):
    env = {"HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-m", "comparisons", "run", "--data", "hf:ag_news",
                             "--out", str(tmp_path / "run")], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "HF_DATASETS_OFFLINE=0" in lines[0], lines
    assert not (tmp_path / "run").exists()


def tiny_bert_folder(folder, texts) -> str:
    """A random 2-layer BERT (hidden 32) with a WordPiece vocabulary of the given texts (as tests/test_hf_bert.py)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    characters = "abcdefghijklmnopqrstuvwxyz0123456789"
    words = sorted({w for text in texts for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1})
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *characters, *("##" + c for c in characters), *words]
    tokenizer = BertTokenizer(vocab={token: i for i, token in enumerate(dict.fromkeys(tokens))})
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_every_backend_runs_on_a_multi_class_hub_dataset(hf_folder, tmp_path, capfd):
    """`--data hf:FOLDER` end to end: three classes, every backend (tiny budgets) to an ok row. hf_bert
    runs as `frozen` only: `full` has the same model and head and trains more of it, no other class path."""
    from tests.test_cli import run_main

    VARIANTS = ["tfidf_logreg", "torch_scratch", "keras_layers", "hf_bert:frozen"]
    texts, _ = three_class_rows(per_class=40)
    model = tiny_bert_folder(tmp_path / "tiny_bert", texts)
    out = tmp_path / "run"
    result = run_main(capfd, "run", "--profile", "tiny", "--data", f"hf:{hf_folder}", "--text-col", "sentence",
                      "--label-col", "topic", "--hf-model", model, "--backends", ",".join(VARIANTS),
                      "--quality-only", "--threads", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr[-3000:]
    summary = pd.read_csv(out / "summary.csv")
    assert sorted(summary["variant"].unique()) == sorted(VARIANTS)
    assert (summary["status"] == "ok").all(), summary[["variant", "train_size", "status", "reason"]]
    assert len(summary) == len(VARIANTS)
    for run in (out / "runs").glob("*.json"):
        record = __import__("json").loads(run.read_text())
        assert np.asarray(record["confusion_matrix"]).shape == (3, 3)
    manifest = __import__("json").loads((out / "manifest.json").read_text())
    assert manifest["data"]["class_names"] == CLASSES and manifest["data"]["positive_index"] is None
