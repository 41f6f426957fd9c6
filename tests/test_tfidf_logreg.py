from backends.base import build
from backends.tfidf_logreg.model import ALL_ANALYZERS
from tests.backend_contract import check_backend_contract


def test_tfidf_logreg_passes_the_contract(tiny_splits, tmp_path):
    check_backend_contract(lambda seed: build("tfidf_logreg", seed=seed, min_df=1), tiny_splits, tmp_path)


def test_a_validation_split_of_one_class_is_a_clear_error(tiny_splits):
    import numpy as np
    import pytest

    from common.selection import UnusableValidationError

    train, valid, _ = tiny_splits
    one_class = valid.subset(np.flatnonzero(valid.labels == 0))
    with pytest.raises(UnusableValidationError, match="validation needs at least two classes"):
        build("tfidf_logreg", min_df=1, choose_on="validation").fit(train, one_class)
    # inner CV chooses on the whole budget: a one-class validation part is fine, a one-class budget is not
    assert build("tfidf_logreg", min_df=1).fit(train, one_class).selection_.rule == "inner_cv"
    only_ham = train.subset(np.flatnonzero(train.labels == 0))
    with pytest.raises(UnusableValidationError, match="at least two classes"):
        build("tfidf_logreg", min_df=1).fit(only_ham, one_class)


def unsegmented_chinese(seed: int, per_class: int):
    """Reviews written without spaces: each a unique run of neutral characters with 好 (positive) or 差
    (negative) somewhere inside, half of them followed by a label-free " ok". As words (scikit-learn's
    token pattern) every run is one unseen word, and only "ok" is kept; as characters, 好 and 差 decide."""
    import numpy as np

    from common.datasets import LabelledTexts

    rng = np.random.default_rng(seed)
    neutral = list("的一是在不了有人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经")
    texts, labels = [], []
    for label, marker in ((0, "差"), (1, "好")):
        for _ in range(per_class):
            run = list(rng.choice(neutral, size=int(rng.integers(8, 14))))
            run.insert(int(rng.integers(0, len(run))), marker)
            texts.append("".join(run) + (" ok" if rng.random() < 0.5 else ""))
            labels.append(label)
    return LabelledTexts(texts, np.array(labels), ("negative", "positive"), 1)


def test_the_analyzer_is_chosen_on_validation_and_char_ngrams_win_on_unsegmented_chinese():
    import pytest

    from common.selection import validation_average_precision

    train, valid = unsegmented_chinese(0, 40), unsegmented_chinese(1, 20)
    model = build("tfidf_logreg", analyzers="word,char_wb_1_3,char_wb_2_4", choose_on="validation").fit(train, valid)
    info = model.fit_info_
    scores = {c["analyzer"]: c["valid_average_precision"] for c in info["analyzer_candidates"]}
    assert list(scores) == ["word", "char_wb_1_3", "char_wb_2_4"]
    assert info["analyzer"] == model.analyzer_ == max(scores, key=scores.get) and info["analyzer"] != "word"
    assert scores["word"] < 0.75 < 0.95 < scores["char_wb_1_3"]  # the clause-as-a-word reading sees only " ok"
    # the recorded score is the candidate's own validation AP (not a test score): refit it alone and score valid
    alone = build("tfidf_logreg", analyzers="word", choose_on="validation").fit(train, valid)
    assert alone.analyzer_ == "word" and alone.fit_info_["analyzer_candidates"] == [
        {"analyzer": "word", "valid_average_precision": scores["word"]}]
    assert validation_average_precision(valid.labels, alone.predict_proba(valid.texts), 1) == pytest.approx(scores["word"])


def test_jieba_is_offered_only_on_chinese_training_texts(tiny_splits):
    import pytest

    pytest.importorskip("jieba")
    train, valid, _ = tiny_splits  # English SMS
    english = build("tfidf_logreg", min_df=1, analyzers=ALL_ANALYZERS).fit(train, valid).fit_info_["analyzer_candidates"]
    assert [c["analyzer"] for c in english] == ["word", "char_wb_1_3", "char_wb_2_4", "jieba"]
    assert "skipped" in english[-1] and "valid_average_precision" not in english[-1]
    chinese = build("tfidf_logreg", analyzers="word,jieba").fit(unsegmented_chinese(0, 40), unsegmented_chinese(1, 20))
    assert [c["analyzer"] for c in chinese.fit_info_["analyzer_candidates"]] == ["word", "jieba"]
    assert all("inner_cv_average_precision" in c for c in chinese.fit_info_["analyzer_candidates"])


