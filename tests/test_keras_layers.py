"""keras_layers: twin of torch_scratch (parameters, logits, start, one step, one epoch), model.fit, padding, saving."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

keras = pytest.importorskip("keras")
torch = pytest.importorskip("torch")

from backends.keras_layers import KerasLayersBackend, build_keras_model  # noqa: E402
from backends.keras_layers.parity import load_state, torch_state  # noqa: E402
from backends.keras_layers.training import (  # noqa: E402
    BestValidationAP,
    SharedOrderBatches,
    WarmupLinearDecay,
    full_batch,
    make_optimizer,
)
from backends.torch_scratch import TorchScratchBackend  # noqa: E402
from backends.torch_scratch.backend import warmup_then_linear_decay  # noqa: E402
from backends.torch_scratch.encoder import build_model  # noqa: E402
from common.initial_weights import initial_state  # noqa: E402
from common.config import EncoderConfig  # noqa: E402
from common.vocabulary import Vocabulary  # noqa: E402
from tests.backend_contract import check_backend_contract  # noqa: E402


def copy_torch_weights(torch_model, keras_model) -> None:
    """Assign every torch parameter to its Keras twin (the parity tests below; the backend itself loads the shared
    initial state through parity.load_state)."""
    n_torch = sum(1 for _ in torch_model.parameters())
    state = torch_state(torch_model)
    assert len(state) == n_torch, f"torch state holds {len(state)} arrays for {n_torch} parameters"
    load_state(keras_model, state, torch_model.config)


ROOT = Path(__file__).resolve().parents[1]
TINY = dict(d_model=16, num_heads=2, num_layers=1, ff_dim=32, max_len=24, epochs=2, batch_size=16, min_steps=0)
VARIANTS = [  # (norm, positional, pooling)
    ("pre", "learned", "mean"), ("post", "sinusoidal", "mean"), ("pre", "sinusoidal", "cls"), ("post", "learned", "cls"),
]


def tiny_config(norm="pre", positional="learned", pooling="mean", **overrides) -> EncoderConfig:
    values = {**TINY, "vocab_size": 300, "num_layers": 2, "norm": norm, "positional": positional, "pooling": pooling}
    return EncoderConfig(**{**values, **overrides})


@pytest.fixture(scope="module")
def sms_ids(tiny_splits):
    """Real SMS test texts as shared-vocabulary ids (B, 24), right-padded; plus all-pad and all-unk rows."""
    train, _, test = tiny_splits
    vocabulary = Vocabulary.fit(train.texts, min_count=1, max_size=298)
    ids = vocabulary.encode(test.texts[:8], 24)
    assert (ids == 0).any() and (ids != 0).sum(axis=1).min() > 0, "want real texts with padding"
    extra = np.array([[0] * 24, [1] * 5 + [0] * 19])  # empty text; a text with no known token
    return np.concatenate([ids, extra]).astype("int64")


def perturbed_torch_model(config: EncoderConfig):
    """A torch_scratch model in eval mode with every parameter moved off its initial value."""
    torch.manual_seed(0)
    model = build_model(config)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.2 * torch.randn_like(parameter))
    return model.eval()


def keras_logits(model, ids) -> np.ndarray:
    return keras.ops.convert_to_numpy(model(np.asarray(ids, dtype="int32"), training=False))


@pytest.mark.parametrize("pooling", ["mean", "cls"])
@pytest.mark.parametrize("positional", ["learned", "sinusoidal"])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_same_config_gives_the_same_parameter_count_as_torch(norm, positional, pooling):
    config = tiny_config(norm, positional, pooling)
    torch_model, keras_model = build_model(config), build_keras_model(config)
    torch_total = sum(p.numel() for p in torch_model.parameters())
    torch_trainable = sum(p.numel() for p in torch_model.parameters() if p.requires_grad)
    keras_trainable = sum(int(np.prod(w.shape)) for w in keras_model.trainable_weights)
    assert keras_model.count_params() == torch_total
    assert keras_trainable == torch_trainable
    # per-head width d_model // num_heads: the four attention projections hold 4 (d^2 + d) weights
    attention = keras_model.get_layer("block_0").attn
    assert sum(int(np.prod(w.shape)) for w in attention.weights) == 4 * (config.d_model ** 2 + config.d_model)


@pytest.mark.parametrize("norm, positional, pooling", VARIANTS)
def test_weights_copied_from_torch_give_the_same_logits(norm, positional, pooling, sms_ids):
    config = tiny_config(norm, positional, pooling)
    torch_model = perturbed_torch_model(config)
    keras_model = build_keras_model(config)
    copy_torch_weights(torch_model, keras_model)
    with torch.no_grad():
        expected = torch_model(torch.as_tensor(sms_ids)).numpy()
    got = keras_logits(keras_model, sms_ids)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, atol=1e-4, rtol=0)
    assert np.abs(expected[:-2] - expected[:-2].mean(axis=0)).max() > 1e-2, "logits must differ between texts"


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_padding_and_neighbours_do_not_move_the_logits(pooling, sms_ids):
    config = tiny_config(pooling=pooling)
    keras_model = build_keras_model(config)
    copy_torch_weights(perturbed_torch_model(config), keras_model)  # non-trivial weights
    texts = sms_ids[:-2]
    lengths = (texts != 0).sum(axis=1)
    together = keras_logits(keras_model, texts)  # (8, C), padded to 24
    for row, length in enumerate(lengths):
        alone_trimmed = keras_logits(keras_model, texts[row : row + 1, :length])
        alone_padded = keras_logits(keras_model, texts[row : row + 1])
        reversed_neighbours = keras_logits(keras_model, texts[::-1])[len(texts) - 1 - row]
        for other in (alone_trimmed[0], alone_padded[0], reversed_neighbours):
            np.testing.assert_allclose(other, together[row], atol=1e-5, rtol=0)
    # and the padding really is ignored: giving the <pad> embedding a large value changes nothing
    table = keras_model.get_layer("embedding").token_embedding.embeddings
    table.assign(np.concatenate([np.full((1, config.d_model), 5.0, "float32"), keras.ops.convert_to_numpy(table)[1:]]))
    np.testing.assert_allclose(keras_logits(keras_model, texts), together, atol=1e-5, rtol=0)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_empty_and_all_unknown_texts_give_finite_logits(pooling):
    keras_model = build_keras_model(tiny_config(pooling=pooling, dropout=0.0))  # dropout 0: fused attention path
    ids = np.array([[0] * 10, [1] * 10, [1] + [0] * 9])
    logits = keras_logits(keras_model, ids)
    assert logits.shape == (3, 2) and np.isfinite(logits).all()


def test_schedule_and_one_training_step_match_torch(sms_ids):
    """Same schedule factors; AdamW, clipping, decay rules and padded-row loss give torch's step."""
    factor = warmup_then_linear_decay(20, 0.1)
    schedule = WarmupLinearDecay(1.0, 20, max(1, round(0.1 * 20)))
    for step in range(22):
        assert float(keras.ops.convert_to_numpy(schedule(step))) == pytest.approx(factor(step), abs=1e-7)

    config = tiny_config(dropout=0.0, learning_rate=1e-2, clip_norm=0.5, weight_decay=1.0, warmup_fraction=0.5)
    ids, labels = sms_ids[:6], np.array([0, 1, 0, 1, 1, 0])
    torch_model = perturbed_torch_model(config).train()
    keras_model = build_keras_model(config)
    copy_torch_weights(torch_model, keras_model)
    before = [keras.ops.convert_to_numpy(w).copy() for w in keras_model.weights]
    optimizer = make_optimizer(keras_model, config, total_steps=4)  # the production optimizer, unpatched
    # built before any traced step: slots made inside the first one made TensorFlow trace every fit's step twice
    assert optimizer.built and len(optimizer.variables) > 2 * len(keras_model.trainable_weights)
    keras_model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction="mean_with_sample_weight"))
    batch_ids, batch_labels, weights = full_batch(ids.astype("int32"), labels.astype("int32"), 8)
    keras_model.train_on_batch(batch_ids, batch_labels, sample_weight=weights)  # 2 padding rows of weight 0

    decay = [p for p in torch_model.parameters() if p.dim() >= 2]
    no_decay = [p for p in torch_model.parameters() if p.dim() < 2]
    torch_optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                         {"params": no_decay, "weight_decay": 0.0}], lr=config.learning_rate)
    torch.optim.lr_scheduler.LambdaLR(torch_optimizer, warmup_then_linear_decay(4, config.warmup_fraction))
    loss = torch.nn.functional.cross_entropy(torch_model(torch.as_tensor(ids)), torch.as_tensor(labels))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(torch_model.parameters(), config.clip_norm)
    torch_optimizer.step()

    after_torch = build_keras_model(config)  # a fresh twin to hold torch's updated weights
    copy_torch_weights(torch_model.eval(), after_torch)
    for mine, theirs, start in zip(keras_model.weights, after_torch.weights, before):
        if mine.path.endswith("key/bias"):
            continue  # its true gradient is 0 (softmax ignores a shift per query); Adam magnifies float noise
        mine, theirs = keras.ops.convert_to_numpy(mine), keras.ops.convert_to_numpy(theirs)
        assert np.abs(theirs - start).max() > 1e-3, "the step must really move every weight"
        np.testing.assert_allclose(mine, theirs, atol=2e-6, rtol=0)


