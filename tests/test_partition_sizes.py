"""Training sizes inside the partition design, under a label budget: nested stratified subsets of each
partition's labelled part, the validation part carved from the n texts, each size reported apart and corrected
together, and sizes that do not fit refused in one line."""
import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from common.datasets import DataSpec, LabelledTexts, load
from common.errors import UserInputError
from common.partitions import kfold_partitions
from common.splits import draw_seeds, MIN_PER_CLASS, budget_parts
from tests.test_cli import run_main

SIZES = [10, 30, 100, 400, 1500]


@pytest.fixture(scope="module")
def planted():
    """The SMS data with planted duplicates: 40 texts repeated, so that a group straddling parts would show."""
    data = load(DataSpec())
    rows = np.concatenate([np.arange(len(data)), np.arange(0, 400, 10)])
    return LabelledTexts([data.texts[i] for i in rows], data.labels[rows], data.class_names, data.positive_index)


@pytest.fixture(scope="module")
def planted_partitions(planted):
    """Its 5 group-aware partitions (one repeat, seed 0), cut once for the tests that read them (about 4 s)."""
    return kfold_partitions(planted, 5, 1, 0)


def test_subsets_are_nested_stratified_inside_the_labelled_part_and_never_hold_a_test_text(planted,
                                                                                            planted_partitions):
    data = planted
    share_valid = None
    for partition in planted_partitions[:2]:
        split = partition.split
        labelled = set(np.concatenate([split.train, split.valid]).tolist())
        test_texts = {data.texts[i] for i in split.test}
        share_valid = len(split.valid) / len(labelled)
        previous: set[int] = set()
        for size in SIZES:
            train, valid = budget_parts(split, data.labels, data.texts, size)
            both = set(train.tolist()) | set(valid.tolist())
            assert len(train) + len(valid) == size == len(both), "n labelled texts in all, training and validation"
            assert both <= labelled and not {data.texts[i] for i in both} & test_texts
            assert previous <= both, f"size {size} does not contain the smaller subset"
            previous = both
            largest_group = max(Counter(data.texts[i] for i in both).values())
            for c in range(data.n_classes):  # every class on both sides, the validation share per class
                in_train, in_valid = (int((data.labels[part] == c).sum()) for part in (train, valid))
                assert in_train >= 1 and in_valid >= 1 and in_train + in_valid >= MIN_PER_CLASS
                # whole groups of equal texts: at most one group beyond the share
                assert in_valid <= max(1, round(share_valid * (in_train + in_valid))) + largest_group - 1
            assert not {data.texts[i] for i in train} & {data.texts[i] for i in valid}, "equal texts on one side"
        again = budget_parts(split, data.labels, data.texts, 100)  # the same for every variant and seed
        assert all(np.array_equal(x, y) for x, y in zip(again, budget_parts(split, data.labels, data.texts, 100)))
    train, valid = budget_parts(split, data.labels, data.texts, 100, budget="train")  # the older question
    assert len(train) == 100 and np.array_equal(valid, split.valid)


def test_a_size_that_does_not_fit_a_partition_names_it_and_the_largest_allowed(planted, planted_partitions):
    split = planted_partitions[0].split
    largest = len(split.train) + len(split.valid)
    with pytest.raises(UserInputError, match=rf"larger than partition r0f0's labelled part .*the largest allowed is {largest}"):
        budget_parts(split, planted.labels, planted.texts, largest + 1, where="partition r0f0")
    with pytest.raises(UserInputError, match="the smallest allowed is 10"):
        budget_parts(split, planted.labels, planted.texts, 9)


SMALL = ["run", "--backends", "tfidf_logreg", "--profile", "tiny", "--limit-per-class", "60", "--threads", "1",
         "--quality-only"]


