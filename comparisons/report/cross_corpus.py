"""The cross-corpus table of a benchmark folder (`python -m comparisons benchmark`), from its run folders only.

Per corpus: its primary metric per variant with that folder's own interval and verdicts (the
partition design's recipe verdicts, or the single split's), the variants' ranks; over corpora:
average ranks and what may be concluded with this few (comparisons/stats/across_corpora.py).
The primary metric is average precision: of the positive class with two classes, macro-averaged
one-vs-rest with more (common.metrics), so every corpus ranks its variants on its own primary metric.

Written in the parent folder: cross_corpus.csv (one row per corpus and variant), cross_corpus.md,
cross_corpus.json (the test across corpora), scores.csv (every corpus's long scores table), cross_corpus_verdicts.csv (its pairs as rows of the one verdict
schema); the Chinese cross_corpus.md in DIR/zh/. The page:
comparisons/report/cross_corpus_page.py. Nothing here
holds text from the data: corpus names, counts, scores and verdicts only.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from comparisons.report.files import ON_DISK, ReportFiles
from comparisons.stats.across_corpora import (LARGEST_N, AcrossCorpora, across_corpora, corpus_ranks,
                                                        verdict_rules_rows as verdict_rows)
from comparisons.report.i18n import phrase, text
from comparisons.report.design_report import DesignReport
from comparisons.report.run_report import read_run_report
from comparisons.report.split_report import SplitReport
from comparisons.run_folder.open_folder import open_folder, scores_table
from comparisons.run_folder.records import BenchmarkPlan
from comparisons.run_folder.scores import SCORE_COLUMNS
from comparisons.report.verdicts_file import largest_group
from comparisons.stats.family import PRIMARY
from comparisons.report.names import (CROSS_CORPUS_CSV, CROSS_CORPUS_JSON, CROSS_CORPUS_MD, CROSS_CORPUS_VERDICTS_CSV,
                                      SCORES_CSV)

CSV_COLUMNS = ("corpus", "status", "reason", "design", "texts", "texts_before_cap", "capped", "classes",
               "primary_metric", "variant", "mean", "ci_low", "ci_high", "interval", "rank",
               "better_than", "worse_than", "equivalent_to", "inconclusive_with")


@dataclass
class CorpusResult:
    """One corpus of the benchmark, as its run folder's report holds it."""

    corpus: str
    status: str                      # ok | skipped | not run yet
    reason: str = ""
    design: str = ""                 # partitions (R x K-fold) | single split
    texts: int | None = None
    texts_before_cap: int | None = None
    capped: bool = False
    classes: int | None = None
    variants: pd.DataFrame = field(default_factory=pd.DataFrame)  # variant, mean, ci_low, ci_high
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)     # the primary metric's verdicts
    report: SplitReport | DesignReport | None = None                 # the corpus folder's report, read once

    @property
    def primary_metric(self) -> str:
        return "average precision" if self.classes in (None, 2) else "macro one-vs-rest average precision"


def read_corpus(parent: Path, entry: dict) -> CorpusResult:
    """The corpus's row of the benchmark from its folder's report (report/run_report.py), read once."""
    folder = Path(parent) / entry["folder"]
    if entry.get("status") == "skipped":
        return CorpusResult(entry["corpus"], "skipped", entry.get("reason", ""))
    opened = open_folder(folder)
    report = read_run_report(opened) if opened is not None and opened.manifests() else None
    if report is None or report.variants is None:
        return CorpusResult(entry["corpus"], "not run yet", "no finished runs in its folder")
    data = report.manifest.data
    sample = data.get("sample") or {}
    found = report.variants
    variants = pd.DataFrame({"variant": found["variant"], "mean": found[f"{PRIMARY}_mean"],
                             "ci_low": found.get(f"{PRIMARY}_ci_low"), "ci_high": found.get(f"{PRIMARY}_ci_high")})
    verdicts = report.verdicts
    pairs = pd.DataFrame()
    if verdicts is not None and not verdicts.empty:
        pairs = largest_group(verdicts)
        pairs = pairs[pairs["metric"] == PRIMARY].reset_index(drop=True)
    return CorpusResult(entry["corpus"], "ok", "", report.shape, int(data["rows"]), sample.get("rows_before", data["rows"]),
                        bool(sample.get("capped")), len(data["class_names"]), variants, pairs, report)


