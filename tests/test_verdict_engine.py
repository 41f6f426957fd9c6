"""The one verdict engine against independent implementations (statsmodels, baycomp, scikit-posthocs), the
declared family, one orientation, and a reused design folder (comparisons/report/)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import nct
from scipy.stats import t as student_t

from comparisons.stats.contrasts import PRESETS, pair_order, parse_contrasts
from comparisons.stats.corrected_t import corrected_t, t_tests
from comparisons.stats.power import repeats_for_power, smallest_detectable
from comparisons.report.partition_reports import partition_scores
from comparisons.stats.partition_verdicts import recipe_verdicts
from comparisons.stats.family import VERDICT_COLUMNS, holm, posterior_thirds

COURSE = ["tfidf_logreg", "torch_scratch", "keras_layers", "hf_bert:frozen", "hf_bert:full"]


def partition_frame(means: dict[str, float], spread: float = 0.004, partitions: int = 15, folds: int = 5,
                    rng_seed: int = 0) -> pd.DataFrame:
    """Per-partition scores of recipes with these mean APs; n_test/n_train = 1/(K-1) exactly, as K-fold has."""
    rng = np.random.default_rng(rng_seed)
    shared = rng.normal(0, 0.01, partitions)
    return pd.DataFrame([{"partition": f"r{j // folds}f{j % folds}", "variant": name, "seed": 0,
                          "n_train": 1000 * (folds - 1), "n_test": 1000,
                          **dict.fromkeys(("average_precision", "macro_f1_at_threshold", "accuracy_at_threshold"),
                                          mean + shared[j] + rng.normal(0, spread))}
                         for name, mean in means.items() for j in range(partitions)])


def test_holm_matches_statsmodels_on_random_p_values():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(1)
    for size in (1, 2, 7, 20):
        p = rng.uniform(0, 0.2, size) ** 2
        assert np.allclose(holm(p), multipletests(p, method="holm")[1], atol=1e-9, rtol=0)


def test_corrected_t_and_its_posterior_match_baycomp():
    """baycomp's correlated t-test (Benavoli et al. 2017) is the reference: its mean, variance and df, and
    its posterior (left, rope, right), on random per-partition scores of 3 repeats x 5 folds."""
    from baycomp import two_on_single
    from baycomp.single import CorrelatedTTest

    rng = np.random.default_rng(2)
    for trial in range(5):
        x, y = rng.normal(0.97, 0.01, 15), rng.normal(0.975, 0.01, 15)
        mean_b, variance_b, df_b = CorrelatedTTest.compute_statistics(x, y, runs=3)  # baycomp: y - x
        mean, se, df = corrected_t(y - x, test_to_train=1 / 4)  # 5 folds: n_test / n_train = 1 / (K - 1)
        assert (mean, se ** 2, df) == (pytest.approx(mean_b, abs=1e-12), pytest.approx(variance_b, abs=1e-12), df_b)
        rope = 0.005
        left, within, right = two_on_single(x, y, rope=rope, runs=3)  # P(y - x < -rope), rope, P(> rope)
        a_better, inside, b_better = posterior_thirds(mean, se, df, rope)  # A = y, B = x
        assert (a_better, inside, b_better) == (pytest.approx(right, abs=1e-9), pytest.approx(within, abs=1e-9),
                                                pytest.approx(left, abs=1e-9))
        _, p_equivalence, _, _ = t_tests(mean, se, df, rope)
        assert p_equivalence == pytest.approx(max(a_better, b_better), abs=1e-12), "flat prior: TOST p = max tail"


def test_tost_matches_statsmodels_ttost_on_scaled_deviations():
    """statsmodels' paired TOST on the per-partition differences, their spread scaled so its plain standard
    error is the corrected one, gives the same p."""
    from statsmodels.stats.weightstats import ttost_paired

    rng = np.random.default_rng(3)
    d = rng.normal(0.001, 0.004, 10)
    ratio = 0.25
    mean, se, df = corrected_t(d, ratio)
    scaled = mean + (d - mean) * np.sqrt(1 + len(d) * ratio)  # sd / sqrt(J) x sqrt(1 + J r) = corrected se
    p_statsmodels = ttost_paired(scaled, np.zeros_like(scaled), -0.005, 0.005)[0]
    assert t_tests(mean, se, df, 0.005)[1] == pytest.approx(p_statsmodels, abs=1e-9)


def test_nemenyi_p_and_critical_difference_match_scikit_posthocs():
    import scikit_posthocs

    from comparisons.stats.across_corpora import across_corpora

    rng = np.random.default_rng(4)
    table = pd.DataFrame(rng.uniform(0.8, 1.0, (12, 4)), columns=list("ABCD"), index=[f"c{i}" for i in range(12)])
    table["A"] += 0.15  # A ranks first nearly everywhere
    result = across_corpora(table)
    oracle = scikit_posthocs.posthoc_nemenyi_friedman(table.to_numpy())
    for pair in result.pairs:
        i, j = "ABCD".index(pair["a"]), "ABCD".index(pair["b"])
        assert pair["nemenyi_p"] == pytest.approx(oracle.iloc[i, j], abs=1e-9)
        assert pair["different"] == (result.rejected and oracle.iloc[i, j] < 0.05)


def test_smallest_detectable_is_the_noncentral_t_and_larger_than_the_normal_style_figure():
    """The issue's check: 4 degrees of freedom, a family of 10: the noncentral t's figure is 7.9% above
    t(1 - alpha/20) + t(0.8), at which the true power is only 0.73."""
    se, df = 0.001, 4
    figure = smallest_detectable(se, 10, df)
    critical = student_t.ppf(1 - 0.05 / 20, df)
    old = (critical + student_t.ppf(0.8, df)) * se
    assert figure / old == pytest.approx(1.079, abs=0.002)
    power_at_old = nct.sf(critical, df, old / se) + nct.cdf(-critical, df, old / se)
    assert power_at_old == pytest.approx(0.73, abs=0.01)


def test_repeats_for_power_shrink_to_the_floor_and_say_when_it_cannot_be_reached():
    spread, ratio = 0.004, 0.25
    needed = repeats_for_power(0.01, spread, 5, ratio, 8)
    assert needed is not None and needed >= 1
    se = spread * np.sqrt(1 / (5 * needed) + ratio)
    critical = student_t.ppf(1 - 0.05 / 16, 5 * needed - 1)
    assert nct.sf(critical, 5 * needed - 1, 0.01 / se) >= 0.8
    assert repeats_for_power(0.001, spread, 5, ratio, 8) is None, "below the n_test/n_train floor: unreachable"


def test_declared_contrasts_are_their_own_family_difference_and_equivalence_together():
    from statsmodels.stats.multitest import multipletests

    frame = partition_frame({"tfidf_logreg": 0.970, "torch_scratch": 0.985, "keras_layers": 0.985,
                             "hf_bert:frozen": 0.960, "hf_bert:full": 0.990})
    declared = parse_contrasts("course", COURSE)
    _, pairs = recipe_verdicts(frame, order=COURSE, contrasts=declared, folds=5)
    assert list(pairs.columns) == list(VERDICT_COLUMNS)
    ap = pairs[pairs["metric"] == "average_precision"]
    family = ap[ap["contrast"] == "declared"]
    assert [tuple(p) for p in family[["variant_a", "variant_b"]].to_numpy()] == list(PRESETS["course"])
    joint = multipletests(np.r_[family["p_value"], family["p_equivalence"]], method="holm")[1]
    assert np.allclose(family["p_holm"], joint[:4], atol=1e-9) and np.allclose(family["p_equivalence_holm"], joint[4:])
    assert (family["family_size"] == 8).all()
    explored = ap[ap["contrast"] == "exploratory"]
    assert len(explored) == 6 and (explored["family_size"] == 12).all()
    assert ap.loc[ap["variant_a"].eq("torch_scratch") & ap["variant_b"].eq("tfidf_logreg"), "verdict"].item() == "A better"
    _, every = recipe_verdicts(frame, order=COURSE, folds=5)
    assert set(every["contrast"]) == {"every pair"} and (every.loc[every["metric"] == "average_precision",
                                                                   "family_size"] == 20).all()


def test_one_orientation_declared_pairs_as_declared_the_rest_later_minus_earlier():
    assert pair_order(["a", "b", "c"]) == [("b", "a"), ("c", "a"), ("c", "b")]
    assert pair_order(["a", "b", "c"], [("a", "c")]) == [("a", "c"), ("b", "a"), ("c", "b")]
    frame = partition_frame({"a": 0.97, "b": 0.98})
    _, pairs = recipe_verdicts(frame, order=["a", "b"], contrasts=[("a", "b")])
    assert set(zip(pairs["variant_a"], pairs["variant_b"])) == {("a", "b")}
    assert pairs["difference"].iloc[0] < 0


@pytest.mark.parametrize("value, words", [
    ("nope", "no such preset"), ("tfidf_logreg-bogus", "bogus is not a variant"),
    ("tfidf_logreg-tfidf_logreg", "with itself"), ("torch_scratch-tfidf_logreg,tfidf_logreg-torch_scratch", "twice"),
])
def test_bad_contrasts_exit_2_with_one_line_before_anything_is_written(tmp_path, capsys, value, words):
    from comparisons.cli import main

    out = tmp_path / "refused"
    argv = ["run", "--backends", "tfidf_logreg,torch_scratch", "--profile", "tiny", "--contrasts", value, "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not out.exists()


def test_the_course_preset_needs_its_variants():
    with pytest.raises(Exception, match="add them to --backends"):
        parse_contrasts("course", ["tfidf_logreg", "torch_scratch"])


def test_a_reused_design_folder_reports_only_its_plans_runs(tmp_path):
    """Runs of an earlier plan (another seed, another profile) stay in the partition folder but never reach
    the scores or the verdicts."""
    (tmp_path / "design.json").write_text(json.dumps({"folds": 3, "repeats": 1, "variants": ["a", "b"]}))
    for name in ("r0f0", "r0f1", "r0f2"):
        partition = tmp_path / "partitions" / name
        (partition / "runs").mkdir(parents=True)
        (partition / "splits.json").write_text(json.dumps({"sha256": "s", "train": [0, 1, 2], "valid": [3], "test": [4]}))
        (partition / "manifest.json").write_text(json.dumps({
            "data": {"class_names": ["ham", "spam"]}, "variants": {"a": {}, "b": {}}, "seeds": [0], "profile": "full"}))
        for variant in ("a", "b"):
            base = {"variant": variant, "status": "ok", "split_sha256": "s", "average_precision": 0.9, "profile": "full"}
            (partition / "runs" / f"{variant}__seed0.json").write_text(json.dumps({**base, "seed": 0}))
            (partition / "runs" / f"{variant}__seed1.json").write_text(json.dumps({**base, "seed": 1, "average_precision": 0.1}))
        (partition / "runs" / "c__seed0.json").write_text(json.dumps({**base, "variant": "c", "seed": 0}))
        (partition / "runs" / "a__seed0_old.json").write_text(json.dumps({**base, "variant": "a", "seed": 0,
                                                                          "profile": "fast", "average_precision": 0.1}))
    scores = partition_scores(tmp_path)
    assert sorted(set(scores["seed"])) == [0] and sorted(set(scores["variant"])) == ["a", "b"]
    assert (scores["average_precision"] == 0.9).all() and len(scores) == 6


def test_equivalence_power_agrees_with_a_simulation_of_the_production_tost():
    """The planning figure against the test it plans for: per-partition differences drawn at a known spread,
    the production TOST (pair_tests.t_tests) at Holm's strictest level, its rejection rate."""
    from comparisons.stats.power import equivalence_power, partition_standard_error

    rng = np.random.default_rng(5)
    spread, ratio, partitions, margin, level = 0.002, 0.25, 15, 0.005, 0.05 / 8
    # overlapping training sets: a shared term of variance ratio x spread^2 in every partition's difference,
    # which is what the Nadeau-Bengio correction assumes
    shared = rng.normal(0, spread * np.sqrt(ratio), (4000, 1))
    draws = 0.0005 + shared + rng.normal(0, spread, (4000, partitions))
    rejected = np.mean([t_tests(*corrected_t(d, ratio), margin)[1] < level for d in draws])
    planned = equivalence_power(0.0005, partition_standard_error(spread, partitions, ratio), partitions - 1, margin, level)
    assert planned == pytest.approx(rejected, abs=0.04)
    assert repeats_for_power(0.0005, spread, 5, ratio, 8, margin=margin) is not None
    assert repeats_for_power(0.006, spread, 5, ratio, 8, margin=margin) is None, "beyond the margin: never equivalent"


