"""Writing results safely: temporary name then rename, so an interrupted run leaves nothing half-written."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

_UMASK = os.umask(0o022)  # read once, at import: os.umask is the only way to read it, and it sets it too
os.umask(_UMASK)


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # the mode open() would give (mkstemp's is 0600: reports nobody else could read)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def json_text(payload: Any) -> str:
    """JSON as the suite writes it: floats rounded to 6 decimals (measurement noise is far larger), indented, UTF-8."""
    return json.dumps(_rounded(payload), indent=2, ensure_ascii=False, default=_jsonable) + "\n"


def atomic_write_json(path: Path, payload: Any) -> Path:
    return atomic_write_text(path, json_text(payload))


def _rounded(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        value = value.tolist()
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def png_bytes(fig, dpi: int = 130) -> bytes:
    """A matplotlib figure as the PNG the suite saves (tight bounding box), the figure closed."""
    import io

    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def save_figure(fig, path: Path, dpi: int = 130) -> Path:
    """Save a matplotlib figure atomically as PNG and close it."""
    return atomic_write_bytes(path, png_bytes(fig, dpi))


def write_table(frame: pd.DataFrame, directory: Path, stem: str, title: str | None = None,
                html: bool = False, float_format: str = "{:.4f}") -> list[Path]:
    """Write `stem.csv` and `stem.md` (and `stem.html`) under `directory`; returns the paths."""
    return [atomic_write_text(Path(directory) / name, content)
            for name, content in table_texts(frame, stem, title, html, float_format).items()]


def table_texts(frame: pd.DataFrame, stem: str, title: str | None = None, html: bool = False,
                float_format: str = "{:.4f}") -> dict[str, str]:
    """`stem.csv` and `stem.md` (and `stem.html`) of a table: file name -> text, in the order written."""
    import pandas as pd  # here, as matplotlib in png_bytes: the atomic writers are imported where pandas is not

    shown = frame.copy()
    for column in shown.columns:
        if pd.api.types.is_float_dtype(shown[column]):
            shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else float_format.format(v))
    heading = f"# {title}\n\n" if title else ""
    texts = {f"{stem}.csv": frame.to_csv(index=False, float_format="%.6g"),
             f"{stem}.md": heading + shown.to_markdown(index=False) + "\n"}
    if html:
        page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{title or stem}</title>"
                "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
                "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}</style></head><body>"
                + (f"<h1>{title}</h1>" if title else "") + shown.to_html(index=False, escape=True)
                + "</body></html>\n")
        texts[f"{stem}.html"] = page
    return texts
