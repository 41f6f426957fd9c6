"""common/: the seed's split and baseline figures, tokenizer/vocabulary, metrics (redaction: test_redaction.py)."""
import gzip
import hashlib
import zipfile

import numpy as np
import pytest

from backends.base import build
from common.datasets import (SMS_SHIPPED, DataSpec, drop_duplicates, load, load_sms_spam,
                             load_sms_spam_uci, load_table)
from common.errors import UserInputError
from common.metrics import (brier_score, calibration_bins, choose_threshold, classification_metrics,
                            expected_calibration_error)
from common.splits import duplicate_report, stratified_split
from common.vocabulary import PAD_ID, UNK_ID, Vocabulary, tokenize


@pytest.fixture(scope="module")
def sms():
    return load_sms_spam()


def test_shipped_data_and_split_reproduce_the_seed(sms):
    assert len(sms) == 5574 and sms.class_names == ("ham", "spam")
    assert np.bincount(sms.labels).tolist() == [4827, 747]
    split = stratified_split(sms)
    assert split.sizes() == {"train": 3901, "valid": 836, "test": 837}
    assert stratified_split(sms).sha256 == split.sha256
    assert stratified_split(sms, seed=1).sha256 != split.sha256
    assert not set(split.train) & set(split.test) and not set(split.valid) & set(split.test)


def test_tfidf_baseline_reproduces_the_seed_figures(sms):
    split = stratified_split(sms)
    model = build("tfidf_logreg:seed").fit(sms.subset(split.train), sms.subset(split.valid))
    test = sms.subset(split.test)
    metrics = classification_metrics(test.labels, model.predict_proba(test.texts))
    assert round(metrics["accuracy"], 6) == 0.982079
    assert round(metrics["macro_f1"], 6) == 0.961199
    assert round(metrics["average_precision"], 6) == 0.978796


def test_duplicates_are_reported_and_dedup_drops_them(sms):
    report = duplicate_report(sms, stratified_split(sms))
    assert 350 < report["duplicate_rows"] < 450
    assert report["test_rows_whose_text_is_in_train"] > 0
    unique = drop_duplicates(sms)
    assert len(unique) == report["unique_texts"] and len(set(unique.texts)) == len(unique)
    assert duplicate_report(unique, stratified_split(unique))["test_rows_whose_text_is_in_train"] == 0


def test_vocabulary_is_fitted_on_given_texts_only():
    vocab = Vocabulary.fit(["Free entry now!", "free call now", "see you"], min_count=2)
    assert vocab.itos[:2] == ["<pad>", "<unk>"]
    assert set(vocab.itos[2:]) == {"free", "now"}
    ids = vocab.encode(["FREE now unseen", ""], max_len=5)
    assert ids.shape == (2, 5) and ids[0, 2] == UNK_ID and (ids[1] == PAD_ID).all()
    assert tokenize("Don't WIN £100!") == ["don't", "win", "£", "100", "!"]
    assert len(Vocabulary.fit(["a b c d"] * 2, max_size=2)) == 4


def test_vocabulary_round_trips(tmp_path):
    vocab = Vocabulary.fit(["a b a b c"], min_count=1)
    vocab.save(tmp_path / "v.json")
    assert Vocabulary.load(tmp_path / "v.json").itos == vocab.itos


