"""The base of every typed record of a run folder's files (records.py, power_plan_record.py, selection_record.py,
folder.RunRecord): a file's dict, read-only, with typed properties in its subclasses."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar


@dataclass(frozen=True, eq=False)
class JsonRecord(Mapping):
    """A plan file's dict, read-only: `record["key"]`, `record.get("key")`, typed properties in subclasses; equal to
    any mapping with the same items (a plain dict included: Mapping's equality, not the dataclass's)."""

    fields: dict
    FILE: ClassVar[str] = ""

    @classmethod
    def from_dict(cls, fields: Mapping) -> "JsonRecord":
        return cls(dict(fields))

    @classmethod
    def read(cls, folder: Path) -> "JsonRecord | None":
        """The folder's file of this kind, or None when it has none."""
        path = Path(folder) / cls.FILE
        return cls.from_dict(json.loads(path.read_text())) if path.exists() else None

    def to_dict(self) -> dict:
        return dict(self.fields)

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)