def read_benchmark(parent: Path) -> tuple[BenchmarkPlan, list[CorpusResult]]:
    plan = BenchmarkPlan.read(parent)
    return plan, [read_corpus(parent, entry) for entry in plan.corpora]


def verdicts_of(variant: str, pairs: pd.DataFrame) -> dict[str, list[str]]:
    """The variant's place in each of its corpus's pair verdicts: better than, worse than, equivalent, inconclusive."""
    found = {"better_than": [], "worse_than": [], "equivalent_to": [], "inconclusive_with": []}
    for _, row in pairs.iterrows():
        if variant not in (row["variant_a"], row["variant_b"]):
            continue
        other = row["variant_b"] if row["variant_a"] == variant else row["variant_a"]
        mine = "A better" if row["variant_a"] == variant else "B better"
        key = {"equivalent": "equivalent_to", "inconclusive": "inconclusive_with"}.get(
            row["verdict"], "better_than" if row["verdict"] == mine else "worse_than")
        found[key].append(other)
    return found


def score_table(results: list[CorpusResult], order: list[str]) -> pd.DataFrame:
    """Rows: corpora that ran; columns: the variants (the plan's order first); values: the primary metric."""
    rows = {r.corpus: r.variants.set_index("variant")["mean"] for r in results if r.status == "ok"}
    table = pd.DataFrame(rows).T if rows else pd.DataFrame(columns=order)
    return table[[v for v in dict.fromkeys([*order, *table.columns]) if v in table.columns]].astype(float)