def test_metrics_from_probabilities_and_threshold_on_validation():
    y = np.array([0, 0, 0, 1, 1])
    proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7], [0.45, 0.55]])
    metrics = classification_metrics(y, proba)
    assert metrics["accuracy"] == pytest.approx(0.8)
    assert metrics["confusion_matrix"] == [[2, 1], [0, 2]]
    assert metrics["average_precision"] == pytest.approx(0.8333, abs=1e-3)
    # best F1 keeps 0.55, 0.6 and 0.7: any cut in (0.2, 0.55] decides alike; its middle is 0.375
    assert choose_threshold(y, proba[:, 1])["threshold"] == pytest.approx(0.375)
    separable = choose_threshold(np.array([0, 0, 0, 1, 1]), np.array([0.01, 0.05, 0.1, 0.9, 0.99]))
    assert separable["threshold"] == pytest.approx(0.5) and "middle of its plateau" in separable["rule"]
    floor = choose_threshold(y, proba[:, 1], precision_floor=1.0)
    assert floor["valid_precision"] == 1.0 and floor["threshold"] == pytest.approx(0.7)
    at = classification_metrics(y, proba, threshold=0.65)
    assert at["confusion_matrix"] == [[3, 0], [1, 1]]


def test_multiclass_metrics_use_macro_one_vs_rest():
    y = np.array([0, 1, 2, 2])
    proba = np.eye(3)[y] * 0.7 + 0.1
    metrics = classification_metrics(y, proba, positive_index=None)
    assert metrics["accuracy"] == 1.0 and metrics["average_precision"] == pytest.approx(1.0)


def test_brier_score_is_scikit_learns_and_ece_is_the_hand_computed_one():
    from sklearn.metrics import brier_score_loss

    generator = np.random.default_rng(0)
    labels = generator.integers(0, 2, 200)
    spam = np.clip(labels * 0.6 + generator.uniform(0, 0.4, 200), 0, 1)
    proba = np.column_stack([1 - spam, spam])
    assert brier_score(labels, proba, 1) == pytest.approx(brier_score_loss(labels, spam))
    assert brier_score(1 - labels, proba[:, ::-1], 0) == pytest.approx(brier_score_loss(labels, spam))  # spam first
    three = generator.dirichlet(np.ones(3), 50)
    labels3 = generator.integers(0, 3, 50)
    assert brier_score(labels3, three, None) == pytest.approx(
        brier_score_loss(labels3, three, labels=[0, 1, 2], scale_by_half=False))
    # 10 items, 2 equal-mass bins of 5: scores 0.1 0.1 0.2 0.2 0.3 (1 of 5 positive: |0.2 - 0.18| = 0.02) and
    # 0.6 0.7 0.8 0.9 0.9 (all positive: |1 - 0.78| = 0.22); ECE = 0.5 x 0.02 + 0.5 x 0.22 = 0.12
    spam = np.array([0.9, 0.1, 0.6, 0.2, 0.3, 0.8, 0.1, 0.9, 0.2, 0.7])
    labels = np.array([1, 0, 1, 1, 0, 1, 0, 1, 0, 1])
    proba = np.column_stack([1 - spam, spam])
    points = calibration_bins(labels, proba, 1, bins=2)
    assert points["count"].tolist() == [5, 5]
    assert points["mean_score"] == pytest.approx([0.18, 0.78]) and points["observed"] == pytest.approx([0.2, 1.0])
    assert expected_calibration_error(labels, proba, 1, bins=2) == pytest.approx(0.12)
    # 5 items in 2 bins: 3 and 2, weighted by their share: 3/5 x |1/3 - 0.2| + 2/5 x |1 - 0.8| = 0.16
    spam, labels = np.array([0.1, 0.2, 0.3, 0.8, 0.8]), np.array([0, 1, 0, 1, 1])
    assert expected_calibration_error(labels, np.column_stack([1 - spam, spam]), 1, bins=2) == pytest.approx(0.16)
    # more classes: the top class's probability against being right (0.5 right, 0.7 wrong: one bin, |0.5 - 0.6|)
    three = np.array([[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]])
    assert expected_calibration_error(np.array([0, 1]), three, None, bins=1) == pytest.approx(0.1)
    # a perfectly calibrated score: in each bin the share that came true equals the score
    spam, labels = np.repeat([0.25, 0.75], 4), np.array([1, 0, 0, 0, 1, 1, 1, 0])
    assert expected_calibration_error(labels, np.column_stack([1 - spam, spam]), 1, bins=2) == pytest.approx(0.0)


