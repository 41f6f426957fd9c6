"""hf_bert: a tiny random BERT written to a temporary folder (no network), plus one MiniLM smoke test."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification, BertConfig, BertModel, BertTokenizer

from backends.base import build
from backends.hf_bert import HfBertBackend
from backends.hf_bert.backend import MeanPoolHead, masked_mean
from backends.hf_bert.batching import small_data_budget, training_batches
from backends.precision import bf16_native
from common.errors import UserInputError
from common.metrics import classification_metrics
from common.progress import MARK_VARIABLE
from common.selection import UnusableValidationError
from tests.backend_contract import check_backend_contract

BF16_PADDING_TOLERANCE = 5e-3  # probability change padding may cause under bf16 autocast (measured: 3e-7)
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
    # the validation machinery (epoch choice, the course's linear head); the small-budget policy and the logistic
    # head have their own tests (test_small_budget.py)
    defaults = {"model": str(folder), "epochs": 2, "batch_size": 16, "min_steps": 0, "progress": False, "device": "cpu",
                "choose_on": "validation", "head": "linear"}
    return HfBertBackend(**{**defaults, **settings})


def pretrained_encoder_state(folder) -> dict[str, torch.Tensor]:
    return BertModel.from_pretrained(folder).state_dict()


@pytest.mark.parametrize("mode", ["frozen", "full"])
def test_hf_bert_passes_the_contract(mode, tiny_model_dir, tiny_splits, tmp_path):
    check_backend_contract(lambda seed: build(f"hf_bert:{mode}", model=str(tiny_model_dir), epochs=2,
                                              batch_size=16, min_steps=0, seed=seed, progress=False, device="cpu"),
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


def valid_ap(backend: HfBertBackend, valid) -> float:
    return classification_metrics(valid.labels, backend.predict_proba(valid.texts), valid.positive_index)[
        "average_precision"]


def test_trainer_keeps_the_weights_of_the_best_validation_epoch(tiny_model_dir, tiny_splits):
    """A high learning rate makes validation AP peak early (here at epoch 1 of 4, on CPU)."""
    train, valid, _ = tiny_splits
    backend = tiny(tiny_model_dir, mode="full", epochs=4, learning_rate=1e-2, seed=1).fit(train, valid)
    history, best = backend.fit_info_["history"], backend.fit_info_["best_epoch"]
    scores = [row["valid_average_precision"] for row in history]
    assert len(history) == 4 and best == 1 + int(np.argmax(scores))  # strictly greater: ties keep the earlier
    assert best < 4 and scores[-1] < scores[best - 1] - 0.01, f"precondition: the last epoch must be worse {scores}"
    kept = valid_ap(backend, valid)
    assert kept == pytest.approx(scores[best - 1], abs=1e-9), "the kept weights are not the best epoch's"
    assert kept != pytest.approx(scores[-1], abs=1e-3), "the last epoch's weights were kept"


def test_trainer_leaves_no_checkpoints_and_reports_each_epoch(tiny_model_dir, tiny_splits, tmp_path, monkeypatch,
                                                              capfd):
    train, valid, test = tiny_splits
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # where the Trainer's checkpoints go
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(MARK_VARIABLE, "@mark@")
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()  # its process id is free now: a killed worker's leftover folder
    (tmp_path / f"hf_bert_checkpoints_{finished.pid}_x" / "checkpoint-1").mkdir(parents=True)
    backend = tiny(tiny_model_dir, mode="full", epochs=2, progress=True).fit(train, valid)
    assert list(tmp_path.iterdir()) == [], "checkpoints, a dead worker's leftovers or Trainer output left behind"
    err = capfd.readouterr().err
    for epoch in (1, 2):
        assert re.search(rf"@mark@hf_bert:full epoch {epoch}/2: train loss \d\.\d{{4}}, valid AP \d\.\d{{4}}", err)
    assert "@mark@hf_bert:full steps" in err and "{'" not in err, "our bar and lines, not the Trainer's log dicts"
    unmarked = [line for line in re.split(r"[\r\n]", err) if line.strip() and not line.startswith("@mark@")]
    assert unmarked == [], "output that is not our progress (a library's bar or log)"
    backend.save(tmp_path / "saved")
    assert capfd.readouterr().err == "", "library bars (Writing model shards) in a measured run"


def test_frozen_progress_is_one_moving_bar_with_the_validation_ap(tiny_model_dir, tiny_splits, tmp_path, capfd):
    train, valid, _ = tiny_splits
    backend = tiny(tiny_model_dir, mode="frozen", epochs=30, progress=True).fit(train, valid)
    lines = [line for line in re.split(r"[\r\n]", capfd.readouterr().err) if line.strip()]
    assert any("30/30" in line and "valid AP" in line for line in lines), lines[-3:]
    assert all("features" in line or "head epochs" in line for line in lines), "only our two bars"
    assert sum("head epochs" in line for line in lines) < 40, "one bar over epochs, not one bar per epoch"
    backend.save(tmp_path)
    assert capfd.readouterr().err == "", "library bars (Writing model shards) in a measured run"


def test_small_data_budget_never_exceeds_the_data_and_reaches_the_minimum_steps():
    assert small_data_budget(3901, 32, 3, 100) == (32, 3)  # the full split: unchanged
    for n in (1, 7, 20, 50, 100, 200, 500):
        for epochs in (1, 3, 30):
            batch, planned = small_data_budget(n, 32, epochs, 100)
            assert 1 <= batch <= min(32, n) and planned >= epochs
            assert planned * -(-n // batch) >= 100, (n, epochs, batch, planned)
    assert small_data_budget(50, 32, 3, 0) == (32, 3)


@pytest.mark.parametrize("mode", ["frozen", "full"])
def test_fifty_training_messages_get_enough_steps_and_validation_chooses(mode, tiny_model_dir, tiny_splits):
    train, valid, test = tiny_splits
    rng = np.random.default_rng(0)
    spam, ham = np.flatnonzero(train.labels == 1), np.flatnonzero(train.labels == 0)
    chosen = np.concatenate([rng.choice(spam, 10, replace=False), rng.choice(ham, 40, replace=False)])
    small = train.subset(np.sort(chosen))
    backend = tiny(tiny_model_dir, mode=mode, epochs=2, batch_size=64, min_steps=20).fit(small, valid)
    info = backend.fit_info_
    assert info["batch_size"] <= 50 and info["epochs_run"] * -(-50 // info["batch_size"]) >= 20
    scores = [row["valid_average_precision"] for row in info["history"]]
    assert len(scores) == info["epochs_run"] > 2 and np.isfinite(scores).all()
    assert info["best_epoch"] == 1 + int(np.argmax(scores))
    proba = backend.predict_proba(test.texts)
    assert np.isfinite(proba).all() and valid_ap(backend, valid) == pytest.approx(max(scores), abs=1e-9)


@pytest.mark.parametrize("mode", ["frozen", "full"])
def test_validation_of_one_class_is_a_clear_error(mode, tiny_model_dir, tiny_splits):
    train, valid, _ = tiny_splits
    one_class = valid.subset(np.flatnonzero(valid.labels == 0))
    with pytest.raises(UnusableValidationError, match="at least two classes"):
        tiny(tiny_model_dir, mode=mode).fit(train, one_class)


@pytest.mark.parametrize("mode", ["frozen", "full"])
def test_diverged_training_is_a_clear_error_not_a_crash(mode, tiny_model_dir, tiny_splits):
    train, valid, _ = tiny_splits
    rate = {"learning_rate": 1e38} if mode == "full" else {"head_learning_rate": 1e38}
    with pytest.raises(UnusableValidationError, match="no epoch had a finite validation score"):
        tiny(tiny_model_dir, mode=mode, **rate).fit(train, valid)


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


def test_shipped_minilm_fine_tunes_offline(tiny_splits, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    train, valid, test = tiny_splits
    backend = HfBertBackend(mode="full", epochs=1, min_steps=0, progress=False, device="cpu",
                            choose_on="validation").fit(train, valid)  # one epoch: the fixed schedule has its own test
    proba = backend.predict_proba(test.texts)
    assert proba.shape == (len(test), 2) and np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    count = backend.param_count()
    assert count.trainable == count.total > 22_000_000  # MiniLM-L6: about 22.7 million weights
    assert backend.fit_info_["model"] == "all-MiniLM-L6-v2" and backend.fit_info_["epochs_run"] == 1


@pytest.mark.skipif(not bf16_native("cpu"), reason="this CPU does not multiply bf16 natively (no AVX512-BF16/AMX)")
@pytest.mark.parametrize("mode", ["frozen", "full"])
def test_bf16_gives_finite_probabilities_and_keeps_padding_invariance(mode, tiny_model_dir, tiny_splits):
    """bf16 autocast (fp32 weights): probabilities finite, rows sum to 1, float64; padding moves them by
    at most 5e-3 (bf16 keeps 8 bits of mantissa, and padded batches take other kernel blockings)."""
    train, valid, test = tiny_splits
    backend = tiny(tiny_model_dir, mode=mode, epochs=1, precision="bf16").fit(train, valid)
    assert backend.fit_info_["precision"] == "bf16"
    trained = backend.model_ if mode == "full" else backend.head_
    assert all(p.dtype == torch.float32 for p in trained.parameters()), "master weights stay fp32"
    batched = backend.predict_proba(test.texts)
    assert batched.dtype == np.float64 and np.isfinite(batched).all()
    np.testing.assert_allclose(batched.sum(axis=1), 1.0, atol=1e-9)
    one_by_one = np.vstack([backend.predict_proba([text]) for text in test.texts])
    np.testing.assert_allclose(batched, one_by_one, atol=BF16_PADDING_TOLERANCE)


def test_frozen_default_is_a_logistic_regression_on_normalised_features_chosen_by_inner_cv(tiny_model_dir,
                                                                                          tiny_splits, tmp_path):
    """The compared frozen variant: L2-normalised masked mean, LogisticRegression with C by inner CV on the
    whole budget, copied into the linear head; the threshold from out-of-fold predictions; save and load agree."""
    from common.scoring import score_fitted

    train, valid, test = tiny_splits
    backend = tiny(tiny_model_dir, mode="frozen", head="logreg", choose_on="auto").fit(train, valid)
    selection = backend.selection_
    assert selection.rule == "inner_cv" and backend.head_.normalize
    assert selection.proba.shape == (len(train) + len(valid), train.n_classes)
    assert backend.fit_info_["selection"]["chosen"] in [c["candidate"] for c in selection.candidates]
    scored = score_fitted(backend, valid, test, 1)
    assert "out-of-fold" in scored.threshold_rule
    backend.save(tmp_path)
    loaded = HfBertBackend.load(tmp_path, device="cpu")
    assert loaded.head_.normalize
    assert np.abs(loaded.predict_proba(test.texts) - backend.predict_proba(test.texts)).max() < 1e-6


def test_full_mode_on_a_small_budget_follows_the_fixed_schedule_on_every_label(tiny_model_dir, tiny_splits):
    """Validation too small to choose: the whole budget, a fixed number of steps, the last kept, arg-max decisions."""
    from common.scoring import score_fitted
    from common.small_budget import FIXED_SCHEDULE_RULE

    train, valid, test = tiny_splits
    backend = tiny(tiny_model_dir, mode="full", choose_on="auto", small_budget_steps=20).fit(train, valid)
    assert backend.selection_.rule == "fixed_schedule" and backend.fit_info_["best_epoch"] is None
    chosen = backend.selection_.chosen
    assert chosen["steps"] >= 20 and backend.fit_info_["history"][-1]["steps"] == chosen["steps"]
    assert backend.fit_info_["epochs_run"] == backend.fit_info_["history"][-1]["epoch"] > 1  # every epoch counted
    scored = score_fitted(backend, valid, test, 1)
    assert scored.threshold == 0.5 and scored.threshold_rule == FIXED_SCHEDULE_RULE
    assert scored.valid["average_precision"] is None
    with_validation = tiny(tiny_model_dir, mode="full", choose_on="validation", epochs=1).fit(train, valid)
    assert with_validation.selection_.rule == "validation" and with_validation.fit_info_["best_epoch"] == 1
