"""The plan of a comparison, typed (issue 39): built once from the command line or from Python, checked in one
place, resolved against its data, written into every manifest and design.json, and carried out.

    from comparisons.plan import Plan, execute
    plan = Plan(backends=("tfidf_logreg", "torch_scratch"), cv=5, repeats=3, contrasts="course", profile="full")
    plan.to_argv()        # ['run', '--backends', 'tfidf_logreg,torch_scratch', '--cv', '5', ...]
    Plan.from_dict(plan.to_dict()) == plan
    execute(plan)         # 0: every run finished; 1: some failed (their rows say why); what `run` does

A field the command line would refuse raises ValueError with the command line's one-line message, when the plan is
built. `prepare` resolves a plan against its data (checks that need the data, such as a training size larger than
a partition, come there, as UserInputError, before anything is written) into a frozen `Prepared`: what the records
and the runs read. The command line (comparisons/cli.py), `benchmark` (one Prepared per corpus), `reproduce` and
the Python API (comparisons/api.py) all go through `prepare` and `carry_out`; none of them hands an argparse
Namespace on. The default output folder is decided in one place (comparisons/run_folder.py `default_out`).
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from common.errors import UserInputError
from common.splits import DEFAULT_SPLIT_SEED, LABEL_BUDGETS, parse_train_sizes
from comparisons.stats.family import DEFAULT_MARGINS
from comparisons.run_folder import default_out

from backends.base import VARIANTS

ALL_VARIANTS = tuple(VARIANTS)  # the command line's default --backends


def check_fields(plan: "Plan") -> None:
    """Every check of a `run` plan that needs no data, with the command line's one-line messages (UserInputError)."""
    from backends.base import backend_class, is_plugin, resolve_variant
    from backends.plugins import split_backends
    from comparisons.stats.contrasts import parse_contrasts
    from comparisons.stats.decision import cpu_hour_price
    from comparisons.report.i18n import check_language
    from comparisons.run.precision import plan_precisions
    from comparisons.run.profiles import profile
    from comparisons.run.serving.paths import parse_serve

    check_language(plan.lang)
    parse_serve(plan.serve)
    if plan.quality_only and plan.serve != "native":
        raise UserInputError(f"--quality-only measures no serving path; drop --serve {plan.serve} or --quality-only")
    profile(plan.profile)
    variants = split_backends(",".join(plan.backends))
    if not variants:
        raise UserInputError("--backends is empty; name at least one of " + ", ".join(VARIANTS))
    for name in variants:
        backend, _ = resolve_variant(name)
        if is_plugin(backend):  # an outside backend: imported and checked before any run starts
            backend_class(backend)
    parse_contrasts(plan.contrasts, variants)
    if plan.seeds < 1 or plan.threads < 1:
        raise UserInputError("--seeds and --threads must be at least 1")
    if plan.limit_per_class is not None and plan.limit_per_class < 1:
        raise UserInputError("--limit-per-class must be at least 1 (leave it out for all rows)")
    if plan.limit_total is not None and plan.limit_total < 2:
        raise UserInputError("--limit-total must be at least 2 texts (leave it out for all rows)")
    if plan.timeout is not None and plan.timeout <= 0:
        raise UserInputError("--timeout must be a positive number of seconds")
    if not 0 <= plan.split_seed < 2**32:
        raise UserInputError("--split-seed must be between 0 and 2**32 - 1")
    if not (0 < plan.margin_ap < 1 and 0 < plan.margin_f1 < 1):
        raise UserInputError("--margin-ap and --margin-f1 must be between 0 and 1, e.g. --margin-ap 0.005")
    if plan.cv is not None and (plan.cv < 2 or plan.repeats < 1):
        raise UserInputError("--cv needs at least 2 folds and --repeats at least 1; e.g. --cv 5 --repeats 2")
    if plan.label_budget not in LABEL_BUDGETS:
        raise UserInputError(f"--label-budget must be one of {', '.join(LABEL_BUDGETS)}")
    parse_train_sizes(",".join(plan.train_sizes))
    plan_precisions(plan.precision, variants, plan.device)
    cpu_hour_price(plan.cpu_hour_price)


