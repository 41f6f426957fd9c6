"""`python -m comparisons benchmark --corpora sms,zh-reviews,bbc-news,tweets --out DIR`: one plan, several corpora.

Each corpus is run exactly as `python -m comparisons run --data NAME --out DIR/NAME [the same options]`
would run it: the same runner, executor (opened once, local or Ray), resume, locks and comparability
checks, one run folder per corpus under the parent folder. `--limit-total N` caps a large corpus by a
seeded stratified sample (common.datasets.stratified_sample; recorded in each folder's manifest).
Every corpus is checked before anything is written; a corpus whose package is not installed is a
skipped row that names the install command, not an error. DIR/benchmark.json records the plan and
each corpus's status; the cross-corpus table and page (comparisons/report/cross_corpus*.py) are
written from the run folders when the runs are done, and again by `python -m comparisons report --out DIR`.

Each corpus's plan is the benchmark's typed Plan with its data and folder (comparisons/plan.py), prepared and
carried out by the very code `run` uses (`prepare`, `carry_out`); `benchmark(plan, corpora)` is the Python form.
"""
from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

from common.corpora import ALIASES, CORPORA, missing_package
from common.errors import UserInputError
from comparisons.carry_out import carry_out
from comparisons.plan import Plan, Prepared, prepare
from comparisons.run_folder import default_out
from comparisons.run_folder.writers import write_benchmark_plan
from comparisons.stats.decision import cpu_hour_price
from comparisons.report.write import write_reports
from comparisons.report.names import CROSS_CORPUS_CSV, CROSS_CORPUS_MD, REPORT_HTML
from comparisons.run.open_executor import open_executor
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


def corpus_plan(plan: Plan, name: str, parent: Path) -> Plan:
    """One corpus's plan: the benchmark's options, its data, its own folder, its whole labelled part."""
    return dataclasses.replace(plan, data=ALIASES.get(name, name), out=str(parent / name), text_col=None,
                               label_col=None, hf_split="train", positive_label=None, encoding="utf-8",
                               train_sizes=("all",), label_budget="train+valid")


def command_benchmark(args) -> int:
    """`benchmark --corpora ...`: the parsed options as a typed plan (one-line refusals), then `benchmark`."""
    if getattr(args, "up_to", None) or getattr(args, "power_plan", None):
        raise UserInputError("--up-to and --power-plan shape a learning curve of `run`; benchmark trains every corpus "
                             "on its whole labelled part: drop them")
    try:
        plan = Plan.from_namespace(args)
    except ValueError as exc:
        raise UserInputError(str(exc)) from None
    return benchmark(plan, args.corpora, args.argv)


def benchmark(plan: Plan, corpora: str, argv: list[str] | None = None) -> int:
    """Every corpus of `corpora` ('sms,zh-reviews') through `plan`, one run folder each under the plan's `out`
    (default runs/cross_corpus), then the cross-corpus table and page; 0, 1 (a run failed) or an interruption's
    code. Every corpus is prepared (and its data loaded) before anything is written."""
    parent = Path(plan.out) if plan.out is not None else default_out("benchmark", plan.profile)
    names = corpus_names(corpora)
    planned: list[Prepared] = []
    entries = []
    for name in names:  # every corpus is checked (and loaded) before anything is written
        missing = missing_package(name) if name in CORPORA else None
        if missing:
            print(f"benchmark: {name} skipped: {missing}", file=sys.stderr)
            entries.append({"corpus": name, "folder": name, "status": "skipped", "reason": missing})
            continue
        try:  # the MLflow store is the parent's, beside the corpora's folders
            prepared = prepare(corpus_plan(plan, name, parent), argv, tracking_folder=parent)
        except UserInputError as exc:
            raise UserInputError(f"corpus {name}: {exc}") from None
        planned.append(prepared)
        entries.append({"corpus": name, "folder": name, "status": "planned", "reason": "",
                        "texts": len(prepared.data), "classes": len(prepared.data.class_names)})
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(f"cannot use {parent} as the benchmark folder ({exc.strerror}); choose another --out") \
            from None
    record = {"command": "python -m comparisons " + shlex.join(argv if argv is not None else sys.argv[1:]),
              "corpora": entries, "plan": plan.to_dict(),
              "variants": planned[0].variants if planned else list(plan.backends),
              "design": {"folds": plan.cv, "repeats": plan.repeats if plan.cv else None},
              "profile": plan.profile, "seeds": plan.seeds, "limit_total": plan.limit_total,
              "limit_per_class": plan.limit_per_class, "margins": planned[0].margins if planned else None}
    with RunFolderLock(parent).acquire():  # one benchmark per parent folder; each corpus folder has its own lock too
        write_benchmark_plan(parent, record)
        code = run_corpora(plan, planned)
        write_reports(parent, [plan.lang], cpu_hour_price(plan.cpu_hour_price))
    print(f"cross-corpus: {parent / CROSS_CORPUS_MD}, {parent / CROSS_CORPUS_CSV}, {parent / REPORT_HTML}; "
          f"each corpus's runs in {parent}/<corpus>/", file=sys.stderr)
    return code


def run_corpora(plan: Plan, planned: list[Prepared]) -> int:
    """Each prepared corpus in turn through the one executor; 1 if a run failed, a signal's code if stopped."""
    if not planned:
        return 0
    largest = max(2 * sum(map(len, p.data.texts)) for p in planned)
    every_variant = list(dict.fromkeys(v for p in planned for v in p.variants))
    executor = open_executor(plan.executor, plan.ray_address, plan.max_concurrent, largest, every_variant,
                             plan.quality_only and not plan.fresh_workers)  # quality only: one warm worker a backend
    failed = 0
    try:
        for number, prepared in enumerate(planned, start=1):
            print(f"corpus {prepared.out.name} ({number}/{len(planned)}): {len(prepared.data)} texts, "
                  f"{len(prepared.data.class_names)} classes", file=sys.stderr)
            prepared.out.mkdir(parents=True, exist_ok=True)
            with RunFolderLock(prepared.out).acquire():
                code = carry_out(prepared, executor)
            if code not in (0, 1):  # interrupted: finished runs are kept, the same command resumes
                return code
            failed += code
    finally:
        executor.close()
    return 1 if failed else 0
