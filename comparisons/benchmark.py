"""`python -m comparisons benchmark --corpora sms,zh-reviews,bbc-news,tweets --out DIR`: one plan, several corpora.

Each corpus is run exactly as `python -m comparisons run --data NAME --out DIR/NAME [the same options]`
would run it: the same runner, executor (opened once, local or Ray), resume, locks and comparability
checks, one run folder per corpus under the parent folder. `--limit-total N` caps a large corpus by a
seeded stratified sample (common.datasets.stratified_sample; recorded in each folder's manifest).
Every corpus is checked before anything is written; a corpus whose package is not installed is a
skipped row that names the install command, not an error. DIR/benchmark.json records the plan and
each corpus's status; the cross-corpus table and page (comparisons/report/cross_corpus*.py) are
written from the run folders when the runs are done, and again by `python -m comparisons report --out DIR`.

The command line hands over its own `prepare`, `run_in_folder` and `run_partitions` (comparisons/cli.py), so a
corpus is planned and run by the very code `run` uses, and this module does not import the command line back.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from common.corpora import ALIASES, CORPORA, missing_package
from common.errors import UserInputError
from comparisons.outputs import atomic_write_json
from comparisons.run_folder import default_out
from comparisons.report.cross_corpus import PLAN_FILE
from comparisons.report.cross_corpus_page import write_cross_corpus_reports
from comparisons.run.executors import open_executor
from comparisons.run.lock import RunFolderLock

SHIPPED = ("sms", "sms_spam")  # the shipped SMS Spam Collection


def corpus_names(value: str) -> list[str]:
    """'sms,zh-reviews' -> ['sms', 'zh-reviews'], in the order given, without repeats; unknown names refused."""
    names = list(dict.fromkeys("sms" if n.strip() == "sms_spam" else n.strip() for n in value.split(",") if n.strip()))
    if not names:
        raise UserInputError("--corpora is empty; e.g. --corpora sms,zh-reviews,bbc-news,tweets")
    unknown = [n for n in names if n not in SHIPPED and n not in CORPORA]
    if unknown:
        raise UserInputError(f"--corpora: unknown corpus {unknown[0]!r}; choose from sms, {', '.join(CORPORA)}")
    return names


def corpus_arguments(args, name: str, parent: Path) -> argparse.Namespace:
    """The `run` arguments of one corpus: the benchmark's options, its data, its own folder."""
    values = {**vars(args), "data": ALIASES.get(name, name), "out": parent / name, "text_col": None, "label_col": None,
              "hf_split": "train", "positive_label": None, "encoding": "utf-8", "train_sizes": "all",
              "label_budget": "train+valid"}
    return argparse.Namespace(**values)


def command_benchmark(args, prepare, run_in_folder, run_partitions) -> int:
    parent = args.out or default_out("benchmark", args.profile)
    names = corpus_names(args.corpora)
    planned, entries = [], []
    for name in names:  # every corpus is checked (and loaded) before anything is written
        missing = missing_package(name) if name in CORPORA else None
        if missing:
            print(f"benchmark: {name} skipped: {missing}", file=sys.stderr)
            entries.append({"corpus": name, "folder": name, "status": "skipped", "reason": missing})
            continue
        corpus_args = corpus_arguments(args, name, parent)
        try:
            variants, data, split, spec = prepare(corpus_args)
        except UserInputError as exc:
            raise UserInputError(f"corpus {name}: {exc}") from None
        planned.append((name, corpus_args, variants, data, split, spec))
        entries.append({"corpus": name, "folder": name, "status": "planned", "reason": "", "texts": len(data),
                        "classes": len(data.class_names)})
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(f"cannot use {parent} as the benchmark folder ({exc.strerror}); choose another --out") \
            from None
    first = planned[0][1] if planned else args
    plan = {"command": "python -m comparisons " + shlex.join(sys.argv[1:]), "corpora": entries,
            "variants": planned[0][2] if planned else [v.strip() for v in args.backends.split(",") if v.strip()],
            "design": {"folds": args.cv, "repeats": args.repeats if args.cv else None},
            "profile": args.profile, "seeds": args.seeds, "limit_total": args.limit_total,
            "limit_per_class": args.limit_per_class, "margins": getattr(first, "margins", None)}
    with RunFolderLock(parent).acquire():  # one benchmark per parent folder; each corpus folder has its own lock too
        atomic_write_json(parent / PLAN_FILE, plan)
        code = run_corpora(args, parent, planned, run_in_folder, run_partitions)
        for language in dict.fromkeys(["en", args.lang]):
            write_cross_corpus_reports(parent, language, args.cpu_hour_price)
    print(f"cross-corpus: {parent}/cross_corpus.md, {parent}/cross_corpus.csv, {parent}/report.html; "
          f"each corpus's runs in {parent}/<corpus>/", file=sys.stderr)
    return code


def run_corpora(args, parent: Path, planned: list, run_in_folder, run_partitions) -> int:
    """Each planned corpus in turn through the one executor; 1 if a run failed, a signal's code if stopped."""
    if not planned:
        return 0
    largest = max(2 * sum(map(len, data.texts)) for _, _, _, data, _, _ in planned)
    every_variant = list(dict.fromkeys(v for _, _, variants, _, _, _ in planned for v in variants))
    executor = open_executor(args.executor, args.ray_address, args.max_concurrent, largest, every_variant)
    failed = 0
    try:
        for number, (name, corpus_args, variants, data, split, spec) in enumerate(planned, start=1):
            print(f"corpus {name} ({number}/{len(planned)}): {len(data)} texts, {len(data.class_names)} classes",
                  file=sys.stderr)
            out = corpus_args.out
            out.mkdir(parents=True, exist_ok=True)
            with RunFolderLock(out).acquire():
                if corpus_args.cv is not None:
                    code = run_partitions(corpus_args, out, variants, data, spec, executor)
                else:
                    code = run_in_folder(corpus_args, out, variants, data, split, spec, executor)
            if code not in (0, 1):  # interrupted: finished runs are kept, the same command resumes
                return code
            failed += code
    finally:
        executor.close()
    return 1 if failed else 0
