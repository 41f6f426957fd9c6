"""`python -m comparisons reproduce --from FOLDER --out FRESH`: a committed folder checked against a rerun.

Reads the committed folder's plan (a `--cv` design's design.json and partition manifests, or a single
split's manifest.json): the same data, split or partitions, seeds, profile, threads and model choice;
reruns it, or the named variants and partitions, in FRESH with today's code (quality only: serving
costs are this machine's measurements, not figures that reproduce), and reports per run the committed
and rerun primary figures (test AP, macro-F1 at the validation threshold) and their difference,
whether the numerics identity matched (comparisons/numerics.py; records made before it existed are
compared by `node_cpu`: "unknown, cpu same|differs"), and whether each verdict of the committed folder
stands when the rerun figures are put in place of the committed ones.

Under the same identity a figure must come back to 1e-6 (the records keep 6 decimals); otherwise
the differences are set against the seed spread the folder holds: the standard deviation of its
per-partition A/A differences (two seeds of one variant), or, when the folder has one seed, of the
twins' (torch_scratch - keras_layers) per-partition differences, and the page says which. A
difference within twice that spread is within seed noise. Writes reproduce.md and reproduce.csv in
FRESH; exit 1 when a run under the same identity did not come back, or a rerun failed.
"""
from __future__ import annotations

import dataclasses
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from common.errors import UserInputError
from comparisons.numerics import describe as describe_numerics, numerics_identity
from common.metric_names import REPRODUCED
from comparisons.outputs import atomic_write_text
from comparisons.carry_out import run_in_folder
from comparisons.report.run_report import run_report_kind
from comparisons.run_folder.open_folder import open_folder
from comparisons.plan import Plan, prepare
from comparisons.run_folder import read_runs, run_name
from comparisons.run_folder.names import MANIFEST
from comparisons.run_folder.records import Design, Manifest
from comparisons.run_folder.writers import write_manifest

EXACT = 1e-6  # records keep 6 decimals: the same computation gives the same written figure
NOISE_FACTOR = 2.0  # a difference within 2 x the seed spread is within seed noise (about 95% of A/A differences)
FIGURES = REPRODUCED
TWINS = ("torch_scratch", "keras_layers")


@dataclasses.dataclass(frozen=True)
class Committed:
    """The committed folder's plan records and what is chosen to rerun."""

    folder: Path
    design: Design | None         # a partition design's plan (None: a single split)
    manifest: Manifest            # the split's, or the first partition's
    variants: list[str]           # chosen to rerun
    plan_variants: list[str]      # every variant the plan ran
    seeds: list[int]
    partitions: list[str]         # chosen to rerun ("split" for a single split)
    shown: str = ""               # the folder as the user named it

    def seeds_of(self, partition: str) -> list[int]:
        """The model seeds a partition trained with (its manifest's: its own under per-partition seeding)."""
        if partition == "split":
            return list(self.seeds)
        manifest = Manifest.read(self.folder / "partitions" / partition)
        return manifest.seeds if manifest is not None and manifest.seeds else list(self.seeds)


def read_committed(folder: Path, backends: str | None, partitions: str | None, shown: str = "") -> Committed:
    """The committed plan and the selection to rerun; UserInputError (exit 2, nothing written) for bad input."""
    folder = Path(folder)
    opened = open_folder(folder)
    if run_report_kind(opened) is None or not any((f.path / "runs").is_dir() for f in opened.run_folders):
        raise UserInputError(f"{folder} is not a run folder or design (no manifest.json with runs/, no design.json "
                             "with partition runs); name a folder that `python -m comparisons run` wrote")
    design, manifest = Design.read(folder), opened.manifests()[0]
    names = design.partition_names if design is not None else ["split"]
    plan = design if design is not None else manifest
    variants, seeds = list(plan.variants), list(plan.seeds)
    if partitions and design is None:
        raise UserInputError(f"--partitions needs a --cv design; {folder} is a single-split run folder")
    if manifest.train_sizes != [None]:  # a sweep (None: the whole training split)
        raise UserInputError(f"{folder} is a training-size sweep; reproduce reruns whole-split plans only")
    chosen_variants = _chosen(backends, variants, "variant", folder)
    chosen_partitions = _chosen(partitions, names, "partition", folder) if design is not None else names
    return Committed(folder, design, manifest, chosen_variants, variants, seeds, chosen_partitions, shown or str(folder))


