"""comparisons/stats/decision.py: the decision recomputes from verdicts.csv and the cost tables, says when the
data cannot say (with the power figure when verdicts.csv has it) and names a missing cost instead of guessing it."""
import json
from pathlib import Path

import pandas as pd
import pytest

from comparisons.outputs import atomic_write_json
from comparisons.report.decision_section import decision_section, decision_sentences, folder_decision
from comparisons.stats.decision import pareto_front
from comparisons.report.partition_page import write_recipe_page
from comparisons.stats.partition_verdicts import METRICS

VARIANTS = ["tfidf_logreg", "torch_scratch", "hf_bert:full"]


def design_folder(folder: Path, verdicts: list[tuple], costs: dict[str, dict], repeats: list | None = None) -> Path:
    """A partition design's top folder as recipe_verdicts.py writes it, with known verdicts and costs."""
    means = {"tfidf_logreg": 0.975, "torch_scratch": 0.986, "hf_bert:full": 0.988}
    variants = pd.DataFrame([{"variant": v, "partitions": 5, "seeds": 1, **{
        f"{m}_{k}": x for m in METRICS for k, x in (("mean", means[v]), ("std", 0.01), ("ci_low", means[v] - 0.01),
                                                    ("ci_high", min(1, means[v] + 0.01)))},
        **{f"{c}_median": x for c, x in costs[v].items()}} for v in VARIANTS])
    pairs = pd.DataFrame([{"metric": "average_precision", "variant_a": a, "variant_b": b, "partitions": 5,
                           "difference": means[a] - means[b], "ci_low": -0.01, "ci_high": 0.01, "margin": 0.005,
                           "p_holm": 0.5, "p_equivalence_holm": 0.5, "smallest_detectable_difference": 0.01,
                           "verdict": verdict} for a, b, verdict in verdicts])
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


def test_a_cheaper_recipe_equivalent_to_the_best_is_the_decision(tmp_path):
    folder = design_folder(tmp_path / "d", [("torch_scratch", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "torch_scratch", "equivalent")], COSTS)
    decision = folder_decision(folder, price=0.1)
    assert decision.best == "hf_bert:full" and decision.tie == ["hf_bert:full", "torch_scratch"]
    assert decision.cheapest == "torch_scratch" and decision.equivalent and decision.decided
    # 10^6 texts at 3,600 texts/s on 2 threads: 10^6 / 3,600 / 3,600 x 2 = 0.1543 CPU-hours, at $0.10: $0.0154
    cost = decision.rows.set_index("variant").loc["torch_scratch", "cost_per_million"]
    assert cost == pytest.approx(1e6 / 3600 / 3600 * 2 * 0.1)
    lines = decision_sentences(decision, "en")
    assert lines[0] == ("Not shown worse than the best (hf_bert:full) on average precision (±0.005): "
                        "hf_bert:full, torch_scratch.")
    assert lines[1].startswith("Cheapest to serve among them: torch_scratch, equivalent to hf_bert:full within the margin")
    assert f"${cost:,.4f} at $0.1 a CPU-hour" in lines[1] and len(lines) == 2
    (anchor, heading, html), front = decision_section(folder, "zh", 0.1)
    assert anchor == "decision" and heading == "决定" and "在容差内与 hf_bert:full 等价" in html
    assert (folder / "zh" / "figures" / "cost_front.png").stat().st_size > 5000 and "质量与服务成本" in front


def test_where_no_verdict_stands_the_decision_says_so_and_how_many_repeats_would(tmp_path):
    folder = design_folder(tmp_path / "d", [(a, b, "inconclusive") for a, b in [
        ("torch_scratch", "tfidf_logreg"), ("hf_bert:full", "tfidf_logreg"), ("hf_bert:full", "torch_scratch")]],
        COSTS, repeats=[3, 7.2, 40])
    decision = folder_decision(folder)
    assert not decision.decided and decision.tie == ["hf_bert:full", "torch_scratch", "tfidf_logreg"]
    assert decision.cheapest == "tfidf_logreg" and decision.repeats == 8  # the best against the cheapest: 7.2, up
    lines = decision_sentences(decision, "en")
    assert lines[0].startswith("The data cannot say which recipe to deploy")
    assert lines[1].startswith("By cost alone, the cheapest to serve: tfidf_logreg, not shown worse")
    assert lines[-1].startswith("About 8 repeats of the design would detect a difference of the margin")
    pd.read_csv(folder / "verdicts.csv").drop(columns="repeats_for_power_margin").to_csv(folder / "verdicts.csv",
                                                                                        index=False)
    assert decision_sentences(folder_decision(folder), "en")[-1] == (  # without the engine's figure: its detectable one
        "As run, the test detects (80% power) only a difference of 0.0100 or more in hf_bert:full − tfidf_logreg; "
        "more repeats or partitions would let it say.")


def test_a_folder_without_cost_figures_still_gets_its_page_and_the_decision_names_what_is_missing(tmp_path):
    costs = {v: {"latency_ms_b1_p50": c["latency_ms_b1_p50"]} for v, c in COSTS.items()}  # an old folder: latency only
    folder = design_folder(tmp_path / "d", [("torch_scratch", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "tfidf_logreg", "A better"),
                                            ("hf_bert:full", "torch_scratch", "equivalent")], costs)
    decision = folder_decision(folder)
    assert decision.cheapest == "torch_scratch"  # by b=1 latency, the one cost it has
    assert decision.missing == ["throughput_per_s", "peak_rss_serve_mb", "size_mb", "train_seconds"]
    assert any("Missing from the cost tables, so not used: throughput_per_s" in line
               for line in decision_sentences(decision, "en"))
    page = write_recipe_page(folder, "en").read_text()
    assert '<section id="decision">' in page.split("<main>")[1][:40]  # the decision comes first


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
