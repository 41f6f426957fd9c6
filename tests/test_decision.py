"""comparisons/stats/decision.py: the decision recomputes from verdicts.csv and the cost tables, admits a recipe to the
best's group only when its family interval shows it not worse than the best by more than the margin, says when the
data cannot say (with the largest loss still allowed and the power figure) and names a missing cost instead of
guessing it."""
import json
from pathlib import Path

import pandas as pd
import pytest

from comparisons.outputs import atomic_write_json
from comparisons.report.build import read
from comparisons.report.decision_section import decision_section, decision_sentences
from comparisons.stats.decision import DEFAULT_CPU_HOUR_PRICE, pareto_front
from comparisons.report.report import redraw_pages
from comparisons.stats.partition_verdicts import METRICS

VARIANTS = ["tfidf_logreg", "torch_scratch", "hf_bert:full"]


WIDE = (-0.03, 0.03)  # a family interval that allows a loss beyond the margin either way


def design_folder(folder: Path, verdicts: list[tuple], costs: dict[str, dict], repeats: list | None = None,
                  means: dict | None = None) -> Path:
    """A partition design's top folder as partition_reports.py writes it, with known verdicts, family intervals
    (A − B; WIDE unless the tuple gives its own) and costs; a tuple's fifth item is its contrast label."""
    means = means or {"tfidf_logreg": 0.975, "torch_scratch": 0.986, "hf_bert:full": 0.988}
    variants = pd.DataFrame([{"variant": v, "partitions": 5, "seeds": 1, **{
        f"{m}_{k}": x for m in METRICS for k, x in (("mean", means[v]), ("std", 0.01), ("ci_low", means[v] - 0.01),
                                                    ("ci_high", min(1, means[v] + 0.01)))},
        **{f"{c}_median": x for c, x in costs[v].items()}} for v in VARIANTS])
    pairs = pd.DataFrame([{"metric": "average_precision", "variant_a": a, "variant_b": b, "partitions": 5,
                           "difference": means[a] - means[b], "ci_low": -0.01, "ci_high": 0.01, "margin": 0.005,
                           "p_holm": 0.5, "p_equivalence_holm": 0.5, "smallest_detectable_difference": 0.01,
                           "verdict": verdict, "ci_low_family": (rest[0] if rest else WIDE)[0],
                           "ci_high_family": (rest[0] if rest else WIDE)[1],
                           "contrast": rest[1] if len(rest) > 1 else "every pair", "family": "primary",
                           "family_size": 2 * len(verdicts)} for a, b, verdict, *rest in verdicts])
    if repeats is not None:
        pairs["repeats_for_power_margin"] = repeats
    folder.mkdir(parents=True)
    variants.to_csv(folder / "recipe_variants.csv", index=False)
    pairs.to_csv(folder / "verdicts.csv", index=False)
    pd.DataFrame(columns=["partition", "variant", "seed", "average_precision"]).to_csv(folder / "scores.csv", index=False)
    atomic_write_json(folder / "design.json", {"folds": 5, "repeats": 1, "seeds": [0], "variants": VARIANTS,
                                               "partitions": [], "margins": {"average_precision": 0.005},
                                               "command": "python -m comparisons run --cv 5", "data_sha256": "x" * 20})
    atomic_write_json(folder / "partitions" / "r0f0" / "manifest.json", {"threads": 2, "data": {}})
    return folder


COSTS = {"tfidf_logreg": {"latency_ms_b1_p50": 0.6, "throughput_per_s": 25000, "peak_rss_serve_mb": 190,
                          "size_mb": 0.4, "train_seconds": 0.4},
         "torch_scratch": {"latency_ms_b1_p50": 1.0, "throughput_per_s": 3600, "peak_rss_serve_mb": 360,
                           "size_mb": 1.9, "train_seconds": 16},
         "hf_bert:full": {"latency_ms_b1_p50": 7.9, "throughput_per_s": 180, "peak_rss_serve_mb": 760,
                          "size_mb": 87, "train_seconds": 164}}