NUMBERS = {**{name: (int,) for name in ("seeds", "split_seed", "cv", "repeats", "threads", "limit_per_class",
                                         "limit_total", "max_concurrent")},
           **{name: (float, int) for name in ("margin_ap", "margin_f1", "timeout")}}


@dataclass(frozen=True)
class Plan:
    """A `run` plan: the data, the variants, the design, its statistics, budgets, where it runs and where it writes.
    Field names and defaults are the `run` options' (docs/cli.md); sequences as tuples."""

    data: str = "sms_spam"
    text_col: str | None = None
    label_col: str | None = None
    positive_label: str | None = None
    encoding: str = "utf-8"
    hf_split: str = "train"
    dedup: bool = False
    limit_per_class: int | None = None
    limit_total: int | None = None
    backends: tuple[str, ...] = ALL_VARIANTS
    seeds: int = 1
    split_seed: int = DEFAULT_SPLIT_SEED
    cv: int | None = None
    repeats: int = 1
    train_sizes: tuple[str, ...] = ("all",)
    label_budget: str = "train+valid"
    contrasts: str | None = None
    margin_ap: float = DEFAULT_MARGINS["average_precision"]
    margin_f1: float = DEFAULT_MARGINS["macro_f1"]
    profile: str = "fast"
    threads: int = 2
    timeout: float | None = None
    device: str = "auto"
    precision: str = "auto"
    hf_model: str | None = None
    executor: str = "local"
    ray_address: str | None = None
    max_concurrent: int | None = None
    serve: str = "native"
    quality_only: bool = False
    lang: str = "en"
    cpu_hour_price: str | None = None
    track: str | None = None
    mlflow_uri: str | None = None
    out: str | None = None
    force: bool = False

    def __post_init__(self):
        from backends.plugins import split_backends

        for name in ("backends", "train_sizes"):  # lists and comma strings accepted (an outside backend's
            value = getattr(self, name)            # parameters keep their commas)
            if isinstance(value, str):
                value = split_backends(value)
            object.__setattr__(self, name, tuple(str(v).strip() for v in value))
        if self.out is not None:
            object.__setattr__(self, "out", str(self.out))
        for f in fields(self):  # the types the command line's parser would give (its message for a bad one)
            value, kind = getattr(self, f.name), NUMBERS.get(f.name)
            if value is not None and kind is not None and (isinstance(value, bool) or not isinstance(value, kind)):
                flag = "--" + f.name.replace("_", "-")
                raise ValueError(f"argument {flag}: invalid {kind[0].__name__} value: {value!r}")
        try:
            check_fields(self)
        except UserInputError as exc:
            raise ValueError(str(exc)) from None

    # -- the command line's form ------------------------------------------------------------
    def to_argv(self) -> list[str]:
        """The `run` command line of this plan (options at their default left out)."""
        argv = ["run"]
        for f in fields(self):
            value, default = getattr(self, f.name), f.default
            if value == default or value is None:
                continue
            flag = "--" + f.name.replace("_", "-")
            if isinstance(value, bool):
                argv.append(flag)
            else:
                argv += [flag, ",".join(value) if isinstance(value, tuple) else str(value)]
        return argv

    @classmethod
    def from_namespace(cls, args) -> "Plan":
        """The plan of parsed `run` arguments (before `prepare` resolves them)."""
        values = {f.name: getattr(args, f.name) for f in fields(cls) if hasattr(args, f.name)}
        values["backends"] = str(values.get("backends", ",".join(ALL_VARIANTS)))
        if values.get("out") is not None:
            values["out"] = str(values["out"])
        return cls(**values)

    # -- the file form ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-able: what manifest.json and design.json hold under "plan"."""
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "Plan":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"a plan has no field {', '.join(unknown)}; fields: {', '.join(sorted(known))}")
        return cls(**{key: tuple(value) if isinstance(value, list) else value for key, value in values.items()})

    @property
    def folder(self) -> Path:
        """Where its runs go: `out`, or the default for `run` (default_out)."""
        return Path(self.out) if self.out is not None else default_out("run", self.profile)


