"""keras_and_bert: the source's key_dim measured, bbc-news read as AG News is written."""
from __future__ import annotations

import pytest

from comparisons.course import keras_and_bert as lesson


def test_a_bbc_article_is_read_as_its_headline_and_lead():
    article = "Ad sales boost profit\n\nQuarterly profits jumped 76%.\n\nThe firm said more."
    assert lesson.headline_and_lead(article) == "Ad sales boost profit Quarterly profits jumped 76%."
    assert lesson.headline_and_lead("one line only") == "one line only"


def test_key_dim_equal_to_embed_dim_multiplies_the_attention_parameters_by_about_the_heads():
    pytest.importorskip("keras")
    table = lesson.key_dim_table(16, 4, 10, "en")
    per_head, full_width = table.iloc[:, 2].tolist()
    d, h = 16, 4
    assert per_head == 4 * d * d + 4 * d  # q, k, v, out: d x d each, with biases
    assert full_width == 3 * (d * h * d + h * d) + (h * d * d + d)  # every head d wide
    assert 3.5 < full_width / per_head < 4.0  # H times, less the output projection's bias
    ratio = table.iloc[:, -1].tolist()  # timed in alternation: the source's time against this project's
    assert ratio[0] == 1.0 and ratio[1] > 0 and table.iloc[:, 3].gt(0).all()