def test_clipped_steps_after_the_first_match_torch(sms_ids):
    """Three clipped steps: Keras clips by torch's global norm, repeated tokens included.

    On TensorFlow an embedding's gradient is sparse, one row per token occurrence; clipping by the
    norm of those rows (repeats not summed) scales each step differently from torch. Adam's first
    step is blind to the scale (m / sqrt(v) is the sign), so one step cannot show it; later ones do.
    """
    config = tiny_config(dropout=0.0, learning_rate=1e-2, clip_norm=0.05, weight_decay=0.1, warmup_fraction=0.5)
    labels = np.array([0, 1, 0, 1, 1, 0, 1, 0, 0, 1])
    batches = [np.arange(0, 6), np.arange(4, 10), np.array([0, 2, 4, 6, 8, 9])]  # rows 8, 9: empty, all <unk>
    torch_model = perturbed_torch_model(config).train()
    keras_model = build_keras_model(config)
    copy_torch_weights(torch_model, keras_model)
    keras_model.compile(optimizer=make_optimizer(keras_model, config, total_steps=6), loss=keras.losses.
                        SparseCategoricalCrossentropy(from_logits=True, reduction="mean_with_sample_weight"))
    decay = [p for p in torch_model.parameters() if p.dim() >= 2]
    no_decay = [p for p in torch_model.parameters() if p.dim() < 2]
    torch_optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                         {"params": no_decay, "weight_decay": 0.0}], lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(torch_optimizer, warmup_then_linear_decay(6, config.warmup_fraction))
    norms = []
    for rows in batches:
        ids, batch_labels, weights = full_batch(sms_ids[rows].astype("int32"), labels[rows].astype("int32"), 8)
        keras_model.train_on_batch(ids, batch_labels, sample_weight=weights)  # padded rows of weight 0
        loss = torch.nn.functional.cross_entropy(torch_model(torch.as_tensor(sms_ids[rows])),
                                                 torch.as_tensor(labels[rows]))
        torch_optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(torch_model.parameters(), config.clip_norm)))
        torch_optimizer.step()
        schedule.step()
    assert min(norms) > 2 * config.clip_norm, f"every step must be clipped: {norms}"

    after_torch = build_keras_model(config)
    copy_torch_weights(torch_model.eval(), after_torch)
    for mine, theirs in zip(keras_model.weights, after_torch.weights):
        if mine.path.endswith("key/bias"):
            continue  # true gradient 0: Adam magnifies float noise (see the one-step test)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(mine), keras.ops.convert_to_numpy(theirs),
                                   atol=2e-5, rtol=0, err_msg=mine.path)  # 3e-6 measured; 3e-4 unfixed


