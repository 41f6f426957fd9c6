"""A report's files before they are written: what `build` (report/build.py) makes and `Report.write` writes.

The tables' writers (report/split_tables.py, partition_reports.py, cross_corpus.py, serving.py, figures.py,
learning_curves.py, partition_curves.py) say what to write through one of these instead of writing it:

- `ReportFiles()`: kept in memory, path -> bytes in the order made, and read back from there (`read_csv`,
  `read_text`, `exists`) before the folder on disk, so a report's tables are read from what it will write before
  anything is written; `write()` then writes each file once, atomically (comparisons/outputs.py), before any page
  is drawn (the pages embed figures and per-language tables from the folder: report/write.py);
- `ON_DISK`: the folder itself: what is made is written at once (a caller outside a report's build: a lesson's
  curve, a test), what is read is read from disk.

A report read from its folder later holds an empty `ReportFiles()`: everything it reads comes from disk, and
writing it writes nothing. The run side's files (design.json, manifests, predictions) are never made here: they are
read from disk either way.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd

from comparisons.outputs import atomic_write_bytes, json_text, png_bytes, table_texts


class ReportFiles:
    """A report's files in memory, by path (the folder's path joined with the file's), in the order made."""

    def __init__(self) -> None:
        self._made: dict[Path, bytes] = {}

    # -- making ------------------------------------------------------------------------------------------
    def put(self, path: Path, data: bytes) -> Path:
        self._made[Path(path)] = data
        return Path(path)

    def text(self, path: Path, content: str) -> Path:
        return self.put(path, content.encode("utf-8"))

    def json(self, path: Path, payload: Any) -> Path:
        return self.text(path, json_text(payload))

    def figure(self, fig, path: Path, dpi: int = 130) -> Path:
        return self.put(path, png_bytes(fig, dpi))

    def table(self, frame: pd.DataFrame, directory: Path, stem: str, title: str | None = None, html: bool = False,
              float_format: str = "{:.4f}") -> list[Path]:
        """stem.csv, stem.md (and stem.html) under `directory` (outputs.table_texts)."""
        return [self.text(Path(directory) / name, content)
                for name, content in table_texts(frame, stem, title, html, float_format).items()]

    # -- reading: what was made here, else the folder on disk ---------------------------------------------
    def exists(self, path: Path) -> bool:
        return Path(path) in self._made or Path(path).exists()

    def read_bytes(self, path: Path) -> bytes:
        made = self._made.get(Path(path))
        return Path(path).read_bytes() if made is None else made

    def read_text(self, path: Path) -> str:
        return self.read_bytes(path).decode("utf-8")

    def read_csv(self, path: Path, **options) -> pd.DataFrame:
        made = self._made.get(Path(path))
        return pd.read_csv(Path(path) if made is None else io.BytesIO(made), **options)

    # -- what was made, and writing it --------------------------------------------------------------------
    @property
    def made(self) -> dict[Path, bytes]:
        """path -> bytes of every file made, in the order made (a copy)."""
        return dict(self._made)

    def write(self) -> list[Path]:
        """Every file made, written once, atomically, in the order made."""
        return [atomic_write_bytes(path, data) for path, data in self._made.items()]


class DiskFiles(ReportFiles):
    """The folder itself: files written as they are made (nothing kept), read from disk."""

    def put(self, path: Path, data: bytes) -> Path:
        return atomic_write_bytes(path, data)


ON_DISK = DiskFiles()
