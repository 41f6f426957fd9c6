"""report.html of a single-split run folder: the one page a person opens, offline and self-contained, verdicts first.

Drawn from the split's report read once for every language (report/split_report.py: aggregate.csv, verdicts.csv,
summary.csv and the decision made from them; the folder's manifest and runs), the tables each language's page shows
(summary_table, the sizes' tables, serving_table) and figures/*.png. English in DIR/, Chinese in DIR/zh/. No raw
message text: the only free text from a run (a failure's reason) is redacted.
The partition design's page is report/partition_page.py, a benchmark's report/cross_corpus_page.py;
`python -m comparisons.report.page` rewrites whichever a folder has (report/page.py).
"""
from __future__ import annotations

import shlex
from html import escape
from pathlib import Path

import pandas as pd

from common.metric_names import DIGEST_COSTS
from common.redaction import redact
from common.splits import size_label
from comparisons.numerics import describe as describe_numerics, identities_line
from comparisons.report.i18n import label, text
from comparisons.report.preview import preview_note
from comparisons.report.serving import serving_tables_html
from comparisons.report.spread import mean_spread
from comparisons.report.calibration_table import calibration_table
from comparisons.report.decision_section import DEFAULT_CPU_HOUR_PRICE, decision_section
from comparisons.report.split_tables import QUALITY, largest_size
from comparisons.report.measured_on import costs_note
from comparisons.report.html import facts, paragraph, png_figure, report_page, table
from comparisons.report.split_page_sections import lead, pairwise_tables, pretrained_vs_scratch, real_differences
from comparisons.report.split_report import SplitReport
from comparisons.report.names import SUMMARY_TABLE_CSV, SUMMARY_TABLE_MD
from comparisons.run_folder.records import Manifest

# Measures of the "best on each" digest: (key in aggregate.csv, higher is better).
COSTS = DIGEST_COSTS  # lower is better
BEST_ON = [(m, True) for m in QUALITY] + [(m, False) for m in COSTS]
FIGURE_ORDER = ["forest", "metrics", "pareto", "serving", "pr_curves", "reliability", "confusion_matrices",
                "learning_curves"]
FIGURE_CAPTIONS = {
    "metrics": ("Test quality, mean ± std over seeds", "测试集质量，多种子均值 ± 标准差"),
    "pareto": ("Quality against latency and against memory", "质量与延迟、内存的关系"),
    "serving": ("Serving paths: AP against batch-1 latency, every path a point",
                "服务路径：AP 与批量1 延迟，每条路径一个点"),
    "pr_curves": ("Precision-recall curves on test", "测试集精确率-召回率曲线"),
    "confusion_matrices": ("Confusion matrices on test", "测试集混淆矩阵"),
    "forest": ("Differences in average precision between variants, A − B, with each pair's 95% paired interval over "
               "seeds and test items, against the ±margin band; the colour and the word say the verdict",
               "各模型变体之间的平均精度差 A − B，及各对在种子与测试样本上的 95% 配对区间，对照 ±容差带；颜色与文字为结论"),
    "reliability": ("Reliability of the probabilities per variant: each dot a bin of equally many test items (every "
                    "seed's pooled), its mean probability against the share that came true; the diagonal is calibrated",
                    "各模型变体概率的可靠性：每个点是一个含等量测试样本的分箱（合并所有种子），横轴为平均概率，纵轴为实际发生的比例；"
                    "对角线即为校准"),
    "learning_curves": ("Learning curves: quality against training messages", "学习曲线：质量随训练条数的变化"),
}


def build_page(report: SplitReport, lang: str, price: float = DEFAULT_CPU_HOUR_PRICE) -> str:
    folder, out = report.folder, report.path
    target = out if lang == "en" else out / "zh"
    manifest = folder.plan  # the typed Manifest (a Mapping: keys only the page shows are read as written)
    records, left_out = folder.selected()  # the runs the tables aggregate, as report/split_tables.py
    aggregate, verdicts = report.aggregate, report.verdicts
    title = text(f"Transformer comparison: {out.resolve().name}", f"Transformer 模型对比：{out.resolve().name}", lang)
    decision, front = decision_section(out, lang, price, report.decision(price))
    sections = [  # (anchor, heading, content), in the order a reader needs them
        decision,
        ("verdicts", text("Verdicts", "结论", lang),
         _verdicts(aggregate, verdicts, lang) + _figures(target / "figures", lang, ["forest"])
         + pretrained_vs_scratch(report.pretrained, lang)),
        ("tables", text("Tables", "表格", lang), _tables(target, verdicts, lang) + _calibration(report.summary, lang)),
        ("figures", text("Figures", "图表", lang), front + _figures(target / "figures", lang,
                                                                     exclude=["forest", "cost_front"])),
        ("details", text("Per-variant details", "各模型变体的细节", lang), _details(records, manifest, lang)),
        ("problems", text("Failed and skipped runs", "失败与跳过的运行", lang), _problems(records, left_out, lang)),
        ("environment", text("Environment and how to reproduce", "环境与复现方法", lang),
         _environment(manifest, records, lang)),
    ]
    note = preview_note(manifest.profile, len(manifest.seeds), lang)  # fast: a preview
    banner = paragraph(note, "note preview") if note else ""
    return report_page(title, lang, paragraph(_lede(manifest, records, lang), "lede"), sections, banner)


