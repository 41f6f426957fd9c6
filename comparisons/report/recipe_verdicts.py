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

Which runs: each partition's runs of the plan comparable with it (comparisons/report/scores.py); the
others are named in one line. Written in the top folder: scores.csv (the long scores table: one row per
partition, seed, training size, variant and metric), recipe_variants.csv (mean over partitions with its
corrected 95% interval), verdicts.csv (verdict_rules.VERDICT_COLUMNS) and verdicts.md.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from comparisons.report.contrasts import as_pairs, pair_order
from comparisons.report.i18n import text
from comparisons.report.labels_saved import labels_saved, labels_saved_markdown
from comparisons.outputs import atomic_write_json, atomic_write_text
from comparisons.report.pair_tests import (corrected_interval, corrected_t, partition_pair_rows,  # noqa: F401
                                          per_partition, test_to_train)
from comparisons.report.scores import COSTS, scores_table, wide_runs
from comparisons.report.verdict_rules import VERDICT_COLUMNS, correct_family, in_schema
from comparisons.report.verdict_tables import verdict_sections

METRICS = ("average_precision", "macro_f1_at_threshold", "accuracy_at_threshold")
CALIBRATION_METRICS = ("brier", "ece")  # verdict rows too where every run has them (lower is better)


def verdict_metrics(scores: pd.DataFrame) -> tuple[str, ...]:
    """The metrics with verdict rows: METRICS, then Brier and ECE when every run of the folder has them."""
    return METRICS + tuple(m for m in CALIBRATION_METRICS if m in scores and scores[m].notna().all())
COLUMNS = VERDICT_COLUMNS


def partition_scores(out: Path) -> pd.DataFrame:
    """One row per comparable finished run of every partition folder (comparisons/report/scores.py)."""
    return wide_runs(scores_table(out)[0])


