"""`python -m comparisons reproduce` on a tiny committed-style design (TF-IDF at --profile tiny, 2 partitions):
an exact rerun passes; a rerun under other kernels is rerun (resume on another numerics identity), reports its
differences and the verdicts' stability; a tampered committed figure is reported; bad input is refused."""
import json

import pandas as pd
import pytest

from comparisons.numerics import note_design_identities
from tests.test_cli import run_cli

PLAN = ["--backends", "tfidf_logreg", "--profile", "tiny", "--limit-per-class", "40", "--threads", "1", "--cv", "2"]
OTHER_KERNELS = {"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    """A committed-style design: TF-IDF on 2 partitions, plus two recorded 'twins' (TF-IDF's records moved by
    +0.01 and +0.01 +- 0.002) so that the folder holds verdicts and a twins' spread."""
    out = tmp_path_factory.mktemp("reproduce") / "committed"
    made = run_cli("run", *PLAN, "--quality-only", "--out", str(out))  # the reruns are quality only too
    assert made.returncode == 0, made.stderr
    for number, name in enumerate(("r0f0", "r0f1")):
        runs = out / "partitions" / name / "runs"
        record = json.loads((runs / f"tfidf_logreg__seed{number}.json").read_text())  # each partition its own seed
        for twin, shift in (("torch_scratch", 0.01), ("keras_layers", 0.01 + (0.002 if number else -0.002))):
            moved = {**record, "variant": twin, "average_precision": record["average_precision"] + shift}
            (runs / f"{twin}__seed{number}.json").write_text(json.dumps(moved))
        manifest = out / "partitions" / name / "manifest.json"  # the twins are of the plan, as if run
        plan = json.loads(manifest.read_text())
        plan["variants"].update({twin: {"backend": twin, "params": {}} for twin in ("torch_scratch", "keras_layers")})
        manifest.write_text(json.dumps(plan))
    design = json.loads((out / "design.json").read_text())
    (out / "design.json").write_text(json.dumps({**design, "variants": ["tfidf_logreg", "torch_scratch", "keras_layers"]}))
    return out


def test_an_exact_rerun_passes_other_kernels_rerun_and_a_tampered_figure_is_reported(committed, tmp_path, monkeypatch):
    fresh = tmp_path / "fresh"
    exact = run_cli("reproduce", "--from", str(committed), "--out", str(fresh), "--backends", "tfidf_logreg")
    assert exact.returncode == 0, exact.stderr
    runs = pd.read_csv(fresh / "reproduce.csv")
    assert list(runs["partition"]) == ["r0f0", "r0f1"] and set(runs["identity"]) == {"same"}
    assert set(runs["status"]) == {"exact"} and (runs["difference_average_precision"] == 0).all()
    page = (fresh / "reproduce.md").read_text()
    assert "same numerics identity: 2 of 2 run(s) reproduced to 1e-6" in page
    assert "twins' (torch_scratch - keras_layers) per-partition differences over 2 partitions" in page
    # 3 pairs x 5 metrics: AP, macro-F1 and accuracy at the threshold, and (recorded by the worker;
    # the twins copy TF-IDF's record, so they carry them too) Brier and ECE
    assert "verdicts: 15 of 15 stand with the rerun figures" in page
    record = json.loads((fresh / "partitions" / "r0f0" / "runs" / "tfidf_logreg__seed0.json").read_text())
    assert "latency_ms_b1_p50" not in record and record["numerics"]["observed"]["thread_pools"] is not None
    # the verdicts are recomputed with the rerun's figures in place of the committed ones
    import comparisons.reproduce as reproduce
    from comparisons.report.partition_reports import partition_scores

    seen, original = [], reproduce.folder_verdicts
    monkeypatch.setattr(reproduce, "folder_verdicts", lambda folder: seen.append(partition_scores(folder)) or original(folder))
    rerun_path = fresh / "partitions" / "r0f0" / "runs" / "tfidf_logreg__seed0.json"
    rerun_path.write_text(json.dumps({**record, "average_precision": 0.25}))
    reproduce.substituted_verdicts(reproduce.read_committed(committed, "tfidf_logreg", None), fresh)
    rerun_path.write_text(json.dumps(record))
    picked = [scores.query("partition == 'r0f0' and variant == 'tfidf_logreg'")["average_precision"].tolist() for scores in seen]
    assert picked == [[record["average_precision"]], [0.25]]  # the committed folder, then the overlay

    # other kernels: the runs are made again (another numerics identity), and the report says what moved
    other = run_cli("reproduce", "--from", str(committed), "--out", str(fresh), "--backends", "tfidf_logreg",
                    "--partitions", "r0f0", env=OTHER_KERNELS)
    assert other.returncode == 0, other.stderr
    assert "finished earlier, kept" not in other.stderr
    runs = pd.read_csv(fresh / "reproduce.csv")
    assert list(runs["partition"]) == ["r0f0"] and list(runs["identity"]) == ["differs"]
    assert runs["status"][0] in ("exact", "differs (another numerics identity)")
    page = (fresh / "reproduce.md").read_text()
    assert "another or unknown numerics identity" in page and "ONEDNN_MAX_CPU_ISA=AVX2" in page
    assert "stand with the rerun figures" in page and "| stands |" in page
    rerun = json.loads((fresh / "partitions" / "r0f0" / "runs" / "tfidf_logreg__seed0.json").read_text())
    assert rerun["numerics"]["kernel_variables"]["MKL_CBWR"] == "COMPATIBLE"
    assert rerun["numerics_digest"] != record["numerics_digest"]
    # the fresh folder now mixes identities (r0f0 under other kernels, r0f1 not): its design says so
    assert "mix 2 numerics identities" in note_design_identities(fresh)
    assert json.loads((fresh / "design.json").read_text())["numerics_runs"]["mixed"] is True

    # a tampered committed figure: the rerun (same identity again, so r0f0 is made once more) says so, exit 1
    path = committed / "partitions" / "r0f0" / "runs" / "tfidf_logreg__seed0.json"
    original = path.read_text()
    path.write_text(json.dumps({**json.loads(original), "average_precision": 0.5}))
    try:
        tampered = run_cli("reproduce", "--from", str(committed), "--out", str(fresh), "--backends", "tfidf_logreg")
    finally:
        path.write_text(original)
    assert tampered.returncode == 1, tampered.stderr
    assert "NOT REPRODUCED: r0f0/tfidf_logreg__seed0" in tampered.stderr
    assert tampered.stderr.count("finished earlier, kept") == 1  # r0f1 kept; r0f0 rerun under the default kernels
    runs = pd.read_csv(fresh / "reproduce.csv").set_index("partition")
    assert runs.loc["r0f0", "status"].startswith("NOT REPRODUCED: same numerics identity")
    assert runs.loc["r0f0", "committed_average_precision"] == 0.5 and runs.loc["r0f1", "status"] == "exact"


def test_a_report_of_runs_under_two_identities_says_so(committed, tmp_path):
    import shutil

    folder = tmp_path / "mixed"
    shutil.copytree(committed, folder)
    path = folder / "partitions" / "r0f1" / "runs" / "tfidf_logreg__seed1.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "numerics_digest": "another000000000"}))
    report = run_cli("report", "--out", str(folder))
    assert report.returncode == 0, report.stderr
    assert "mix 2 numerics identities" in report.stderr
    assert json.loads((folder / "design.json").read_text())["numerics_runs"]["mixed"] is True
    assert "mix 2 numerics identities" in (folder / "report.html").read_text()


def test_bad_input_is_one_line_exit_2_and_writes_nothing(committed, tmp_path, capsys):
    from comparisons.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    for source, extra, words in ((empty, [], "is not a run folder or design"),
                                 (committed, ["--backends", "nope"], "unknown variant nope"),
                                 (committed, ["--partitions", "r9f9"], "unknown partition r9f9"),
                                 (committed / "partitions" / "r0f0", ["--partitions", "r0f0"], "needs a --cv design"),
                                 (committed, ["--out", str(committed / "inside")], "inside the committed folder")):
        before = sorted(p.name for p in committed.rglob("*"))
        fresh = tmp_path / "fresh"
        code = main(["reproduce", "--from", str(source), "--out", str(fresh), *extra])
        stderr = capsys.readouterr().err
        assert code == 2 and words in stderr, stderr
        assert len(stderr.strip().splitlines()) == 1
        assert not fresh.exists() and sorted(p.name for p in committed.rglob("*")) == before