@pytest.mark.parametrize("norm, positional, pooling", VARIANTS[:2] + VARIANTS[3:])
def test_same_seed_gives_both_twins_the_same_initial_logits(norm, positional, pooling, sms_ids):
    config = tiny_config(norm, positional, pooling)
    torch_model = build_model(config, seed=11).eval()  # common.initial_weights, loaded by name
    keras_model = build_keras_model(config)
    load_state(keras_model, initial_state(config, 11), config)  # the same arrays through the parity map
    with torch.no_grad():
        expected = torch_model(torch.as_tensor(sms_ids)).numpy()
    np.testing.assert_allclose(keras_logits(keras_model, sms_ids), expected, atol=1e-5, rtol=0)
    other = build_model(config, seed=12).eval()
    with torch.no_grad():
        assert np.abs(other(torch.as_tensor(sms_ids)).numpy() - expected).max() > 1e-5, "seeds must differ"


def test_twins_train_alike_over_a_whole_epoch(tiny_splits):
    """Dropout 0: same start, same batches, same optimizer -> same epoch loss and validation AP (1e-4).

    With the recipe's subword tokenizer: both read the one vocabulary trained for these texts."""
    train, valid, test = tiny_splits
    config = {**TINY, "num_layers": 2, "dropout": 0.0, "epochs": 1}
    twins = [make(config=config, seed=5, tokenizer="subword", progress=False).fit(train, valid)
             for make in (TorchScratchBackend, KerasLayersBackend)]
    assert twins[0].fit_info_["vocabulary_sha256"] == twins[1].fit_info_["vocabulary_sha256"]
    assert twins[0].fit_info_["vocab_size"] == twins[1].fit_info_["vocab_size"]
    (torch_epoch,), (keras_epoch,) = (twin.fit_info_["history"] for twin in twins)
    assert torch_epoch["train_loss"] == pytest.approx(keras_epoch["train_loss"], abs=1e-4)
    assert torch_epoch["valid_average_precision"] == pytest.approx(keras_epoch["valid_average_precision"], abs=1e-4)
    assert twins[0].fit_info_["batch_size"] == twins[1].fit_info_["batch_size"]
    np.testing.assert_allclose(twins[1].predict_proba(test.texts), twins[0].predict_proba(test.texts), atol=1e-3)


