"""comparisons/run_folder/open_folder.py on the committed folders: each opens as its kind (the one place that decides
it), hands out its plan record, run folders and scores, and a folder that is none of them opens as None."""
from __future__ import annotations

from pathlib import Path

from comparisons.run_folder.open_folder import (BenchmarkFolder, DesignFolder, SplitFolder, as_opened, open_folder,
                                               scores_table)
from comparisons.run_folder.records import BenchmarkPlan, Design, Manifest

RESULTS = Path(__file__).resolve().parent.parent / "results"


def test_each_committed_kind_opens_as_itself_with_its_plan_and_scores():
    design = open_folder(RESULTS / "learning_curve_powered")
    assert isinstance(design, DesignFolder) and isinstance(design.plan, Design)
    assert design.plan.folds == 10 and design.plan.seeding == "shared"  # made before per-partition seeds
    assert len(design.partitions) == 10 and len(design.run_folders) == 10 == len(design.manifests())
    assert all(isinstance(m, Manifest) for m in design.manifests())
    scores, left_out = design.scores()
    assert not left_out and set(scores["partition"]) == {f"r0f{i}" for i in range(10)}
    assert set(scores["train_size"].astype(str)) == {"50", "100", "200", "500", "1000", "all"}

    benchmark = open_folder(RESULTS / "cross_corpus")
    assert isinstance(benchmark, BenchmarkFolder) and isinstance(benchmark.plan, BenchmarkPlan)
    assert benchmark.manifests() == [] and benchmark.started == [], "its corpora's folders hold the manifests"
    corpora = [benchmark.corpus(entry) for entry in benchmark.plan.corpora]
    assert corpora and all(isinstance(c, DesignFolder) for c in corpora)
    assert scores_table(RESULTS / "cross_corpus")[0].empty, "a benchmark's own folder holds no scores"

    split = open_folder(RESULTS / "serving")
    assert isinstance(split, SplitFolder) and split.run_folders == [split] and split.started == [split.path]
    assert isinstance(split.plan, Manifest) and not split.scores()[0].empty
    assert as_opened(split) is split and isinstance(as_opened(RESULTS / "serving"), SplitFolder)


def test_a_folder_that_is_no_run_folder_opens_as_none(tmp_path):
    assert open_folder(tmp_path) is None and open_folder(tmp_path / "absent") is None
    assert as_opened(tmp_path) is None
    (tmp_path / "design.json").write_text('{"folds": 2, "repeats": 1, "partitions": []}')
    opened = open_folder(tmp_path)
    assert isinstance(opened, DesignFolder) and opened.run_folders == [] and opened.scores()[0].empty