def _chosen(value: str | None, known: list[str], what: str, folder: Path) -> list[str]:
    if not value:
        return list(known)
    named = [item.strip() for item in value.split(",") if item.strip()]
    unknown = [item for item in named if item not in known]
    if unknown or not named:
        raise UserInputError(f"unknown {what} {', '.join(unknown) or '(none named)'}: {folder} holds {', '.join(known)}")
    return [item for item in known if item in named]


def committed_plan(committed: Committed, fresh: Path) -> Plan:
    """The committed plan, restricted to the chosen variants, into the fresh folder, quality only (the workers skip
    latency, throughput and cold start)."""
    manifest, design = committed.manifest, committed.design
    spec = manifest.data["spec"]
    source = {"sms_spam": "sms_spam", "uci": "uci", "corpus": spec.get("path"), "file": spec.get("path"),
              "hf": f"hf:{spec.get('path')}"}[spec["source"]]
    chosen = set(committed_precisions(committed).values())  # records made before --precision existed: fp32
    fields = {key: spec[key] for key in ("text_col", "label_col", "positive_label", "limit_per_class", "limit_total")
              if spec.get(key) is not None}
    if spec["source"] == "hf":
        fields["hf_split"] = spec.get("hf_split") or "train"
    if spec.get("encoding") and spec["source"] == "file":
        fields["encoding"] = spec["encoding"]
    if design is not None and design.is_sequential:  # its later repeats ran only some variants: no one fixed plan remakes it
        raise UserInputError("reproduce does not remake a sequential design (--until-decided) yet; rerun its "
                             "command from design.json into a fresh folder instead")
    if design is not None:  # its seeding as it ran (a design.json before per-partition seeding: shared)
        fields.update(cv=design.folds, repeats=design.repeats, seeding=design.seeding)
    try:
        return Plan(data=source, backends=tuple(committed.variants), seeds=max(committed.seeds) + 1,
                    profile=manifest.profile, threads=manifest.threads, device=manifest.device or "auto",
                    split_seed=design.seed if design is not None else manifest.split["seed"], out=str(fresh),
                    dedup=bool(spec.get("dedup")), precision=chosen.pop() if len(chosen) == 1 else "auto",
                    hf_model=manifest.hf_model, timeout=manifest.timeout_s or None, quality_only=True,
                    **fields)
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def committed_precisions(committed: Committed) -> dict:
    """{variant: fp32 | bf16} as the committed plan resolved it (fp32 for a folder made before --precision)."""
    planned = committed.manifest.precision
    return {variant: planned.get(variant, "fp32") for variant in committed.variants}


def rerun(committed: Committed, fresh: Path) -> int:
    """Run the chosen runs in `fresh` through the suite's own plan and runner (resume included); 0, 1 (a run
    failed) or an interruption's code."""
    from common.datasets import fingerprint
    from comparisons.comparability import code_state
    from comparisons.run_folder.writers import write_design
    from comparisons.run.open_executor import open_executor
    from comparisons.run.lock import RunFolderLock

    prepared = prepare(committed_plan(committed, fresh))
    # each variant as committed, not as `auto` would choose here
    prepared = dataclasses.replace(prepared, precisions=committed_precisions(committed))
    data, split, variants = prepared.data, prepared.split, prepared.variants
    design, manifest = committed.design, committed.manifest
    if fingerprint(data) != manifest.data_sha256:
        raise UserInputError(f"the data loaded now is not {committed.folder}'s (its sha256 differs); "
                             "reproduce needs the same data")
    if design is not None:
        partitions = {p.name: p for p in prepared.partitions}  # the committed design's folds, repeats and seed
        planned = {p["name"]: p["sha256"] for p in design.partitions}
        if any(partitions[name].split.sha256 != planned[name] for name in committed.partitions):
            raise UserInputError(f"the partitions drawn now are not {committed.folder}'s; reproduce needs the same ones")
    elif split.sha256 != manifest.split_sha256:
        raise UserInputError(f"the split drawn now is not {committed.folder}'s; reproduce needs the same one")
    try:
        fresh.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserInputError(f"cannot use {fresh} as the fresh folder ({exc.strerror}); choose another --out") from None
    executor = open_executor("local", None, None, 0)
    failed = 0
    with RunFolderLock(fresh).acquire():
        try:
            if design is None:
                return run_in_folder(prepared, fresh, split, executor, reports=False)
            code = code_state()
            chosen = [p for p in design.partitions if p["name"] in committed.partitions]
            write_design(fresh, {**design.to_dict(), "partitions": chosen, "variants": variants,
                                 "code_sha256": code["code_sha256"], "reproduces": str(committed.folder)})
            index = {p.name: number for number, p in enumerate(prepared.partitions)}  # its seeds, as committed
            for name in committed.partitions:
                print(f"partition {name}", file=sys.stderr)
                code_exit = run_in_folder(prepared, fresh / "partitions" / name, partitions[name].split, executor,
                                          reports=False, code=code, partition_index=index[name])
                if code_exit not in (0, 1):
                    return code_exit
                failed += code_exit
        finally:
            executor.close()
    return 1 if failed else 0