def test_keras_fit_goes_through_model_fit_and_restores_the_best_epoch(tiny_splits, monkeypatch):
    """Validation scores scripted 0.5, 0.9, 0.7: the weights kept are epoch 2's, not the last epoch's."""
    train, valid, _ = tiny_splits
    scripted, per_epoch, seen = iter([0.5, 0.9, 0.7]), {}, {}

    class Recorder(keras.callbacks.Callback):  # runs before BestValidationAP's on_train_end
        def on_epoch_end(self, epoch, logs=None):
            per_epoch[epoch + 1] = [np.array(w) for w in self.model.get_weights()]

    original_fit = keras.Model.fit

    def spying_fit(model, data, **kwargs):
        seen["data"], seen["callbacks"] = data, kwargs["callbacks"]
        return original_fit(model, data, **{**kwargs, "callbacks": [Recorder(), *kwargs["callbacks"]]})

    monkeypatch.setattr(keras.Model, "fit", spying_fit)
    monkeypatch.setattr("backends.keras_layers.backend.validation_average_precision", lambda *a: next(scripted))
    backend = KerasLayersBackend(config={**TINY, "epochs": 3}, seed=0, choose_on="validation",
                                 progress=False).fit(train, valid)
    assert isinstance(seen["data"], SharedOrderBatches)
    assert any(isinstance(c, BestValidationAP) for c in seen["callbacks"])
    assert backend.fit_info_["best_epoch"] == 2 and backend.fit_info_["epochs_run"] == 3
    kept = [np.array(w) for w in backend.model_.get_weights()]
    assert all(np.array_equal(k, w) for k, w in zip(kept, per_epoch[2])), "the best epoch's weights are kept"
    assert any(not np.array_equal(k, w) for k, w in zip(kept, per_epoch[3]))
    # every step of epoch e drew epoch e's batches, in order (the first calls only let Keras read the shapes)
    steps = len(seen["data"])
    assert seen["data"].served[-3 * steps:] == [(e, i) for e in (1, 2, 3) for i in range(steps)]


@pytest.mark.parametrize("make", [TorchScratchBackend, KerasLayersBackend], ids=["torch", "keras"])
def test_scratch_twins_fit_on_fifty_messages(make, tiny_data):
    """50 stratified training messages: the budget grows (min_steps 40 here, to stay fast), the batch shrinks,
    the output stays finite and the vocabulary comes from those 50 messages only."""
    from common.splits import stratified_split

    split = stratified_split(tiny_data)
    train_all, valid, test = (tiny_data.subset(getattr(split, name)) for name in ("train", "valid", "test"))
    labels = np.asarray(train_all.labels)
    keep = np.concatenate([np.flatnonzero(labels == c)[:25] for c in (0, 1)])
    train = train_all.subset(keep)
    config = {key: TINY[key] for key in ("d_model", "num_heads", "num_layers", "ff_dim", "max_len")}
    backend = make(config={**config, "min_steps": 40}, seed=0, choose_on="validation", progress=False).fit(train, valid)
    info = backend.fit_info_
    assert info["train_rows"] == 50 and info["batch_size"] <= 50 and info["epochs_planned"] > 3  # 3 configured
    assert info["epochs_planned"] * info["steps_per_epoch"] >= 40
    assert all(math.isfinite(h["train_loss"]) for h in info["history"])
    seen = {token for text in train.texts for token in backend.vocabulary_.tokenize(text)}
    assert set(backend.vocabulary_.itos[2:]) <= seen, "the vocabulary comes from the 50 messages only"
    proba = backend.predict_proba(test.texts)
    assert np.isfinite(proba).all() and proba.shape == (len(test), 2)


