"""The plan of a comparison, typed: built once from the command line or from Python, checked in one
place, resolved against its data, written into every manifest and design.json, and carried out.

    from comparisons.plan import Plan
    from comparisons.carry_out import execute
    plan = Plan(backends=("tfidf_logreg", "torch_scratch"), cv=5, repeats=3, contrasts="course", profile="full")
    plan.to_argv()        # ['run', '--backends', 'tfidf_logreg,torch_scratch', '--cv', '5', ...]
    Plan.from_dict(plan.to_dict()) == plan
    execute(plan)         # 0: every run finished; 1: some failed (their rows say why); what `run` does

A field the command line would refuse raises ValueError with the command line's one-line message, when the plan is
built. `prepare` resolves a plan against its data (checks that need the data, such as a training size larger than
a partition, come there, as UserInputError, before anything is written) into a frozen `Prepared`: what the records
and the runs read. The command line (comparisons/cli.py), `benchmark` (one Prepared per corpus), `reproduce` and
the Python API (comparisons/api.py) all go through `prepare` and `carry_out` (comparisons/carry_out.py); none of
them hands an argparse Namespace on. What a prepared plan writes down (design.json, manifest.json, the run specs)
is comparisons/plan_records.py. The default output folder is decided in one place (comparisons/run_folder/names.py `default_out`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.errors import UserInputError
from common.splits import DEFAULT_DRAWS, DEFAULT_SEEDING, DEFAULT_SPLIT_SEED, LABEL_BUDGETS, SEEDINGS, parse_train_sizes
from comparisons.stats.family import DEFAULT_MARGINS, FAMILIES
from comparisons.run_folder import default_out

from backends.base import DEFAULT_VARIANTS, VARIANTS

if TYPE_CHECKING:
    from common.datasets import DataSpec
    from comparisons.run_folder.power_plan_record import PowerPlan

ALL_VARIANTS = tuple(DEFAULT_VARIANTS)  # the command line's default --backends


def read_power_plan(path: str | Path) -> "PowerPlan":
    """A power plan's JSON (comparisons/studies/power_sizes.gap_plan), checked; one-line errors."""
    import json

    from comparisons.run_folder.power_plan_record import PowerPlan

    source = Path(path)
    try:
        plan = PowerPlan.from_dict(json.loads(source.read_text()))
        plan.folds, plan.draws, plan.family, plan.expected
    except FileNotFoundError:
        raise UserInputError(f"--power-plan {source}: no such file; write one with `python -m "
                             "comparisons.studies.power_plan --from PILOT --gap 0.10`") from None
    except (OSError, ValueError, KeyError, TypeError):
        raise UserInputError(f"--power-plan {source} is not a power plan's JSON (power_plan.json written by "
                             "comparisons.studies.power_plan --gap)") from None
    return plan


def powered_design(plan: "Plan") -> dict:
    """The fields a power plan sets: one repeat of its K folds, its draws a fold and its family; a conflicting value
    given beside it is refused (the defaults are taken as not given)."""
    found = read_power_plan(plan.power_plan)
    wanted = {"cv": found.folds, "repeats": 1, "draws": found.draws, "family": found.family}
    defaults = {"cv": None, "repeats": 1, "draws": DEFAULT_DRAWS, "family": "holm"}
    for name, value in wanted.items():
        given = getattr(plan, name)
        if given != defaults[name] and given != value:
            raise UserInputError(f"--{name} {given} contradicts --power-plan {plan.power_plan} ({name} {value}); "
                                 f"leave --{name} out")
    return wanted


def size_caps(plan: "Plan") -> dict[str, int]:
    """--up-to VARIANT=SIZE[,VARIANT=SIZE]: {variant: the largest training size it runs at}; one-line errors."""
    from backends.plugins import split_backends

    caps, variants = {}, split_backends(",".join(plan.backends))
    subset_sizes = [n for n in parse_train_sizes(",".join(plan.train_sizes)) if n is not None]
    for item in filter(None, (part.strip() for part in (plan.up_to or "").split(","))):
        variant, _, size = item.rpartition("=")
        if variant not in variants or not size.isdigit():
            raise UserInputError(f"--up-to {item!r}: give VARIANT=SIZE for a variant of --backends, e.g. "
                                 "--up-to hf_bert:setfit=200")
        if not any(n <= int(size) for n in subset_sizes):
            raise UserInputError(f"--up-to {item}: no --train-sizes at or below {size}, so {variant} would not run; "
                                 "drop it from --backends instead")
        caps[variant] = int(size)
    return caps


def runs_at(caps: dict[str, int], variant: str, size: int | None) -> bool:
    """Whether a variant runs at a training size (None: all) under --up-to's caps."""
    return variant not in caps or (size is not None and size <= caps[variant])