# -- a plan resolved against its data ------------------------------------------------------------------------
@dataclass(frozen=True)
class Prepared:
    """A plan checked against its data, before anything is written: what its records and runs read."""

    plan: Plan
    command: str                  # the command as typed, or the plan's own `run` command line
    variants: list[str]
    contrasts: list | None        # the declared pairs, or None (every pair is the family)
    margins: dict                 # {metric: equivalence margin}
    precisions: dict              # {variant: fp32 | bf16}
    serve: str                    # the serving paths, native first
    timeout: float                # seconds per worker (the profile's unless given)
    train_sizes: list             # ints, None for the whole labelled part
    cpu_hour_price: float         # USD per CPU-hour, for the pages' decision
    mlflow_uri: str | None        # with --track mlflow: the store (the top folder's by default)
    spec: Any                     # common.datasets.DataSpec
    data: Any                     # common.datasets.Dataset
    split: Any                    # common.splits.Split: the single split
    partitions: list              # a partition design's partitions (common.partitions), drawn once; [] on a split
    out: Path


def prepare(plan: Plan, argv: list[str] | None = None, tracking_folder: Path | None = None) -> Prepared:
    """Load the data and check every training size against the split (or every partition), before anything is
    written; UserInputError (one line) when the data refuses the plan. argv: the command as typed (recorded; default
    the plan's own); tracking_folder: whose MLflow store (default: the plan's folder)."""
    import shlex

    from backends.plugins import split_backends
    from common.datasets import load
    from common.partitions import check_design, kfold_partitions
    from common.splits import budget_parts, largest_train_size, stratified_split
    from comparisons.stats.contrasts import parse_contrasts
    from comparisons.stats.decision import cpu_hour_price
    from comparisons.tracking import tracking_uri
    from comparisons.run.precision import plan_precisions
    from comparisons.run.profiles import profile
    from comparisons.run.serving.paths import parse_serve

    variants = split_backends(",".join(plan.backends))
    spec = data_spec(plan)
    data = load(spec)
    sizes = parse_train_sizes(",".join(plan.train_sizes))
    split = stratified_split(data, plan.split_seed)
    if plan.cv is not None:
        check_design(plan.cv, plan.repeats, data)
        partitions = kfold_partitions(data, plan.cv, plan.repeats, plan.split_seed)
        drawn = [(f"partition {q.name}", q.split) for q in partitions]
    else:
        partitions, drawn = [], [("the split", split)]
    for where, part in drawn:  # every size drawn as a run would draw it, under its label budget (a one-line error
        for size in sizes:     # naming the size and the largest or smallest allowed when it does not fit)
            budget_parts(part, data.labels, data.texts, size, plan.label_budget, where=where)
    if plan.cv is None:  # a size equal to the whole labelled part is 'all' (today's run names, so folders resume)
        sizes = list(dict.fromkeys(None if n == largest_train_size(split, plan.label_budget) else n for n in sizes))
    return Prepared(
        plan=plan, command="python -m comparisons " + shlex.join(argv if argv is not None else plan.to_argv()),
        variants=variants, contrasts=parse_contrasts(plan.contrasts, variants),
        margins={"average_precision": plan.margin_ap, "macro_f1": plan.margin_f1,
                 "accuracy": DEFAULT_MARGINS["accuracy"]},
        precisions=plan_precisions(plan.precision, variants, plan.device), serve=parse_serve(plan.serve),
        timeout=plan.timeout or profile(plan.profile)["timeout_s"], train_sizes=sizes,
        cpu_hour_price=cpu_hour_price(plan.cpu_hour_price),
        mlflow_uri=tracking_uri(plan.track, plan.mlflow_uri, tracking_folder or plan.folder),
        spec=spec, data=data, split=split, partitions=partitions, out=plan.folder)


