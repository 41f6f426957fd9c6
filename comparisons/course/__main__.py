"""The course wing's own commands.

    python -m comparisons.course list
    python -m comparisons.course notebooks [--out notebooks] [--lang zh en] [--lessons eda ...] [--execute] [--quick]
    python -m comparisons.course run [--lang en zh] [--lessons eda ...] [--quick]

`notebooks` writes one .ipynb per lesson and language (jupytext); `--execute` also runs them with
nbclient. `run` runs every lesson at its defaults, one at a time, each in a fresh process, into
results/course/<lang>/<lesson>/, and records each one's wall time in results/course/wall_times.csv.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from common.arguments import OneLineParser
from common.errors import UserInputError
from comparisons.course import LESSONS
from comparisons.course.shared import COURSE_RESULTS
from comparisons.report.i18n import LANGUAGES


def available_lessons(requested: list[str] | None) -> list[str]:
    """The requested lessons (default: every lesson in LESSONS whose file exists), in teaching order."""
    from comparisons.course.notebooks import COURSE_DIR

    if not requested:
        return [lesson for lesson in LESSONS if (COURSE_DIR / f"{lesson}.py").is_file()]
    unknown = [lesson for lesson in requested if lesson not in LESSONS]
    if unknown:
        raise UserInputError(f"unknown lesson(s) {', '.join(unknown)}; choose from {', '.join(LESSONS)}")
    return [lesson for lesson in LESSONS if lesson in requested]


def notebooks_command(args: argparse.Namespace) -> int:
    from comparisons.course.notebooks import execute_notebook, write_notebooks

    options = ["--quick"] if args.quick else []
    for path in write_notebooks(args.out, available_lessons(args.lessons), args.lang, options):
        if args.execute:
            import nbformat

            started = time.perf_counter()
            notebook = execute_notebook(nbformat.read(path, as_version=4))
            nbformat.write(notebook, path)
            print(f"executed {path} ({time.perf_counter() - started:.0f} s)")
        else:
            print(f"wrote {path}")
    return 0


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_command(args: argparse.Namespace) -> int:
    """Each lesson at its defaults in a fresh process, one at a time; wall times to wall_times.csv."""
    import pandas as pd

    from comparisons.outputs import write_table

    rows = []
    for lesson in available_lessons(args.lessons):
        for lang in args.lang:
            out = COURSE_RESULTS / lang / lesson
            command = [sys.executable, "-m", f"comparisons.course.{lesson}", "--lang", lang, "--out", str(out)]
            command += ["--quick"] if args.quick else []
            print("$ " + " ".join(command[1:]), flush=True)
            load_before, cpu_before = os.getloadavg()[0], _children_cpu_seconds()
            started = time.perf_counter()
            code = subprocess.call(command)
            # CPU seconds beside wall seconds: on a shared machine the wall time also counts waiting
            rows.append({"lesson": lesson, "lang": lang, "wall_s": round(time.perf_counter() - started, 1),
                         "cpu_s": round(_children_cpu_seconds() - cpu_before, 1),
                         "load_1min": round((load_before + os.getloadavg()[0]) / 2, 1),
                         "exit_code": code, "quick": args.quick})
            print(f"{lesson} ({lang}): exit {code}, {rows[-1]['wall_s']} s", flush=True)
    if args.record and not args.quick:
        path = COURSE_RESULTS / "wall_times.csv"
        if path.is_file():  # keep the rows of lessons not rerun this time
            old = pd.read_csv(path)
            rerun = {(row["lesson"], row["lang"]) for row in rows}
            rows = [row for row in old.to_dict("records") if (row["lesson"], row["lang"]) not in rerun] + rows
        order = {lesson: k for k, lesson in enumerate(LESSONS)}
        frame = pd.DataFrame(rows).sort_values(["lesson", "lang"], key=lambda c: c.map(order) if c.name == "lesson" else c)
        for written in write_table(frame, COURSE_RESULTS, "wall_times", "Wall time of each lesson at its defaults"):
            print(f"wrote {written}")
    return 1 if any(row["exit_code"] for row in rows) else 0


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.course", description="The course wing's commands.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the lessons in teaching order")
    notebooks = commands.add_parser("notebooks", help="write every lesson as a .ipynb (jupytext)")
    notebooks.add_argument("--out", type=Path, default=Path("notebooks"), help="output folder (default notebooks/)")
    runs = commands.add_parser("run", help="run every lesson at its defaults into results/course/<lang>/")
    runs.add_argument("--record", action=argparse.BooleanOptionalAction, default=True,
                      help="record wall times in results/course/wall_times.csv (default on)")
    for sub, langs in ((notebooks, ["zh", "en"]), (runs, ["en", "zh"])):
        sub.add_argument("--lang", nargs="+", default=langs, choices=LANGUAGES, help=f"languages (default {' '.join(langs)})")
        sub.add_argument("--lessons", nargs="+", default=None, help="lessons to include (default: all)")
        sub.add_argument("--quick", action="store_true", help="pass --quick to every lesson")
    notebooks.add_argument("--execute", action="store_true", help="also run each notebook (nbclient)")
    args = parser.parse_args(argv)
    try:
        if args.command == "list":
            for number, lesson in enumerate(available_lessons(None), 1):
                print(f"{number:2d}  {lesson}")
            return 0
        return notebooks_command(args) if args.command == "notebooks" else run_command(args)
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
