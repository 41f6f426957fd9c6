"""comparisons/outputs.py: atomic writes, rounded JSON, tables."""
import json

import numpy as np
import pandas as pd

from comparisons.outputs import atomic_write_json, write_table


def test_json_is_rounded_even_for_numpy_values(tmp_path):
    path = atomic_write_json(tmp_path / "a.json", {"x": np.float32(0.0573829710483551),
                                                   "m": np.array([[0.12345678901, 2.0]]), "n": 3})
    assert json.loads(path.read_text()) == {"x": 0.057383, "m": [[0.123457, 2.0]], "n": 3}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left behind


def test_tables_are_written_as_csv_markdown_and_html(tmp_path):
    paths = write_table(pd.DataFrame({"a": [1.23456789], "b": ["x"]}), tmp_path, "t", title="T", html=True)
    assert sorted(p.name for p in paths) == ["t.csv", "t.html", "t.md"]
    assert "1.2346" in (tmp_path / "t.md").read_text() and "<table" in (tmp_path / "t.html").read_text()