def check_fields(plan: "Plan") -> None:
    """Every check of a `run` plan that needs no data, with the command line's one-line messages (UserInputError)."""
    from backends.base import backend_class, is_plugin, resolve_variant
    from backends.plugins import split_backends
    from comparisons.stats.contrasts import parse_contrasts
    from comparisons.stats.decision import cpu_hour_price
    from comparisons.report.i18n import check_language
    from backends.precision import check_precision
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
    contrasts = parse_contrasts(plan.contrasts, variants)
    capped = sorted(set(size_caps(plan)) & {v for pair in contrasts or [] for v in pair})
    if capped and plan.family == "natural-order":
        raise UserInputError(f"--up-to caps {', '.join(capped)}, a variant of a declared contrast: the natural-order "
                             "family asks every contrast at every size (equivalence from the largest down); cap only "
                             "variants outside --contrasts")
    if plan.seeds < 1 or plan.threads < 1:
        raise UserInputError("--seeds and --threads must be at least 1")
    if not 1 <= plan.draws <= 50:
        raise UserInputError("--draws must be between 1 and 50 (the independent training draws per partition at "
                             "sizes up to 1,000), e.g. --draws 5")
    if plan.seeding not in SEEDINGS:
        raise UserInputError(f"--seeding {plan.seeding!r}: use per-partition (each partition its own seeds) or shared "
                             "(model seed 0 in every partition: only to replay a folder made that way)")
    if plan.limit_per_class is not None and plan.limit_per_class < 1:
        raise UserInputError("--limit-per-class must be at least 1 (leave it out for all rows)")
    if plan.limit_total is not None and plan.limit_total < 2:
        raise UserInputError("--limit-total must be at least 2 texts (leave it out for all rows)")
    if plan.timeout is not None and plan.timeout <= 0:
        raise UserInputError("--timeout must be a positive number of seconds")
    if not 0 <= plan.split_seed < 2**32:
        raise UserInputError("--split-seed must be between 0 and 2**32 - 1")
    if plan.family not in FAMILIES:
        raise UserInputError(f"--family {plan.family!r}: use one of {', '.join(FAMILIES)}")
    if plan.family == "natural-order" and plan.until_decided:
        raise UserInputError("--family natural-order and --until-decided cannot be combined: the sequential rule's "
                             "repeated p-values are corrected by Holm over the looks; use one or the other")
    if plan.family == "natural-order" and (plan.cv is None or not plan.contrasts or len(plan.train_sizes) < 2):
        raise UserInputError("--family natural-order orders a learning curve's sizes: it needs --cv, --contrasts and "
                             "two or more --train-sizes")
    if not (0 < plan.margin_ap < 1 and 0 < plan.margin_f1 < 1):
        raise UserInputError("--margin-ap and --margin-f1 must be between 0 and 1, e.g. --margin-ap 0.005")
    if plan.cv is not None and (plan.cv < 2 or plan.repeats < 1):
        raise UserInputError("--cv needs at least 2 folds and --repeats at least 1; e.g. --cv 5 --repeats 2")
    if plan.until_decided and (plan.cv is None or plan.repeats != 1 or plan.max_repeats < 2):
        raise UserInputError("--until-decided runs a --cv design a repeat at a time up to --max-repeats R (at least "
                             "2); give --cv K and --max-repeats R instead of --repeats, e.g. --cv 5 --until-decided "
                             "--max-repeats 3")
    if not plan.until_decided and (plan.max_repeats != 3 or plan.budget_minutes is not None):
        raise UserInputError("--max-repeats and --budget-minutes belong to a sequential design; add --until-decided")
    if plan.budget_minutes is not None and not plan.budget_minutes > 0:
        raise UserInputError("--budget-minutes must be a positive number of minutes, e.g. --budget-minutes 60")
    if plan.label_budget not in LABEL_BUDGETS:
        raise UserInputError(f"--label-budget must be one of {', '.join(LABEL_BUDGETS)}")
    subset_sizes = [size for size in parse_train_sizes(",".join(plan.train_sizes)) if size is not None]
    if subset_sizes and plan.cv is not None and (plan.repeats > 1 or plan.until_decided):
        raise UserInputError("--repeats and --until-decided repeat the folds, so the test folds of two repeats share "
                             "texts, which the variance at sizes below all does not count, so its intervals would be "
                             "too narrow; run one repeat of more folds instead, e.g. --cv 10 --train-sizes 50,100,all")
    check_precision(plan.precision)  # whether this machine multiplies bf16 is asked in prepare (a probe that
    cpu_hour_price(plan.cpu_hour_price)  # imports torch): building a Plan starts no process


NUMBERS = {**{name: (int,) for name in ("seeds", "split_seed", "cv", "repeats", "threads", "limit_per_class",
                                         "limit_total", "max_concurrent", "max_repeats")},
           **{name: (float, int) for name in ("margin_ap", "margin_f1", "timeout", "budget_minutes")}}


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
    draws: int = DEFAULT_DRAWS  # a partition design's independent draws at each training size up to DRAWS_UP_TO
    seeding: str = DEFAULT_SEEDING  # per-partition: each partition (and draw) its own model and subset seed
    until_decided: bool = False  # a sequential design: a repeat at a time while a contrast is open
    max_repeats: int = 3         # its most repeats (the partitions it draws, the spending's last look)
    budget_minutes: float | None = None  # its optional budget of run minutes
    contrasts: str | None = None
    family: str = "holm"     # the declared family's correction: holm, or natural-order (a curve; stats/graphical.py)
    up_to: str | None = None  # "VARIANT=SIZE,...": a variant run only at training sizes up to SIZE (its cost)
    power_plan: str | None = None  # a power plan's JSON (studies/power_plan --gap): its folds, draws and family
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
    fresh_workers: bool = False  # a quality-only local design: a fresh worker a run, not one warm worker a backend
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
        if self.power_plan is not None:  # the design a power plan proposed: its folds, draws and family
            try:
                for name, value in powered_design(self).items():
                    object.__setattr__(self, name, value)
            except UserInputError as exc:
                raise ValueError(str(exc)) from None
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
        repeats = plan.max_repeats if plan.until_decided else plan.repeats  # sequential: every repeat it may run
        check_design(plan.cv, repeats, data)
        partitions = kfold_partitions(data, plan.cv, repeats, plan.split_seed)
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


# -- carrying a plan out ------------------------------------------------------------------------------------