def _e(value) -> str:
    return escape(str(value))


def _read_csv(path: Path, numeric: bool = False) -> pd.DataFrame | None:
    """A CSV as numbers, or as the strings written (tables already formatted); None when absent."""
    if not path.exists():
        return None
    return pd.read_csv(path) if numeric else pd.read_csv(path, dtype=str, keep_default_na=False)


def _lede(manifest: Manifest, records: list[dict], lang: str) -> str:
    sizes = manifest.split.get("sizes", {})
    variants = list(dict.fromkeys(r["variant"] for r in records))
    seeds = manifest.seeds
    split = "/".join(f"{sizes[k]:,}" for k in ("train", "valid", "test") if k in sizes)
    train_sizes = [size_label(size) for size in manifest.train_sizes]
    sweep = text(f" × training sizes {', '.join(train_sizes)}", f" × 训练规模 {', '.join(train_sizes)}", lang) \
        if len(train_sizes) > 1 else ""
    return text(f"{len(variants)} variants × {len(seeds)} seeds{sweep} on one split (train/valid/test {split}), "
                f"profile {manifest.profile}, {len(records)} runs; created {manifest.created or '?'}.",
                f"{len(variants)} 个模型变体 × {len(seeds)} 个种子{sweep}，同一数据划分（训练/验证/测试 {split}），"
                f"预算 {manifest.profile}，共 {len(records)} 次运行；生成于 {manifest.created or '?'}。", lang)


# --- verdicts ---------------------------------------------------------------------------------

def _verdicts(aggregate: pd.DataFrame | None, verdicts: pd.DataFrame | None, lang: str) -> str:
    if aggregate is None or aggregate.empty or (aggregate["seeds"] <= 0).all():
        return paragraph(text("No finished runs yet.", "尚无完成的运行。", lang), "note")
    done = aggregate[aggregate["seeds"] > 0]  # a sweep's aggregate holds its largest training size only
    rows, classes = [], []
    for measure, higher in BEST_ON:
        column = f"{measure}_mean"
        if column not in done.columns or done[column].isna().all():
            continue
        ranked = done.dropna(subset=[column]).sort_values(column, ascending=not higher)
        best = ranked.iloc[0]
        runner = ranked.iloc[1] if len(ranked) > 1 else None
        verdict = lead(verdicts, measure, best["variant"], runner["variant"], lang) if runner is not None else None
        if verdict is None:
            verdict = (text("cost: not tested", "代价：未做检验", lang) if measure not in QUALITY
                       else text("no other variant finished", "没有其他完成的变体", lang) if runner is None
                       else text("not computed", "未计算", lang)), False
        rows.append([label(measure, lang), best["variant"], _value(best, measure, lang),
                     "" if runner is None else runner["variant"], "" if runner is None else _value(runner, measure, lang),
                     verdict[0]])
        classes.append("real" if verdict[1] else "")
    spread = text("mean ± std over seeds", "多种子均值 ± 标准差", lang)
    headers = [label("metric", lang), text("best", "最优", lang), spread, text("next best", "次优", lang), spread,
               text("is the lead real? (95% paired interval over test items)",
                    "领先是否真实？（测试样本上的 95% 配对区间）", lang)]
    parts = [table(headers, rows, row_classes=classes, wrap={5})]
    if verdicts is None:
        parts.append(paragraph(text(
            "No verdicts computed for this run folder: the table ranks means only, and says nothing yet about "
            "which differences are real. `python -m comparisons report --out DIR` computes them from the predictions.",
            "此运行目录尚未计算结论：上表只按均值排序，还不能说明哪些差异是真实的。"
            "`python -m comparisons report --out DIR` 会根据预测结果计算它们。", lang), "note"))
    else:
        parts.append(real_differences(verdicts, lang))
    return "\n".join(parts)


