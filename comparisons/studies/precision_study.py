"""Is bf16 the same recipe as fp32? The equivalence study, `make precision-study`.

    python -m comparisons.studies.precision_study --out results/precision [--threads 2] \
        [--profile full] [--limit-per-class N] [--compare-only] [--reference results/reference]

(a) Runs hf_bert:full and hf_bert:frozen on the reference's partitions (`--cv 5 --seeds 1`, the same
split seed, so the same partitions and model seeds) twice through the suite's own command line:
`--precision fp32` into OUT/fp32 (with `--serve native,native-bf16`, so each run also serves its fp32
weights under bf16 autocast: b1 latency and b32 throughput of native-bf16 against native, in one
run) and `--precision bf16` into OUT/bf16. Both resume; nothing else differs between them.

(b) Compares them pair by pair, per variant and partition: ΔAP (bf16 − fp32); the corrected repeated
k-fold t-test over the partitions with the ±MARGIN equivalence margin (comparisons/report/
pair_tests.partition_pair_rows; the family rule over both variants: verdict_rules.correct_family);
decisions flipped on the test texts, each run at its own validation threshold (predictions/*.npz and
each record's threshold); training time per epoch (hf_bert records each epoch's seconds in
fit_info.history; frozen's cost is its encoder pass, fit_info.feature_seconds) and the recorded
run times. With --reference (a committed --cv folder made in fp32), the sum of its recorded run
times is estimated under `auto`: each hf_bert run's training shortened by the study's ratio, the
rest unchanged (inference under bf16 is faster too, so this bounds the ratio from above).

Written in OUT: equivalence.md, equivalence.csv (one row per variant), partitions.csv (one row per
variant and partition), serving.csv (native-bf16 against native, per variant: medians over the
partitions). A smoke at `--profile tiny --limit-per-class 40` checks the tooling, not the finding.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from comparisons.comparability import ROOT
from comparisons.outputs import atomic_write_text
from comparisons.stats.corrected_t import partition_pair_rows
from comparisons.stats.family import correct_family
from comparisons.report.i18n import phrase
from comparisons.run_folder import Manifest, SplitsRecord, prediction_path, read_runs
from comparisons.run_folder.open_folder import DesignFolder

VARIANTS = ("hf_bert:full", "hf_bert:frozen")
PRECISIONS = ("fp32", "bf16")
MARGIN = 0.005  # average precision, the suite's declared margin


def commands(out: Path, threads: int, profile: str, limit_per_class: int | None) -> dict[str, list[str]]:
    """The two runs, as `python -m comparisons` arguments, keyed by precision."""
    # --seeding shared: the reference's model seeds (0 in every partition), so each run pairs with the reference's
    common = ["run", "--backends", ",".join(VARIANTS), "--cv", "5", "--seeds", "1", "--seeding", "shared", "--profile", profile,
              "--threads", str(threads), *(["--limit-per-class", str(limit_per_class)] if limit_per_class else [])]
    return {"fp32": [*common, "--precision", "fp32", "--serve", "native,native-bf16", "--out", str(out / "fp32")],
            "bf16": [*common, "--precision", "bf16", "--serve", "native", "--out", str(out / "bf16")]}


def _runs(folder: Path) -> dict[tuple[str, str], tuple[Path, dict]]:
    """(variant, partition) -> (partition folder, its finished record) of a --cv folder."""
    found = {}
    for partition in DesignFolder(folder).partitions:
        for record in read_runs(partition):
            if record.get("status") == "ok" and record.get("variant") in VARIANTS:
                found[(record["variant"], partition.name)] = (partition, dict(record))
    return found


def _decisions(partition: Path, record: dict) -> tuple[np.ndarray, np.ndarray]:
    """(test ids, decisions at the run's own validation threshold) from its saved predictions."""
    positive = Manifest.read(partition).data["positive_index"]
    with np.load(prediction_path(partition, record["variant"], record["seed"], None)) as saved:
        ids, proba = saved["test"], saved["proba"]
    threshold = record.get("threshold")
    if threshold is None or positive is None:
        return ids, proba.argmax(axis=1)
    return ids, np.where(proba[:, positive] >= threshold, positive, 1 - positive)


def _epoch_seconds(record: dict) -> float:
    """The median training seconds of one epoch (validation apart), as hf_bert records them."""
    history = (record.get("fit_info") or {}).get("history") or []
    seconds = [epoch["seconds"] for epoch in history if epoch.get("seconds") is not None]
    return float(np.median(seconds)) if seconds else float("nan")


def partition_rows(out: Path) -> pd.DataFrame:
    """One row per (variant, partition) finished in both folders."""
    fp32, bf16 = _runs(out / "fp32"), _runs(out / "bf16")
    rows = []
    for key in sorted(set(fp32) & set(bf16), key=lambda k: (VARIANTS.index(k[0]), k[1])):
        (p32, r32), (p16, r16) = fp32[key], bf16[key]
        ids32, d32 = _decisions(p32, r32)
        ids16, d16 = _decisions(p16, r16)
        if not np.array_equal(ids32, ids16):
            raise SystemExit(f"{key[1]}: the two folders tested other texts; run both from the same commands")
        split = SplitsRecord.read(p32).to_dict()
        rows.append({
            "variant": key[0], "partition": key[1], "precision_fp32": r32.get("precision"),
            "precision_bf16": r16.get("precision"), "ap_fp32": r32["average_precision"],
            "ap_bf16": r16["average_precision"], "delta_ap": r16["average_precision"] - r32["average_precision"],
            "threshold_fp32": r32.get("threshold"), "threshold_bf16": r16.get("threshold"),
            "flips": int((d32 != d16).sum()), "n_test": len(ids32),
            "n_train": len(split["train"]) + len(split["valid"]),
            "epoch_seconds_fp32": _epoch_seconds(r32), "epoch_seconds_bf16": _epoch_seconds(r16),
            "feature_seconds_fp32": (r32.get("fit_info") or {}).get("feature_seconds"),
            "feature_seconds_bf16": (r16.get("fit_info") or {}).get("feature_seconds"),
            "train_seconds_fp32": r32["train_seconds"], "train_seconds_bf16": r16["train_seconds"],
            "wall_seconds_fp32": r32.get("wall_seconds"), "wall_seconds_bf16": r16.get("wall_seconds"),
        })
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["epoch_ratio"] = frame["epoch_seconds_bf16"] / frame["epoch_seconds_fp32"]
        frame["train_ratio"] = frame["train_seconds_bf16"] / frame["train_seconds_fp32"]
    return frame


def verdict_rows(partitions: pd.DataFrame, margin: float = MARGIN) -> pd.DataFrame:
    """Per variant: bf16 − fp32 through the partition design's own pair test and family rule
    (pair_tests.partition_pair_rows, verdict_rules.correct_family: Holm over every variant's difference and
    equivalence hypotheses), with the flips and time ratios beside it."""
    runs = pd.DataFrame([{"partition": row["partition"], "variant": f"{row['variant']} {precision}", "seed": 0,
                          "train_size": "all", "n_train": row["n_train"], "n_test": row["n_test"],
                          "average_precision": row[f"ap_{precision}"]}
                         for _, row in partitions.iterrows() for precision in PRECISIONS])
    if runs.empty:
        return pd.DataFrame()
    pairs = [(f"{v} bf16", f"{v} fp32") for v in dict.fromkeys(partitions["variant"])]
    rows = partition_pair_rows(runs, pairs, ("average_precision",), {"average_precision": margin}, None)
    rows.insert(1, "variant", [a.removesuffix(" bf16") for a in rows["variant_a"]])
    found = partitions.groupby("variant", sort=False)
    rows["flips"] = rows["variant"].map(found["flips"].sum()).astype(int)
    rows["test_texts"] = rows["variant"].map(found["n_test"].sum()).astype(int)
    rows["epoch_ratio_median"] = rows["variant"].map(found["epoch_ratio"].median())
    rows["train_ratio_median"] = rows["variant"].map(found["train_ratio"].median())
    return correct_family(rows)


def serving_rows(out: Path) -> pd.DataFrame:
    """native-bf16 against native (the fp32 runs' own weights), per variant: medians over the partitions."""
    rows = []
    for serving in sorted((out / "fp32" / "partitions").glob("r*f*/serving/*.json")):
        paths = {row["path"]: row for row in json.loads(serving.read_text())["paths"]}
        native, bf16 = paths.get("native"), paths.get("native-bf16")
        if not native or not bf16 or bf16.get("status") != "ok":
            continue
        rows.append({"variant": json.loads(serving.read_text())["variant"],
                     **{f"{key}_{name}": row.get(key) for name, row in (("native", native), ("bf16", bf16))
                        for key in ("throughput_per_s", "latency_ms_b1_p50", "latency_ms_b32_p50")},
                     "flips_vs_native": bf16.get("flips_vs_native"),
                     "max_proba_change_vs_native": bf16.get("max_proba_change_vs_native")})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    summary = frame.groupby("variant", sort=False).median(numeric_only=True).reset_index()
    summary["throughput_ratio"] = summary["throughput_per_s_bf16"] / summary["throughput_per_s_native"]
    summary["b1_ratio"] = summary["latency_ms_b1_p50_bf16"] / summary["latency_ms_b1_p50_native"]
    summary["partitions"] = frame.groupby("variant", sort=False).size().to_numpy()
    return summary


def reference_estimate(reference: Path, verdicts: pd.DataFrame) -> dict | None:
    """The reference plan's recorded run times (wall_seconds), summed, in fp32 and estimated under auto."""
    if verdicts.empty or not (reference / "partitions").is_dir():
        return None
    ratios = dict(zip(verdicts["variant"], verdicts["train_ratio_median"]))
    fp32 = auto = 0.0
    for partition in sorted((reference / "partitions").glob("r*f*")):
        for record in read_runs(partition):
            wall = record.get("wall_seconds")
            if record.get("status") != "ok" or wall is None:
                continue
            fp32 += wall
            saved = record["train_seconds"] * (1 - ratios[record["variant"]]) if record["variant"] in ratios else 0.0
            auto += wall - saved
    return {"reference": str(reference), "fp32_seconds": fp32, "auto_seconds": auto,
            "ratio": auto / fp32 if fp32 else float("nan")}


def markdown(partitions: pd.DataFrame, verdicts: pd.DataFrame, serving: pd.DataFrame, estimate: dict | None) -> str:
    lines = ["# bf16 against fp32: the same recipe?", "",
             "Each variant trained on the same partitions with the same seeds, once in fp32 and once under bf16 "
             "autocast (fp32 master weights); nothing else differs. ΔAP = bf16 − fp32 per partition; the corrected "
             f"repeated k-fold t-test over the partitions, equivalence margin ±{MARGIN:g} (two one-sided tests), "
             "Holm over the family (both variants' difference and equivalence hypotheses). Flips: test decisions that differ, each run at its own validation threshold.",
             "", "## Verdicts", ""]
    if not verdicts.empty:
        lines += [pd.DataFrame({
            "variant": verdicts["variant"], "partitions": verdicts["partitions"],
            "ΔAP [95% interval]": [f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]" for d, lo, hi in
                                   zip(verdicts["difference"], verdicts["ci_low"], verdicts["ci_high"])],
            "equivalence p (Holm)": [f"{p:.3g}" for p in verdicts["p_equivalence_holm"]],
            "verdict": [phrase(v, "bf16", "fp32") for v in verdicts["verdict"]],
            "flips / test texts": [f"{f} / {n}" for f, n in zip(verdicts["flips"], verdicts["test_texts"])],
            "epoch time bf16/fp32": [f"{r:.2f}" for r in verdicts["epoch_ratio_median"]],
            "train time bf16/fp32": [f"{r:.2f}" for r in verdicts["train_ratio_median"]],
        }).to_markdown(index=False), ""]
    lines += ["## Per partition", "", partitions.to_markdown(index=False, floatfmt=".4g") if len(partitions) else "—", ""]
    lines += ["## Serving: native-bf16 against native (the fp32 runs' weights; medians over partitions)", "",
              serving.to_markdown(index=False, floatfmt=".4g") if len(serving) else "—", ""]
    if estimate:
        lines += ["## The reference plan's recorded run times under auto", "",
                  f"{estimate['reference']}: {estimate['fp32_seconds'] / 60:.1f} min recorded in fp32; under auto an "
                  f"estimated {estimate['auto_seconds'] / 60:.1f} min (ratio {estimate['ratio']:.2f}): each hf_bert "
                  "run's training shortened by this study's median ratio, everything else as recorded (its "
                  "inference would be faster too: an upper bound). The reference was recorded on another CPU kind.", ""]
    return "\n".join(lines)


