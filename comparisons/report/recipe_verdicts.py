"""Verdicts about recipes, from runs on repeated group-aware k-fold partitions (`--cv K --repeats R`).

A recipe is a way of training a model on data of this kind. On R x K partitions each variant is
trained on other texts and tested on other texts (every text is tested once per repeat), with its
own training randomness (seeds, and everything fitted on the training texts). A verdict here
generalises over all three: training randomness, which texts were trained on, which were tested.

The test: the corrected repeated k-fold t-test (Nadeau & Bengio 2003; Bouckaert & Frank 2004). For
a pair, d_j = A's metric - B's metric on partition j (each the mean over its seeds), j = 1..J,
J = R x K. The partitions overlap in their training texts, so the plain variance of the mean,
s^2 / J, is too small; the corrected one is s^2 x (1/J + n_test/n_train), with t on J - 1 degrees
of freedom. Equivalence within the declared margin is two one-sided tests with the same
statistic; the four verdicts and the family's Holm correction are comparisons/report/verdict_rules.py's.

With more than two classes no threshold is chosen (the runs record none): the decision rows are the
arg-max's macro-F1 and accuracy (docs/cross_corpus.md).

Written in the top folder: scores.csv (one row per variant and partition: seeds, metrics),
recipe_variants.csv (mean over partitions with its corrected 95% interval), verdicts.csv (the
columns of comparisons/report/verdicts.py that apply, plus partitions and df) and verdicts.md.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from comparisons.report.i18n import text
from comparisons.outputs import atomic_write_text
from comparisons.run_folder import read_runs
from comparisons.run_folder import RunFolder  # calibration (report/calibration.py)
from comparisons.report.calibration import CALIBRATION, positive_index, run_calibration  # calibration
from comparisons.report.verdict_rules import ALPHA, PRIMARY, correct_family, margin_for, phrase

METRICS = ("average_precision", "macro_f1_at_threshold", "accuracy_at_threshold")
COSTS = ("params_total", "train_seconds", "latency_ms_b1_p50", "throughput_per_s", "peak_rss_serve_mb", "size_mb")
COLUMNS = ("metric", "variant_a", "variant_b", "partitions", "seeds", "difference", "ci_low", "ci_high",
           "standard_error", "df", "p_value", "p_holm", "margin", "p_equivalence", "p_equivalence_holm", "family",
           "family_size", "smallest_detectable_difference", "verdict")


def partition_scores(out: Path) -> pd.DataFrame:
    """One row per finished run of every partition folder: partition, variant, seed, sizes and metrics."""
    rows = []
    for folder in sorted((Path(out) / "partitions").glob("r*f*")):
        split = json.loads((folder / "splits.json").read_text())
        manifest = folder / "manifest.json"
        classes = len(json.loads(manifest.read_text())["data"]["class_names"]) if manifest.exists() else 2
        run_folder, positive = RunFolder(folder), positive_index(folder)  # calibration (report/calibration.py)
        for record in read_runs(folder):
            if record.get("status") != "ok" or record.get("split_sha256") != split["sha256"]:
                continue
            values = {m: record.get(m) for m in METRICS + COSTS}
            values.update(run_calibration(run_folder, record, positive))  # calibration (report/calibration.py)
            if classes > 2:  # no threshold is chosen with more than two classes: the decision is the arg-max
                values.update(macro_f1_at_threshold=record.get("macro_f1"), accuracy_at_threshold=record.get("accuracy"))
            rows.append({"partition": folder.name, "variant": record["variant"], "seed": int(record["seed"]),
                         "n_train": len(split["train"]) + len(split["valid"]), "n_test": len(split["test"]), **values})
    return pd.DataFrame(rows, columns=["partition", "variant", "seed", "n_train", "n_test", *METRICS, *COSTS,
                                      *CALIBRATION])  # calibration (report/calibration.py)


def corrected_t(differences: np.ndarray, test_to_train: float) -> tuple[float, float, int]:
    """(mean, corrected standard error, degrees of freedom) of per-partition differences."""
    differences = np.asarray(differences, dtype=float)
    count = len(differences)
    variance = float(np.var(differences, ddof=1)) if count > 1 else float("nan")
    return float(differences.mean()), float(np.sqrt((1 / count + test_to_train) * variance)), count - 1


def t_tests(mean: float, standard_error: float, df: int, margin: float) -> tuple[float, float, float, float]:
    """(p of 'no difference', TOST p of '|difference| >= margin', 95% interval low, high)."""
    if not np.isfinite(standard_error) or df < 1:
        return 1.0, 1.0, float("nan"), float("nan")
    if standard_error == 0:  # every partition gave the same difference
        return (1.0 if mean == 0 else 0.0), (0.0 if abs(mean) < margin else 1.0), mean, mean
    p = float(2 * student_t.sf(abs(mean) / standard_error, df))
    p_equivalence = float(max(student_t.sf((mean + margin) / standard_error, df),
                              student_t.cdf((mean - margin) / standard_error, df)))
    half = float(student_t.ppf(1 - ALPHA / 2, df) * standard_error)
    return p, p_equivalence, mean - half, mean + half


def recipe_verdicts(scores: pd.DataFrame, margins: dict | None = None,
                    order: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(variants, pairs) from partition_scores: seeds averaged within a partition, tests over partitions."""
    per_partition = scores.groupby(["variant", "partition"], sort=False).agg(
        seeds=("seed", "nunique"), n_train=("n_train", "first"), n_test=("n_test", "first"),
        **{m: (m, "mean") for m in METRICS}).reset_index()
    found = list(dict.fromkeys(scores["variant"]))  # the plan's order first, then any other variant found
    variants = [v for v in dict.fromkeys([*(order or []), *found]) if v in set(found)]
    ratio = float((per_partition["n_test"] / per_partition["n_train"]).mean()) if len(per_partition) else 0.0
    variant_rows = []
    for variant in variants:
        rows = per_partition[per_partition["variant"] == variant]
        row = {"variant": variant, "partitions": len(rows), "seeds": int(rows["seeds"].min())}
        for metric in METRICS:
            mean, se, df = corrected_t(rows[metric].to_numpy(), ratio)
            half = student_t.ppf(1 - ALPHA / 2, df) * se if df >= 1 else float("nan")
            row.update({f"{metric}_mean": mean, f"{metric}_std": float(rows[metric].std(ddof=1)),
                        f"{metric}_ci_low": max(0.0, mean - half), f"{metric}_ci_high": min(1.0, mean + half)})
        runs = scores[scores["variant"] == variant]
        row.update({f"{cost}_median": float(pd.to_numeric(runs[cost], errors="coerce").median())
                    for cost in COSTS if cost in runs})  # over every run: partitions and seeds
        variant_rows.append(row)
    pair_rows = []
    for metric in METRICS:
        wide = per_partition.pivot(index="partition", columns="variant", values=metric)
        seeds = per_partition.pivot(index="partition", columns="variant", values="seeds")
        for i, variant_b in enumerate(variants):
            for variant_a in variants[i + 1:]:
                both = wide[[variant_a, variant_b]].dropna()
                if len(both) < 2:
                    continue
                mean, se, df = corrected_t((both[variant_a] - both[variant_b]).to_numpy(), ratio)
                margin = margin_for(metric, margins)
                p, p_equivalence, low, high = t_tests(mean, se, df, margin)
                pair_rows.append({"metric": metric, "variant_a": variant_a, "variant_b": variant_b,
                                  "partitions": len(both), "seeds": int(seeds.loc[both.index, [variant_a, variant_b]].min().min()),
                                  "difference": mean, "ci_low": low, "ci_high": high, "standard_error": se, "df": df,
                                  "p_value": p, "margin": margin, "p_equivalence": p_equivalence})
    if not pair_rows:
        return pd.DataFrame(variant_rows), pd.DataFrame(columns=COLUMNS)
    return pd.DataFrame(variant_rows), correct_family(pd.DataFrame(pair_rows))[list(COLUMNS)]