def _value(row: pd.Series, measure: str, lang: str) -> str:
    mean, std = row[f"{measure}_mean"], row.get(f"{measure}_std")
    if measure in QUALITY:
        return mean_spread(mean, std, int(row["seeds"]), lang=lang)
    # the digits of the summary table (report.readable_table)
    digits = 2 if measure in ("latency_ms_b1_p50", "size_mb") else (1 if measure == "train_seconds" else 0)
    return f"{mean:,.{digits}f}"


# --- tables and figures -----------------------------------------------------------------------

def _tables(target: Path, verdicts: pd.DataFrame | None, lang: str) -> str:
    parts, machine = [], costs_note(target if lang == "en" else target.parent, lang)
    summary = _read_csv(target / SUMMARY_TABLE_CSV)
    if summary is not None:
        markdown = target / SUMMARY_TABLE_MD  # its title says what the cells hold, as report.py wrote them
        title = markdown.read_text(encoding="utf-8").splitlines()[0] if markdown.exists() else ""
        parts.append(table(list(summary.columns), summary.values.tolist(), caption=(title.removeprefix("# ") or text(
            "Per variant: quality as mean ± std over seeds (training randomness), costs as means",
            "每个模型变体：质量为多种子均值 ± 标准差（训练随机性），代价为均值", lang)) + ("" if machine in title else machine)))
    for size, path in _size_tables(target / "learning_curves"):  # a sweep: one table per training size
        frame, size = _read_csv(path), label("all", lang) if size == "all" else size
        parts.append(table(list(frame.columns), frame.values.tolist(), caption=text(
            f"Training messages: {size} (mean ± std over seeds [95% interval over test items])",
            f"训练短信数：{size}（多种子均值 ± 标准差 [测试样本上的 95% 区间]）", lang)))
    parts.append(serving_tables_html(target, lang, machine))  # serving paths (--serve): one table per variant
    if verdicts is not None:
        parts.append(pairwise_tables(verdicts, lang))
    return "\n".join(filter(None, parts)) or paragraph(text("No tables yet.", "尚无表格。", lang), "note")


def _calibration(summary: pd.DataFrame | None, lang: str) -> str:
    """Brier score and ECE per variant over its seeds (summary.csv's runs of the largest training size)."""
    if summary is None or "brier" not in summary:
        return ""
    runs = largest_size(summary.astype({"train_size": str}))
    return calibration_table(runs[runs["status"] == "ok"], "seed", lang)


def _size_tables(folder: Path) -> list[tuple[str, Path]]:
    """(size, path) of learning_curves/size_<n>.csv, smallest first, the whole split ('all') last."""
    found = [(p.stem.removeprefix("size_"), p) for p in folder.glob("size_*.csv")]
    return sorted(found, key=lambda item: (not item[0].isdigit(), int(item[0]) if item[0].isdigit() else 0))


def _figures(folder: Path, lang: str, only: list[str] | None = None, exclude: list[str] = ()) -> str:
    """The folder's PNGs embedded (`only` those, or all but `exclude`): the known ones in FIGURE_ORDER, any
    other after them. The forest plot goes in the verdicts section, the rest in the figures section."""
    found = {p.stem: p for p in sorted(folder.glob("*.png")) if (only is None or p.stem in only) and p.stem not in exclude}
    if only is not None:
        return "\n".join(png_figure(found[stem], text(*FIGURE_CAPTIONS[stem], lang)) for stem in only if stem in found)
    order = [stem for stem in FIGURE_ORDER if stem in found] + [stem for stem in found if stem not in FIGURE_ORDER]
    parts = []
    for stem in order:
        caption = text(*FIGURE_CAPTIONS[stem], lang) if stem in FIGURE_CAPTIONS else stem.replace("_", " ")
        parts.append(png_figure(found[stem], caption))
    return "\n".join(parts) or paragraph(text("No figures yet.", "尚无图表。", lang), "note")


# --- per-variant details, problems, environment -----------------------------------------------

TWINS = ("torch_scratch", "keras_layers")
TWIN_NOTE = ("torch_scratch and keras_layers are one model: they start from the same initial weights "
             "(common/initial_weights.py) and see the same batches in the same order (common/batching.py); "
             "only their dropout masks are each framework's own, so with dropout > 0 their runs still differ.",
             "torch_scratch 与 keras_layers 是同一个模型：它们从同一组初始权重出发（common/initial_weights.py），"
             "以同样的顺序看到同样的批次（common/batching.py）；只有 dropout 掩码由各自的框架生成，"
             "所以 dropout > 0 时两者的结果仍会不同。")


