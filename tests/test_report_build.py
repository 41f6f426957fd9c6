"""comparisons/report/build.py: the one place a folder's kind chooses its report, and each kind's answers (its report
read from the committed folders as written, what a folder not reported yet lacks, nothing written without runs)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from comparisons.report.build import build, read, report_kind, unwritten
from comparisons.report.cross_corpus import BenchmarkReport
from comparisons.report.design_report import DesignReport
from comparisons.report.split_report import SplitReport
from comparisons.run_folder.open_folder import open_folder

RESULTS = Path(__file__).resolve().parent.parent / "results"
KINDS = [("reference", DesignReport), ("learning_curve", DesignReport), ("learning_curve_powered", DesignReport),
         ("learning_curve_seeded", DesignReport), ("sequential_tweets", DesignReport), ("precision/bf16", DesignReport),
         ("precision/fp32", DesignReport), ("recipe_audit/curve_small", DesignReport), ("serving", SplitReport),
         ("single_split_bc0aeaf", SplitReport), ("cross_corpus", BenchmarkReport),
         ("cross_corpus_preview", BenchmarkReport)]  # every committed run folder


@pytest.mark.parametrize("name, kind", KINDS)
def test_a_committed_folder_is_read_as_its_kind_s_report(name, kind):
    folder = RESULTS / name
    opened = open_folder(folder)
    assert report_kind(opened) is kind
    assert unwritten(opened, folder) is None, "a committed folder holds every table its page reads"
    report = read(folder)
    assert type(report) is kind and report.path == folder
    assert report.files.made == {} and report.write() == [], "a report read from its folder writes nothing"


@pytest.mark.parametrize("name, plan_file, says", [
    ("reference", "design.json", "holds no recipe verdicts yet; run `python -m comparisons report --out"),
    ("learning_curve", "design.json", "holds no learning-curve table yet; run `python -m comparisons report --out"),
    ("cross_corpus", "benchmark.json", "holds no cross-corpus table yet; run `python -m comparisons report --out"),
    ("single_split_bc0aeaf", "manifest.json", "holds no finished runs; run `python -m comparisons run --out"),
])
def test_a_folder_not_reported_yet_says_what_it_lacks_in_one_line(tmp_path, name, plan_file, says):
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(RESULTS / name / plan_file, folder / plan_file)  # the plan alone: nothing run or reported
    found = unwritten(open_folder(folder), folder)
    assert found == f"{folder} {says} {folder}" + ("` first" if "run --out" in says else "`")
    assert "\n" not in found


def test_no_report_without_finished_runs_and_nothing_written(tmp_path):
    assert report_kind(open_folder(tmp_path)) is None
    assert build(tmp_path) is None and read(tmp_path) is None
    assert unwritten(open_folder(tmp_path), tmp_path) == (
        f"{tmp_path} holds no finished runs; run `python -m comparisons run --out {tmp_path}` first")
    assert not list(tmp_path.iterdir())
    for name, plan_file in (("single_split_bc0aeaf", "manifest.json"), ("reference", "design.json")):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(RESULTS / name / plan_file, folder / plan_file)
        assert build(folder, ["zh"]) is None, name
        assert [p.name for p in folder.iterdir()] == [plan_file], f"{name}: a table written without runs"


def _files(folder: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("name", ["reference", "single_split_bc0aeaf"])
def test_build_writes_nothing_and_write_writes_what_it_made_which_read_reads_back(tmp_path, name):
    folder = tmp_path / name
    shutil.copytree(RESULTS / name, folder)
    for path in list(folder.rglob("report.html")):
        path.unlink()  # the pages are drawn later, from the report
    before = _files(folder)
    report = build(folder, ["zh"])
    assert _files(folder) == before, "build wrote a file"
    made = report.files.made
    assert made and all(path.is_relative_to(folder) for path in made)
    assert report.write() == list(made)
    assert {path: path.read_bytes() for path in made} == made, "write wrote other bytes than build made"
    assert report_kind(open_folder(folder)) is type(report)
    again = read(folder)
    assert again.files.made == {} and again.write() == [], "a report read from its folder writes nothing"
    tables = ("variants", "pairs", "long") if name == "reference" else ("aggregate", "summary", "verdicts")
    for table in tables:  # the report read back from the folder is the one built in memory
        pd.testing.assert_frame_equal(getattr(again, table), getattr(report, table), obj=table)


@pytest.mark.parametrize("name", ["learning_curve", "cross_corpus"])
def test_drawing_a_page_writes_no_table(tmp_path, name):
    """`python -m comparisons.report.page` reads the report and draws: its pages and their figures change, no table
    (no .csv, .md or .json) is written."""
    from comparisons.report.page import main as page

    folder = tmp_path / name
    shutil.copytree(RESULTS / name, folder)
    def stamps():
        return {path: path.stat().st_mtime_ns for path in folder.rglob("*") if path.is_file()}

    before = stamps()
    assert page(["--out", str(folder)]) == 0
    written = sorted(str(path.relative_to(folder)) for path, stamp in stamps().items() if before.get(path) != stamp)
    assert "report.html" in written and all(path.endswith((".html", ".png")) for path in written), written
