"""hf_bert: a tiny random BERT written to a temporary folder (no network), plus one MiniLM smoke test."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification, BertConfig, BertModel, BertTokenizer

from backends.base import build
from backends.hf_bert import HfBertBackend
from backends.hf_bert.backend import MeanPoolHead, masked_mean
from backends.hf_bert.batching import training_batches
from common.errors import UserInputError
from tests.backend_contract import check_backend_contract

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models run fastest on one thread; two threads thrash on a busy shared machine (~20x)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory, tiny_splits):
    """A random 2-layer BERT (hidden 32) and a WordPiece vocabulary of the tiny training words."""
    train = tiny_splits[0]
    words = sorted({w for text in train.texts for w in re.findall(r"[a-z0-9]+", text.lower())})
    tokens = SPECIAL + list(CHARACTERS) + ["##" + c for c in CHARACTERS] + [w for w in words if len(w) > 1]
    tokenizer = BertTokenizer(vocab={token: i for i, token in enumerate(dict.fromkeys(tokens))})
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny_bert")
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny(folder, **settings) -> HfBertBackend:
    defaults = {"model": str(folder), "epochs": 2, "batch_size": 16, "progress": False, "device": "cpu"}
    return HfBertBackend(**{**defaults, **settings})


def pretrained_encoder_state(folder) -> dict[str, torch.Tensor]:
    return BertModel.from_pretrained(folder).state_dict()


@pytest.mark.parametrize("mode", ["frozen", "full"])
def test_hf_bert_passes_the_contract(mode, tiny_model_dir, tiny_splits, tmp_path):
    check_backend_contract(lambda seed: build(f"hf_bert:{mode}", model=str(tiny_model_dir), epochs=2,
                                              batch_size=16, seed=seed, progress=False, device="cpu"),
                           tiny_splits, tmp_path)


def test_frozen_mode_trains_the_head_only(tiny_model_dir, tiny_splits):
    train, valid, _ = tiny_splits
    backend = tiny(tiny_model_dir, mode="frozen", epochs=3).fit(train, valid)
    before = pretrained_encoder_state(tiny_model_dir)
    after = backend.encoder_.state_dict()
    assert set(after) == {k for k in before if not k.startswith("pooler.")}, "frozen mode drops the unused pooler"
    for key, value in after.items():
        assert torch.equal(value, before[key]), f"frozen fit changed encoder weight {key}"
    head_size = 32 * train.n_classes + train.n_classes
    encoder_size = sum(p.numel() for p in backend.encoder_.parameters())
    assert backend.param_count() == (encoder_size + head_size, head_size)
    assert backend.fit_info_["epochs_run"] == 3 and len(backend.fit_info_["history"]) == 3
    assert 1 <= backend.fit_info_["best_epoch"] <= 3


def test_full_mode_changes_encoder_weights(tiny_model_dir, tiny_splits):
    train, valid, _ = tiny_splits
    backend = tiny(tiny_model_dir, mode="full", epochs=1, learning_rate=1e-3).fit(train, valid)
    before = pretrained_encoder_state(tiny_model_dir)
    after = backend.encoder_.state_dict()
    changed = [k for k, v in after.items() if k in before and not torch.equal(v, before[k])]
    assert any(k.startswith("encoder.layer.0.") for k in changed), "full mode must train the encoder"
    assert any(k.startswith("embeddings.") for k in changed), "full mode must train the embeddings"
    count = backend.param_count()
    assert count.trainable == count.total == sum(p.numel() for p in backend.model_.parameters())


@pytest.mark.parametrize("mode", ["frozen", "full"])
def test_batching_and_padding_do_not_move_probabilities(mode, tiny_model_dir, tiny_splits):
    train, valid, test = tiny_splits
    backend = tiny(tiny_model_dir, mode=mode, epochs=1).fit(train, valid)
    batched = backend.predict_proba(test.texts)  # length-sorted, padded batches, order restored
    one_by_one = np.vstack([backend.predict_proba([text]) for text in test.texts])  # no padding
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    assert np.ptp(batched[:, 1]) > 0, "different texts should get different probabilities"


def test_saved_full_model_reloads_with_transformers_alone(tiny_model_dir, tiny_splits, tmp_path):
    train, valid, test = tiny_splits
    backend = tiny(tiny_model_dir, mode="full", epochs=1).fit(train, valid)
    folder = backend.save(tmp_path)
    reloaded = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    encoded = backend.tokenizer_(test.texts[:5], padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.inference_mode():
        proba = torch.softmax(reloaded(**encoded).logits.double(), dim=-1).numpy()
    np.testing.assert_allclose(proba, backend.predict_proba(test.texts[:5]), atol=1e-5)


def test_saved_frozen_model_reproduces_predictions(tiny_model_dir, tiny_splits, tmp_path):
    train, valid, test = tiny_splits
    backend = tiny(tiny_model_dir, mode="frozen", epochs=2).fit(train, valid)
    folder = backend.save(tmp_path)
    encoder = BertModel.from_pretrained(folder).eval()
    head = MeanPoolHead(32, train.n_classes, 0.1).eval()
    head.load_state_dict(torch.load(folder / "head.pt"))
    encoded = backend.tokenizer_(test.texts[:5], padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.inference_mode():
        features = masked_mean(encoder(**encoded).last_hidden_state, encoded["attention_mask"])
        proba = torch.softmax(head(features).double(), dim=-1).numpy()
    np.testing.assert_allclose(proba, backend.predict_proba(test.texts[:5]), atol=1e-5)


def test_training_batches_cover_every_example_once_and_depend_on_the_seed():
    lengths = np.random.default_rng(1).integers(3, 60, size=1000)
    first = training_batches(lengths, 32, np.random.default_rng(0))
    assert sorted(np.concatenate(first).tolist()) == list(range(1000))
    again = training_batches(lengths, 32, np.random.default_rng(0))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    other = training_batches(lengths, 32, np.random.default_rng(1))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))
    padding = sum(int(lengths[b].max() * len(b) - lengths[b].sum()) for b in first)
    unsorted = sum(int(lengths[b].max() * len(b) - lengths[b].sum())
                   for b in np.array_split(np.random.default_rng(0).permutation(1000), len(first)))
    assert padding < unsorted / 4, "length-grouped batches should carry far less padding"


@pytest.mark.parametrize("name", ["no-such-org/no-such-model-xyz", "/no/such/folder/bert"])
def test_unknown_model_is_a_user_input_error_naming_it(name, tiny_splits, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # offline is the default anyway
    train, valid, _ = tiny_splits
    with pytest.raises(UserInputError, match=re.escape(name)) as error:
        HfBertBackend(model=name, progress=False).fit(train, valid)
    assert "\n" not in str(error.value) and "HF_HUB_OFFLINE=0" in str(error.value)


def test_unknown_mode_is_a_user_input_error(tiny_model_dir, tiny_splits):
    with pytest.raises(UserInputError, match="partial"):
        tiny(tiny_model_dir, mode="partial").fit(*tiny_splits[:2])


@pytest.mark.slow
def test_shipped_minilm_fine_tunes_offline(tiny_splits, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    train, valid, test = tiny_splits
    backend = HfBertBackend(mode="full", epochs=1, progress=False, device="cpu").fit(train, valid)
    proba = backend.predict_proba(test.texts)
    assert proba.shape == (len(test), 2) and np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    count = backend.param_count()
    assert count.trainable == count.total > 22_000_000  # MiniLM-L6: about 22.7 million weights
    assert backend.fit_info_["model"] == "all-MiniLM-L6-v2" and backend.fit_info_["epochs_run"] == 1