def _details(records: list[dict], manifest: Manifest, lang: str) -> str:
    parts = []
    planned = manifest.variants
    for variant in sorted(dict.fromkeys(r["variant"] for r in records),
                          key=lambda v: planned.index(v) if v in planned else len(planned)):
        runs = sorted((r for r in records if r["variant"] == variant), key=_run_order)
        spec = manifest.variant_entry(variant)
        ok = [r for r in runs if r.get("status") == "ok"]
        params = dict(spec.get("params") or {})
        if ok:
            params = {**_flat(ok[0].get("params") or {}), **params}
        for name in ("seed", "progress"):  # the seed is per run; progress bars are no parameter
            params.pop(name, None)
        parts.append(f"<h3>{_e(variant)}</h3>")
        if variant in TWINS:
            parts.append(paragraph(TWIN_NOTE[lang == "zh"], "note"))
        parts.append(facts([(text("backend", "后端", lang), spec.get("backend") or runs[0].get("backend", ""))]
                           + [(name, _short(value)) for name, value in params.items()]))
        parts.append(table(*_per_seed(runs, lang)))
        for size in dict.fromkeys(r.get("train_size") for r in ok):  # one history table per training size
            history = _history([r for r in ok if r.get("train_size") == size], lang)
            if history:
                parts.append(table(*history))
    return "\n".join(parts) or paragraph(text("No runs yet.", "尚无运行。", lang), "note")


def _run_order(record: dict) -> tuple:
    size = record.get("train_size")
    return (size is None, size or 0, record.get("seed", 0))


def _flat(params: dict, prefix: str = "") -> dict:
    flat = {}
    for name, value in params.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


def _short(value) -> str:
    return "—" if value is None else (f"{value:.6g}" if isinstance(value, float) else str(value))


def _sweep(records: list[dict]) -> bool:
    return any(r.get("train_size") is not None for r in records)


def _size(record: dict, lang: str) -> str:
    """Training messages of a run: its subset size, or 'all' for the whole training split."""
    size = record.get("train_size")
    return label("all", lang) if size is None else (f"{size:,}" if isinstance(size, int) else str(size))


def _per_seed(runs: list[dict], lang: str) -> tuple[list[str], list[list]]:
    sweep = _sweep(runs)
    headers = ([label("train_size", lang)] if sweep else []) + [
        label("seed", lang), label("status", lang), label("best_epoch", lang), label("epochs_run", lang),
        label("threshold", lang), label("valid_average_precision", lang), label("average_precision", lang),
        label("train_seconds", lang)]
    rows = []
    for r in runs:
        info = r.get("fit_info") or {}
        rows.append(([_size(r, lang)] if sweep else []) + [
            r["seed"], r.get("status", ""), _short(info.get("best_epoch")), _short(info.get("epochs_run")),
            "—" if r.get("threshold") is None else f"{r['threshold']:.4f}",
            "—" if r.get("valid_average_precision") is None else f"{r['valid_average_precision']:.4f}",
            "—" if r.get("average_precision") is None else f"{r['average_precision']:.4f}",
            "—" if r.get("train_seconds") is None else f"{r['train_seconds']:.1f}"])
    return headers, rows


def _history(ok: list[dict], lang: str) -> tuple[list[str], list[list], str] | None:
    """Per-epoch validation history: one row per epoch, one column per run (valid AP / train loss)."""
    histories = [(r, (r.get("fit_info") or {}).get("history") or []) for r in ok]
    histories = [(r, h) for r, h in histories if h]
    if not histories:
        return None
    epochs = sorted({step.get("epoch") for _, h in histories for step in h if step.get("epoch") is not None})
    headers = [text("epoch", "轮次", lang)] + [
        text(f"seed {r['seed']}: valid AP / train loss", f"种子 {r['seed']}：验证 AP / 训练损失", lang)
        for r, _ in histories]
    rows = []
    for epoch in epochs:
        row = [epoch]
        for r, h in histories:
            step = next((s for s in h if s.get("epoch") == epoch), None)
            best = (r.get("fit_info") or {}).get("best_epoch") == epoch
            row.append("" if step is None else _step(step) + (" ★" if best else ""))
        rows.append(row)
    caption = text("Per-epoch validation history (★ = the epoch validation chose)",
                   "逐轮验证记录（★ = 验证集选中的轮次）", lang)
    if _sweep(ok):
        caption += f" · {label('train_size', lang)}: {_size(ok[0], lang)}"
    return headers, rows, caption