def test_the_power_plan_from_the_committed_reference_and_its_refusals(tmp_path, capsys):
    """The committed reference (15 partitions, the course's contrasts declared) as the pilot: one row per declared
    contrast read from its verdicts, a projection per node count."""
    import shutil
    from pathlib import Path

    from comparisons.studies.power_plan import main

    reference = Path(__file__).resolve().parent.parent / "results" / "reference"
    pilot = tmp_path / "pilot"
    shutil.copytree(reference, pilot, ignore=shutil.ignore_patterns("predictions", "logs", "*.html", "*.png", "exports"))
    assert main(["--from", str(pilot), "--nodes", "1", "4"]) == 0
    plan = (pilot / "power_plan.md").read_text()
    verdicts = pd.read_csv(reference / "verdicts.csv")
    row = verdicts[(verdicts["metric"] == "average_precision") & (verdicts["variant_a"] == "torch_scratch")
                   & (verdicts["variant_b"] == "tfidf_logreg")].iloc[0]
    assert plan.count(" − ") >= 4 and \
        f"| torch_scratch − tfidf_logreg | {row['difference']:+.4f} | {row['spread']:.4f} | ±0.005 |" in plan
    # the 15 partitions' spread (0.0056) leaves the n_test / n_train floor above Holm's strictest level: unreachable
    assert "| torch_scratch − tfidf_logreg | +0.0068 | 0.0056 | ±0.005 | more than 100 (unreachable) |" in plan
    capsys.readouterr()
    design = json.loads((pilot / "design.json").read_text())
    for broken, words in (({**design, "contrasts": None}, "declares no contrasts"),
                          ({**design, "partitions": design["partitions"][:1]}, "fewer than 2 partitions")):
        (pilot / "design.json").write_text(json.dumps(broken))
        assert main(["--from", str(pilot)]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1
    assert main(["--from", str(tmp_path)]) == 2 and "not a reported partition design" in capsys.readouterr().err


def test_a_gap_plan_proposes_the_cheapest_powered_design_and_records_what_it_expects(tmp_path, capsys):
    """The committed small-budget curve (5 partitions x 3 draws at 50-200 labels) as the pilot of the powered curve:
    --gap 0.10 proposes one repeat of K folds x D draws; the proposal meets 80% for every contrast's chain and one
    fold fewer does not (in the family left once the unreachable chains are dropped); each size's assured power is
    statsmodels' one-sample t power averaged over the pilot variance's chi-square law; a budget caps the design."""
    import shutil
    from pathlib import Path

    from statsmodels.stats.power import TTestPower

    from comparisons.studies.power_plan import main
    from scipy.stats import chi2

    from comparisons.run_folder.records import Design
    from comparisons.stats.power import ASSURANCE_POINTS
    from comparisons.studies.power_sizes import (chance_of_deciding, design_power, first_step_hypotheses,
                                                 seconds_a_fold, size_components, unreachable_chains)

    curve = Path(__file__).resolve().parent.parent / "results" / "recipe_audit" / "curve_small"
    pilot = tmp_path / "pilot"
    shutil.copytree(curve, pilot, ignore=shutil.ignore_patterns("predictions", "logs", "*.html", "*.png", "zh"))
    assert main(["--from", str(pilot), "--nodes", "1", "--gap", "0.10"]) == 0
    plan = json.loads((pilot / "power_plan.json").read_text())
    proposal, design = plan["proposal"], Design.read(pilot)
    assert plan["family"] == "natural-order" and proposal["repeats"] == 1 and proposal["draws"] in (1, 2, 3)
    assert len(plan["expected"]) == 12  # 4 declared contrasts x 3 sizes
    components = size_components(pilot, design)
    folds, draws, bound = proposal["folds"], proposal["draws"], proposal["bound"]
    margins = {c: 0.005 for c in components["contrast"]}
    chance = lambda k, d: chance_of_deciding(components, 0.10, k, d, 5, "natural-order", bound, None,  # noqa: E731
                                             unreachable_chains(components, k, d, 5, bound, margins))
    assert {(d["contrast"], d["kind"]) for d in plan["dropped_chains"]} <= {(c, "e") for c in margins}
    if proposal["met"]:
        assert chance(folds, draws).groupby("contrast")["decided"].min().min() >= 0.80
        assert folds == 5 or chance(folds - 1, draws).groupby("contrast")["decided"].min().min() < 0.80
    assert "## A design for a gap of 0.1 AP" in (pilot / "power_plan.md").read_text()
    level = 0.05 / first_step_hypotheses("natural-order", 4, 3)
    c = components.iloc[0]
    se = (c["between"] / folds + c["within"] / (folds * draws) + c["overlap_term"]) ** 0.5
    scales = (4 / chi2.ppf((np.arange(ASSURANCE_POINTS) + 0.5) / ASSURANCE_POINTS, 4)) ** 0.5  # 5 pilot partitions
    powers = [TTestPower().power(effect_size=0.10 / (se * scale * folds ** 0.5), nobs=folds, alpha=level,
                                 alternative="two-sided") for scale in scales]
    expected = np.mean(np.nan_to_num(powers, nan=1.0))  # statsmodels' nct gives nan where the power is 1
    assert design_power(c, 0.10, folds, draws, 5, level, "optimistic") == pytest.approx(expected, abs=1e-4)
    budget = 3 * seconds_a_fold(pilot, components) / 60 * 6  # six folds' worth: less than the proposal needs
    assert main(["--from", str(pilot), "--nodes", "1", "--gap", "0.10", "--budget-minutes", f"{budget:.3f}"]) == 0
    capped = json.loads((pilot / "power_plan.json").read_text())["proposal"]
    assert capped["folds"] * capped["draws"] <= 18 and "budget" in (pilot / "power_plan.md").read_text()
    capsys.readouterr()
    reference = Path(__file__).resolve().parent.parent / "results" / "reference"
    assert main(["--from", str(reference), "--gap", "0.10"]) == 2  # one draw a partition: refused, nothing written
    err = capsys.readouterr().err
    assert "--gap needs a pilot with training sizes and --draws 2" in err and len(err.strip().splitlines()) == 1
    assert main(["--from", str(pilot), "--gap", "1.5"]) == 2 and "between 0 and 1" in capsys.readouterr().err
