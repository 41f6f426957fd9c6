"""Chinese text handling: the subword vocabulary splits CJK characters (a no-op on text
without them), jieba words as a vocabulary option, and a one-line error without jieba."""
import pytest
from tokenizers import pre_tokenizers

from common.errors import UserInputError
from common.subword import SubwordVocabulary, _untrained_tokenizer
from common.vocabulary import fit_vocabulary, load_vocabulary

TRAINING = ["这家酒店服务很好", "房间很干净，服务也好", "酒店太差了，不会再来", "服务很差，房间很脏",
            "the hotel was great", "the room was clean and great"] * 2
RUN_OF_20 = "这家酒店服务很好房间很干净服务也好再来吧"  # 20 Han characters, no space, no punctuation


def test_a_run_of_han_characters_is_read_character_by_character():
    vocabulary = SubwordVocabulary.fit(TRAINING)
    assert len(RUN_OF_20) == 20
    seen = set("".join(TRAINING))
    assert [c for c in RUN_OF_20 if c not in seen] == ["吧"]  # one character training never saw
    # before the CJK split the run was one word, and one unseen character made all of it a single <unk>
    assert vocabulary.tokenize(RUN_OF_20) == [c if c in seen else "<unk>" for c in RUN_OF_20]
    assert vocabulary.tokenize("酒店great") == ["酒", "店", "great"]
    assert _untrained_tokenizer().pre_tokenizer.pre_tokenize_str("好a好") == [("好a好", (0, 3))]  # lone: kept


def test_the_cjk_split_changes_nothing_on_text_without_a_run_of_cjk():
    # the SMS data's one ideograph is mojibake glued to a symbol: it stays in its word, the vocabulary unchanged
    english = ["FREE entry in 2 a wkly comp to win", "Ok lar... Joking wif u oni", "U dun say so early hor",
               "I don鈥┾t know"] * 3
    without = _untrained_tokenizer()
    without.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.BertPreTokenizer(), pre_tokenizers.Digits(individual_digits=False)])
    for text in english:
        normalised = without.normalizer.normalize_str(text)
        assert (_untrained_tokenizer().pre_tokenizer.pre_tokenize_str(normalised)
                == without.pre_tokenizer.pre_tokenize_str(normalised))


def test_jieba_words_as_a_vocabulary(tmp_path):
    pytest.importorskip("jieba")
    vocabulary = fit_vocabulary("jieba", TRAINING, min_count=2)
    assert vocabulary.tokenize("这家酒店服务很好") == ["这家", "酒店", "服务", "很", "好"]
    assert "酒店" in vocabulary.stoi and "酒" not in vocabulary.stoi  # words, not characters
    assert vocabulary.tokenize("the hotel was great!") == ["the", "hotel", "was", "great", "!"]
    vocabulary.save(tmp_path / "v.json")
    again = load_vocabulary(tmp_path / "v.json")
    assert again.kind == "jieba" and again.itos == vocabulary.itos
    assert (again.encode(["这家酒店服务很好"], 8) == vocabulary.encode(["这家酒店服务很好"], 8)).all()


def test_without_jieba_one_line_naming_the_install(monkeypatch):
    import common.segmentation as segmentation

    segmentation._segmenter.cache_clear()
    monkeypatch.setattr(segmentation, "jieba_available", lambda: False)
    with pytest.raises(UserInputError, match=r"^jieba word segmentation needs the package jieba: pip install") as caught:
        segmentation.jieba_words("酒店")
    assert "\n" not in str(caught.value)
    segmentation._segmenter.cache_clear()