def _step(step: dict) -> str:
    ap, loss = step.get("valid_average_precision", step.get("score")), step.get("train_loss")  # score: BestEpoch's
    return f"{'—' if ap is None else f'{ap:.4f}'} / {'—' if loss is None else f'{loss:.4f}'}"


def _problems(records: list[dict], left_out: list[str], lang: str) -> str:
    bad = [r for r in records if r.get("status") != "ok"]
    aside = ""
    if left_out:  # runs of another plan, split or setting found in the folder: named, never averaged in
        aside = (paragraph(text(f"Left out of this report ({len(left_out)}): not comparable with this folder's plan.",
                                f"未纳入本报告（{len(left_out)} 次）：与本目录的运行计划不可比。", lang))
                 + "<ul>" + "".join(f"<li>{_e(redact(line))}</li>" for line in left_out) + "</ul>")
    if not bad:
        return paragraph(text(f"All {len(records)} runs finished.", f"全部 {len(records)} 次运行均已完成。", lang)) + aside
    sweep = _sweep(bad)
    headers = [label("variant", lang)] + ([label("train_size", lang)] if sweep else []) + [
        label("seed", lang), label("status", lang), label("reason", lang)]
    rows = [[r["variant"]] + ([_size(r, lang)] if sweep else [])
            + [r["seed"], r.get("status", ""), redact(str(r.get("reason") or ""))] for r in bad]
    return table(headers, rows, wrap={len(headers) - 1}) + aside


def reproduce_command(manifest: Manifest) -> str:
    """`python -m comparisons ...` from the recorded command line (which may start with a script path)."""
    command = manifest.command or ""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if words[:3] == ["python", "-m", "comparisons"]:
        words = words[3:]
    elif words and words[0] not in ("run", "report"):
        words = words[1:]
    return "python -m comparisons " + shlex.join(words)


def _precision(manifest: Manifest, records: list[dict]) -> str:
    """--precision as asked, and each variant's precision as its runs recorded it (fp32 | bf16)."""
    used = {}
    for record in records:
        used.setdefault(record.get("variant"), set()).add(record.get("precision") or "fp32")
    return f"{manifest.precision_requested} / " + (", ".join(
        f"{variant} {'+'.join(sorted(found))}" for variant, found in used.items()) or "—")


def _environment(manifest: Manifest, records: list[dict], lang: str) -> str:
    machine, split, data = manifest.machine, manifest.split, manifest.data
    used = sorted({str(r.get("device")) for r in records if r.get("device")})
    pairs = [
        (text("created", "生成时间", lang), manifest.created or ""),
        (text("code commit", "代码提交", lang), manifest.git_commit or "—"),
        (text("CPU", "CPU", lang), f"{machine.get('cpu', '?')} ({machine.get('cpu_count', '?')} "
                                    + text("cores", "核", lang) + ")"),
        (text("platform", "平台", lang), machine.get("platform", "")),
        (text("threads", "线程数", lang), "" if manifest.threads is None else manifest.threads),
        (text("thread settings", "线程设置", lang),
         " ".join(f"{k}={v}" for k, v in manifest.thread_environment.items())),
        (text("device (asked / used)", "设备（指定 / 实际）", lang),
         f"{manifest.device or '?'} / {', '.join(used) or '—'}"),
        (text("precision (asked / used)", "数值精度（指定 / 实际）", lang), _precision(manifest, records)),
        (text("profile", "预算档位", lang), manifest.profile or ""),
        (text("seeds", "种子", lang), ", ".join(str(s) for s in manifest.seeds)),
        (text("data", "数据", lang), f"{(data.get('spec') or {}).get('source', '?')}, {data.get('rows', '?'):,} "
                                      + text("rows", "行", lang) + f", sha256 {str(data.get('sha256', ''))[:12]}…"),
        (text("split", "数据划分", lang), f"seed {split.get('seed')}, " + "/".join(
            f"{v:,}" for v in (split.get("sizes") or {}).values()) + f", sha256 {str(split.get('sha256', ''))[:12]}…"),
        (text("numerics identity", "数值路径标识", lang),
         identities_line(records) or describe_numerics(manifest.numerics)),  # comparisons/numerics.py
    ]
    versions = [[name, version or "—"] for name, version in manifest.versions.items()]
    return (facts(pairs) + table([text("package", "软件包", lang), text("version", "版本", lang)], versions)
            + f"<h3>{_e(text('The command that reproduces this run', '复现本次运行的命令', lang))}</h3>"
            + f"<pre><code>{_e(reproduce_command(manifest))}</code></pre>")
