"""scratch_vs_pretrained: the sentence it draws from the per-size verdicts (the run itself: test_course_wing)."""
import pandas as pd

from comparisons.course.scratch_vs_pretrained import sentences, where_pretraining_stops_helping


def headline(verdicts: dict[str, list[str]]) -> pd.DataFrame:
    sizes = [50, 200, 1000]
    return pd.DataFrame([{"train_size": n, "pretrained": name, "verdict": v}
                         for name, row in verdicts.items() for n, v in zip(sizes, row)])


def test_the_size_where_pretraining_stops_being_detectably_better():
    better, same = "pretrained better", "no detectable difference"
    found = where_pretraining_stops_helping(headline({
        "hf_bert:full": [better, better, same],      # stops at 1000
        "hf_bert:frozen": [better, same, better],    # better again at 1000: it never stops within the sizes
    }))
    assert found == {"hf_bert:full": 1000, "hf_bert:frozen": None}
    never = where_pretraining_stops_helping(headline({"hf_bert:full": [same, same, "pretrained worse"]}))
    assert never == {"hf_bert:full": 50}
    lines = sentences({**found, **{"x": 50}}, [50, 200, 1000], "en")
    assert "at 1000 messages" in lines[0] and "up to 1000" in lines[1] and "any size" in lines[2]
    assert "1000 条" in sentences(found, [50, 200, 1000], "zh")[0]


def test_the_lesson_reads_the_declared_contrasts_of_the_committed_curve(tmp_path):
    from comparisons.course.scratch_vs_pretrained import committed_curve, committed_lines

    assert committed_curve(tmp_path) is None  # not committed in this checkout: one line saying how to make it
    assert "make learning-curve" in committed_lines(None, "en")[0]
    row = {"train_size": "50", "metric": "average_precision", "variant_a": "hf_bert:full",
           "variant_b": "torch_scratch", "contrast": "declared", "difference": 0.1234, "ci_low": -0.01,
           "ci_high": 0.25, "p_holm": 0.3, "p_equivalence_holm": 1.0, "verdict": "inconclusive"}
    pd.DataFrame([row, {**row, "train_size": "all", "difference": 0.001, "verdict": "equivalent"},
                  {**row, "metric": "macro_f1_at_threshold"},            # a secondary metric: not shown
                  {**row, "contrast": "exploratory", "variant_b": "tfidf_logreg"}]  # not declared: not shown
                 ).to_csv(tmp_path / "verdicts.csv", index=False)
    verdicts, saved = committed_curve(tmp_path)
    assert list(verdicts["train_size"]) == ["50", "all"] and set(verdicts["pair"]) == {"hf_bert:full − torch_scratch"}
    assert verdicts["difference [95%]"][0] == "+0.1234 [-0.0100, +0.2500]" and saved.empty
    assert "inconclusive" in "\n".join(committed_lines((verdicts, saved), "en"))


def test_at_n_labels_every_model_fits_and_chooses_on_those_n_texts_only(monkeypatch):
    """The label budget: a model at "50 labels" receives 50 texts in all, training and validation
    together, none of them a test text. The lesson used to hand every model the split's whole validation part
    (836 messages) beside its 50 training ones, so TF-IDF's inner CV fitted on 886 labels."""
    import numpy as np

    from common.datasets import DataSpec, load
    from common.splits import stratified_split
    from comparisons.course import scratch_vs_pretrained as lesson

    seen = []

    class Recording:  # a backend that records what fit receives and predicts the prior
        def fit(self, train, valid):
            seen.append((list(train.texts), list(valid.texts)))
            self.prior = np.bincount(np.concatenate([train.labels, valid.labels]), minlength=2) / (len(train) + len(valid))
            return self

        def predict_proba(self, texts):
            return np.tile(self.prior, (len(texts), 1))

    monkeypatch.setattr(lesson, "build", lambda variant, **kwargs: Recording())
    monkeypatch.setattr(lesson, "constructor", lambda variant, quick, seed: {})
    data = load(DataSpec(limit_per_class=60))
    split = stratified_split(data)
    labelled = len(split.train) + len(split.valid)
    sizes = [20, 50, labelled]
    lesson.train_all(data, split, sizes, ["a", "b"], seeds=1, quick=True)
    assert len(seen) == 2 * len(sizes)
    test_texts = {data.texts[i] for i in split.test}
    budget_texts = {data.texts[i] for i in np.concatenate([split.train, split.valid])}
    for (train, valid), size in zip(seen, [n for n in sizes for _ in range(2)]):
        assert len(train) + len(valid) == size  # the whole validation part would make it size + len(split.valid)
        assert len(valid) >= 2 and set(train + valid) <= budget_texts and not set(train + valid) & test_texts
    assert seen[0][0] + seen[0][1] != seen[2][0] + seen[2][1]  # 20 and 50 are different budgets