@pytest.mark.parametrize("make", [TorchScratchBackend, KerasLayersBackend], ids=["torch", "keras"])
def test_scratch_twins_follow_the_fixed_schedule_below_the_small_budget_rule(make, tiny_splits):
    """Validation with fewer than 10 spam cannot choose (common/small_budget.py): the twins train on training
    and validation texts together for every planned epoch and keep the last; validation chooses again when asked."""
    from common.errors import UserInputError
    from common.small_budget import validation_can_choose

    train, valid, test = tiny_splits
    assert not validation_can_choose(valid.labels, 2), "the tiny split's validation part is below the rule"
    config = {key: TINY[key] for key in ("d_model", "num_heads", "num_layers", "ff_dim", "max_len")}
    fixed = make(config={**config, "epochs": 3}, seed=0, progress=False).fit(train, valid)
    info = fixed.fit_info_
    assert fixed.selection_.rule == "fixed_schedule" and info["selection"]["rule"] == "fixed_schedule"
    assert info["train_rows"] == len(train) + len(valid)
    assert info["best_epoch"] is None and info["epochs_run"] == info["epochs_planned"]
    assert all(row["valid_average_precision"] is None for row in info["history"])
    assert fixed.selection_.chosen["steps"] == info["epochs_planned"] * info["steps_per_epoch"]
    chosen = make(config={**config, "epochs": 3}, seed=0, choose_on="validation", progress=False).fit(train, valid)
    assert chosen.selection_.rule == "validation" and chosen.fit_info_["train_rows"] == len(train)
    with pytest.raises(UserInputError, match="choose_on"):
        make(config=config, choose_on="test").fit(train, valid)


def test_saved_keras_file_loads_with_custom_layers(tmp_path, sms_ids):
    config = tiny_config(pooling="cls", positional="sinusoidal")
    model = build_keras_model(config)
    copy_torch_weights(perturbed_torch_model(config), model)
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    np.testing.assert_array_equal(keras_logits(loaded, sms_ids), keras_logits(model, sms_ids))


@pytest.fixture(scope="module")
def fitted(tiny_splits):
    return KerasLayersBackend(config=TINY, seed=0, choose_on="validation", progress=False).fit(*tiny_splits[:2])


def test_backend_passes_the_contract(tiny_splits, tmp_path):
    check_backend_contract(lambda seed: KerasLayersBackend(config=TINY, seed=seed, progress=False),
                           tiny_splits, tmp_path)


def test_backend_save_load_and_fit_info(fitted, tiny_splits, tmp_path):
    test = tiny_splits[2]
    info = fitted.fit_info_
    assert info["epochs_run"] == 2 and 1 <= info["best_epoch"] <= 2 and info["device"].startswith(("cpu", "gpu"))
    assert [h["epoch"] for h in info["history"]] == [1, 2]
    assert all(math.isfinite(h["train_loss"]) and 0 <= h["valid_average_precision"] <= 1 for h in info["history"])
    saved = fitted.save(tmp_path / "keras")
    assert (saved / "model.keras").exists() and (saved / "vocabulary.json").exists()
    assert json.loads((saved / "config.json").read_text())["encoder_config"]["d_model"] == TINY["d_model"]
    loaded = KerasLayersBackend.load(saved)
    assert getattr(loaded.model_, "optimizer", None) is None, "model.keras holds the inference model only"
    np.testing.assert_allclose(loaded.predict_proba(test.texts), fitted.predict_proba(test.texts), atol=1e-6)
    assert loaded.param_count() == fitted.param_count()


def test_textvectorization_route_fits_saves_and_loads(tiny_splits, tmp_path):
    train, valid, test = tiny_splits
    backend = KerasLayersBackend(config={**TINY, "epochs": 1}, vectorizer="textvectorization", progress=False)
    proba = backend.fit(train, valid).predict_proba(test.texts + ["", "zzqxv"])
    assert proba.shape == (len(test) + 2, 2) and np.isfinite(proba).all()
    assert backend.fit_info_["vocab_size"] == backend.text_vectorization_.vocabulary_size() > 2
    loaded = KerasLayersBackend.load(backend.save(tmp_path / "tv"))
    np.testing.assert_allclose(loaded.predict_proba(test.texts + ["", "zzqxv"]), proba, atol=1e-6)