def test_shipped_file_is_checked_by_sha256(tmp_path, monkeypatch):
    raw = gzip.decompress(SMS_SHIPPED.read_bytes())
    assert hashlib.sha256(raw).hexdigest().startswith("7d039a24")
    changed = tmp_path / "SMSSpamCollection.gz"  # one label flipped in an otherwise intact copy
    changed.write_bytes(gzip.compress(raw.replace(b"ham\t", b"spam\t", 1)))
    import common.datasets as datasets

    monkeypatch.setattr(datasets, "SMS_SHIPPED", changed)
    with pytest.raises(UserInputError, match="sha256"):
        datasets.load_sms_spam()


def _zip_with(member_bytes: bytes, path, member="SMSSpamCollection"):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, member_bytes)


def test_uci_archive_is_read_from_the_cache_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("AI_COURSE_DATA_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir(mode=0o755)
    _zip_with(gzip.decompress(SMS_SHIPPED.read_bytes()), tmp_path / "cache" / "sms+spam+collection.zip")
    assert len(load_sms_spam_uci()) == 5574
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700
    _zip_with(b"ham\thello\nspam\twin\n", tmp_path / "cache" / "sms+spam+collection.zip")
    with pytest.raises(UserInputError, match="sha256"):
        load_sms_spam_uci()
    (tmp_path / "cache" / "sms+spam+collection.zip").write_bytes(b"not a zip")
    with pytest.raises(UserInputError, match="corrupted"):
        load_sms_spam_uci()


def test_any_labelled_csv_binary_or_multiclass(tmp_path):
    rows = "\n".join(f'"msg {i}, text",{["a", "b", "c"][i % 3]}' for i in range(30))
    (tmp_path / "d.csv").write_text("body,topic\n" + rows + "\n")
    data = load_table(tmp_path / "d.csv", "body", "topic")
    assert data.class_names == ("a", "b", "c") and data.positive_index is None and len(data) == 30
    binary = load_table(tmp_path / "d.csv", "body", "topic", positive_label="c")
    assert binary.class_names[binary.positive_index] == "c"
    assert load(DataSpec(source="file", path=str(tmp_path / "d.csv"), text_col="body", label_col="topic",
                         limit_per_class=2)).labels.tolist() == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("content, columns, message", [
    (b"ham\thello\nspam only-label-no-tab\n", None, r"d\.txt:2 has no tab"),
    (b"ham\thello\n\tno label\n", None, r"d\.txt:2 has no label"),
    (b"ham\thello\nspam\t  \n", None, r"d\.txt:2 has an empty text"),
    (b"ham\thello\nham\tbye\n", None, "single class"),
    (b"ham\thello\nspam\tcaf\xe9\n", None, r"d\.txt:2 is not valid utf-8 .*--encoding latin-1"),
    (b"text,label\nhi,ham\n", ("body", "label"), "column 'body' not in"),
    (b"text,label\nhi,ham,extra\n", ("text", "label"), r"d\.txt:2 has 3 fields"),
])
def test_bad_files_give_one_clear_error(tmp_path, content, columns, message):
    (tmp_path / "d.txt").write_bytes(content)
    text_col, label_col = columns or (None, None)
    with pytest.raises(UserInputError, match=message):
        load_table(tmp_path / "d.txt", text_col, label_col)


def test_missing_file_unknown_positive_label_and_too_few_rows(tmp_path, sms):
    with pytest.raises(UserInputError, match="not found"):
        load_table(tmp_path / "nope.csv", None, None)
    (tmp_path / "d.txt").write_bytes(b"ham\thi\nspam\tyo\n")
    with pytest.raises(UserInputError, match="positive label 'pos' not found"):
        load_table(tmp_path / "d.txt", None, None, positive_label="pos")
    with pytest.raises(UserInputError, match="too few rows per class"):
        stratified_split(load_table(tmp_path / "d.txt", None, None))