def _records(folder: Path, partition: str) -> dict:
    path = folder if partition == "split" else folder / "partitions" / partition
    return {(r.variant, r.seed): r for r in read_runs(path) if r.train_size is None} if path.exists() else {}


def identity_match(committed: dict, rerun: dict) -> str:
    """same | differs | unknown, cpu same | unknown, cpu differs (records made before the numerics identity)."""
    if committed.get("numerics_digest") and rerun.get("numerics_digest"):
        return "same" if committed["numerics_digest"] == rerun["numerics_digest"] else "differs"
    return "unknown, cpu " + ("same" if committed.get("node_cpu") == rerun.get("node_cpu") else "differs")


def compare_runs(committed: Committed, fresh: Path) -> pd.DataFrame:
    """One row per rerun: committed and rerun figures, their difference, the identity, the verdict on exactness."""
    rows = []
    for partition in committed.partitions:
        old, new = _records(committed.folder, partition), _records(fresh, partition)
        for variant in committed.variants:
            for seed in committed.seeds_of(partition):
                before, after = old.get((variant, seed)), new.get((variant, seed))
                if before is None or after is None or not before.ok or not after.ok:
                    rows.append({"partition": partition, "run": run_name(variant, seed), "variant": variant,
                                 "seed": seed, "identity": "—",
                                 "status": f"not compared (committed {before.status if before else 'missing'}, "
                                           f"rerun {after.status if after else 'missing'})"})
                    continue
                row = {"partition": partition, "run": run_name(variant, seed), "variant": variant, "seed": seed,
                       "identity": identity_match(before, after), "committed_cpu": before.get("node_cpu"),
                       "rerun_cpu": after.get("node_cpu"), "rerun_code": after.get("code_sha256")}
                for figure in FIGURES:
                    row[f"committed_{figure}"], row[f"rerun_{figure}"] = before.get(figure), after.get(figure)
                    row[f"difference_{figure}"] = _difference(before.get(figure), after.get(figure))
                largest = max(abs(row[f"difference_{f}"]) for f in FIGURES if row[f"difference_{f}"] is not None)
                exact = largest <= EXACT + 1e-12
                row["status"] = ("exact" if exact else f"NOT REPRODUCED: same numerics identity, differs by {largest:.6f}") \
                    if row["identity"] == "same" else ("exact" if exact else "differs (another numerics identity)")
                rows.append(row)
    return pd.DataFrame(rows)


def _difference(before, after) -> float | None:
    return None if before is None or after is None else float(after) - float(before)


def seed_spread(committed: Committed) -> tuple[float | None, str]:
    """(the spread of seed noise on test AP, what it is): A/A differences if the folder has two seeds, else the twins'."""
    scores = _score_table(committed.folder)
    if scores.empty:
        return None, "no finished runs to measure a seed spread from"
    differences = []
    for (variant, partition), rows in scores.groupby(["variant", "partition"]):
        values = rows.sort_values("seed")["average_precision"].to_numpy()
        differences += [values[i] - values[0] for i in range(1, len(values))]
    if len(differences) == 1:
        return abs(float(differences[0])), "the one A/A difference (two seeds on one split) in the committed folder"
    if len(differences) >= 2:
        return float(np.std(differences, ddof=1)), (f"the standard deviation of {len(differences)} per-partition A/A "
                                                   "differences (two seeds of one variant) in the committed folder")
    first = scores["seed"] == scores.groupby("partition")["seed"].transform("min")  # each partition's first seed
    wide = scores[first].pivot(index="partition", columns="variant", values="average_precision")
    if all(t in wide for t in TWINS) and wide[list(TWINS)].dropna().shape[0] >= 2:
        twins = (wide[TWINS[0]] - wide[TWINS[1]]).dropna()
        return float(twins.std(ddof=1)), (f"the standard deviation of the twins' ({TWINS[0]} - {TWINS[1]}) "
                                          f"per-partition differences over {len(twins)} partitions (one seed per "
                                          "partition: no A/A pair in the folder)")
    return None, "the committed folder holds neither two seeds of a variant nor both twins: no seed spread to compare with"