def verdicts_markdown(variants: pd.DataFrame, pairs: pd.DataFrame, design: dict, lang: str = "en") -> str:
    folds, repeats = design["folds"], design["repeats"]
    lines = [f"# {text('Verdicts about recipes', '关于训练配方的结论', lang)}", "", text(
        f"{repeats} x {folds}-fold group-aware stratified partitions (identical texts never straddle train and "
        f"test; every text tested {repeats} time(s)). Each partition's seeds are averaged; pairs are tested over the "
        "partitions with the corrected repeated k-fold t-test (Nadeau & Bengio 2003; Bouckaert & Frank 2004). "
        "A verdict generalises over training randomness, the texts trained on and the texts tested, for data of "
        "this kind. Primary metric: average precision, Holm-corrected over all its pairs; the rest are secondary. "
        "Equivalent: within the declared margin by two one-sided tests; inconclusive: neither shown different "
        "nor shown equal.",
        f"{repeats} 次 {folds} 折、按相同文本分组的分层划分（相同文本不会同时出现在训练与测试中；每条文本被测试 "
        f"{repeats} 次）。每个划分内对种子取平均；每对模型在各划分上用校正的重复 k 折 t 检验比较"
        "（Nadeau & Bengio 2003；Bouckaert & Frank 2004）。结论推广到训练随机性、所训练的文本和所测试的文本"
        "（同类数据）。主指标：平均精度，在全部配对上做 Holm 校正；其余为次要指标。等价：双单侧检验下在声明的容差内；"
        "无定论：既未显示不同，也未显示相等。", lang), ""]
    shown = pd.DataFrame({"variant": variants["variant"], "partitions": variants["partitions"],
                          "seeds": variants["seeds"]})
    for metric in METRICS:
        shown[metric] = [f"{m:.4f} ± {s:.4f} [{lo:.4f}, {hi:.4f}]" for m, s, lo, hi in zip(
            variants[f"{metric}_mean"], variants[f"{metric}_std"], variants[f"{metric}_ci_low"],
            variants[f"{metric}_ci_high"])]
    lines += [f"## {text('Each recipe: mean ± std over partitions [corrected 95% interval]', '各配方：各划分上的均值 ± 标准差 [校正的 95% 区间]', lang)}",
              "", shown.to_markdown(index=False), ""]
    for metric in METRICS:
        rows = pairs[pairs["metric"] == metric]
        table = pd.DataFrame({
            "pair": [f"{a} − {b}" for a, b in zip(rows["variant_a"], rows["variant_b"])],
            "A − B [95% interval]": [f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]" for d, lo, hi in
                                     zip(rows["difference"], rows["ci_low"], rows["ci_high"])],
            "p (Holm)": [f"{p:.3g}" for p in rows["p_holm"]],
            "margin": [f"±{m:g}" for m in rows["margin"]],
            "equivalence p (Holm)": [f"{p:.3g}" for p in rows["p_equivalence_holm"]],
            "smallest detectable": [f"{d:.4f}" for d in rows["smallest_detectable_difference"]],
            "verdict": [phrase(v, a, b, lang) for v, a, b in zip(rows["verdict"], rows["variant_a"], rows["variant_b"])],
        })
        family = "primary" if metric == PRIMARY else "secondary"
        lines += [f"## {metric} ({family})", "", table.to_markdown(index=False), ""]
    return "\n".join(lines)


def write_recipe_reports(out: Path, margins: dict | None = None, order: list[str] | None = None,
                         lang: str = "en") -> pd.DataFrame | None:
    """scores.csv, recipe_variants.csv, verdicts.csv and verdicts.md in the top folder; None without runs."""
    out = Path(out)
    design = json.loads((out / "design.json").read_text())
    scores = partition_scores(out)
    if scores.empty:
        return None
    variants, pairs = recipe_verdicts(scores, margins or design.get("margins"), order or design.get("variants"))
    atomic_write_text(out / "scores.csv", scores.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "recipe_variants.csv", variants.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "verdicts.csv", pairs.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "verdicts.md", verdicts_markdown(variants, pairs, design, lang))
    return pairs