def decision_of(folder, price=DEFAULT_CPU_HOUR_PRICE):
    """The folder's decision as its report makes it (report/build.read, then the report's decision)."""
    return read(folder).decision(price)

def test_a_cheaper_recipe_equivalent_to_the_best_is_the_decision(tmp_path):
    folder = design_folder(tmp_path / "d", [("torch_scratch", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "torch_scratch", "equivalent", (-0.001, 0.004))],
                           COSTS)
    decision = decision_of(folder, 0.1)
    assert decision.best == "hf_bert:full" and decision.group == ["hf_bert:full", "torch_scratch"]
    assert decision.worse == ["tfidf_logreg"] and not decision.open
    assert decision.cheapest == "torch_scratch" and decision.equivalent and decision.decided
    # 10^6 texts at 3,600 texts/s on 2 threads: 10^6 / 3,600 / 3,600 x 2 = 0.1543 CPU-hours, at $0.10: $0.0154
    cost = decision.rows.set_index("variant").loc["torch_scratch", "cost_per_million"]
    assert cost == pytest.approx(1e6 / 3600 / 3600 * 2 * 0.1)
    lines = decision_sentences(decision, "en")
    assert lines[0] == ("Shown not worse than the best (hf_bert:full) by more than the margin on average precision "
                        "(±0.005): hf_bert:full, torch_scratch.")
    assert lines[1] == "Shown worse than hf_bert:full: tfidf_logreg."
    assert lines[2].startswith("Cheapest to serve among them: torch_scratch, equivalent to hf_bert:full within the margin")
    assert f"${cost:,.4f} at $0.1 a CPU-hour" in lines[2] and len(lines) == 4
    assert lines[3].startswith("A recipe joins the best's group only when it is shown not worse") and "2 threads" in lines[3]
    (anchor, heading, html), front = decision_section(folder, "zh", 0.1, decision_of(folder, 0.1))
    assert anchor == "decision" and heading == "决定" and "在容差内与 hf_bert:full 等价" in html
    assert (folder / "zh" / "figures" / "cost_front.png").stat().st_size > 5000 and "质量与服务成本" in front


def test_where_no_verdict_stands_the_decision_says_so_and_how_many_repeats_would(tmp_path):
    folder = design_folder(tmp_path / "d", [(a, b, "inconclusive") for a, b in [
        ("torch_scratch", "tfidf_logreg"), ("hf_bert:full", "tfidf_logreg"), ("hf_bert:full", "torch_scratch")]],
        COSTS, repeats=[3, 7.2, 40])
    decision = decision_of(folder)
    assert not decision.decided and decision.group == ["hf_bert:full"]  # "not shown worse" admits nobody
    assert decision.open == {"torch_scratch": 0.03, "tfidf_logreg": 0.03} and decision.cheapest == "hf_bert:full"
    assert decision.repeats == 8  # the best against the cheapest recipe still open (tfidf_logreg): 7.2, up
    lines = decision_sentences(decision, "en")
    assert lines[0].startswith("Cannot say whether a cheaper recipe would do")
    assert lines[1].endswith("still allows: torch_scratch up to 0.0300, tfidf_logreg up to 0.0300.")
    assert lines[2].startswith("The best by mean, the only recipe in its group: hf_bert:full —")
    assert lines[-2].startswith("About 8 repeats of the design would detect a difference of the margin")
    pd.read_csv(folder / "verdicts.csv").drop(columns="repeats_for_power_margin").to_csv(folder / "verdicts.csv",
                                                                                        index=False)
    assert decision_sentences(decision_of(folder), "en")[-2] == (  # without the engine's figure: its detectable one
        "As run, the test detects (80% power) only a difference of 0.0100 or more in hf_bert:full − torch_scratch; "
        "more repeats or partitions would let it say.")