# -- what a run folder records of its plan (manifest.json, design.json) ------------------------------------------
def data_spec(plan: Plan) -> "DataSpec":
    """The DataSpec of a plan's --data (a named corpus, the shipped SMS data, a Hub dataset or a file)."""
    from common.corpora import ALIASES as CORPUS_ALIASES, CORPORA
    from common.datasets import DataSpec

    data = CORPUS_ALIASES.get(plan.data, plan.data)  # sms: the shipped sms_spam
    if data in ("sms_spam", "uci") or data in CORPORA:
        if plan.text_col or plan.label_col:
            raise UserInputError("--text-col/--label-col need --data PATH of a CSV/TSV file")
        if data in CORPORA:  # a named corpus read from its installed package (docs/corpora.md)
            return DataSpec(source="corpus", path=data, dedup=plan.dedup, limit_per_class=plan.limit_per_class,
                            limit_total=plan.limit_total)
        return DataSpec(source=data, dedup=plan.dedup, limit_per_class=plan.limit_per_class,
                        limit_total=plan.limit_total)
    if data.startswith("hf:"):
        name = data.removeprefix("hf:")
        name = str(Path(name).resolve()) if name and Path(name).is_dir() else name
        return DataSpec(source="hf", path=name, text_col=plan.text_col, label_col=plan.label_col,
                        positive_label=plan.positive_label, dedup=plan.dedup,
                        limit_per_class=plan.limit_per_class, hf_split=plan.hf_split, limit_total=plan.limit_total)
    return DataSpec(source="file", path=str(Path(data).resolve()), text_col=plan.text_col,
                    label_col=plan.label_col, positive_label=plan.positive_label, encoding=plan.encoding,
                    dedup=plan.dedup, limit_per_class=plan.limit_per_class, limit_total=plan.limit_total)


def design_record(p: Prepared, partitions, code: dict) -> dict:
    """design.json of a partition design: its partitions, margins, contrasts (declared before the runs), sizes,
    the code hash every partition's runs share and the driver's numerics identity (each run records its own)."""
    from common.datasets import fingerprint
    from common.partitions import leaked_texts
    from comparisons.numerics import numerics_identity

    return {"folds": p.plan.cv, "repeats": p.plan.repeats, "seed": p.plan.split_seed, "margins": p.margins,
            "contrasts": [list(pair) for pair in p.contrasts] if p.contrasts else None,
            "contrasts_declared": "before the runs" if p.contrasts else None,
            "code_sha256": code["code_sha256"], "command": p.command, "plan": p.plan.to_dict(),
            "variants": p.variants, "seeds": list(range(p.plan.seeds)), "data_sha256": fingerprint(p.data),
            "train_sizes": [size or "all" for size in p.train_sizes], "label_budget": p.plan.label_budget,
            "numerics": numerics_identity(p.plan.threads),
            "partitions": [{"name": part.name, "sizes": part.split.sizes(), "sha256": part.split.sha256,
                            "test_texts_in_training": leaked_texts(p.data, part.split)} for part in partitions]}


def manifest_record(p: Prepared, split, code: dict, duplicates: dict) -> dict:
    """manifest.json of a run folder: the command and plan, code, library versions, machine, numerics identity,
    each variant's backend, parameters and plugin identity, the data and its split, sizes, margins, precisions."""
    import time

    from backends.base import is_plugin, resolve_variant
    from backends.plugins import plugin_identity
    from common.datasets import fingerprint
    from comparisons.comparability import described_commit, library_versions
    from comparisons.numerics import numerics_identity
    from comparisons.run.measure import machine_description, thread_environment
    from comparisons.run.profiles import variant_overrides

    def variant_record(variant: str) -> dict:
        backend, params = resolve_variant(variant)
        return {"backend": backend, "params": {**params, **variant_overrides(p.plan.profile, variant)},
                "plugin": plugin_identity(backend.split(":")[0]) if is_plugin(backend) else None}

    data = p.data
    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": p.command, "plan": p.plan.to_dict(),
        "git_commit": described_commit(code), **code, "versions": library_versions(), "machine": machine_description(),
        "numerics": numerics_identity(p.plan.threads),  # read without any framework (comparisons/numerics.py)
        "threads": p.plan.threads, "thread_environment": thread_environment(p.plan.threads), "device": p.plan.device,
        "profile": p.plan.profile, "seeds": list(range(p.plan.seeds)), "timeout_s": p.timeout,
        "variants": {v: variant_record(v) for v in p.variants},
        "hf_model": p.plan.hf_model,
        "data": {"spec": p.spec.to_dict(), "sha256": fingerprint(data), "rows": len(data),
                 "class_names": list(data.class_names), "positive_index": data.positive_index,
                 "duplicates": duplicates,
                 "corpus": {k: v for k, v in (data.origin or {}).items() if k != "sample"} or None,
                 "sample": (data.origin or {}).get("sample")},  # --limit-total: the stratified cap, if any
        "split": {"seed": split.seed, "sizes": split.sizes(), "sha256": split.sha256},
        "train_sizes": [size or "all" for size in p.train_sizes],
        "label_budget": p.plan.label_budget,
        "margins": p.margins,
        "contrasts": [list(pair) for pair in p.contrasts] if p.contrasts else None,
        "serve": p.serve.split(","),
        "quality_only": p.plan.quality_only,  # no latency, throughput, cold start, serving memory
        "precision_requested": p.plan.precision, "precision": {v: p.precisions[v] for v in p.variants},
    }


