"""common/subword.py: the WordPiece option is fitted on the training texts only, ids as the regex vocabulary."""
import numpy as np
import pytest

from common.subword import SubwordVocabulary
from common.vocabulary import PAD_ID, UNK_ID, fit_vocabulary, load_vocabulary, trim_padding, vocabulary_sha256

TEST_ONLY = "zyxquv"  # a made-up word that only the test texts hold


def pieces_are_from(vocabulary, texts) -> list[str]:
    """Pieces (past the specials and the one-character alphabet) not found in any normalised text."""
    normalised = " ".join(vocabulary.tokenizer.normalizer.normalize_str(t) for t in texts)
    return [p for p in vocabulary.itos[2:] if p.removeprefix("##") not in normalised]


def test_subword_vocabulary_is_fitted_on_training_texts_only(tiny_splits):
    train, _, test = tiny_splits
    test_texts = [f"{text} {TEST_ONLY}" for text in test.texts]
    vocabulary = fit_vocabulary("subword", train.texts, min_count=2, max_size=500)
    assert isinstance(vocabulary, SubwordVocabulary) and 50 < len(vocabulary) <= 502
    assert pieces_are_from(vocabulary, train.texts) == [], "every piece comes from the training texts"
    assert not [p for p in vocabulary.itos if p.removeprefix("##") in TEST_ONLY and len(p.removeprefix("##")) > 2]
    # the check above can fail: the same fit with the test texts mixed in learns the test-only word
    leaky = fit_vocabulary("subword", list(train.texts) + test_texts, min_count=2, max_size=500)
    assert pieces_are_from(leaky, train.texts), "a vocabulary fitted on test texts holds pieces train lacks"
    assert TEST_ONLY in leaky.stoi


def test_subword_ids_padding_and_round_trip(tiny_splits, tmp_path):
    train, _, test = tiny_splits
    vocabulary = fit_vocabulary("subword", train.texts)
    assert vocabulary.itos[PAD_ID] == "<pad>" and vocabulary.itos[UNK_ID] == "<unk>"
    ids = vocabulary.encode(list(test.texts[:5]) + ["", "\u2603"], max_len=12)  # a snowman: not in the alphabet
    assert ids.shape == (7, 12) and ids.dtype == np.int64
    assert (ids[5] == PAD_ID).all() and ids[6, 0] == UNK_ID and (ids[6, 1:] == PAD_ID).all()
    assert trim_padding(ids).shape[1] == (ids != PAD_ID).sum(axis=1).max()
    assert trim_padding(ids, multiple=16).shape[1] == 12, "never wider than the batch"
    vocabulary.save(tmp_path / "vocabulary.json")
    loaded = load_vocabulary(tmp_path / "vocabulary.json")
    assert isinstance(loaded, SubwordVocabulary) and loaded.itos == vocabulary.itos
    np.testing.assert_array_equal(loaded.encode(test.texts, 12), vocabulary.encode(test.texts, 12))
    regex = fit_vocabulary("regex", train.texts)
    regex.save(tmp_path / "regex.json")
    assert load_vocabulary(tmp_path / "regex.json").itos == regex.itos


def test_unknown_tokenizer_is_refused():
    from common.errors import UserInputError

    with pytest.raises(UserInputError, match="tokenizer"):
        fit_vocabulary("bpe", ["a b"])


def test_refits_on_the_same_training_texts_give_the_identical_vocabulary(monkeypatch, tmp_path):
    """HF WordPiece training breaks ties in hash-map order (tokenizers#1794); the twins must still
    read identical ids, so a second fit on the same texts reuses the first (and a fresh fit would not)."""
    from common.datasets import load_sms_spam
    from common.splits import stratified_split

    monkeypatch.setenv("AI_COURSE_DATA_DIR", str(tmp_path / "cache"))
    data = load_sms_spam()
    train_texts = list(data.subset(stratified_split(data).train).texts)
    first = fit_vocabulary("subword", train_texts)
    again = fit_vocabulary("subword", train_texts)
    assert again.itos == first.itos and vocabulary_sha256(again) == vocabulary_sha256(first)
    assert len(list((tmp_path / "cache" / "vocabularies").glob("subword-*.json"))) == 1
    other = fit_vocabulary("subword", train_texts[:-1])  # other training texts: a vocabulary of their own
    assert len(list((tmp_path / "cache" / "vocabularies").glob("subword-*.json"))) == 2
    assert isinstance(other, SubwordVocabulary)


def test_the_vocabulary_trained_in_two_fresh_processes_is_identical():
    """WordPiece learned by common/wordpiece_training.py: ties broken by text, not by a process's hash seed."""
    import subprocess
    import sys

    script = ("from common.datasets import load_sms_spam; from common.splits import stratified_split; "
              "from common.subword import SubwordVocabulary; d = load_sms_spam(); s = stratified_split(d); "
              "v = SubwordVocabulary.fit([d.texts[i] for i in s.train], 2, 8000); print(len(v), hash('x')); "
              "print('\\n'.join(v.itos))")
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}) for seed in (1, 2)]
    first, second = (r.stdout.split("\n", 1) for r in runs)
    assert first[0].split()[1] != second[0].split()[1], "the two processes hash differently"
    assert first[1] == second[1] and int(first[0].split()[0]) > 5000
