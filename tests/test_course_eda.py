"""comparisons.course.eda on the tiny subset: tables add up, the figure is written, no raw text leaks."""
from __future__ import annotations

import re

import pandas as pd

from comparisons.course import eda


def test_eda_quick_writes_tables_and_figure(tmp_path, tiny_data):
    assert eda.main(["--quick", "--out", str(tmp_path), "--examples", "5"]) == 0
    for name in ("class_balance.csv", "class_balance.md", "lengths.csv", "duplicates.json",
                 "duplicates.md", "examples.csv", "eda.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    balance = pd.read_csv(tmp_path / "class_balance.csv")
    overall = balance[balance["split"] == "all"]
    assert overall["count"].sum() == len(tiny_data) == 120
    for split_name in ("train", "valid", "test"):
        part = balance[balance["split"] == split_name]
        assert set(part["class"]) == {"ham", "spam"} and (part["count"] > 0).all()
    lengths = pd.read_csv(tmp_path / "lengths.csv")
    assert len(lengths) == 4  # 2 classes x (tokens, characters)
    assert (lengths["max"] >= lengths["median"]).all()


def test_eda_never_writes_raw_text(tmp_path, tiny_data):
    eda.main(["--quick", "--out", str(tmp_path), "--examples", "60"])  # every message of the subset
    written = "".join(path.read_text(encoding="utf-8") for path in tmp_path.glob("*.*") if path.suffix != ".png")
    phone_numbers = [run for t in tiny_data.texts for run in re.findall(r"\d{5,}", t)]
    assert phone_numbers, "the subset should contain messages with phone-like numbers"
    for run in phone_numbers:  # ids and counts here have at most 4 digits
        assert run not in written
    examples = pd.read_csv(tmp_path / "examples.csv")
    assert len(examples) == 120
    assert all(len(e) <= 80 for e in examples["example (redacted)"])


def test_eda_bad_input_is_one_line_exit_2(tmp_path, capsys):
    assert eda.main(["--quick", "--out", str(tmp_path), "--examples", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and err.endswith("\n"), err


def test_eda_chinese_headers(tmp_path):
    assert eda.main(["--quick", "--out", str(tmp_path), "--lang", "zh", "--examples", "0"]) == 0
    balance = pd.read_csv(tmp_path / "class_balance.csv")
    assert "类别" in balance.columns and "垃圾短信" in set(balance["类别"])
    assert not (tmp_path / "examples.csv").exists()
