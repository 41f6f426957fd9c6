"""Inputs nobody planned for: each gives an ok row or one clear line, never a traceback or a hang.

A 1 MB message, control characters and NUL bytes, right-to-left text and emoji, a CSV with
quoted newlines, a label column with surrounding spaces or mixed case (and a spreadsheet's
byte-order mark), a file of 200,000 rows. The odd rows ride among real SMS messages.
"""
import csv
import io

import numpy as np
import pandas as pd
import pytest

from common.datasets import DataSpec, load, load_table, stratified_head
from common.errors import UserInputError
from common.redaction import snippet
from common.splits import stratified_split
from tests.test_cli import assert_no_raw_text, run_main

ODD_TEXTS = {
    "huge": "WINNER!! Claim your prize now, reply WIN. " * 25_000,  # about 1 MB
    "control": "free\x00entry\x07 in 2 a \x1b[31mwkly\x1b[0m comp\x0cto win\x1e FA Cup\x85final tkts",
    "nul_only_around": "\x00\x00hello there, see you at 7\x00",
    "rtl": "مرحبا، هل أنت قادم الليلة؟ שלום מה שלומך",
    "emoji": "Congrats 🎉🎉 you won a 🏆! Call ٠٨٧١٢٣٤٥٦٧٨ now 👉📞",
    "mixed": "‏Hi ‮reversed‬ text 😀 ok",
}


@pytest.fixture(scope="module")
def real_rows():
    """80 real messages (40 per class) as (label, text)."""
    data = stratified_head(load(DataSpec()), 40)
    return [(data.class_names[label], text) for label, text in zip(data.labels.tolist(), data.texts)]


def write_tab_file(path, rows) -> str:
    path.write_bytes("".join(f"{label}\t{text}\n" for label, text in rows).encode("utf-8"))
    return str(path)


def test_odd_texts_load_as_one_row_each(tmp_path, real_rows):
    odd = [("spam" if i % 2 else "ham", text) for i, text in enumerate(ODD_TEXTS.values())]
    data = load_table(write_tab_file(tmp_path / "odd.tsv", real_rows + odd), None, None)
    assert len(data) == len(real_rows) + len(odd)  # no message split at a form feed, \x1e or \x85
    assert data.texts[-len(odd):] == [text for _, text in odd]


def test_odd_texts_are_shown_redacted_on_one_line():
    for name, text in ODD_TEXTS.items():
        shown = snippet(text)
        assert len(shown) <= 60 and "\n" not in shown, name
    assert "<NUM>" in snippet(ODD_TEXTS["emoji"])  # Arabic-Indic digits are digits too


def test_a_run_over_odd_texts_gives_ok_rows(tmp_path, real_rows, capfd):
    """1 MB message, NUL and control characters, right-to-left text and emoji, through two backends."""
    odd = [("spam" if i % 2 else "ham", text) for i, text in enumerate(ODD_TEXTS.values())]
    data = write_tab_file(tmp_path / "odd.tsv", real_rows + odd)
    out = tmp_path / "run"
    result = run_main(capfd, "run", "--backends", "tfidf_logreg,torch_scratch", "--profile", "tiny", "--data", data,
                      "--threads", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    summary = pd.read_csv(out / "summary.csv")
    assert (summary["status"] == "ok").all(), summary[["variant", "status", "reason"]]
    assert_no_raw_text(out)
    assert not any("WINNER!! Claim" in p.read_text(errors="replace") for p in out.rglob("*.log"))


def mixed_labels_csv(real_rows) -> str:
    """A spreadsheet export: byte-order mark, quoted newlines, labels with spaces and mixed case."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["Text", " Label "])
    spellings = {"spam": [" spam", "Spam ", "SPAM", "spam"], "ham": ["ham", " Ham", "HAM ", "ham"]}
    for i, (label, text) in enumerate(real_rows):
        writer.writerow([text.replace(" ", "\n", 1) if i % 3 == 0 else text, spellings[label][i % 4]])
    return "\ufeff" + buffer.getvalue()


def test_labels_differing_in_case_or_spaces_are_one_class(tmp_path, real_rows):
    (tmp_path / "d.csv").write_text(mixed_labels_csv(real_rows), encoding="utf-8")
    data = load_table(tmp_path / "d.csv", "text", "label")  # header names matched ignoring case and spaces
    assert data.class_names == ("ham", "spam") and data.positive_index == 1
    assert np.bincount(data.labels).tolist() == [40, 40]
    with_newline = sum(" " in text and "\n" not in text for _, text in real_rows[::3])
    assert sum("\n" in text for text in data.texts) == with_newline  # quoted newlines kept in the text
    named = load_table(tmp_path / "d.csv", "Text", "Label", positive_label="SPAM")
    assert named.class_names[named.positive_index] == "spam"


def test_a_csv_with_quoted_newlines_and_mixed_labels_runs(tmp_path, real_rows, capfd):
    (tmp_path / "d.csv").write_text(mixed_labels_csv(real_rows), encoding="utf-8")
    out = tmp_path / "run"
    result = run_main(capfd, "run", "--backends", "tfidf_logreg", "--data", str(tmp_path / "d.csv"),
                      "--text-col", "Text", "--label-col", "Label", "--profile", "tiny", "--quality-only",
                      "--threads", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    assert pd.read_csv(out / "summary.csv").loc[0, "status"] == "ok"


@pytest.mark.parametrize("content, message", [
    ('text,label\n"never closed,ham\nhi,spam\n', r"d\.csv:\d+ (has 1 fields|cannot be read as CSV)"),
    ("text,label\nhi,ham\nyo,spam\n", "too few rows per class"),
    ("Text,LABEL,label\nhi,ham,ham\n", "column 'Label' not in"),  # two columns match ignoring case: ambiguous
])
def test_broken_csvs_are_one_clear_error(tmp_path, content, message):
    (tmp_path / "d.csv").write_text(content)
    with pytest.raises(UserInputError, match=message):
        stratified_split(load_table(tmp_path / "d.csv", "text", "Label"))


def test_a_file_of_200000_rows_loads_and_splits(tmp_path, real_rows):
    """The SMS rows repeated with small edits; the cost of a full run is measured, not tested."""
    rows = [(label, f"{text} #{i}") for i in range(2500) for label, text in real_rows]
    assert len(rows) == 200_000
    data = load_table(write_tab_file(tmp_path / "big.tsv", rows), None, None)
    split = stratified_split(data)
    assert len(data) == 200_000 and sum(split.sizes().values()) == 200_000
    assert np.bincount(data.labels[split.test]).tolist() == [15_000, 15_000]