def test_bad_settings_raise_user_input_errors(tiny_splits, fitted):
    from common.errors import UserInputError

    train, valid, _ = tiny_splits
    with pytest.raises(UserInputError, match="vectorizer"):
        KerasLayersBackend(vectorizer="bpe").fit(train, valid)
    with pytest.raises(UserInputError, match="unknown encoder setting"):
        KerasLayersBackend(config={"d_modle": 8}).fit(train, valid)
    with pytest.raises(UserInputError, match="list of texts"):
        fitted.predict_proba("one string")


TORCH_BACKEND_CHECK = """
import sys, numpy as np, keras, torch
assert keras.backend.backend() == "torch"
from common.config import EncoderConfig
from backends.keras_layers.model import build_keras_model
from backends.keras_layers.parity import load_state, torch_state
from backends.torch_scratch.encoder import build_model
config = EncoderConfig(vocab_size=50, d_model=16, num_heads=2, num_layers=1, ff_dim=32, max_len=12, pooling="cls")
torch.manual_seed(0)
torch_model = build_model(config).eval()
keras_model = build_keras_model(config)
load_state(keras_model, torch_state(torch_model), config)
ids = np.array([[5, 6, 7, 0, 0], [0, 0, 0, 0, 0], [1, 1, 0, 0, 0]])
with torch.no_grad():
    expected = torch_model(torch.as_tensor(ids)).numpy()
got = keras.ops.convert_to_numpy(keras_model.predict_on_batch(ids.astype("int32")))
assert np.isfinite(got).all() and np.abs(got - expected).max() < 1e-4, (got, expected)

from backends.keras_layers import KerasLayersBackend
from common.datasets import DataSpec, load
from common.splits import stratified_split
data = load(DataSpec(limit_per_class=20))
split = stratified_split(data)
train, valid, test = (data.subset(getattr(split, name)) for name in ("train", "valid", "test"))
backend = KerasLayersBackend(config={"d_model": 8, "num_heads": 2, "num_layers": 1, "ff_dim": 16, "max_len": 16,
                                     "epochs": 1, "min_steps": 0}, progress=False).fit(train, valid)
proba = backend.predict_proba(test.texts + [""])
assert backend.fit_info_["keras_backend"] == "torch" and np.isfinite(proba).all(), proba
print("ok")
"""

NO_TORCH_CHECK = """
import sys
import backends.keras_layers
assert "torch" not in sys.modules, "keras_layers imported torch under KERAS_BACKEND=tensorflow"
print("ok")
"""


@pytest.mark.parametrize("keras_backend, script", [("torch", TORCH_BACKEND_CHECK), ("tensorflow", NO_TORCH_CHECK)])
def test_keras_backend_subprocess(keras_backend, script):
    """KERAS_BACKEND=torch gives torch's logits; KERAS_BACKEND=tensorflow never imports torch."""
    env = {**os.environ, "KERAS_BACKEND": keras_backend, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-2000:]


def test_bf16_trains_under_the_mixed_policy_with_fp32_weights_and_restores_the_global_policy(tiny_splits, tmp_path):
    """--precision bf16 for keras_layers: Keras's mixed_bfloat16 (bf16 compute, fp32 variables), finite
    probabilities that sum to 1, the policy saved with the model, and the process's policy left as it was."""
    import keras

    train, valid, test = tiny_splits
    backend = KerasLayersBackend(config={**TINY, "epochs": 1}, seed=0, precision="bf16", progress=False).fit(train, valid)
    assert keras.config.dtype_policy().name == "float32"
    assert backend.fit_info_["precision"] == "bf16"
    assert backend.model_.get_layer("head").compute_dtype == "bfloat16"
    assert {w.dtype for w in backend.model_.weights} == {"float32"}
    proba = backend.predict_proba(test.texts)
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)
    loaded = KerasLayersBackend.load(backend.save(tmp_path / "saved"))
    assert loaded.precision_ == "bf16" and loaded.model_.get_layer("head").compute_dtype == "bfloat16"
    np.testing.assert_allclose(loaded.predict_proba(test.texts), proba, atol=1e-6)
