"""Datasets: the shipped SMS Spam Collection, its UCI download, any labelled CSV/TSV file, and a
Hugging Face hub dataset (`hf:NAME`) read through the `datasets` library's cache.

Every loader returns a `LabelledTexts`; every problem with the input raises `UserInputError`
with one line that says what is wrong and what to do.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
import tempfile
import urllib.request
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from common.corpora import load_corpus  # named corpora from installed packages (docs/corpora.md)
from common.digests import readable_digest
from common.errors import UserInputError
from common.labelled_texts import LabelledTexts, build_labelled_texts

SMS_SHA256 = "7d039a24a6083ed9ef0f806ebad56bbb976e3aeb8de05669173bfdc4996c239d"
SMS_SHIPPED = Path(__file__).parent / "data" / "SMSSpamCollection.gz"
UCI_URL = "https://archive.ics.uci.edu/static/public/228/sms+spam+collection.zip"
UCI_MEMBER = "SMSSpamCollection"


@dataclass(frozen=True)
class DataSpec:
    """How to load a dataset again, in the orchestrator and in every worker."""

    source: str = "sms_spam"  # sms_spam | uci | file | hf | corpus
    path: str | None = None  # file: its path; hf: hub dataset id or a local dataset folder; corpus: its name
    text_col: str | None = None
    label_col: str | None = None
    positive_label: str | None = None
    encoding: str = "utf-8"
    dedup: bool = False
    limit_per_class: int | None = field(default=None)  # tests: a small stratified subset
    hf_split: str = "train"  # hf: which split of the hub dataset to load (slices like train[:5000] work)
    limit_total: int | None = None  # a cap on a large corpus: a seeded stratified sample of at most N texts

    def to_dict(self) -> dict:
        return asdict(self)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load(spec: DataSpec) -> LabelledTexts:
    """Load the dataset a spec names, deduplicated and subsetted as it says."""
    if spec.source == "sms_spam":
        data = load_sms_spam()
    elif spec.source == "uci":
        data = load_sms_spam_uci()
    elif spec.source == "file":
        if spec.path is None:
            raise UserInputError("--data needs a file path")
        data = load_table(spec.path, spec.text_col, spec.label_col, spec.positive_label, spec.encoding)
    elif spec.source == "hf":
        data = load_hf(spec.path, spec.text_col, spec.label_col, spec.hf_split, spec.positive_label)
    elif spec.source == "corpus":
        data = load_corpus(spec.path or "")
    else:
        raise UserInputError(f"unknown data source {spec.source!r}; use sms_spam, uci, hf:NAME, a corpus name "
                             "or a file path")
    if spec.dedup:
        data = drop_duplicates(data)
    if spec.limit_per_class:
        data = stratified_head(data, spec.limit_per_class)
    if spec.limit_total:
        data = stratified_sample(data, spec.limit_total)
    return data


def load_sms_spam() -> LabelledTexts:
    """The SMS Spam Collection shipped with the project (CC BY 4.0, see common/data/README.md)."""
    raw = gzip.decompress(SMS_SHIPPED.read_bytes())
    _check_sha256(raw, SMS_SHA256, str(SMS_SHIPPED), "reinstall the project or use --data uci")
    return parse_label_tab_text(raw, str(SMS_SHIPPED), labels=("ham", "spam"))


def data_cache_dir() -> Path:
    """AI_COURSE_DATA_DIR, or ~/.cache/transformer-compare; created private (0700)."""
    root = Path(os.environ.get("AI_COURSE_DATA_DIR") or Path.home() / ".cache" / "transformer-compare")
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    return root


def load_sms_spam_uci(url: str = UCI_URL) -> LabelledTexts:
    """Download (once) the UCI archive into the cache, check it, and read its one data member."""
    archive = data_cache_dir() / "sms+spam+collection.zip"
    if not archive.exists():
        _download(url, archive)
    try:
        with zipfile.ZipFile(archive) as zf:
            raw = zf.read(UCI_MEMBER)  # read in memory; nothing is extracted to disk
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise UserInputError(
            f"cached archive {archive} is corrupted ({exc.__class__.__name__}); delete it and run again"
        ) from None
    _check_sha256(raw, SMS_SHA256, f"{archive}:{UCI_MEMBER}", f"delete {archive} and run again")
    return parse_label_tab_text(raw, f"{archive}:{UCI_MEMBER}", labels=("ham", "spam"))


def _download(url: str, target: Path) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".download-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            out.write(response.read())
        os.replace(tmp, target)
    except OSError as exc:
        raise UserInputError(
            f"could not download {url} ({exc}); use the shipped copy (the default) or --data PATH"
        ) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _check_sha256(raw: bytes, expected: str, where: str, advice: str) -> None:
    actual = sha256_bytes(raw)
    if actual != expected:
        raise UserInputError(f"{where} has sha256 {actual[:12]}…, expected {expected[:12]}…: {advice}")


def _decode(raw: bytes, where: str, encoding: str) -> str:
    utf8 = encoding.lower().replace("_", "-") in ("utf-8", "utf8")
    try:
        return raw.decode("utf-8-sig" if utf8 else encoding)  # a spreadsheet's byte-order mark is not text
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        hint = "latin-1" if utf8 else "utf-8"
        raise UserInputError(
            f"{where}:{line} is not valid {encoding} (byte 0x{raw[exc.start]:02x}); try --encoding {hint}"
        ) from None
    except LookupError:
        raise UserInputError(f"unknown encoding {encoding!r}; try utf-8, latin-1 or cp1252") from None


def parse_label_tab_text(
    raw: bytes, where: str, labels: Sequence[str] | None = None, encoding: str = "utf-8",
    positive_label: str | None = None,
) -> LabelledTexts:
    """Parse `label<TAB>text` lines: split on \\n (a \\r before it dropped; not splitlines(), which
    would also break a message at a form feed or \\x1c-\\x1e), blank lines skipped, split on the first tab."""
    rows: list[tuple[str, str, int]] = []
    for number, line in enumerate(_decode(raw, where, encoding).split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        label, sep, text = line.partition("\t")
        if not sep:
            raise UserInputError(f"{where}:{number} has no tab between label and text; each line is label<TAB>text")
        rows.append((label.strip(), text, number))
    return build_labelled_texts(rows, where, positive_label, allowed=labels)


def load_table(
    path: str | Path, text_col: str | None, label_col: str | None,
    positive_label: str | None = None, encoding: str = "utf-8",
) -> LabelledTexts:
    """Any labelled CSV/TSV with a header row; without columns, a `label<TAB>text` file."""
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"data file not found: {path}")
    raw = path.read_bytes()
    if text_col is None and label_col is None:
        return parse_label_tab_text(raw, str(path), encoding=encoding, positive_label=positive_label)
    if text_col is None or label_col is None:
        raise UserInputError("give both --text-col and --label-col (or neither, for label<TAB>text lines)")
    content = _decode(raw, str(path), encoding)
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else ","
    if path.suffix.lower() not in (".tsv", ".tab", ".csv"):
        try:
            delimiter = csv.Sniffer().sniff(content[:4096], delimiters=",\t;").delimiter
        except csv.Error:
            pass
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))  # a 1 MB message is a field, not an error
    reader = csv.reader(io.StringIO(content, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
        if not header:
            raise UserInputError(f"{path} is empty; it needs a header row and labelled rows")
        header = [h.strip() for h in header]
        t, l = _column(header, text_col, path), _column(header, label_col, path)
        rows = _csv_rows(reader, header, t, l, path, delimiter)
    except csv.Error as exc:
        raise UserInputError(f"{path}:{reader.line_num} cannot be read as CSV ({exc}); check its quoting") from None
    return build_labelled_texts(rows, str(path), positive_label)


def _column(header: list[str], name: str, path: Path) -> int:
    """Index of column `name`: exact, else the one column equal to it ignoring case and spaces."""
    if name in header:
        return header.index(name)
    matches = [i for i, h in enumerate(header) if h.casefold() == name.strip().casefold()]
    if len(matches) == 1:
        return matches[0]
    raise UserInputError(f"column {name!r} not in {path}; columns are: {', '.join(map(repr, header))}")


def _csv_rows(reader, header: list[str], t: int, l: int, path: Path, delimiter: str) -> list[tuple[str, str, int]]:
    rows = []
    for record in reader:
        number = reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != len(header):
            sep = "tab" if delimiter == "\t" else repr(delimiter)
            raise UserInputError(
                f"{path}:{number} has {len(record)} fields, the header has {len(header)} ({sep}-separated); "
                "quote texts that contain the separator"
            )
        rows.append((record[l].strip(), record[t], number))
    return rows


def load_hf(name: str | None, text_col: str | None, label_col: str | None, split: str = "train",
            positive_label: str | None = None) -> LabelledTexts:
    """A Hugging Face dataset through `datasets.load_dataset` and its cache; offline unless
    HF_DATASETS_OFFLINE=0 is set. `name` is a hub id (ag_news) or a local folder of data files."""
    if not name:
        raise UserInputError("--data hf:NAME needs a dataset name, e.g. hf:ag_news")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # read when `datasets` is first imported
    text_col, label_col = text_col or "text", label_col or "label"
    try:
        import datasets
    except ModuleNotFoundError:
        raise UserInputError("--data hf:NAME needs the `datasets` package; install the project's constraints") from None
    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    try:
        table = datasets.load_dataset(name, split=split)
    except (ConnectionError, FileNotFoundError) as exc:
        raise UserInputError(
            f"Hugging Face dataset {name!r} (split {split!r}) is not in the local cache and downloads are off "
            f"({exc.__class__.__name__}); fetch it once with HF_DATASETS_OFFLINE=0 python -c "
            f"\"import datasets; datasets.load_dataset('{name}', split='{split}')\" or rerun with HF_DATASETS_OFFLINE=0"
        ) from None
    except ValueError as exc:  # e.g. an unknown split name
        raise UserInputError(f"cannot load split {split!r} of {name!r}: {str(exc).splitlines()[0]}") from None
    for column in (text_col, label_col):
        if column not in table.column_names:
            raise UserInputError(f"column {column!r} not in {name}; columns are: {', '.join(table.column_names)}"
                                 " (choose with --text-col/--label-col)")
    feature = table.features[label_col]
    names = getattr(feature, "names", None)  # ClassLabel: integers that stand for names
    labels = [names[v] if names is not None and isinstance(v, int) else str(v) for v in table[label_col]]
    texts = ["" if t is None else str(t) for t in table[text_col]]
    where = f"hf:{name}[{split}]"
    return build_labelled_texts([(lab.strip(), txt, n) for n, (lab, txt) in enumerate(zip(labels, texts), start=1)],
                  where, positive_label)


def drop_duplicates(data: LabelledTexts) -> LabelledTexts:
    """Keep the first occurrence of each exact text."""
    seen: set[str] = set()
    keep = [i for i, text in enumerate(data.texts) if not (text in seen or seen.add(text))]
    return data.subset(keep)


def stratified_head(data: LabelledTexts, per_class: int) -> LabelledTexts:
    """The first `per_class` rows of every class, in file order (a small, fixed test subset)."""
    keep = np.sort(np.concatenate([np.flatnonzero(data.labels == c)[:per_class] for c in range(data.n_classes)]))
    return data.subset(keep)


SAMPLE_SEED = 20260812  # the seed of every --limit-total sample (the default split seed): one sample per corpus


def stratified_sample(data: LabelledTexts, total: int, seed: int = SAMPLE_SEED) -> LabelledTexts:
    """At most `total` texts, each class in its share of the whole (largest remainders, at least one
    text a class), drawn at random with `seed` and kept in file order; what was done goes in
    `origin["sample"]` (recorded in the manifest). Data already within the cap is kept whole."""
    counts = np.bincount(data.labels, minlength=data.n_classes)
    record = {"limit_total": int(total), "seed": seed, "rows_before": len(data)}
    if len(data) <= total:
        data.origin = {**(data.origin or {}), "sample": {**record, "rows_kept": len(data), "capped": False}}
        return data
    if total < data.n_classes:
        raise UserInputError(f"--limit-total {total} is below the {data.n_classes} classes; give at least one text a class")
    exact = counts * total / len(data)
    quota = np.maximum(1, np.floor(exact).astype(int))
    for c in np.argsort(-(exact - np.floor(exact)), kind="stable"):  # the largest remainders get the rest
        if quota.sum() >= total:
            break
        quota[c] += 1
    while quota.sum() > total:  # the floor of one text a class overshot: take back from the largest
        quota[int(np.argmax(quota))] -= 1
    generator = np.random.default_rng(seed)
    keep = np.sort(np.concatenate([generator.choice(np.flatnonzero(data.labels == c), size=int(quota[c]), replace=False)
                                   for c in range(data.n_classes)]))
    sampled = data.subset(keep)
    sampled.origin = {**(data.origin or {}), "sample": {
        **record, "rows_kept": len(sampled), "capped": True,
        "class_counts_before": {data.class_names[c]: int(n) for c, n in enumerate(counts)},
        "class_counts_kept": {data.class_names[c]: int(n) for c, n in enumerate(quota)}}}
    return sampled


def fingerprint(data: LabelledTexts) -> str:
    """sha256 of the exact texts, labels and class names (base32, common.digests): same value means the same data."""
    digest = hashlib.sha256()
    for text, label in zip(data.texts, data.labels.tolist()):
        digest.update(f"{label}\t{text}\n".encode("utf-8"))
    digest.update("|".join(data.class_names).encode("utf-8"))
    return readable_digest(digest.digest())
