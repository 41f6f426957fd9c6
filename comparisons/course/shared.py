"""What the lessons share: command-line plumbing (--out, --lang, --seeds, --quick, --threads), the
course's data split and small model config, and the attention-map helpers (safe tokens, heatmap).

Usage in a module:

    def main(argv=None) -> int:
        parser = course_parser("attention_cost", __doc__)
        parser.add_argument("--lengths", ...)        # module-specific options
        return run_course(parser, argv, _run)       # _run(args) -> int

`run_course` turns a `UserInputError` into one line on stderr and exit code 2.
No lesson imports another lesson; what two need lives here. This file imports no deep-learning
framework.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from common.arguments import OneLineParser
from common.errors import UserInputError
from common.redaction import redact, redaction_spans
from common.vocabulary import TOKEN_PATTERN
from comparisons.report.i18n import LANGUAGES, check_language, text

COURSE_RESULTS = Path("results") / "course"


def default_out(module: str, lang: str = "en") -> Path:
    """results/course/<lang>/<module>/ (relative to the current directory)."""
    return COURSE_RESULTS / lang / module


def course_parser(module: str, description: str | None = None, seeds: int | None = None) -> argparse.ArgumentParser:
    """An argparse parser with the options every lesson shares; --seeds only for a lesson that trains
    several seeds (seeds = its default), so that a lesson never accepts an option it ignores."""
    first_line = (description or module).strip().splitlines()[0]
    parser = OneLineParser(prog=f"python -m comparisons.course.{module}", description=first_line)
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output folder (default {COURSE_RESULTS}/<lang>/{module})")
    parser.set_defaults(lesson=module)
    parser.add_argument("--lang", default="en",  # checked by check_language: one `error:` line, not argparse's usage
                        help=f"language of table headers, titles and axis labels: {' or '.join(LANGUAGES)}")
    if seeds is not None:
        parser.add_argument("--seeds", type=int, default=seeds, help=f"number of model seeds (default {seeds})")
    parser.add_argument("--quick", action="store_true",
                        help="tiny settings (a small data subset, 1 epoch): for tests, seconds not minutes")
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads for torch/numpy (default: %(default)s; None leaves the libraries' own setting)")
    return parser


def parse_course_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse and check the shared options; creates --out."""
    args = parser.parse_args(argv)
    check_language(args.lang)
    if getattr(args, "seeds", 1) < 1:
        raise UserInputError(f"--seeds {args.seeds} must be at least 1")
    if args.threads is not None:
        if args.threads < 1:
            raise UserInputError(f"--threads {args.threads} must be at least 1")
        set_threads(args.threads)
    args.out = Path(args.out) if args.out is not None else default_out(args.lesson, args.lang)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(f"cannot create output folder {args.out} ({exc.strerror}); choose another --out") from None
    return args


def run_course(parser: argparse.ArgumentParser, argv: Sequence[str] | None,
               body: Callable[[argparse.Namespace], int]) -> int:
    """Parse argv, run body(args); a UserInputError becomes one line on stderr and exit code 2."""
    try:
        args = parse_course_args(parser, argv)
        return int(body(args) or 0)
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def set_threads(threads: int) -> None:
    """Same thread count for OpenMP/BLAS and, if already imported or importable, torch."""
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def load_course_splits(quick: bool = False, limit_per_class: int | None = None):
    """(train, valid, test) of the shipped SMS data, split as the suite splits it.

    quick=True uses 60 messages per class (the tests' tiny subset); limit_per_class overrides.
    """
    from common.datasets import DataSpec, load
    from common.splits import stratified_split

    if limit_per_class is None and quick:
        limit_per_class = 60
    data = load(DataSpec(limit_per_class=limit_per_class))
    split = stratified_split(data)
    return tuple(data.subset(getattr(split, name)) for name in ("train", "valid", "test"))


def scratch_config(quick: bool = False, **overrides) -> dict:
    """A small torch_scratch/keras_layers EncoderConfig dict: minutes on 2 CPUs, seconds with quick."""
    config = {"d_model": 32, "num_heads": 2, "num_layers": 1, "ff_dim": 64, "max_len": 64, "epochs": 2,
              "batch_size": 32, "learning_rate": 2e-3,
              "pooling": "mean"}  # the masked mean the lessons teach (the comparison recipe reads a <cls>)
    if quick:
        config.update(d_model=16, ff_dim=32, epochs=1, min_steps=0)  # min_steps=0: no budget scaling, seconds
    config.update(overrides)
    return config