def run_specs(p: Prepared, split, manifest: dict) -> list:
    """The plan's runs in a folder, in order: every training size, variant and seed (comparisons/run/spec.py)."""
    from comparisons.run.spec import RunSpec

    return [RunSpec(variant=v, seed=s, profile=p.plan.profile, threads=p.plan.threads, device=p.plan.device,
                    timeout_s=p.timeout, data=p.spec, data_sha256=manifest["data"]["sha256"],
                    split_seed=split.seed, split_sha256=split.sha256, hf_model=p.plan.hf_model,
                    executor=p.plan.executor, code_commit=manifest["code_commit"], code_dirty=manifest["code_dirty"],
                    code_sha256=manifest["code_sha256"], serve=p.serve, measure_costs=not p.plan.quality_only,
                    train_size=n, label_budget=p.plan.label_budget, precision=p.precisions[v])
            for n in p.train_sizes for v in p.variants for s in range(p.plan.seeds)]


# -- carrying a plan out ------------------------------------------------------------------------------------
def execute(plan: Plan, argv: list[str] | None = None) -> int:
    """What `run` does: prepare, open the executor, hold the folder's lock, run, write the reports (and log to
    MLflow with --track); 0, 1 (a run failed: its row says why), or an interruption's exit code."""
    from comparisons.run.executors import open_executor
    from comparisons.run.lock import RunFolderLock

    p = prepare(plan, argv)
    executor = open_executor(p.plan.executor, p.plan.ray_address, p.plan.max_concurrent, 2 * sum(map(len, p.data.texts)),
                             p.variants)
    try:
        p.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        executor.close()
        raise UserInputError(f"cannot use {p.out} as the run folder ({exc.strerror}); choose another --out") from None
    try:
        lock = RunFolderLock(p.out).acquire()  # one orchestrator per run folder; a second one exits 2
    except UserInputError:
        executor.close()
        raise
    with lock:
        try:
            return carry_out(p, executor)
        finally:
            executor.close()


def carry_out(p: Prepared, executor) -> int:
    """A prepared plan's runs through an open executor, in its folder (whose lock the caller holds)."""
    return run_partitions(p, executor) if p.plan.cv is not None else run_in_folder(p, p.out, p.split, executor)


def run_partitions(p: Prepared, executor) -> int:
    """The partition design: every partition is a run folder of its own under out/partitions/rRfF, run in
    turn through the same runner, executor, resume and checks; the recipe verdicts go in `out`."""
    from comparisons.comparability import code_state
    from comparisons.numerics import note_design_identities
    from comparisons.outputs import atomic_write_json
    from comparisons.report.partition_page import write_recipe_page
    from comparisons.report.partition_reports import write_recipe_reports

    out = p.out
    partitions = p.partitions
    code = code_state()  # one code hash for every partition's plan: a change mid-design fails the later runs
    design = design_record(p, partitions, code)
    design_file = out / "design.json"
    if design_file.exists() and not p.plan.force:
        earlier = json.loads(design_file.read_text())
        if [q["sha256"] for q in earlier["partitions"]] != [q["sha256"] for q in design["partitions"]]:
            raise UserInputError(f"{out} holds runs of other partitions; choose another --out or add --force")
    atomic_write_json(design_file, design)
    failed = 0
    for number, partition in enumerate(partitions, start=1):
        print(f"partition {partition.name} ({number}/{len(partitions)})", file=sys.stderr)
        code_exit = run_in_folder(p, out / "partitions" / partition.name, partition.split, executor, reports=False,
                                  code=code)
        if code_exit not in (0, 1):  # interrupted: the finished runs are kept, the next call resumes
            return code_exit
        failed += code_exit
    if write_recipe_reports(out, p.margins, p.variants, p.plan.lang) is not None:
        note_design_identities(out)  # design.json says whether its runs mix numerics identities (printed when they do)
        for language in dict.fromkeys(["en", p.plan.lang]):
            write_recipe_page(out, language, p.cpu_hour_price)
    print(f"results: {out}/verdicts.md (verdicts about recipes over {len(partitions)} partitions), "
          f"{out}/scores.csv; each partition's runs in {out}/partitions/", file=sys.stderr)
    return 1 if failed else 0