def test_unknown_analyzer_is_one_clear_line():
    import pytest

    from common.errors import UserInputError

    with pytest.raises(UserInputError, match=r"analyzers='chars': give auto or one or more of word, char_wb_1_3"):
        build("tfidf_logreg", analyzers="chars").fit(unsegmented_chinese(0, 10), unsegmented_chinese(1, 10))


def test_unknown_rate_counts_the_ngrams_the_vocabulary_does_not_hold():
    import numpy as np

    from common.datasets import LabelledTexts

    train = LabelledTexts(["good hotel", "bad hotel", "good room", "bad bed"], np.array([1, 0, 1, 0]), ("n", "p"), 1)
    model = build("tfidf_logreg", analyzers="word", ngram_max=1, min_df=1).fit(train, train)
    assert model.unknown_tokens(["good view", "bad hotel"]) == {"tokens": 4, "unknown": 1, "rate": 0.25,
                                                               "unknown_token": "<not a kept n-gram>"}
    chars = build("tfidf_logreg", analyzers="char_wb_1_3", min_df=1).fit(train, train)
    assert chars.unknown_tokens(["good"])["rate"] == 0.0  # every 1-3-gram of " good " was seen in training
    # " 好 " gives " ", "好", " ", " 好", "好 ", " 好 ": only the two padding spaces were seen
    assert chars.unknown_tokens(["好"])["tokens"] == 6 and chars.unknown_tokens(["好"])["unknown"] == 4


def test_auto_lets_every_analyzer_compete_on_chinese_and_keeps_words_on_english(tiny_splits):
    train, valid, _ = tiny_splits  # English SMS: the seed course's word n-grams, one candidate, unchanged results
    english = build("tfidf_logreg", min_df=1).fit(train, valid)
    assert english.get_params()["analyzers"] == "auto" and english.analyzer_ == "word"
    assert [c["analyzer"] for c in english.fit_info_["analyzer_candidates"]] == ["word"]
    seed_course = build("tfidf_logreg", min_df=1, analyzers="word").fit(train, valid)
    assert (english.predict_proba(valid.texts) == seed_course.predict_proba(valid.texts)).all()
    chinese = build("tfidf_logreg").fit(unsegmented_chinese(0, 40), unsegmented_chinese(1, 20)).fit_info_
    competed = [c["analyzer"] for c in chinese["analyzer_candidates"] if "inner_cv_average_precision" in c]
    assert competed[:3] == ["word", "char_wb_1_3", "char_wb_2_4"] and chinese["analyzer"].startswith("char_wb")


def test_inner_cv_chooses_on_the_budget_refits_on_all_of_it_and_never_sees_the_test_part(tiny_splits, monkeypatch):
    """The default recipe: C chosen by inner CV (min_df 1, not a choice) on training + validation texts, the choice
    refitted on all of them, the threshold from out-of-fold probabilities; no test text reaches any fit."""
    import numpy as np

    from backends.tfidf_logreg import model as tfidf
    from common.scoring import score_fitted

    train, valid, test = tiny_splits
    seen, models = [], []  # the texts every vectorizer learns from; every logistic regression fitted
    vectorize, regress = tfidf.TfidfVectorizer.fit_transform, tfidf.LogisticRegression.fit
    monkeypatch.setattr(tfidf.TfidfVectorizer, "fit_transform", lambda self, texts, y=None: seen.append(list(texts))
                        or vectorize(self, texts, y))
    monkeypatch.setattr(tfidf.LogisticRegression, "fit", lambda self, X, y, **kw: models.append(X.shape[0]) or
                        regress(self, X, y, **kw))
    model = build("tfidf_logreg").fit(train, valid)
    budget = set(train.texts) | set(valid.texts)
    assert all(set(texts) <= budget for texts in seen) and not any(set(texts) & (set(test.texts) - budget)
                                                                    for texts in seen)
    assert sorted(seen[-1]) == sorted(list(train.texts) + list(valid.texts))  # the refit: the whole budget
    selection = model.selection_
    grid = {(c["candidate"]["min_df"], c["candidate"]["C"]) for c in selection.candidates}
    assert grid == {(1, c) for c in tfidf.CHOICES_C}
    # a vectorizer an inner fold (every C of it reads the same n-grams) and the refit's; a model a candidate a fold
    assert len(seen) == selection.folds + 1 and len(models) == len(grid) * selection.folds + 1
    assert models[-1] == len(train) + len(valid)
    assert selection.chosen == max(selection.candidates, key=lambda c: c["inner_cv_average_precision"])["candidate"]
    assert selection.proba.shape == (len(train) + len(valid), 2) and np.isfinite(selection.proba).all()
    scored = score_fitted(model, valid, test, 1)
    assert "on inner-CV out-of-fold predictions" in scored.threshold_rule
    assert scored.valid["average_precision"] == max(c["inner_cv_average_precision"] for c in selection.candidates)