def compare(out: Path, reference: Path | None = None) -> pd.DataFrame:
    partitions = partition_rows(out)
    if partitions.empty:
        raise SystemExit(f"{out}: no (variant, partition) finished in both fp32/ and bf16/; run the study first")
    verdicts, serving = verdict_rows(partitions), serving_rows(out)
    estimate = reference_estimate(reference, verdicts) if reference else None
    atomic_write_text(out / "partitions.csv", partitions.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "equivalence.csv", verdicts.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "serving.csv", serving.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "equivalence.md", markdown(partitions, verdicts, serving, estimate))
    return verdicts


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.precision_study", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("results/precision"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--profile", default="full")
    parser.add_argument("--limit-per-class", type=int, help="a smoke of the tooling on a small subset")
    parser.add_argument("--compare-only", action="store_true", help="compare the two folders already there")
    parser.add_argument("--reference", type=Path, help="a committed fp32 --cv folder: estimate its run times under auto")
    args = parser.parse_args(argv)
    if not args.compare_only:  # each run as its own command, so its manifest records that command
        for precision, arguments in commands(args.out, args.threads, args.profile, args.limit_per_class).items():
            print(f"precision study: {precision}: python -m comparisons {' '.join(arguments)}", file=sys.stderr)
            code = subprocess.run([sys.executable, "-m", "comparisons", *arguments], cwd=ROOT).returncode
            if code not in (0, 1):
                return code
    compare(args.out, args.reference)
    print(f"precision study: {args.out}/equivalence.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