def _score_table(folder: Path) -> pd.DataFrame:
    rows = []
    design = Design.read(folder)  # a partition design's plan (None: a single split)
    partitions = design.partition_names if design is not None else ["split"]
    for partition in partitions:
        for (variant, seed), record in _records(folder, partition).items():
            if record.ok:
                rows.append({"partition": partition, "variant": variant, "seed": seed,
                             "average_precision": record.get("average_precision")})
    return pd.DataFrame(rows, columns=["partition", "variant", "seed", "average_precision"])


def folder_verdicts(folder: Path) -> pd.DataFrame:
    """(metric, variant_a, variant_b, verdict) of a folder, computed by its report's own code (a partition design's
    recipe verdicts, a single split's bootstrap; report/run_report.py), nothing written: the one place to point at
    another verdict engine."""
    opened = open_folder(Path(folder))
    kind = run_report_kind(opened)
    pairs = kind.verdict_pairs(opened) if kind is not None else None
    if pairs is None:
        pairs = pd.DataFrame(columns=["metric", "variant_a", "variant_b", "verdict"])
    return pairs[["metric", "variant_a", "variant_b", "verdict"]].reset_index(drop=True)


def substituted_verdicts(committed: Committed, fresh: Path) -> pd.DataFrame:
    """Each verdict of the committed folder, then with the rerun runs in place of the committed ones."""
    source = committed.folder
    with tempfile.TemporaryDirectory() as scratch:
        overlay = Path(scratch) / "overlay"
        shutil.copytree(source, overlay, ignore=shutil.ignore_patterns("logs", "zh", "*.png", "*.html", "exports"))
        for partition in committed.partitions:
            target = overlay if partition == "split" else overlay / "partitions" / partition
            origin = fresh if partition == "split" else fresh / "partitions" / partition
            for (variant, seed), record in _records(fresh, partition).items():
                if variant in committed.variants and seed in committed.seeds_of(partition) and record.ok:
                    name = run_name(variant, seed)
                    shutil.copy(origin / "runs" / f"{name}.json", target / "runs" / f"{name}.json")
                    if (origin / "predictions" / f"{name}.npz").exists():
                        shutil.copy(origin / "predictions" / f"{name}.npz", target / "predictions" / f"{name}.npz")
        for path in overlay.rglob(MANIFEST):  # today's code and this machine are what a rerun differs in: not
            plan = Manifest.read(path.parent)  # judged here, or the report would leave the rerun runs out
            write_manifest(path.parent, {k: v for k, v in plan.items() if k not in ("code_sha256", "versions", "numerics")})
        before, after = folder_verdicts(source), folder_verdicts(overlay)
    merged = before.merge(after, on=["metric", "variant_a", "variant_b"], how="outer", suffixes=("_committed", "_rerun"))
    merged["stands"] = merged["verdict_committed"] == merged["verdict_rerun"]
    return merged