def report_written(paths: Sequence[Path]) -> None:
    """Print the files a module wrote, one a line."""
    for path in paths:
        print(f"wrote {path}")


SPECIAL_TOKENS = ("<pad>", "<unk>", "<cls>")


# --- attention maps: tokens safe to show, the message to show, the heatmap (attention_map, causal_mask)
def display_tokens(message: str, model_tokens: list[str]) -> list[str]:
    """The model's tokens of `message`, each one that overlaps a number/link/e-mail replaced by
    <NUM>/<URL>/<EMAIL> (aligned by character span), and every token passed through redact()."""
    # lower-case as the tokenizer does ('İ' becomes two characters), remembering for each lowered
    # character the position in `message` it came from, so token offsets are those of `message`
    lowered = "".join(ch.lower() for ch in message)
    origin = [i for i, ch in enumerate(message) for _ in ch.lower()]
    spans = redaction_spans(message)
    offsets = [(origin[m.start()], origin[m.end() - 1] + 1) for m in TOKEN_PATTERN.finditer(lowered)]
    prefix = 1 if model_tokens and model_tokens[0] == "<cls>" else 0
    shown = []
    for position, token in enumerate(model_tokens):
        label = token if token in SPECIAL_TOKENS else redact(token)
        index = position - prefix
        if 0 <= index < len(offsets):
            start, end = offsets[index]
            for span_start, span_end, placeholder in spans:
                if start < span_end and span_start < end:
                    label = placeholder
                    break
        shown.append(label)
    return shown


def choose_message(test, index: int | None, min_tokens: int = 6, max_tokens: int = 24) -> int:
    """Row of the test split to show: `index` if given, else the first spam of min..max tokens
    (else the shortest spam): spam is broadcast advertising, not someone's private note."""
    from common.vocabulary import tokenize

    if index is not None:
        if not 0 <= index < len(test):
            raise UserInputError(f"--message {index} is outside the test split (0..{len(test) - 1})")
        return index
    spam = [row for row, label in enumerate(test.labels) if label == test.positive_index]
    if not spam:
        raise UserInputError("the test split holds no positive message to show; pass --message N")
    lengths = {row: len(tokenize(test.texts[row])) for row in spam}
    readable = [row for row in spam if min_tokens <= lengths[row] <= max_tokens]
    return readable[0] if readable else min(spam, key=lambda row: (lengths[row], row))


def attention_figure(weights: np.ndarray, labels: list[str], title: str, lang: str, ax=None):
    """Heatmap of (T, T) weights, rows = queries, columns = keys, labelled with safe tokens."""
    import matplotlib.pyplot as plt

    fig = None
    if ax is None:
        size = 2.5 + 0.28 * len(labels)
        fig, ax = plt.subplots(figsize=(size + 1.0, size))
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, interpolation="nearest")
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xlabel(text("key (attended to)", "键 (被关注的词)", lang))
    ax.set_ylabel(text("query (looking)", "查询 (发出关注的词)", lang))
    ax.set_title(title, fontsize=10)
    ax.figure.colorbar(image, ax=ax, fraction=0.046)
    return fig or ax.figure


def paired_seed_tests(differences: Sequence[np.ndarray]) -> list[dict]:
    """For each cell's paired differences over seeds: the mean, its 95% t interval, the paired t-test's two-sided p,
    and Holm's p over the cells (comparisons/stats/family.holm): a lesson that asks its question at several lengths
    or sizes asks several questions, and its verdict reads the corrected p."""
    from scipy import stats

    from comparisons.stats.family import holm

    rows = []
    for values in differences:
        values = np.asarray(values, dtype=float)
        n, mean = len(values), float(values.mean())
        spread = float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
        half = float(stats.t.ppf(0.975, n - 1) * spread) if n > 1 else float("nan")
        if n < 2:
            p = float("nan")
        elif spread > 0:
            p = float(2 * stats.t.sf(abs(mean) / spread, n - 1))
        else:  # every seed gave the same difference: no spread to doubt it by
            p = 0.0 if mean != 0 else 1.0
        rows.append({"mean": mean, "low": mean - half, "high": mean + half, "p": p})
    for row, adjusted in zip(rows, holm(np.nan_to_num(np.array([r["p"] for r in rows]), nan=1.0))):
        row["p_holm"] = float(adjusted)
    return rows
