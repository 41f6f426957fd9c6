"""Shared command-line plumbing for the course modules: --out, --lang, --seeds, --quick, --threads.

Usage in a module:

    def main(argv=None) -> int:
        parser = course_parser("attention_cost", __doc__)
        parser.add_argument("--lengths", ...)        # module-specific options
        return run_course(parser, argv, _run)       # _run(args) -> int

`run_course` turns a `UserInputError` into one line on stderr and exit code 2.
This file imports no deep-learning framework.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from common.errors import UserInputError
from comparisons.i18n import LANGUAGES, check_language

COURSE_RESULTS = Path("results") / "course"


def default_out(module: str) -> Path:
    """results/course/<module>/ (relative to the current directory)."""
    return COURSE_RESULTS / module


def course_parser(module: str, description: str | None = None, seeds: int = 1) -> argparse.ArgumentParser:
    """An argparse parser with the options every course module shares."""
    first_line = (description or module).strip().splitlines()[0]
    parser = argparse.ArgumentParser(prog=f"python -m comparisons.{module}", description=first_line)
    parser.add_argument("--out", type=Path, default=default_out(module),
                        help=f"output folder (default {default_out(module)})")
    parser.add_argument("--lang", default="en", choices=LANGUAGES,
                        help="language of table headers, titles and axis labels")
    parser.add_argument("--seeds", type=int, default=seeds, help=f"number of model seeds (default {seeds})")
    parser.add_argument("--quick", action="store_true",
                        help="tiny settings (a small data subset, 1 epoch): for tests, seconds not minutes")
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads for torch/numpy (default: leave as is)")
    return parser


def parse_course_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse and check the shared options; creates --out."""
    args = parser.parse_args(argv)
    check_language(args.lang)
    if args.seeds < 1:
        raise UserInputError(f"--seeds {args.seeds} must be at least 1")
    if args.threads is not None:
        if args.threads < 1:
            raise UserInputError(f"--threads {args.threads} must be at least 1")
        set_threads(args.threads)
    args.out = Path(args.out)
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
              "batch_size": 32, "learning_rate": 2e-3}
    if quick:
        config.update(d_model=16, ff_dim=32, epochs=1)
    config.update(overrides)
    return config


def report_written(paths: Sequence[Path]) -> None:
    """Print the files a module wrote, one a line."""
    for path in paths:
        print(f"wrote {path}")