def recipe_verdicts(scores: pd.DataFrame, margins: dict | None = None, order: list[str] | None = None,
                    contrasts: list[tuple[str, str]] | None = None,
                    folds: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(variants, pairs) from partition_scores: seeds averaged within a partition, tests over partitions.

    Variants are summarised at the largest training size; pairs come for every size, one family over all."""
    scores = scores.copy()
    if "train_size" not in scores:
        scores["train_size"] = "all"
    found = list(dict.fromkeys(scores["variant"]))  # the plan's order first, then any other variant found
    variants = [v for v in dict.fromkeys([*(order or []), *found]) if v in set(found)]
    grouped = per_partition(scores, METRICS)
    largest = grouped[grouped["train_size"] == _largest(grouped["train_size"])]
    ratio = test_to_train(largest)
    variant_rows = []
    for variant in variants:
        rows = largest[largest["variant"] == variant]
        if rows.empty:
            continue
        row = {"variant": variant, "partitions": len(rows), "seeds": int(rows["seeds"].min())}
        for metric in METRICS:
            mean, low, high = corrected_interval(rows[metric].to_numpy(), ratio)
            row.update({f"{metric}_mean": mean, f"{metric}_std": float(rows[metric].std(ddof=1)),
                        f"{metric}_ci_low": max(0.0, low), f"{metric}_ci_high": min(1.0, high)})
        runs = scores[(scores["variant"] == variant) & (scores["train_size"] == _largest(grouped["train_size"]))]
        row.update({f"{cost}_median": float(pd.to_numeric(runs[cost], errors="coerce").median())
                    for cost in COSTS if cost in runs})  # over every run: partitions and seeds
        variant_rows.append(row)
    rows = partition_pair_rows(scores, pair_order(variants, contrasts), verdict_metrics(scores), margins, folds)
    if rows.empty:
        return pd.DataFrame(variant_rows), pd.DataFrame(columns=COLUMNS)
    return pd.DataFrame(variant_rows), in_schema(correct_family(rows, contrasts))


def _largest(sizes: pd.Series):
    from comparisons.run_folder import size_key

    return max(sizes, key=size_key) if len(sizes) else "all"


def verdicts_markdown(variants: pd.DataFrame, pairs: pd.DataFrame, design: dict, lang: str = "en") -> str:
    folds, repeats = design["folds"], design["repeats"]
    lines = [f"# {text('Verdicts about recipes', '关于训练配方的结论', lang)}", "", text(
        f"{repeats} x {folds}-fold group-aware stratified partitions (identical texts never straddle train and "
        f"test; every text tested {repeats} time(s)). Each partition's seeds are averaged; pairs are tested over the "
        "partitions with the corrected repeated k-fold t-test (Nadeau & Bengio 2003; Bouckaert & Frank 2004). "
        "A verdict generalises over training randomness, the texts trained on and the texts tested, for data of "
        "this kind. Primary metric: average precision, Holm-corrected over its family (below); the rest are secondary. "
        "Equivalent: within the declared margin by two one-sided tests; inconclusive: neither shown different "
        "nor shown equal.",
        f"{repeats} 次 {folds} 折、按相同文本分组的分层划分（相同文本不会同时出现在训练与测试中；每条文本被测试 "
        f"{repeats} 次）。每个划分内对种子取平均；每对模型在各划分上用校正的重复 k 折 t 检验比较"
        "（Nadeau & Bengio 2003；Bouckaert & Frank 2004）。结论推广到训练随机性、所训练的文本和所测试的文本"
        "（同类数据）。主指标：平均精度，在其一族（见下）上做 Holm 校正；其余为次要指标。等价：双单侧检验下在声明的容差内；"
        "无定论：既未显示不同，也未显示相等。", lang), ""]
    shown = pd.DataFrame({"variant": variants["variant"], "partitions": variants["partitions"],
                          "seeds": variants["seeds"]})
    for metric in METRICS:
        shown[metric] = [f"{m:.4f} ± {s:.4f} [{lo:.4f}, {hi:.4f}]" for m, s, lo, hi in zip(
            variants[f"{metric}_mean"], variants[f"{metric}_std"], variants[f"{metric}_ci_low"],
            variants[f"{metric}_ci_high"])]
    sized = "train_size" in pairs and pairs["train_size"].astype(str).nunique() > 1
    at_largest = text(" (at the largest training size; each size's figures in learning_curve.csv)",
                      "（最大训练规模；各规模见 learning_curve.csv）", lang) if sized else ""
    lines += [f"## {text('Each recipe: mean ± std over partitions [corrected 95% interval]', '各配方：各划分上的均值 ± 标准差 [校正的 95% 区间]', lang)}{at_largest}",
              "", shown.to_markdown(index=False), ""]
    return "\n".join(lines + verdict_sections(pairs, METRICS + CALIBRATION_METRICS, lang))


def write_recipe_reports(out: Path, margins: dict | None = None, order: list[str] | None = None,
                         lang: str = "en", contrasts: list[tuple[str, str]] | None = None) -> pd.DataFrame | None:
    """scores.csv, recipe_variants.csv, verdicts.csv and verdicts.md in the top folder; None without runs.

    contrasts: declared when the folder is reported (`report --contrasts`) rather than planned; recorded in
    design.json as declared at report time, after the runs, which the pages say."""
    out = Path(out)
    design = json.loads((out / "design.json").read_text())
    if contrasts is not None:
        design = {**design, "contrasts": [list(pair) for pair in contrasts], "contrasts_declared": "at report time"}
        atomic_write_json(out / "design.json", design)
    long, left_out = scores_table(out)
    if left_out:
        print(f"left out {len(left_out)} run(s) not comparable with their partition's plan: " + ", ".join(left_out),
              file=sys.stderr)
    scores = wide_runs(long)
    if scores.empty:
        return None
    variants, pairs = recipe_verdicts(scores, margins or design.get("margins"), order or design.get("variants"),
                                      as_pairs(design.get("contrasts")), design.get("folds"))
    atomic_write_text(out / "scores.csv", long.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "recipe_variants.csv", variants.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "verdicts.csv", pairs.to_csv(index=False, float_format="%.6g"))
    saved = labels_saved(long) if long["train_size"].nunique() > 1 else None
    atomic_write_text(out / "verdicts.md", verdicts_markdown(variants, pairs, design, lang)
                      + ("\n" + "\n".join(labels_saved_markdown(saved)) if saved is not None and not saved.empty else ""))
    return pairs
