"""Attention map: tokens are redacted, weights are a proper last-layer map, the raw text never leaks."""
import json
import re

import numpy as np

from common.vocabulary import tokenize
from comparisons.course import attention_map as module


def test_display_tokens_hide_numbers_links_and_emails():
    message = "Call 08712460324 now or visit www.example.co.uk or mail me@example.com, win 2 prizes"
    shown = module.display_tokens(message, tokenize(message))
    assert "08712460324" not in shown and "<NUM>" in shown
    assert "example" not in shown and "<URL>" in shown and "<EMAIL>" in shown
    assert shown[:1] == ["call"] and "2" in shown  # short numbers and words stay
    assert module.display_tokens(message, ["<cls>", *tokenize(message)])[:3] == ["<cls>", "call", "<NUM>"]


def test_choose_message_prefers_short_spam(tiny_splits):
    from common.datasets import LabelledTexts
    from common.vocabulary import tokenize

    test = tiny_splits[2]
    row = module.choose_message(test, None)
    assert test.labels[row] == test.positive_index
    spam = [i for i, label in enumerate(test.labels) if label == test.positive_index]
    lengths = {i: len(tokenize(test.texts[i])) for i in spam}
    readable = [i for i in spam if 6 <= lengths[i] <= 24]
    assert row == (readable[0] if readable else min(spam, key=lambda i: (lengths[i], i)))
    assert lengths[row] <= min(lengths.values()) or 6 <= lengths[row] <= 24, "short, or of readable length"
    long_only = LabelledTexts(["win " * 40, "free prize " * 15, "hi there"], np.array([1, 1, 0]), test.class_names, 1)
    assert module.choose_message(long_only, None) == 1, "none readable: the shortest spam (30 tokens, not 40)"


def test_main_quick_writes_redacted_outputs(tmp_path, tiny_splits, capsys):
    test = tiny_splits[2]
    row = next(i for i, t in enumerate(test.texts) if re.search(r"\d{5,}", t))  # a message with a phone number
    number = re.search(r"\d{5,}", test.texts[row]).group(0)
    assert module.main(["--out", str(tmp_path), "--quick", "--lang", "zh", "--message", str(row)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "<NUM>" in summary["tokens_redacted"]
    weights = np.array(summary["weights"])
    assert weights.shape == (len(summary["tokens_redacted"]),) * 2
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    written = capsys.readouterr().out + "".join(p.read_text(encoding="utf-8") for p in tmp_path.glob("*.[cmj]*"))
    assert number not in written
    assert (tmp_path / "attention_map.png").stat().st_size > 0


def test_flatness_is_one_for_a_uniform_map_and_zero_for_a_one_hot_map():
    assert module.flatness(np.full((5, 5), 0.2)) == 1.0 or abs(module.flatness(np.full((5, 5), 0.2)) - 1.0) < 1e-9
    assert module.flatness(np.eye(5)) < 1e-6


def test_the_map_comes_from_the_best_validation_epoch(tmp_path):
    assert module.main(["--out", str(tmp_path), "--quick", "--epochs", "3"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    scores = [h["valid_average_precision"] for h in summary["history"]]
    assert summary["best_epoch"] == 1 + int(np.argmax(scores))  # ties keep the earlier epoch, as argmax does
    assert summary["epochs_run"] == len(scores) <= 3
    assert summary["config"]["epochs"] == 3 and summary["config"]["patience"] == module.PATIENCE
    assert 0.0 < summary["flatness"] <= 1.0
