"""chinese_reviews: its seeded sample and how it reads a pair the verdicts wrote the other way round
(the run itself, quick, in both languages and as a notebook: test_course_wing)."""
import numpy as np
import pandas as pd

from common.labelled_texts import LabelledTexts
from comparisons.course.chinese_reviews import focus_pairs, sample_per_class


def test_the_sample_is_seeded_stratified_and_in_file_order():
    data = LabelledTexts([f"评论{i}" for i in range(30)], np.array([0] * 20 + [1] * 10), ("negative", "positive"), 1)
    first, again = sample_per_class(data, 6), sample_per_class(data, 6)
    assert first.texts == again.texts and np.bincount(first.labels).tolist() == [6, 6]
    assert first.texts == sorted(first.texts, key=lambda t: int(t[2:]))  # file order kept
    assert np.bincount(sample_per_class(data, 15).labels).tolist() == [15, 10]  # all of a smaller class
    assert sample_per_class(data, 6, seed=1).texts != first.texts


def test_a_pair_written_the_other_way_round_is_flipped():
    pairs = pd.DataFrame([{"metric": "average_precision", "variant_a": "tfidf:spaces", "variant_b": "tfidf:chars",
                           "difference": -0.2, "ci_low": -0.3, "ci_high": -0.1, "p_holm": 0.001, "verdict": "B better"}])
    shown = focus_pairs(pairs, "en").iloc[0].tolist()
    assert shown == ["tfidf:chars − tfidf:spaces", "+0.2000 [+0.1000, +0.3000]", "0.001", "tfidf:chars better"]
    assert focus_pairs(pairs, "zh").iloc[0].tolist()[-1] == "tfidf:chars 更好"
