"""The plan of a comparison, typed (issue 39): what `run` does, built once from the command line or from Python,
checked in one place, written into every manifest and design.json, and read back.

    from comparisons.plan import Plan
    plan = Plan(backends=("tfidf_logreg", "torch_scratch"), cv=5, repeats=3, contrasts="course", profile="full")
    plan.to_argv()        # ['run', '--backends', 'tfidf_logreg,torch_scratch', '--cv', '5', ...]
    Plan.from_dict(plan.to_dict()) == plan

A field the command line would refuse raises ValueError with the command line's one-line message, when the plan is
built (checks that need the data, such as a training size larger than a partition, come when it runs). The
command line builds its Plan from the parsed arguments (`Plan.from_namespace`), so a plan built in Python and the
same plan typed as options give the same manifest. The default output folder is decided in one place (comparisons/run_folder.py `default_out`).
"""
from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from common.errors import UserInputError
from common.splits import DEFAULT_SPLIT_SEED, LABEL_BUDGETS
from comparisons.report.verdict_rules import DEFAULT_MARGINS
from comparisons.run_folder import default_out

from backends.base import VARIANTS

ALL_VARIANTS = tuple(VARIANTS)  # the command line's default --backends


def parse_train_sizes(value: str) -> list[int | None]:
    """'50,100,all' -> [50, 100, None] (None: the whole labelled part); strictly increasing, 'all' last."""
    sizes: list[int | None] = []
    for item in filter(None, (part.strip() for part in value.split(","))):
        if item == "all":
            size = None
        elif item.isdigit() and int(item) > 0:
            size = int(item)
        else:
            raise UserInputError(f"--train-sizes: {item!r} is not a positive whole number or 'all'; "
                                 "e.g. --train-sizes 50,100,200,all")
        if sizes and (sizes[-1] is None or (size is not None and size <= sizes[-1])):
            raise UserInputError(f"--train-sizes: {item} after {sizes[-1] or 'all'}; give increasing sizes, 'all' "
                                 "last, e.g. --train-sizes 50,100,200,all")
        sizes.append(size)
    if not sizes:
        raise UserInputError("--train-sizes is empty; e.g. --train-sizes 50,100,200,all")
    return sizes


def check_fields(args) -> None:
    """Every check of a `run` plan that needs no data, with the command line's one-line messages (UserInputError).
    `args`: the parsed `run` arguments (argparse.Namespace) or anything with the same attributes."""
    from backends.base import backend_class, is_plugin, resolve_variant
    from backends.plugins import split_backends
    from comparisons.report.contrasts import parse_contrasts
    from comparisons.report.i18n import check_language
    from comparisons.run.precision import plan_precisions
    from comparisons.run.profiles import profile
    from comparisons.run.serving.paths import parse_serve

    check_language(args.lang)
    parse_serve(args.serve)
    if getattr(args, "quality_only", False) and args.serve != "native":
        raise UserInputError(f"--quality-only measures no serving path; drop --serve {args.serve} or --quality-only")
    profile(args.profile)
    variants = split_backends(args.backends)
    if not variants:
        raise UserInputError("--backends is empty; name at least one of " + ", ".join(VARIANTS))
    for name in variants:
        backend, _ = resolve_variant(name)
        if is_plugin(backend):  # an outside backend: imported and checked before any run starts
            backend_class(backend)
    parse_contrasts(args.contrasts, variants)
    if args.seeds < 1 or args.threads < 1:
        raise UserInputError("--seeds and --threads must be at least 1")
    if args.limit_per_class is not None and args.limit_per_class < 1:
        raise UserInputError("--limit-per-class must be at least 1 (leave it out for all rows)")
    if args.limit_total is not None and args.limit_total < 2:
        raise UserInputError("--limit-total must be at least 2 texts (leave it out for all rows)")
    if args.timeout is not None and args.timeout <= 0:
        raise UserInputError("--timeout must be a positive number of seconds")
    if not 0 <= args.split_seed < 2**32:
        raise UserInputError("--split-seed must be between 0 and 2**32 - 1")
    if not (0 < args.margin_ap < 1 and 0 < args.margin_f1 < 1):
        raise UserInputError("--margin-ap and --margin-f1 must be between 0 and 1, e.g. --margin-ap 0.005")
    if args.cv is not None and (args.cv < 2 or args.repeats < 1):
        raise UserInputError("--cv needs at least 2 folds and --repeats at least 1; e.g. --cv 5 --repeats 2")
    if getattr(args, "label_budget", "train+valid") not in LABEL_BUDGETS:
        raise UserInputError(f"--label-budget must be one of {', '.join(LABEL_BUDGETS)}")
    parse_train_sizes(args.train_sizes)
    plan_precisions(args.precision, variants, args.device)


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
        try:
            check_fields(self.namespace())
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

    def namespace(self) -> argparse.Namespace:
        """The parsed `run` arguments the command line would build from this plan (no check)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(backends=",".join(self.backends), train_sizes=",".join(self.train_sizes),
                      out=Path(self.out) if self.out is not None else None, command="run")
        return argparse.Namespace(**values)

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


# -- what a run folder records of its plan (manifest.json, design.json) ------------------------------------------
def data_spec(args) -> "DataSpec":
    """The DataSpec of a plan's --data (a named corpus, the shipped SMS data, a Hub dataset or a file)."""
    from common.corpora import ALIASES as CORPUS_ALIASES, CORPORA
    from common.datasets import DataSpec

    args.data = CORPUS_ALIASES.get(args.data, args.data)  # sms: the shipped sms_spam
    if args.data in ("sms_spam", "uci") or args.data in CORPORA:
        if args.text_col or args.label_col:
            raise UserInputError("--text-col/--label-col need --data PATH of a CSV/TSV file")
        if args.data in CORPORA:  # a named corpus read from its installed package (docs/corpora.md)
            return DataSpec(source="corpus", path=args.data, dedup=args.dedup, limit_per_class=args.limit_per_class,
                            limit_total=args.limit_total)
        return DataSpec(source=args.data, dedup=args.dedup, limit_per_class=args.limit_per_class,
                        limit_total=args.limit_total)
    if args.data.startswith("hf:"):
        name = args.data.removeprefix("hf:")
        name = str(Path(name).resolve()) if name and Path(name).is_dir() else name
        return DataSpec(source="hf", path=name, text_col=args.text_col, label_col=args.label_col,
                        positive_label=args.positive_label, dedup=args.dedup,
                        limit_per_class=args.limit_per_class, hf_split=args.hf_split, limit_total=args.limit_total)
    return DataSpec(source="file", path=str(Path(args.data).resolve()), text_col=args.text_col,
                    label_col=args.label_col, positive_label=args.positive_label, encoding=args.encoding,
                    dedup=args.dedup, limit_per_class=args.limit_per_class, limit_total=args.limit_total)


