"""comparisons/run_folder/open_folder.py, the one place that decides what a folder is: the committed folders each open
as their kind with their plan record, run folders and scores; folders built here file by file show which plan file
decides, which partitions a design reads, how a benchmark opens its corpora, and that a folder that is none of them
opens as None (open_folder itself does not raise: `report --out` refuses such a folder in one line)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from common.errors import UserInputError
from comparisons.rebuild import rebuild_reports
from comparisons.run_folder.names import PARTITIONS, RUNS
from comparisons.run_folder.open_folder import (BenchmarkFolder, DesignFolder, SplitFolder, as_opened, open_folder,
                                               scores_table)
from comparisons.run_folder.records import BenchmarkPlan, Design, Manifest
from comparisons.run_folder.scores import SCORE_COLUMNS
from comparisons.run_folder.writers import write_benchmark_plan, write_design, write_manifest, write_splits

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


def test_the_records_type_what_the_pages_read_and_an_older_file_reads_as_its_defaults():
    import json

    folder = RESULTS / "reference" / "partitions" / "r0f0"
    manifest, raw = Manifest.read(folder), json.loads((folder / "manifest.json").read_text())
    assert (manifest.created, manifest.git_commit, manifest.command) == (raw["created"], raw["git_commit"], raw["command"])
    assert manifest.versions == raw["versions"] and manifest.thread_environment == raw["thread_environment"]
    assert manifest.precision_requested == raw["precision_requested"] and manifest.numerics == raw["numerics"]
    older = Manifest.read(RESULTS / "serving")  # written before precision and numerics were recorded
    assert "numerics" not in older and (older.precision_requested, older.numerics) == ("fp32", None)
    old = Manifest.from_dict({})  # a folder written before these keys: what the pages show for them
    assert (old.created, old.versions, old.thread_environment, old.numerics) == (None, {}, {}, None)
    assert old.precision_requested == "fp32" and old.train_sizes == [None]

    power = Design.read(RESULTS / "learning_curve_powered").power_plan
    recorded = json.loads((RESULTS / "learning_curve_powered" / "design.json").read_text())["power_plan"]
    assert (power.folds, power.draws, power.family) == (recorded["proposal"]["folds"], recorded["proposal"]["draws"],
                                                        recorded["family"]) and power.folds == 10
    assert power.expected == recorded["expected"] and power.met == recorded["proposal"]["met"]
    assert Design.read(RESULTS / "reference").power_plan is None

    benchmark = BenchmarkPlan.read(RESULTS / "cross_corpus")
    assert (benchmark.folds, benchmark.repeats, benchmark.limit_total) == (5, 1, 4000)


def test_a_folder_that_is_no_run_folder_opens_as_none(tmp_path):
    assert open_folder(tmp_path) is None and open_folder(tmp_path / "absent") is None
    assert as_opened(tmp_path) is None
    (tmp_path / "design.json").write_text('{"folds": 2, "repeats": 1, "partitions": []}')
    opened = open_folder(tmp_path)
    assert isinstance(opened, DesignFolder) and opened.run_folders == [] and opened.scores()[0].empty


def test_the_plan_file_alone_tells_the_kind_benchmark_before_design_before_manifest(tmp_path):
    """Built file by file: a manifest makes a split; a design.json written into the same folder (a folder reused for
    a design after a single split keeps its manifest.json) makes it a design; a benchmark.json a benchmark. A folder
    holding a split and runs but no plan file was never started: None."""
    folder = tmp_path / "reused"
    write_manifest(folder, {"variants": ["tfidf_logreg"], "seeds": [0]})
    split = open_folder(folder)
    assert isinstance(split, SplitFolder) and isinstance(split.plan, Manifest)
    assert split.plan.variants == ["tfidf_logreg"] and split.manifests() == [split.plan]
    scores, left_out = split.scores()
    assert scores.empty and left_out == [], "no splits.json yet: nothing to read"
    write_design(folder, {"folds": 2, "repeats": 1, "partitions": []})
    assert isinstance(open_folder(folder), DesignFolder)
    write_benchmark_plan(folder, {"corpora": []})
    assert isinstance(open_folder(folder), BenchmarkFolder)

    unplanned = tmp_path / "unplanned"
    write_splits(unplanned, {})
    (unplanned / RUNS).mkdir()
    assert open_folder(unplanned) is None
    scores, left_out = scores_table(unplanned)
    assert scores.empty and list(scores.columns) == list(SCORE_COLUMNS) and left_out == []
    with pytest.raises(UserInputError, match=re.escape(f"{unplanned} holds no finished runs")):
        rebuild_reports(unplanned)  # `report --out`: the one line a user gets for it


def test_a_design_tells_planned_partitions_from_those_a_run_started_in(tmp_path):
    """partitions: every rRfF folder, in order; started: those holding a manifest; run_folders: those holding a
    split too, the only ones the scores table reads (a partition whose split is not drawn yet has nothing to read)."""
    write_design(tmp_path, {"folds": 2, "repeats": 2, "partitions": []})
    partitions = tmp_path / PARTITIONS
    write_manifest(partitions / "r0f1", {"variants": ["torch_scratch"]})  # planned, its split not drawn yet
    write_manifest(partitions / "r0f0", {"variants": ["tfidf_logreg"]})
    write_splits(partitions / "r0f0", {})
    (partitions / "r1f0").mkdir()  # not planned yet
    (partitions / "notes").mkdir()  # not a partition
    design = open_folder(tmp_path)
    assert isinstance(design, DesignFolder) and design.plan is design.design and design.plan.repeats == 2
    assert [p.name for p in design.partitions] == ["r0f0", "r0f1", "r1f0"]
    assert [p.name for p in design.started] == ["r0f0", "r0f1"]
    assert [f.path.name for f in design.run_folders] == ["r0f0"]
    assert [m.variants for m in design.manifests()] == [["tfidf_logreg"], ["torch_scratch"]]
    scores, left_out = design.scores()
    assert scores.empty and list(scores.columns) == list(SCORE_COLUMNS) and left_out == []


def test_a_benchmark_opens_each_corpus_as_its_kind_and_a_skipped_one_as_none(tmp_path):
    write_benchmark_plan(tmp_path, {"corpora": [
        {"corpus": "sms", "folder": "sms", "status": "ok"},
        {"corpus": "tweets", "folder": "tweets", "status": "ok"},
        {"corpus": "bbc-news", "folder": "bbc-news", "status": "skipped"},
        {"corpus": "nested", "folder": "nested", "status": "ok"},
    ]})
    write_design(tmp_path / "sms", {"folds": 2, "repeats": 1, "partitions": []})
    write_manifest(tmp_path / "tweets", {"variants": ["tfidf_logreg"]})
    write_benchmark_plan(tmp_path / "nested", {"corpora": []})
    benchmark = open_folder(tmp_path)
    assert isinstance(benchmark, BenchmarkFolder) and benchmark.manifests() == []
    assert benchmark.plan.folders == ["sms", "tweets", "bbc-news", "nested"]
    corpora = {entry["corpus"]: benchmark.corpus(entry) for entry in benchmark.plan.corpora}
    assert isinstance(corpora["sms"], DesignFolder) and corpora["sms"].path == tmp_path / "sms"
    assert isinstance(corpora["tweets"], SplitFolder) and corpora["tweets"].path == tmp_path / "tweets"
    assert corpora["bbc-news"] is None, "a skipped corpus has no folder"
    assert corpora["nested"] is None, "a benchmark's folder is not a corpus"