def test_a_design_with_two_sizes_reports_each_apart_and_corrects_over_both(tmp_path, capfd):
    out = tmp_path / "cv"
    result = run_main(capfd, *SMALL, "--cv", "2", "--train-sizes", "30,all", "--draws", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    design = json.loads((out / "design.json").read_text())
    assert design["train_sizes"] == [30, "all"] and design["label_budget"] == "train+valid"
    for index, name in enumerate(("r0f0", "r0f1")):  # each partition its own model seed (= its index here)
        folder = out / "partitions" / name
        record = json.loads((folder / "runs" / f"tfidf_logreg__n30__seed{index}.json").read_text())
        assert record["n_train_texts"] + record["n_valid_texts"] == 30 and record["label_budget"] == "train+valid"
        recorded = json.loads((folder / "splits.json").read_text())["train_subsets"]
        assert recorded["label_budget"] == "train+valid" and len(recorded["sizes"]["30"]) == record["n_train_texts"]
        full = json.loads((folder / "runs" / f"tfidf_logreg__seed{index}.json").read_text())
        assert full["n_train_texts"] + full["n_valid_texts"] > 30
        for size in ("n30__", ""):  # a twin with scores 0.01 lower at 30 texts: different at 30, equal at all
            twin = json.loads((folder / "runs" / f"tfidf_logreg__{size}seed{index}.json").read_text())
            twin = {**twin, "variant": "torch_scratch", "average_precision": twin["average_precision"] - (0.01 if size else 0)}
            (folder / "runs" / f"torch_scratch__{size}seed{index}.json").write_text(json.dumps(twin))
            (folder / "predictions" / f"torch_scratch__{size}seed{index}.npz").write_bytes(
                (folder / "predictions" / f"tfidf_logreg__{size}seed{index}.npz").read_bytes())
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["variants"]["torch_scratch"] = manifest["variants"]["tfidf_logreg"]
        (folder / "manifest.json").write_text(json.dumps(manifest))
    (out / "design.json").write_text(json.dumps({**design, "variants": ["tfidf_logreg", "torch_scratch"]}))
    assert run_main(capfd, "report", "--out", str(out)).returncode == 0
    scores = pd.read_csv(out / "scores.csv")
    at_30 = scores[(scores["train_size"] == "30") & (scores["metric"] == "average_precision")]
    assert len(at_30) == 4 and set(at_30["n_train"]) == {30}, "each size's own n_train in the correction"
    verdicts = pd.read_csv(out / "verdicts.csv")
    ap = verdicts[verdicts["metric"] == "average_precision"].set_index("train_size")
    assert set(ap.index.astype(str)) == {"30", "all"}
    # no contrasts declared: the later variant is A (pair_order), so A - B = torch_scratch - tfidf_logreg
    assert ap.loc["30", "difference"] == pytest.approx(-0.01) and ap.loc["all", "difference"] == 0
    assert ap.loc["30", "verdict"] == "B better" and ap.loc["all", "verdict"] == "equivalent"
    assert (ap["family_size"] == 4).all(), "one family over both sizes: a difference and an equivalence each"
    again = run_main(capfd, *SMALL, "--cv", "2", "--train-sizes", "30,all", "--label-budget", "train",
                     "--out", str(out), "--backends", "tfidf_logreg", "--draws", "1")
    assert again.returncode == 0 and again.stderr.count("finished earlier, kept") == 2, "only the full-size runs kept"


def test_draws_give_each_partition_and_draw_its_own_subset_and_seed(tmp_path, capfd):
    """--draws 2 at a size up to 1,000: each partition trains 2 draws, each with its own model seed (none
    shared across partitions) and its own recorded subset; the full size the partition's own seed; the verdict rows average the
    draws inside a partition and say how many there were; a rerun keeps them all."""
    out = tmp_path / "drawn"
    result = run_main(capfd, *SMALL, "--cv", "2", "--train-sizes", "30,all", "--draws", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    subsets, seeds = [], []
    for index, name in enumerate(("r0f0", "r0f1")):
        folder = out / "partitions" / name
        drawn = json.loads((folder / "splits.json").read_text())["train_subsets"]["draws"]["30"]
        assert sorted(map(int, drawn)) == draw_seeds(index, 2)
        for seed, record in drawn.items():
            run = json.loads((folder / "runs" / f"tfidf_logreg__n30__seed{seed}.json").read_text())
            assert run["subset_seed"] == record["subset_seed"] and run["n_train_texts"] == len(record["train"])
            subsets.append(tuple(sorted(record["train"] + record["valid"])))
            seeds.append(int(seed))
        assert (folder / "runs" / f"tfidf_logreg__seed{index}.json").exists()
    assert len(set(subsets)) == 4 and len(set(seeds)) == 4, "every partition and draw its own subset and seed"
    verdicts = pd.read_csv(out / "verdicts.csv") if (out / "verdicts.csv").exists() else None
    assert verdicts is None or verdicts.empty, "one variant: no pair"
    again = run_main(capfd, *SMALL, "--cv", "2", "--train-sizes", "30,all", "--draws", "2", "--out", str(out))
    assert again.returncode == 0 and again.stderr.count("finished earlier, kept") == 6


def test_one_draw_a_partition_still_gives_each_partition_its_own_seeds_and_subset_and_records_them(tmp_path, capfd):
    """--draws 1 (the powered curve's design): every partition trains with its own model seed at every size and its
    own subset seed at a subset size (one seed effect common to all partitions would sit inside every difference,
    unseen by its standard error); both variants of a partition share them (the pairing); design.json records them;
    resuming it as --seeding shared is refused in one line, and --seeding shared, asked by name, is the older
    scheme (seed 0 and the split's own subset everywhere)."""
    out = tmp_path / "own"
    result = run_main(capfd, *SMALL, "--backends", "tfidf_logreg,torch_scratch", "--cv", "3", "--train-sizes", "30,all",
                      "--draws", "1", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    design = json.loads((out / "design.json").read_text())
    assert design["seeding"] == "per-partition" and design["drawn_sizes"] == [30]
    subsets, models = set(), set()
    for index, partition in enumerate(design["partitions"]):
        recorded = partition["seeds"]
        assert [s["model_seed"] for s in recorded["30"]] == [index] == [s["model_seed"] for s in recorded["all"]]
        assert recorded["all"][0]["subset_seed"] is None
        folder = out / "partitions" / partition["name"]
        runs = {v: json.loads((folder / "runs" / f"{v}__n30__seed{index}.json").read_text())
                for v in ("tfidf_logreg", "torch_scratch")}
        assert runs["tfidf_logreg"]["subset_seed"] == runs["torch_scratch"]["subset_seed"] == recorded["30"][0]["subset_seed"]
        drawn = json.loads((folder / "splits.json").read_text())["train_subsets"]["draws"]["30"][str(index)]
        assert runs["torch_scratch"]["n_train_texts"] == len(drawn["train"]), "both variants learn the same subset"
        subsets.add(tuple(sorted(drawn["train"] + drawn["valid"])))
        models.add(json.loads((folder / "runs" / f"torch_scratch__seed{index}.json").read_text())["seed"])
    assert len(subsets) == 3 and models == {0, 1, 2}, "no seed or subset shared across partitions"
    refused = run_main(capfd, *SMALL, "--backends", "tfidf_logreg,torch_scratch", "--cv", "3", "--train-sizes", "30,all",
                       "--draws", "1", "--seeding", "shared", "--out", str(out))
    assert refused.returncode == 2 and "seeded per-partition" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    shared = tmp_path / "shared"
    old = run_main(capfd, *SMALL, "--cv", "2", "--train-sizes", "30,all", "--draws", "1", "--seeding", "shared",
                   "--out", str(shared))
    assert old.returncode == 0, old.stderr[-2000:]
    for name in ("r0f0", "r0f1"):
        runs = sorted(p.stem for p in (shared / "partitions" / name / "runs").glob("*.json"))
        assert runs == ["tfidf_logreg__n30__seed0", "tfidf_logreg__seed0"]
        assert "draws" not in json.loads((shared / "partitions" / name / "splits.json").read_text())["train_subsets"]


def test_a_design_recorded_before_per_partition_seeding_reads_as_shared():
    from comparisons.run_folder.records import Design

    old = Design.from_dict({"folds": 10, "repeats": 1, "plan": {"cv": 10, "draws": 1}, "partitions": [{"name": "r0f0"}]})
    assert old.seeding == "shared" and old.plan["seeding"] == "shared" and old.partition_seeds("r0f0") == {}
    assert "seeding" not in old.to_dict()["plan"], "the file is given back as it was"


@pytest.mark.parametrize("sizes, message", [("99999", "larger than partition r0f0's labelled part"),
                                            ("4,all", "the smallest allowed is 10"),
                                            ("100,50", "50 after 100; give increasing sizes")])
def test_bad_sizes_in_a_partition_design_are_one_line_and_write_nothing(tmp_path, capsys, sizes, message):
    from comparisons.cli import main  # in-process, as test_cli_partitions: the same dispatch and refusal

    code = main([*SMALL, "--cv", "2", "--train-sizes", sizes, "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert err.strip().count("\n") == 0 and err.startswith("error: ")
    assert not (tmp_path / "run").exists()


def test_labels_saved_reads_the_baseline_curve_in_log_size_with_an_interval_over_partitions():
    from comparisons.stats.labels_saved import labels_saved, needed_size

    assert needed_size([50, 100, 200], [0.8, 0.9, 0.95], 0.85) == pytest.approx(np.sqrt(50 * 100))
    assert needed_size([50, 100, 200], [0.8, 0.9, 0.95], 0.96) == float("inf")
    assert needed_size([50, 100, 200], [0.8, 0.9, 0.95], 0.7) == 50
    rows = []
    for j, shift in enumerate([0.0, 0.01, -0.01]):  # on every partition the pretrained recipe at 50 equals scratch at 100
        for size, n, scratch, full in (("50", 50, 0.80, 0.90 + shift), ("100", 100, 0.90 + shift, 0.97),
                                       ("all", 200, 0.95 + shift, 0.99)):
            for variant, value in (("torch_scratch", scratch), ("tfidf_logreg", scratch - 0.05), ("hf_bert:full", full)):
                rows.append({"partition": f"r0f{j}", "variant": variant, "seed": 0, "train_size": size,
                             "n_train": n, "n_test": 50, "metric": "average_precision", "value": value})
    table = labels_saved(pd.DataFrame(rows)).set_index("train_size")
    assert set(table["baseline"]) == {"torch_scratch"}, "the best recipe without pretraining"
    assert table.loc["50", "needed"] == pytest.approx(100) and table.loc["50", "ratio"] == pytest.approx(2)
    assert table.loc["50", "needed_ci_low"] == pytest.approx(100), "no spread over partitions: a point interval"
    assert table.loc["100", "reading"] == "more than the largest size on 3 of 3 partitions"
    assert np.isnan(table.loc["100", "needed"])


def test_the_a_a_check_runs_at_a_small_training_size_through_the_production_budget():
    from common.datasets import load_sms_spam
    from comparisons.studies.calibration import pool_scores, run_study

    scored = pool_scores(load_sms_spam(), "sgd_tfidf", pool=2, folds=3, planted=False, train_size=100)
    assert all(len(p.split.train) + len(p.split.valid) == 100 for p in scored["partitions"])
    result = run_study(load_sms_spam(), "sgd_tfidf", pool=4, folds=3, planted=False, train_size=100)
    assert result["train_size"] == 100 and result["aa_different"]["partitions"]["comparisons"] == 2


def test_up_to_runs_a_variant_only_at_the_sizes_it_can_afford_and_the_reports_keep_the_rest(tmp_path, capfd):
    """--up-to torch_scratch=30 (what lets SetFit run only where its cost is affordable): no torch_scratch run at
    all; the reports pair it at 30 and report TF-IDF alone at all; a bad cap is one line and writes nothing."""
    out = tmp_path / "capped"
    result = run_main(capfd, *SMALL, "--backends", "tfidf_logreg,torch_scratch", "--cv", "2", "--train-sizes", "30,all",
                      "--draws", "1", "--up-to", "torch_scratch=30", "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    for index, name in enumerate(("r0f0", "r0f1")):
        runs = sorted(p.stem for p in (out / "partitions" / name / "runs").glob("*.json"))
        assert runs == [f"tfidf_logreg__n30__seed{index}", f"tfidf_logreg__seed{index}", f"torch_scratch__n30__seed{index}"]
    verdicts = pd.read_csv(out / "verdicts.csv")
    pairs = verdicts[verdicts["metric"] == "average_precision"]
    assert set(pairs["train_size"].astype(str)) == {"30"}, "a pair only where both variants ran"
    curve = pd.read_csv(out / "learning_curve.csv")
    assert set(curve[curve["variant"] == "torch_scratch"]["train_size"].astype(str)) == {"30"}
    assert set(curve[curve["variant"] == "tfidf_logreg"]["train_size"].astype(str)) == {"30", "all"}
    for cap, words in (("keras_layers=30", "a variant of --backends"), ("torch_scratch=20", "no --train-sizes at or below 20")):
        bad = run_main(capfd, *SMALL, "--backends", "tfidf_logreg,torch_scratch", "--cv", "2", "--train-sizes", "30,all",
                       "--up-to", cap, "--out", str(tmp_path / "bad"))
        assert bad.returncode == 2 and words in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "bad").exists()


def test_a_design_run_from_a_power_plan_records_it_and_power_check_sets_its_verdicts_beside_it(tmp_path, capfd):
    """run --power-plan: the plan's folds, draws and family, its expectation copied into design.json before the runs;
    power_check then puts each planned row's chance beside the run's verdict."""
    from comparisons.studies.power_check import main as power_check

    chance = {f"{kind}_{what}_{bound}": 0.5 for kind in ("gap", "observed") for what in ("power", "decided")
              for bound in ("optimistic", "pessimistic")}
    plan_file = tmp_path / "power_plan.json"
    plan_file.write_text(json.dumps({
        "pilot": "pilot", "gap": 0.1, "family": "natural-order", "alpha": 0.05, "target": 0.8,
        "proposal": {"folds": 2, "repeats": 1, "draws": 1, "bound": "pessimistic", "met": True},
        "expected": [{"train_size": size, "contrast": "torch_scratch − tfidf_logreg", "pilot_difference": 0.01, **chance}
                     for size in ("30", "60")],
        "dropped_chains": [{"contrast": "torch_scratch − tfidf_logreg", "kind": "e", "why": "needs a standard error "
                            "below 0.0027 even at the whole of alpha; planned 0.0100 at 60 labels"}]}))
    out = tmp_path / "powered"
    result = run_main(capfd, *SMALL, "--backends", "tfidf_logreg,torch_scratch", "--train-sizes", "30,60",
                      "--contrasts", "torch_scratch-tfidf_logreg", "--power-plan", str(plan_file), "--out", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    design = json.loads((out / "design.json").read_text())
    assert (design["folds"], design["repeats"], design["draws"], design["family"]) == (2, 1, 1, "natural-order")
    assert design["power_plan"]["file"] == "power_plan.json" and len(design["power_plan"]["expected"]) == 2
    graph = design["family_graph"]  # the graph actually used: the equivalence chain dropped, its level passed on
    assert [d["node"] for d in graph["dropped"]] == [["torch_scratch", "tfidf_logreg", "e", "30"],
                                                      ["torch_scratch", "tfidf_logreg", "e", "60"]]
    assert graph["nodes"] == ["torch_scratch tfidf_logreg d 30", "torch_scratch tfidf_logreg d 60"]
    assert graph["weights"] == [1.0, 0.0] and graph["transitions"] == [[0.0, 1.0], [1.0, 0.0]]  # a lone contrast: back
    verdicts_md = (out / "verdicts.md").read_text()
    assert "Chains dropped before the runs as unreachable" in verdicts_md and "even at the whole of alpha" in verdicts_md
    declared = pd.read_csv(out / "verdicts.csv").query("metric == 'average_precision' and contrast == 'declared'")
    assert (declared["p_equivalence_holm"] == 1).all(), "a dropped hypothesis is never rejected"
    assert power_check(["--from", str(out)]) == 0
    text = (out / "power_check.md").read_text()
    verdicts = pd.read_csv(out / "verdicts.csv").query("metric == 'average_precision' and contrast == 'declared'")
    for _, row in verdicts.iterrows():
        assert f"| {row['train_size']} | torch_scratch − tfidf_logreg | 0.50 / 0.50 | 0.50 / 0.50 | +0.010 | " \
               f"{row['difference']:+.3f} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}] | {row['verdict']} |" in text
    assert power_check(["--from", str(tmp_path)]) == 2