def long_rows(results: list[CorpusResult], ranks: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for result in results:
        base = {"corpus": result.corpus, "status": result.status, "reason": result.reason, "design": result.design,
                "texts": result.texts, "texts_before_cap": result.texts_before_cap, "capped": result.capped,
                "classes": result.classes, "primary_metric": result.primary_metric if result.status == "ok" else ""}
        if result.status != "ok":
            rows.append(base)
            continue
        for _, variant in result.variants.iterrows():
            name = variant["variant"]
            rank = ranks.loc[result.corpus, name] if result.corpus in ranks.index and name in ranks else None
            rows.append({**base, "variant": name, "mean": variant["mean"], "ci_low": variant["ci_low"],
                         "ci_high": variant["ci_high"], "interval": interval(variant), "rank": rank,
                         **{k: "; ".join(v) for k, v in verdicts_of(name, result.pairs).items()}})
    return pd.DataFrame(rows, columns=CSV_COLUMNS)


def interval(row) -> str:
    if pd.isna(row.get("ci_low")) or pd.isna(row.get("ci_high")):
        return f"{row['mean']:.4f}"
    return f"{row['mean']:.4f} [{row['ci_low']:.4f}, {row['ci_high']:.4f}]"


@dataclass(frozen=True, eq=False)  # tables inside: compared by identity
class BenchmarkReport:
    """A benchmark's report: everything its tables and pages show, built once for every language from its
    corpora's reports (report/run_report.py, through read_corpus: read when the benchmark's report is made, and
    again when it is read)."""

    path: Path                    # the benchmark's folder
    plan: BenchmarkPlan           # benchmark.json
    corpora: list[CorpusResult]   # one a corpus, in the plan's order (skipped and not-run ones included)
    table: pd.DataFrame           # cross_corpus.csv: one row per corpus and variant
    test: AcrossCorpora           # what may be concluded across the corpora
    files: ReportFiles = field(default_factory=ReportFiles)  # what `write` writes (report/files.py)

    @classmethod
    def make(cls, opened, languages, files: ReportFiles) -> bool:
        """Its statistics computed once (benchmark_report: its corpora's reports read) and its tables made in `files` in
        each language (write_cross_corpus_tables); always True (a benchmark without runs says so in its table)."""
        report = benchmark_report(opened.path)
        for language in languages:
            write_cross_corpus_tables(report, language, files)
        return True

    @classmethod
    def read(cls, opened, files: ReportFiles | None = None) -> "BenchmarkReport":
        """read_benchmark_report of the opened benchmark (or its path): from `files`, else from disk."""
        return read_benchmark_report(Path(getattr(opened, "path", opened)), files)

    @classmethod
    def unwritten(cls, opened) -> str | None:
        """Why its page cannot be drawn from the folder yet (None: it can)."""
        out = opened.path
        if (out / CROSS_CORPUS_JSON).exists():
            return None
        return f"{out} holds no cross-corpus table yet; run `python -m comparisons report --out {out}`"

    def write(self) -> list[Path]:
        """The files its build made, each written once (nothing for a report read from its folder)."""
        return self.files.write()

    @property
    def rebuilt_line(self) -> str:
        """What `report --out` says when it has rebuilt it."""
        return f"cross-corpus table rebuilt in {self.path / CROSS_CORPUS_MD} (each corpus: report --out {self.path}/CORPUS)"


def benchmark_report(parent: Path) -> BenchmarkReport:
    """Everything the table and the page show, computed once from the corpora's written reports (the test across
    corpora, the ranks); write_cross_corpus_tables makes its files, read_benchmark_report reads them."""
    plan, results = read_benchmark(parent)
    scores = score_table(results, plan.variants)
    test = across_corpora(scores)
    ranks = corpus_ranks(scores.dropna(axis=0, how="any")) if len(scores) else pd.DataFrame()
    return BenchmarkReport(Path(parent), plan, results, long_rows(results, ranks), test)


def read_benchmark_report(parent: Path, files: ReportFiles | None = None) -> BenchmarkReport:
    """The benchmark's report as its files hold them (cross_corpus.csv, cross_corpus.json: in `files` as a build made
    them, else on disk; the corpora's own reports): what its pages are drawn from, nothing recomputed."""
    import json

    parent, files = Path(parent), files or ReportFiles()
    plan, results = read_benchmark(parent)
    fields = json.loads(files.read_text(parent / CROSS_CORPUS_JSON))
    fields.pop("conclusion", None)
    table = files.read_csv(parent / CROSS_CORPUS_CSV, dtype={"corpus": str, "variant": str, "interval": str},
                           keep_default_na=False, na_values=[""])
    return BenchmarkReport(parent, plan, results, table, AcrossCorpora(**fields), files)


def corpora_rows(results: list[CorpusResult], lang: str) -> list[list]:
    """One row per corpus: name, status (or why skipped), design, texts (and the cap), classes, primary metric."""
    rows = []
    for r in results:
        if r.status != "ok":
            status = text("skipped", "已跳过", lang) if r.status == "skipped" else text("not run yet", "尚未运行", lang)
            rows.append([r.corpus, f"{status}: {r.reason}", "", "", "", ""])
            continue
        texts = f"{r.texts:,}" + (text(f" (stratified sample of {r.texts_before_cap:,})",
                                       f"（从 {r.texts_before_cap:,} 条中分层抽样）", lang) if r.capped else "")
        metric = text(r.primary_metric, "平均精度" if r.classes == 2 else "宏平均一对其余平均精度", lang)
        design = r.design if lang == "en" else (
            "单次划分" if r.design == "single split" else r.design.replace("partitions", "划分").replace("-fold", " 折"))
        rows.append([r.corpus, text("ran", "已运行", lang), design, texts, r.classes, metric])
    return rows


def corpora_headers(lang: str) -> list[str]:
    return [text("corpus", "语料库", lang), text("status", "状态", lang), text("design", "设计", lang),
            text("texts", "文本数", lang), text("classes", "类别数", lang), text("primary metric", "主指标", lang)]


def scores_rows(table: pd.DataFrame, test: AcrossCorpora, order: list[str]) -> list[list]:
    """Rows per corpus: each variant's 'mean [interval] (rank r)'; last row: the average ranks."""
    rows = []
    for corpus, group in table[table["status"] == "ok"].groupby("corpus", sort=False):
        cells = group.set_index("variant")
        rows.append([corpus] + [("" if v not in cells.index else cells.loc[v, "interval"]
                                 + ("" if pd.isna(cells.loc[v, "rank"]) else f" (r {cells.loc[v, 'rank']:g})"))
                                for v in order])
    rows.append(["average rank"] + [("" if pd.isna(test.average_ranks.get(v, float("nan")))
                                     else f"{test.average_ranks[v]:.2f}") for v in order])
    return rows


def pair_rows(results: list[CorpusResult], lang: str) -> tuple[list[str], list[list]]:
    """Rows per pair, columns per corpus: that corpus's own verdict on the primary metric."""
    ran = [r for r in results if r.status == "ok"]
    pairs = list(dict.fromkeys((a, b) for r in ran for a, b in zip(r.pairs.get("variant_a", []),
                                                                  r.pairs.get("variant_b", []))))
    rows = []
    for a, b in pairs:
        cells = []
        for r in ran:
            match = r.pairs[(r.pairs["variant_a"] == a) & (r.pairs["variant_b"] == b)] if len(r.pairs) else r.pairs
            cells.append("" if match.empty else f"{phrase(match.iloc[0]['verdict'], a, b, lang)} "
                         f"({match.iloc[0]['difference']:+.4f})")
        rows.append([f"{a} − {b}"] + cells)
    return [text("pair (A − B)", "配对 (A − B)", lang)] + [r.corpus for r in ran], rows


def markdown_table(headers: list[str], rows: list[list]) -> str:
    def cell(value) -> str:
        return str("" if value is None else value).replace("|", "\\|")
    return "\n".join(["| " + " | ".join(map(cell, headers)) + " |", "|" + "---|" * len(headers)]
                     + ["| " + " | ".join(map(cell, row)) + " |" for row in rows])


def generalises(lang: str) -> str:
    return text(
        "Each corpus's verdicts generalise over training randomness and (with --cv) the texts trained on and tested, "
        "for data of that kind; the test across corpora treats the corpora as the sample: it generalises over "
        "corpora like these (their languages, domains and label sets), on ranks, not on the size of differences "
        "(Demšar 2006). See docs/cross_corpus.md.",
        "每个语料库的结论推广到训练随机性及（使用 --cv 时）所训练和所测试的文本（同类数据）；跨语料库检验把语料库当作样本："
        "它推广到与这些语料库相似的语料库（其语言、领域和标签集合），基于排名而非差值大小（Demšar 2006）。见 docs/cross_corpus.md。",
        lang)


def cross_corpus_markdown(plan: BenchmarkPlan, results: list[CorpusResult], table: pd.DataFrame, test: AcrossCorpora,
                          lang: str) -> str:
    order = [v for v in dict.fromkeys([*plan.variants, *table["variant"].dropna()])]
    pair_headers, pairs = pair_rows(results, lang)
    lines = [f"# {text('Across corpora', '跨语料库比较', lang)}", "", generalises(lang), "",
             f"## {text('Corpora', '语料库', lang)}", "", markdown_table(corpora_headers(lang), corpora_rows(results, lang)),
             "", f"## {text('Primary metric per corpus [its folder’s 95% interval] (rank)', '各语料库的主指标 [该文件夹的 95% 区间]（名次）', lang)}",
             "", markdown_table([text("corpus", "语料库", lang)] + order, scores_rows(table, test, order)), "",
             f"## {text('Each corpus’s own verdicts (primary metric, A − B)', '各语料库自身的结论（主指标，A − B）', lang)}",
             "", markdown_table(pair_headers, pairs), "",
             f"## {text('What may be concluded across corpora', '跨语料库可以得出的结论', lang)}", "",
             *[f"- {line}" for line in conclusion(test, lang)], "",
             f"{text('Command', '命令', lang)}: `{plan.command or ''}`", ""]
    return "\n".join(lines)


def benchmark_scores(parent: Path, plan: BenchmarkPlan) -> pd.DataFrame:
    """The one long scores table of every corpus's run folder (comparisons/run_folder/scores.py), corpus by name."""
    frames = [scores_table(Path(parent) / entry["folder"])[0].assign(corpus=entry["corpus"])
              for entry in plan.corpora if entry.get("status") != "skipped" and (Path(parent) / entry["folder"]).exists()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(SCORE_COLUMNS))


def write_cross_corpus_tables(report: BenchmarkReport, lang: str, files: ReportFiles = ON_DISK) -> Path:
    """cross_corpus.csv and .json in the parent folder (en), cross_corpus.md in it (en) or in DIR/zh/ (zh), made in
    `files` (report/files.py)."""
    parent, plan, results, table, test = report.path, report.plan, report.corpora, report.table, report.test
    if lang == "en":
        files.text(parent / CROSS_CORPUS_CSV, table.to_csv(index=False, float_format="%.6g"))
        files.json(parent / CROSS_CORPUS_JSON, {**asdict(test), "conclusion": conclusion(test, "en")})
        files.text(parent / CROSS_CORPUS_VERDICTS_CSV,  # the across-corpora pairs in the one verdict schema
                   verdict_rows(test).to_csv(index=False, float_format="%.6g"))
        files.text(parent / SCORES_CSV, benchmark_scores(parent, plan).to_csv(index=False, float_format="%.6g"))
    target = parent if lang == "en" else parent / "zh"
    return files.text(target / CROSS_CORPUS_MD, cross_corpus_markdown(plan, results, table, test, lang))


def _chi(result: AcrossCorpora) -> str:
    if result.chi_square is None:
        return "—"
    return f"chi-square = {result.chi_square:.2f}, p = {result.chi_square_p:.3f}"

def conclusion(result: AcrossCorpora, lang: str = "en") -> list[str]:
    """What may be concluded across the corpora, in sentences (English or Chinese)."""

    n, k, alpha = len(result.corpora), len(result.variants), result.alpha
    if k < 2:
        return [text("One variant only: nothing to compare across corpora.", "只有一个变体：跨语料库无可比较。", lang)]
    if n == 0:
        return [text("No corpus has a score for every variant yet: nothing to rank.",
                     "还没有哪个语料库对每个变体都有得分：无法排名。", lang)]
    lines = []
    if result.left_out:
        lines.append(text(f"Left out of the ranks (a variant has no score there): {', '.join(result.left_out)}.",
                          f"未计入排名（有变体在其上没有得分）：{'、'.join(result.left_out)}。", lang))
    needed = result.corpora_needed
    needed_en = f"at least {needed} corpora" if needed else f"more than {LARGEST_N} corpora"
    needed_zh = f"至少 {needed} 个语料库" if needed else f"超过 {LARGEST_N} 个语料库"
    if result.test == "wilcoxon":
        a, b = result.variants
        median = result.pairs[0]["median_difference"]
        p = "—" if result.p_value is None else f"{result.p_value:.3f}"
        lines.append(text(f"Wilcoxon signed-rank test over {n} corpora on {a} − {b}: median difference {median:+.4f}, "
                          f"p = {p}.",
                          f"在 {n} 个语料库上对 {a} − {b} 做 Wilcoxon 符号秩检验：差值中位数 {median:+.4f}，p = {p}。", lang))
        if not result.can_rule:
            lines.append(text(
                f"Too few corpora to rule: with {n} corpora the smallest p-value this test can give is "
                f"{result.smallest_p:.3f} (every difference of one sign), not below {alpha}; it needs {needed_en}. "
                "Each corpus's own verdicts stand; across corpora nothing can be concluded.",
                f"语料库太少，无法下结论：{n} 个语料库时该检验能给出的最小 p 值为 {result.smallest_p:.3f}"
                f"（所有差值同号），不低于 {alpha}；需要{needed_zh}。各语料库自身的结论仍然成立；跨语料库无法得出结论。", lang))
        elif result.rejected:
            better, worse = (a, b) if median > 0 else (b, a)
            lines.append(text(f"{better} ranks above {worse} across these corpora.",
                              f"在这些语料库上 {better} 的排名高于 {worse}。", lang))
        else:
            lines.append(text("No difference shown across corpora (which is not a shown equality).",
                              "跨语料库未显示差异（这不等于显示相等）。", lang))
        return lines
    p = "—" if result.p_value is None else f"{result.p_value:.3f}"
    statistic = "—" if result.statistic is None else f"{result.statistic:.2f}"
    lines.append(text(
        f"Friedman test over {n} corpora and {k} variants, in Iman & Davenport's F form: F = {statistic}, p = {p} "
        f"(the chi-square form: {_chi(result)}); Nemenyi critical difference of average ranks "
        f"CD = {result.critical_difference:.2f} (the largest possible gap is k − 1 = {k - 1}).",
        f"在 {n} 个语料库、{k} 个变体上做 Friedman 检验（Iman & Davenport 的 F 形式）：F = {statistic}，p = {p}"
        f"（卡方形式：{_chi(result)}）；"
        f"Nemenyi 平均秩临界差 CD = {result.critical_difference:.2f}（平均秩之差最大为 k − 1 = {k - 1}）。", lang))
    if not result.can_rule:
        if result.smallest_p >= alpha:
            why_en = (f"with {n} corpora the smallest p-value Friedman's test can give is {result.smallest_p:.3f} "
                      f"(every corpus ranking the variants alike), not below {alpha}")
            why_zh = f"{n} 个语料库时 Friedman 检验能给出的最小 p 值为 {result.smallest_p:.3f}（每个语料库排名完全一致），不低于 {alpha}"
        else:
            why_en = (f"CD = {result.critical_difference:.2f} exceeds {k - 1}, the largest gap average ranks can have, "
                      "so no pair could ever be told apart")
            why_zh = f"CD = {result.critical_difference:.2f} 大于平均秩之差的最大值 {k - 1}，任何一对都不可能被区分"
        lines.append(text(f"Too few corpora to rule: {why_en}; it needs {needed_en}. Each corpus's own verdicts "
                          "stand; across corpora nothing can be concluded.",
                          f"语料库太少，无法下结论：{why_zh}；需要{needed_zh}。各语料库自身的结论仍然成立；跨语料库无法得出结论。",
                          lang))
    elif not result.rejected:
        lines.append(text("Friedman's test does not reject: the average ranks show no variant ahead across these "
                          "corpora (which is not a shown equality).",
                          "Friedman 检验未拒绝：平均秩未显示任何变体在这些语料库上领先（这不等于显示相等）。", lang))
    else:
        apart = [(pair["a"], pair["b"]) if pair["rank_difference"] > 0 else (pair["b"], pair["a"])
                 for pair in result.pairs if pair["different"]]
        if apart:
            listed = "; ".join(f"{better} > {worse}" for better, worse in apart)
            lines.append(text(f"Friedman rejects; pairs whose average ranks differ by at least CD: {listed}.",
                              f"Friedman 检验拒绝；平均秩之差不小于 CD 的配对：{listed}。", lang))
        else:
            lines.append(text("Friedman rejects, but no pair's average ranks differ by CD or more: the variants are "
                              "not all alike, and no single pair can be named.",
                              "Friedman 检验拒绝，但没有哪一对的平均秩之差达到 CD：各变体并非全都相同，但无法指出具体哪一对。",
                              lang))
    return lines
