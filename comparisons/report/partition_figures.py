"""The figures of a partition design's page (report/partition_page.py), from its report (report/design_report.py): the
forest plot of the primary metric's pair differences (verdicts.csv), each recipe's AP on each partition
(scores.csv), and the reliability of each recipe's probabilities over every text its partitions tested
(the partitions' predictions/*.npz). Written to DIR/figures (English) or DIR/zh/figures (Chinese)."""
from __future__ import annotations

from pathlib import Path

from comparisons.report.calibration_table import positive_index
from comparisons.run_folder.record_calibration import labelled_predictions
from comparisons.stats.calibration import reliability_points
from comparisons.report.figures import forest_plot, partition_plot, reliability_diagram
from comparisons.report.i18n import text
from comparisons.stats.family import PRIMARY
from comparisons.run_folder.open_folder import DesignFolder
from comparisons.run_folder.records import SplitsRecord

CAPTIONS = {  # (English, Chinese): also each image's alt text
    "forest": ("Differences in average precision between recipes, A − B, with each pair's corrected 95% interval "
               "over the partitions, against the ±margin band; the colour and the word say the verdict",
               "各配方之间的平均精度差 A − B，及各对在划分上的校正 95% 区间，对照 ±容差带；颜色与文字为结论"),
    "partitions": ("Each recipe's average precision on each partition, the points of one partition joined: lines "
                   "that run together are spread the recipes share",
                   "各配方在每个划分上的平均精度，同一划分的点相连：走势一致的线是各配方共有的波动"),
    "reliability": ("Reliability of each recipe's probabilities over every text its partitions tested: each dot a "
                    "bin of equally many texts, its mean probability against the share that came true; the "
                    "diagonal is calibrated",
                    "各配方的概率在其各划分测试过的全部文本上的可靠性：每个点是一个含等量文本的分箱，横轴为平均概率，"
                    "纵轴为实际发生的比例；对角线即为校准"),
}


def write_recipe_figures(report, lang: str) -> list[tuple[Path, str]]:
    """(png, caption) of each figure the design's report (report/design_report.DesignReport) allows, in the page's
    order."""
    out = report.folder
    target = (out if lang == "en" else out / "zh") / "figures"
    made, order = [], report.design.variants
    pairs = report.pairs
    if pairs is not None and (pairs["metric"] == PRIMARY).any():
        made.append(("forest", forest_plot(pairs[pairs["metric"] == PRIMARY], lang, target / "forest.png",
                                           text("corrected 95% interval over the partitions",
                                                "各划分上的校正 95% 区间", lang))))
    scores = report.scores
    if scores is not None and scores["partition"].nunique() > 1:
        made.append(("partitions", partition_plot(scores, lang, target / "partitions.png", order)))
    groups, positive = report.pooled
    points = reliability_points({v: groups[v] for v in dict.fromkeys([*order, *groups]) if v in groups}, positive)
    if points:
        made.append(("reliability", reliability_diagram(points, lang, target / "reliability.png")))
    return [(path, text(*CAPTIONS[name], lang)) for name, path in made]


def pooled_predictions(out: Path) -> tuple[dict[str, list], int | None]:
    """Per variant, (labels, probabilities) of its finished runs on every partition of the design."""
    groups, positive = {}, None
    for run_folder in DesignFolder(out).run_folders:  # the partitions run (a split written)
        split, positive = SplitsRecord.read(run_folder.path), positive_index(run_folder.path)
        for record in run_folder.records:
            if record.get("status") == "ok" and record.get("split_sha256") == split.sha256:
                found = labelled_predictions(run_folder, record)
                if found is not None:
                    groups.setdefault(record["variant"], []).append(found)
    return groups, positive
