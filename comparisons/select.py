"""`transformer-compare select`: which recipe to deploy on my data, within my CPU budget, with a stated confidence.

    transformer-compare select --data my.csv --labels 200 --budget-minutes 60 [--delta 0.01] [--confidence 0.95]
    transformer-compare select --replay DIR      # re-decide from DIR's records alone: the same pick, or exit 1

The candidates run on one repeat of K group-aware stratified folds (each fold its own training draw and seed, every
candidate of a fold on the same texts), one fold at a time; after each, comparisons/stats/recipe_selection.py decides
who is out, whether a candidate can be claimed (the best or within delta of it, with probability at least the
confidence) and who runs next. The first fold is the pilot: every candidate runs (one at a time, so that a budget too
small for it is refused after the run that shows it), and its measured minutes become
the predicted cost of each candidate's later runs, recorded in selection.json before any decision uses them, so the
decisions depend on the records alone (`--replay`). The folder is a design folder (its partitions are run folders);
selection.json, selection.md and the page selection.html (and both under zh/) say what was decided and why. A pick is then trained on all
the labels and shipped in DIR/deploy (native, ONNX where its backend exports, MODEL_CARD.md: comparisons/deploy.py)
unless --no-deploy.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from common.errors import UserInputError
from comparisons.run_folder.names import SELECTION as SELECTION_FILE
from comparisons.run_folder.selection_record import SelectionRecord
from comparisons.selection_caps import ServingCaps

FOLDS = 20           # the default K: at most this many partitions (a selection's J_max is capped by it)
PILOT_FOLD = 0       # the fold whose measured minutes predict every later run's cost


def add_select_parser(commands) -> None:
    select = commands.add_parser("select", help="which recipe to deploy on my data within a CPU budget, with a "
                                                "stated confidence (docs/statistics.md, 'Selecting a recipe')")
    select.add_argument("--data", default="sms_spam", help="a CSV/TSV path or a named corpus, as for run")
    select.add_argument("--text-col", help="text column of a CSV/TSV (default text)")
    select.add_argument("--label-col", help="label column of a CSV/TSV with a header (default label)")
    select.add_argument("--candidates", help="comma-separated variants (default: every one this machine can run, "
                                             "SetFit included)")
    select.add_argument("--labels", type=int, metavar="N",
                        help="the labelled texts a recipe may learn from (training and validation; default: all)")
    select.add_argument("--budget-minutes", type=float, help="CPU minutes the selection may spend (required)")
    select.add_argument("--delta", type=float, default=0.01,
                        help="indifference zone: AP differences below it do not matter (default 0.01)")
    select.add_argument("--confidence", type=float, default=0.95, help="probability of a good pick (default 0.95)")
    select.add_argument("--folds", type=int, default=FOLDS, help=f"K: the most partitions (default {FOLDS})")
    select.add_argument("--profile", default="full", help="the recipes' budget profile (default full)")
    select.add_argument("--threads", type=int, default=2)
    select.add_argument("--lang", default="en", help="en or zh")
    select.add_argument("--out", type=Path, help="the selection folder (default runs/selection)")
    select.add_argument("--replay", type=Path, metavar="DIR", help="re-decide a selection folder from its records")
    select.add_argument("--max-latency-ms", type=float, help="serving cap: batch-1 latency (median ms) a candidate "
                                                              "may have (measured in the pilot fold)")
    select.add_argument("--max-memory-mb", type=float, help="serving cap: the serving process's peak memory (MB)")
    select.add_argument("--max-cost-per-million", type=float,
                        help="serving cap: USD per million predictions at --cpu-hour-price (batch-32 throughput)")
    select.add_argument("--cpu-hour-price", type=float,
                        help="USD a CPU-hour for the costs per million predictions (default 0.05)")
    select.add_argument("--no-deploy", action="store_true",
                        help="do not train the pick on all labels (by default it is trained and saved in DIR/deploy "
                             "with an ONNX graph where its backend exports one, and a model card)")


def installed_candidates() -> list[str]:
    """Every built-in variant whose frameworks are installed (the seed course's TF-IDF twin left out), SetFit too."""
    from backends.base import VARIANTS, missing_modules, resolve_variant

    return [v for v in VARIANTS if v != "tfidf_logreg:seed" and not missing_modules(resolve_variant(v)[0])]


@dataclass(frozen=True)
class SelectSettings:
    """What a selection is asked (the command's options; api.select's arguments)."""

    budget_minutes: float | None
    data: str = "sms_spam"
    text_col: str | None = None
    label_col: str | None = None
    candidates: tuple[str, ...] = ()   # empty: every variant this machine can run (installed_candidates)
    labels: int | None = None          # the labelled texts a recipe may learn from; None: all
    delta: float = 0.01
    confidence: float = 0.95
    folds: int = FOLDS
    profile: str = "full"
    threads: int = 2
    lang: str = "en"
    out: Path | None = None
    deploy: bool = True
    caps: ServingCaps = ServingCaps()  # serving caps and the CPU-hour price (comparisons/selection_caps.py)

    @classmethod
    def from_args(cls, args) -> "SelectSettings":
        candidates = tuple(c for c in (args.candidates or "").split(",") if c)
        caps = ServingCaps(args.max_latency_ms, args.max_memory_mb, args.max_cost_per_million, args.cpu_hour_price)
        return cls(args.budget_minutes, args.data, args.text_col, args.label_col, candidates, args.labels, args.delta,
                   args.confidence, args.folds, args.profile, args.threads, args.lang, args.out, not args.no_deploy,
                   caps)


def check_settings(args: SelectSettings) -> None:
    """The selection's own one-line refusals (the plan's are Plan's)."""
    if args.budget_minutes is None or args.budget_minutes <= 0:
        raise UserInputError("--budget-minutes is required and must be positive, e.g. --budget-minutes 60")
    if not 0 < args.delta < 1:
        raise UserInputError(f"--delta {args.delta}: give an AP difference between 0 and 1, e.g. 0.01")
    if not 0.5 < args.confidence < 1:
        raise UserInputError(f"--confidence {args.confidence}: give a probability between 0.5 and 1, e.g. 0.95")
    if args.folds < 3:
        raise UserInputError(f"--folds {args.folds}: a selection needs at least 3 partitions (e.g. --folds 20)")
    if args.labels is not None and args.labels < 10:
        raise UserInputError(f"--labels {args.labels}: give at least 10 labelled texts (leave it out for all of them)")
    args.caps.check()
    if args.caps.measured and args.labels is not None:  # the worker measures serving on whole-budget runs only
        raise UserInputError("serving caps and --cpu-hour-price are measured on recipes trained on all the labels; "
                             "leave out --labels to use them, or leave out the caps")


def selection_plan_of(args: SelectSettings):
    from comparisons.plan import Plan

    candidates = tuple(args.candidates) or tuple(installed_candidates())
    if len(set(candidates)) < 2:
        raise UserInputError("select needs at least two candidates; name them with --candidates A,B[,...]")
    try:
        return Plan(data=args.data, text_col=args.text_col, label_col=args.label_col, backends=candidates, cv=args.folds, repeats=1,
                    train_sizes=(str(args.labels) if args.labels else "all",), seeds=1, draws=1,
                    quality_only=True, profile=args.profile, threads=args.threads, lang=args.lang,
                    out=str(args.out or Path("runs") / "selection"))
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def design_ratio(p) -> float:
    """r = rho / (1 - rho) of the design, fixed before the first look from its sizes alone: Nadeau-Bengio's
    n_test / n_train, capped at the training overlap two folds' draws can share (n / the pool drawn from)."""
    from common.splits import largest_train_size
    from comparisons.stats.design_variance import design_correlation

    split = p.partitions[0].split
    pool = largest_train_size(split, p.plan.label_budget)
    used = p.train_sizes[0] or pool
    rho, _ = design_correlation(used / pool, split.sizes()["test"] / used, "overlap")  # the design's own rule
    return float(rho / (1 - rho)) if rho < 1 else math.inf


def fold_scores(folder: Path, names) -> tuple[dict[str, float], dict[str, float], dict[str, float], dict]:
    """({candidate: test AP}, {candidate: training minutes}, {candidate: wall minutes}, {candidate: its run record})
    of a partition's runs of `names`; a failed or missing run stops the selection in one line."""
    from comparisons.run_folder import read_runs

    scores, training, wall, records = {}, {}, {}, {}
    for record in read_runs(folder):
        name = record.variant
        if name not in names:
            continue
        records[name] = record
        if not record.ok:
            raise UserInputError(f"{name} failed in {folder} ({record.get('reason')}); its log is "
                                 f"in {folder}/logs; fix it or leave it out of --candidates")
        scores[name] = float(record["average_precision"])
        training[name] = float(record.get("train_seconds") or 0.0) / 60
        wall[name] = float(record.get("wall_seconds") or record.get("train_seconds") or 0.0) / 60
    missing = [n for n in names if n not in scores]
    if missing:
        raise UserInputError(f"{', '.join(missing)} left no record in {folder}; run the same command again to resume")
    return scores, training, wall, records


def predicted_costs(training: dict[str, float], wall: dict[str, float], skipped: dict[str, float]) -> dict[str, float]:
    """Each candidate's predicted minutes a run, from its own pilot run: that run's wall less what a later run does
    not do (`skipped`: its imports, which a warm worker has; the serving measurements a pilot under serving caps
    makes), never below its training. A candidate's time outside training is its own (the MiniLM scores a fold's
    test texts in 5-13 s, TF-IDF in under 1): the smallest overhead of any candidate, the rule before, predicted
    29.5 minutes for a selection whose runs took 32.4 (tweets at 200 labels, results/selection/README.md)."""
    return {n: max(training[n], wall[n] - skipped.get(n, 0.0)) for n in training}


def not_repeated_minutes(record) -> float:
    """Minutes of a pilot run that a later fold's run of the same candidate does not spend: its imports (a warm
    worker has them) and, where the pilot measured serving costs, the latency calls, the timed throughput passes
    and the cold start's fresh process (later folds measure quality only)."""
    def number(key: str) -> float:
        return float(record.get(key) or 0.0)

    latency = sum(number(f"latency_ms_b{size}_calls") * number(f"latency_ms_b{size}_p50") / 1000 for size in (1, 32))
    per_second = number("throughput_per_s")
    throughput = number("throughput_passes") * number("throughput_texts") / per_second if per_second else 0.0
    return (number("import_seconds") + latency + throughput + number("cold_start_s")) / 60


def refuse_pilot(folder: Path, ran: list[str], budget: float) -> None:
    """One line, the runs kept, when the pilot's candidates measured so far show that the budget cannot hold the
    pilot or the first folds: their wall minutes already pass it, or their training minutes alone, FIRST times,
    do (training is the least of every later run's predicted cost: predicted_costs). So the pilot passes the budget by
    at most one run."""
    from comparisons.stats.recipe_selection import FIRST

    _, training, wall, _ = fold_scores(folder, ran)
    spent, least = sum(wall.values()), FIRST * sum(training.values())
    if spent > budget or least > budget:
        raise UserInputError(f"--budget-minutes {budget:g} cannot hold the pilot fold: its first {len(ran)} "
                             f"candidate(s) took {spent:.1f} minutes and the first {FIRST} folds of them need at "
                             f"least {least:.1f}; give more minutes or fewer candidates (the runs are kept: the same "
                             "command with a larger budget resumes)")


def within_caps(p, caps: ServingCaps, names: list[str], records: dict) -> tuple[list[str], dict, dict]:
    """(the candidates within the caps, {candidate: serving figures}, {candidate: why excluded}) from the pilot's
    records; one line when fewer than two are left (nothing to select among)."""
    serving = {n: caps.figures(records[n], p.plan.threads) for n in names}
    excluded = caps.excluded(serving)
    left = [n for n in names if n not in excluded]
    if len(left) < 2:
        why = "; ".join(f"{n}: {reason}" for n, reason in excluded.items())
        only = f"only {left[0]} is within them, nothing to select among (deploy it, or relax the caps)" if left \
            else "no candidate is within them"
        raise UserInputError(f"the serving caps leave {len(left)} candidate(s): {only} ({why})")
    return left, serving, excluded


def _nan_last(value: float) -> float:
    return math.inf if value != value else value


def run_selection(p, executor, settings: SelectSettings) -> tuple[int, SelectionRecord | None]:
    """The selection's loop over the folds: (0 and selection.json's record, also written after every fold), or an
    interruption's exit code and None."""
    from comparisons.carry_out import run_in_folder
    from comparisons.comparability import code_state
    from comparisons.plan_records import design_record
    from comparisons.run_folder.writers import write_design
    from comparisons.stats.recipe_selection import CONTINUE, FIRST, SelectionPlan, decide, most_partitions

    delta, confidence, budget, caps = settings.delta, settings.confidence, settings.budget_minutes, settings.caps
    out, code = p.out, code_state()
    write_design(out, design_record(p, p.partitions, code))
    names, plan, rows, looks, serving, excluded = list(p.variants), None, [], [], {}, {}
    for index, partition in enumerate(p.partitions):
        look = decide(np.array(rows).reshape(-1, len(plan.candidates)), plan) if plan else None
        if look is not None and look.outcome != CONTINUE:
            break
        runs = list(look.next_runs) if look is not None else names
        print(f"fold {index + 1}/{len(p.partitions)}: {', '.join(runs)}", file=sys.stderr)
        folder = out / "partitions" / partition.name
        fold = replace(p, variants=runs)
        if plan is None and caps.measured:  # the pilot measures serving costs too, for the caps and the costs
            fold = replace(fold, plan=replace(p.plan, quality_only=False))
        # the pilot one candidate at a time (a growing plan: the finished ones resume), so that a budget too small
        # for it is refused after the run that showed it; a later fold's runs go in one plan
        for count in range(1, len(runs) + 1) if plan is None else [len(runs)]:
            exit_code = run_in_folder(replace(fold, variants=runs[:count]), folder, partition.split, executor,
                                      reports=False, code=code, partition_index=index)
            if exit_code not in (0, 1):  # interrupted: the finished runs are kept, the same command resumes
                return exit_code, None
            if plan is None and count < len(runs):
                refuse_pilot(folder, runs[:count], budget)
        scores, training, minutes, records = fold_scores(folder, runs)
        if plan is None:  # the pilot fold: its minutes predict every later run's, recorded before any decision
            if caps.measured:
                names, serving, excluded = within_caps(p, caps, names, records)
                training = {n: training[n] for n in names}
            predicted = predicted_costs(training, minutes, {n: not_repeated_minutes(records[n]) for n in training})
            order = sorted(names, key=lambda n: (predicted[n], names.index(n)))
            costs = tuple(round(predicted[n], 4) for n in order)
            most = min(len(p.partitions), most_partitions(costs, budget, FIRST, len(p.partitions)))
            if sum(costs) * FIRST > budget:
                raise UserInputError(f"--budget-minutes {budget:g} is below the first {FIRST} folds of every "
                                     f"candidate (about {sum(costs) * FIRST:.1f} minutes predicted from the first); "
                                     "give more minutes or fewer candidates")
            preference = ()  # serving measured: the cheapest to serve is preferred among claimable candidates
            if caps.measured:
                preference = tuple(sorted(order, key=lambda n: (_nan_last(serving[n]["cost_per_million"]),
                                                                order.index(n))))
            plan = SelectionPlan(tuple(order), costs, delta, 1 - confidence, design_ratio(p), FIRST, max(FIRST, most),
                                 budget, preference=preference)
        rows.append([scores.get(n, np.nan) for n in plan.candidates])
        looks.append({"partition": partition.name, "ran": runs, "minutes": {n: round(m, 4) for n, m in minutes.items()}})
        measured = {"caps": caps.to_dict(), "figures": serving, "excluded": excluded} if caps.measured else None
        record = selection_record(plan, rows, looks, decide(np.array(rows), plan), measured)
        write_selection(out, record)
    return 0, record


def write_selection(out: Path, record: SelectionRecord) -> None:
    """selection.json, then its report in each language (report/selection_report.py), each file written whole."""
    from comparisons.outputs import atomic_write_json
    from comparisons.report.selection_report import write_selection_report

    atomic_write_json(out / SELECTION_FILE, record.to_dict())
    write_selection_report(out, record)


def selection_record(plan, rows, looks, final, serving: dict | None = None) -> SelectionRecord:
    """selection.json: the plan, every fold's scores and runs, the decision as it stands (and the serving caps'
    figures where caps were given)."""
    behind = final.behind_best(plan)
    fields = {"plan": plan.to_dict(),
            "scores": [[None if np.isnan(v) else float(v) for v in row] for row in rows],
            "folds": looks,
            "decision": {"outcome": final.outcome, "pick": final.pick, "claimable": list(final.claimable),
                         "eliminated": final.eliminated, "behind_best": behind,
                         "partitions": final.partitions, "predicted_minutes": round(final.spent, 4),
                         "wall_minutes": round(sum(sum(f["minutes"].values()) for f in looks), 4),
                         "next_runs": list(final.next_runs)}}
    return SelectionRecord(fields if serving is None else {**fields, "serving": serving})


def replay_folder(folder: Path) -> int:
    """Re-decide a selection folder from selection.json's records: 0 when the pick and every fold's runs agree."""
    from comparisons.stats.recipe_selection import SelectionPlan, replay

    path = Path(folder) / SELECTION_FILE
    try:
        record = SelectionRecord.read(folder)
        plan, scores = SelectionPlan.from_dict(record.plan), record.scores
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise UserInputError(f"{path} is not a selection's record; give a folder written by `select`") from None
    try:
        look = replay(scores, plan)
    except ValueError as exc:
        print(f"replay differs: {exc}", file=sys.stderr)
        return 1
    same = (look.outcome, look.pick, list(look.claimable)) == (record.outcome, record.pick, record.claimable)
    print(f"replay {'identical' if same else 'differs'}: {look.outcome}, pick {look.pick}", file=sys.stderr)
    return 0 if same else 1


def ship(p, record: SelectionRecord) -> SelectionRecord:
    """Train the pick on all labels (comparisons/deploy.py), record it in selection.json, write the model card; the
    record with its deployment (its "failed" reason when the training failed: the selection's record is kept)."""
    from comparisons.comparability import code_state
    from comparisons.deploy import DEPLOY_FOLDER, deploy_pick
    from comparisons.report.model_card import write_model_card

    pick = record.pick
    print(f"training {pick} on all the labels for deployment ...", file=sys.stderr)
    trained = deploy_pick(p, pick, p.out, code_state())
    record = record.with_deployment(trained)
    write_selection(p.out, record)
    if "failed" in trained:
        print(f"the pick was selected but not trained for deployment: {trained['failed']}", file=sys.stderr)
        return record
    write_model_card(p.out / DEPLOY_FOLDER, record)
    onnx = "native and ONNX" if trained["onnx"].get("exported") else "native (no ONNX: " + trained["onnx"]["reason"] + ")"
    print(f"deployed {pick} ({onnx}) in {p.out / DEPLOY_FOLDER}, with MODEL_CARD.md", file=sys.stderr)
    return record


def command_select(args) -> int:
    if args.replay is not None:
        return replay_folder(args.replay)
    return select_recipe(SelectSettings.from_args(args), list(getattr(args, "argv", None) or ["select"]))[0]


def select_recipe(args: SelectSettings, argv: list[str] | None = None) -> tuple[int, Path, SelectionRecord | None]:
    """Carry a selection out (the command and api.select): (exit code, its folder, selection.json's record or None
    when interrupted). Refusals raise UserInputError (one line)."""
    from comparisons.plan import prepare
    from comparisons.run.lock import RunFolderLock
    from comparisons.run.open_executor import open_executor

    check_settings(args)
    p = prepare(selection_plan_of(args), argv or ["select"])
    executor = open_executor("local", None, None, 2 * sum(map(len, p.data.texts)), p.variants, True)
    p.out.mkdir(parents=True, exist_ok=True)
    try:
        with RunFolderLock(p.out).acquire():
            code, record = run_selection(p, executor, args)
    finally:
        executor.close()
    if record is None:
        print(f"interrupted: finished runs are kept in {p.out}; run the same command again to resume", file=sys.stderr)
        return code, p.out, None
    if record.outcome == "selected":
        others = [c for c in record.claimable if c != record.pick]
        print(f"selected {record.pick}: the best or within {args.delta} AP of it, with probability at least "
              f"{args.confidence}" + (f" (also within: {', '.join(others)})" if others else ""), file=sys.stderr)
        if args.deploy:
            record = ship(p, record)
            if "failed" in record.deployment:
                print(f"results: {p.out / SELECTION_FILE}", file=sys.stderr)
                return 1, p.out, record
    else:
        print(f"cannot say within this budget ({record.outcome}): still in "
              + ", ".join(f"{c} (at most {b:.3f} below the best)" for c, b in record.behind_best.items()),
              file=sys.stderr)
    print(f"results: {p.out / SELECTION_FILE}", file=sys.stderr)
    return 0, p.out, record