def run_in_folder(p: Prepared, out: Path, split, executor, reports: bool = True, code: dict | None = None) -> int:
    """The plan's runs on one split, in a run folder this process holds the lock of (reports: write its tables and
    page)."""
    from common.splits import duplicate_report, train_subsets_record
    from comparisons.comparability import code_state
    from comparisons.outputs import atomic_write_json
    from comparisons.report.preview import preview_note
    from comparisons.run.runner import describe, exit_code, finished
    from comparisons.run.spec import RunInputs, RunSpec

    data, budget = p.data, p.plan.label_budget
    splits_file = out / "splits.json"
    earlier = json.loads(splits_file.read_text()) if splits_file.exists() and not p.plan.force else {}
    if earlier and earlier.get("sha256") != split.sha256:
        raise UserInputError(f"{out} holds runs of another split; choose another --out or add --force")
    duplicates = duplicate_report(data, split)
    subsets = earlier.get("train_subsets", {})
    recorded = subsets.get("sizes", {}) if subsets.get("label_budget", "train") == budget else {}  # same budget
    subset_sizes = sorted({*map(int, recorded), *(n for n in p.train_sizes if n is not None)})
    atomic_write_json(splits_file, {**split.to_dict(),  # every training subset drawn in this folder
                                    "train_subsets": train_subsets_record(split, data.labels, subset_sizes,
                                                                          texts=data.texts, budget=budget)})
    manifest = manifest_record(p, split, code or code_state(), duplicates)
    atomic_write_json(out / "manifest.json", manifest)
    sizes = split.sizes()
    print(f"data: {len(data)} rows, split train/valid/test = {sizes['train']}/{sizes['valid']}/{sizes['test']} "
          f"(sha256 {split.sha256[:12]}), {duplicates['test_rows_whose_text_is_in_train']} test texts also in train"
          f"{'' if p.spec.dedup else ' (--dedup drops duplicates)'}", file=sys.stderr)
    planned = run_specs(p, split, manifest)
    inputs = RunInputs(data, split.to_dict()).to_json_bytes()  # the data by value, for every worker
    numbers = {request: number for number, request in enumerate(planned, start=1)}
    failed, todo = 0, []
    for number, request in enumerate(planned, start=1):
        if not p.plan.force and finished(out, request, split.sha256, manifest["data"]["sha256"], manifest):
            print(f"[{number}/{len(planned)}] {request.name}: finished earlier, kept (--force reruns it)",
                  file=sys.stderr)
            continue
        todo.append(request)

    def started(request: RunSpec) -> None:
        print(f"[{numbers[request]}/{len(planned)}] {request.name}: started ({executor.name})", file=sys.stderr)

    def done(request: RunSpec, record: dict) -> None:
        nonlocal failed
        failed += record["status"] == "failed"
        print(f"[{numbers[request]}/{len(planned)}] {describe(record)}", file=sys.stderr)

    try:
        executor.run(out, todo, inputs, started, done)
    except KeyboardInterrupt as interruption:  # Ctrl-C, SIGTERM or SIGHUP: the running worker's group is ended
        print(f"interrupted by {getattr(interruption, 'signal_name', 'SIGINT')}: finished runs are kept in {out}; "
              "run the same command again to resume", file=sys.stderr)
        return exit_code(interruption)
    finally:
        if reports:
            from comparisons.report.folder_reports import write_all_reports

            write_all_reports(out, p.plan.lang, p.cpu_hour_price)
    if p.plan.track:  # the driver logs the folder, after its reports (never the workers)
        from comparisons.tracking import track_after_run

        track_after_run(out, p.mlflow_uri)
    if reports:
        print(f"results: open {out}/report.html (tables, figures, verdicts, details); {out}/summary.csv", file=sys.stderr)
        note = preview_note(p.plan.profile, p.plan.seeds)  # a fast ranking is a preview, not the suite's finding
        if note:
            print(note, file=sys.stderr)
    return 1 if failed else 0