def test_a_folder_without_cost_figures_still_gets_its_page_and_the_decision_names_what_is_missing(tmp_path):
    costs = {v: {"latency_ms_b1_p50": c["latency_ms_b1_p50"]} for v, c in COSTS.items()}  # an old folder: latency only
    folder = design_folder(tmp_path / "d", [("torch_scratch", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "torch_scratch", "equivalent", (-0.001, 0.004))], costs)
    decision = decision_of(folder)
    assert decision.cheapest == "torch_scratch"  # by b=1 latency, the one cost it has
    assert decision.missing == ["throughput_per_s", "peak_rss_serve_mb", "size_mb", "train_seconds"]
    assert any("Missing from the cost tables, so not used: throughput_per_s" in line
               for line in decision_sentences(decision, "en"))
    page = redraw_pages(folder, ["en"])[0].read_text()
    assert '<section id="decision">' in page.split("<main>")[1][:40]  # the decision comes first


def test_a_cheap_recipe_merely_not_shown_worse_is_not_recommended(tmp_path):
    """The committed tweets page's case: the fine-tuned MiniLM best at 0.816, TF-IDF at 0.726 inconclusive
    against it. TF-IDF was 'not shown worse' and so recommended; now it stays open, with the loss it may carry."""
    means = {"tfidf_logreg": 0.726, "torch_scratch": 0.670, "hf_bert:full": 0.816}
    folder = design_folder(tmp_path / "d", [("torch_scratch", "tfidf_logreg", "inconclusive", (-0.2, 0.08)),
                                            ("hf_bert:full", "tfidf_logreg", "inconclusive", (-0.03, 0.21)),
                                            ("hf_bert:full", "torch_scratch", "A better", (0.02, 0.27))],
                           COSTS, means=means)
    decision = decision_of(folder)
    assert decision.group == ["hf_bert:full"] and decision.cheapest == "hf_bert:full" and not decision.decided
    assert decision.open == {"tfidf_logreg": pytest.approx(0.21)} and decision.worse == ["torch_scratch"]
    (_, _, html), _ = decision_section(folder, "en", DEFAULT_CPU_HOUR_PRICE, decision)
    assert "tfidf_logreg up to 0.2100" in html and "Cheapest to serve" not in html


def test_only_declared_contrasts_decide(tmp_path):
    """An exploratory pair neither excludes a recipe (its 'A better') nor admits one (its narrow interval)."""
    folder = design_folder(tmp_path / "d", [("torch_scratch", "tfidf_logreg", "A better", (0.001, 0.02), "declared"),
                                            ("hf_bert:full", "tfidf_logreg", "A better", (0.001, 0.02), "exploratory"),
                                            ("hf_bert:full", "torch_scratch", "inconclusive", (-0.001, 0.004),
                                             "exploratory")], COSTS)
    decision = decision_of(folder)
    assert decision.group == ["hf_bert:full"] and decision.untested == ["torch_scratch", "tfidf_logreg"]
    assert not decision.worse and not decision.open
    assert any(line.startswith("No declared contrast with hf_bert:full, so neither admitted nor excluded: torch_scratch, "
                               "tfidf_logreg") for line in decision_sentences(decision, "en"))


def test_the_front_keeps_the_recipes_no_other_is_cheaper_and_better_than():
    rows = pd.DataFrame({"variant": ["a", "b", "c", "d"], "mean": [0.97, 0.98, 0.97, 0.99], "cost": [1, 2, 3, 4]})
    assert pareto_front(rows, "cost") == ["a", "b", "d"]
    assert json.dumps(pareto_front(rows.assign(cost=[1, 1, 1, 1]), "cost")) == '["d"]'


def test_serving_paths_are_points_of_the_front_priced_like_the_recipes():
    from comparisons.report.decision_section import serving_points

    table = Path(__file__).resolve().parent.parent / "results" / "serving" / "serving_table.csv"
    points = serving_points(table, 2, 0.05).set_index("variant")
    found = pd.read_csv(table)
    other = found[(found["status"] == "ok") & (found["path"] != "native")]
    assert len(points) == len(other) and "native" not in " ".join(points.index)
    onnx = other[(other["variant"] == "hf_bert:full") & (other["path"] == "onnx")].iloc[0]
    assert points.loc["hf_bert:full (onnx)", "cost_per_million"] == pytest.approx(
        1e6 / onnx["throughput_per_s"] / 3600 * 2 * 0.05)