def _f(value, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    return f"{value:+.6f}" if signed else f"{value:.6f}"


def reproduce_markdown(committed: Committed, runs: pd.DataFrame, spread: tuple, verdicts: pd.DataFrame,
                       conclusions: list[str]) -> str:
    value, what = spread
    cpus = sorted({str(c) for c in runs.get("committed_cpu", pd.Series(dtype=str)).dropna()})
    manifest = committed.manifest
    lines = [f"# Reproduced: {committed.shown}", "",
             f"Committed runs made on: {', '.join(cpus) or '—'}. This rerun: {describe_numerics(numerics_identity(manifest.threads))}.",
             f"Rerun: {', '.join(committed.variants)} on {', '.join(committed.partitions)}, seeds "
             f"{', '.join(map(str, committed.seeds))}, profile {manifest.profile}, "
             f"{manifest.threads} thread(s), quality only (no serving costs); code: committed "
             f"{str(manifest.code_sha256)[:12]} (commit {str(manifest.code_commit)[:12]}), "
             f"rerun {str(_rerun_code(runs))[:12]}.", "",
             *[f"- {line}" for line in conclusions], "", "## Each run", "",
             "| partition | run | numerics identity | test AP committed | rerun | Δ | macro-F1 @ threshold committed | rerun | Δ | status |",
             "| --- | --- | --- | --: | --: | --: | --: | --: | --: | --- |"]
    for row in runs.to_dict("records"):
        lines.append(f"| {row['partition']} | {row['run']} | {row['identity']} | "
                     + " | ".join(f"{_f(row.get(f'committed_{f}'))} | {_f(row.get(f'rerun_{f}'))} | "
                                  f"{_f(row.get(f'difference_{f}'), True)}" for f in FIGURES)
                     + f" | {row['status']} |")
    lines += ["", "## Seed spread", "",
              f"{_f(value) if value is not None else '—'} test AP: {what}. A difference within "
              f"{NOISE_FACTOR:g} x this spread is within seed noise.", "",
              "## Verdicts with the rerun figures in place of the committed ones", ""]
    if verdicts.empty:
        lines.append("The committed folder holds no verdicts (fewer than two variants).")
    else:
        lines += ["| metric | pair | committed verdict | with the rerun figures | stands |", "| --- | --- | --- | --- | --- |"]
        for row in verdicts.to_dict("records"):
            lines.append(f"| {row['metric']} | {row['variant_a']} − {row['variant_b']} | {row['verdict_committed']} | "
                         f"{row['verdict_rerun']} | {'yes' if row['stands'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def _rerun_code(runs: pd.DataFrame) -> str | None:
    codes = runs["rerun_code"].dropna() if "rerun_code" in runs else []
    return codes.iloc[0] if len(codes) else None


def conclusions_of(runs: pd.DataFrame, spread: tuple, verdicts: pd.DataFrame) -> tuple[list[str], bool]:
    """(the summary lines, whether every run under the same identity came back exactly and none failed)."""
    compared = runs[runs["status"].str.startswith(("exact", "differs", "NOT"))]
    same = compared[compared["identity"] == "same"]
    other = compared[compared["identity"] != "same"]
    lines, ok = [], len(compared) == len(runs)
    if len(compared) < len(runs):
        lines.append(f"{len(runs) - len(compared)} run(s) not compared: a committed or rerun run is missing or failed")
    if len(same):
        broken = same[same["status"] != "exact"]
        ok = ok and broken.empty
        lines.append(f"same numerics identity: {len(same) - len(broken)} of {len(same)} run(s) reproduced to 1e-6"
                     + ("" if broken.empty else f"; NOT REPRODUCED: {', '.join(broken['partition'] + '/' + broken['run'])}"))
    if len(other):
        exact = int((other["status"] == "exact").sum())
        largest = float(other["difference_average_precision"].abs().max())
        value = spread[0]
        if value is None:
            within = f"; largest |Δ AP| {largest:.6f}, no seed spread in the folder to set it against"
        elif value == 0:
            within = f"; largest |Δ AP| {largest:.6f} against a seed spread of 0 (a recipe its seeds do not move): BEYOND seed noise"
        else:
            within = (f"; largest |Δ AP| {largest:.6f} = {largest / value:.2f} x the seed spread {value:.6f}: "
                      + ("within seed noise" if largest <= NOISE_FACTOR * value else "BEYOND seed noise"))
        lines.append(f"another or unknown numerics identity: {exact} of {len(other)} run(s) came back exactly"
                     + (within if largest > 0 else ""))
    if not verdicts.empty:
        changed = verdicts[~verdicts["stands"]]
        lines.append(f"verdicts: {len(verdicts) - len(changed)} of {len(verdicts)} stand with the rerun figures"
                     + ("" if changed.empty else "; changed: " + ", ".join(
                         f"{r.metric} {r.variant_a} − {r.variant_b} ({r.verdict_committed} → {r.verdict_rerun})"
                         for r in changed.itertuples())))
    return lines, ok


def command_reproduce(args) -> int:
    source, fresh = Path(args.source).resolve(), Path(args.out).resolve()
    if fresh == source or source in fresh.parents:
        raise UserInputError(f"--out {args.out} is inside the committed folder {args.source}; choose a fresh folder elsewhere")
    committed = read_committed(source, args.backends, args.partitions, str(args.source))
    code = rerun(committed, fresh)
    if code not in (0, 1):
        return code
    runs = compare_runs(committed, fresh)
    spread = seed_spread(committed)
    verdicts = substituted_verdicts(committed, fresh)
    lines, ok = conclusions_of(runs, spread, verdicts)
    atomic_write_text(fresh / "reproduce.csv", runs.to_csv(index=False, float_format="%.6f"))
    atomic_write_text(fresh / "reproduce.md", reproduce_markdown(committed, runs, spread, verdicts, lines))
    for line in lines:
        print(f"reproduce: {line}", file=sys.stderr)
    print(f"results: {fresh}/reproduce.md, {fresh}/reproduce.csv", file=sys.stderr)
    return 0 if ok and code == 0 else 1