def command_line(args) -> str:
    """The command as typed (main's argv), for the manifest and design.json; a Plan run from Python gives its own."""
    import shlex
    import sys

    return "python -m comparisons " + shlex.join(getattr(args, "argv", None) or sys.argv[1:])


def plan_record(args) -> dict | None:
    """The typed plan of a `run` as the manifest holds it; None for another command's runs (benchmark, reproduce)."""
    plan = getattr(args, "plan", None)
    return plan.to_dict() if plan is not None else None


def design_record(args, partitions, data, variants, code: dict) -> dict:
    """design.json of a partition design: its partitions, margins, contrasts (declared before the runs), sizes,
    the code hash every partition's runs share and the driver's numerics identity (each run records its own)."""
    from common.datasets import fingerprint
    from common.partitions import leaked_texts
    from comparisons.numerics import numerics_identity

    return {"folds": args.cv, "repeats": args.repeats, "seed": args.split_seed, "margins": args.margins,
            "contrasts": [list(pair) for pair in args.contrasts] if args.contrasts else None,
            "contrasts_declared": "before the runs" if args.contrasts else None,
            "code_sha256": code["code_sha256"], "command": command_line(args), "plan": plan_record(args),
            "variants": variants, "seeds": list(range(args.seeds)), "data_sha256": fingerprint(data),
            "train_sizes": [size or "all" for size in args.train_sizes], "label_budget": args.label_budget,
            "numerics": numerics_identity(args.threads),
            "partitions": [{"name": p.name, "sizes": p.split.sizes(), "sha256": p.split.sha256,
                            "test_texts_in_training": leaked_texts(data, p.split)} for p in partitions]}


def manifest_record(args, variants, data, split, spec, code: dict, label_budget: str, duplicates: dict) -> dict:
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
        return {"backend": backend, "params": {**params, **variant_overrides(args.profile, variant)},
                "plugin": plugin_identity(backend.split(":")[0]) if is_plugin(backend) else None}

    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": command_line(args), "plan": plan_record(args),
        "git_commit": described_commit(code), **code, "versions": library_versions(), "machine": machine_description(),
        "numerics": numerics_identity(args.threads),  # read without any framework (comparisons/numerics.py)
        "threads": args.threads, "thread_environment": thread_environment(args.threads), "device": args.device,
        "profile": args.profile, "seeds": list(range(args.seeds)), "timeout_s": args.timeout,
        "variants": {v: variant_record(v) for v in variants},
        "hf_model": args.hf_model,
        "data": {"spec": spec.to_dict(), "sha256": fingerprint(data), "rows": len(data),
                 "class_names": list(data.class_names), "positive_index": data.positive_index,
                 "duplicates": duplicates,
                 "corpus": {k: v for k, v in (data.origin or {}).items() if k != "sample"} or None,
                 "sample": (data.origin or {}).get("sample")},  # --limit-total: the stratified cap, if any
        "split": {"seed": split.seed, "sizes": split.sizes(), "sha256": split.sha256},
        "train_sizes": [size or "all" for size in args.train_sizes],
        "label_budget": label_budget,
        "margins": args.margins,
        "contrasts": [list(pair) for pair in args.contrasts] if args.contrasts else None,
        "serve": args.serve.split(","),
        "quality_only": bool(getattr(args, "quality_only", False)),  # no latency, throughput, cold start, serving memory
        "precision_requested": args.precision, "precision": {v: args.precisions[v] for v in variants},
    }


def run_specs(args, variants, spec, split, manifest: dict, label_budget: str) -> list:
    """The plan's runs in a folder, in order: every training size, variant and seed (comparisons/run/spec.py)."""
    from comparisons.run.spec import RunSpec

    return [RunSpec(variant=v, seed=s, profile=args.profile, threads=args.threads, device=args.device,
                    timeout_s=args.timeout, data=spec, data_sha256=manifest["data"]["sha256"],
                    split_seed=split.seed, split_sha256=split.sha256, hf_model=args.hf_model,
                    executor=args.executor, code_commit=manifest["code_commit"], code_dirty=manifest["code_dirty"],
                    code_sha256=manifest["code_sha256"], serve=args.serve,
                    measure_costs=not getattr(args, "quality_only", False),
                    train_size=n, label_budget=label_budget, precision=args.precisions[v])
            for n in args.train_sizes for v in variants for s in range(args.seeds)]
