"""Run-folder outputs: atomic writes, rounded JSON, tables; which runs a report may compare
(comparisons/comparability.py); verdicts recomputed from the predictions alone."""
import json

import numpy as np
import pandas as pd

from comparisons.comparability import differences
from comparisons.run_folder import select_runs
from comparisons.outputs import atomic_write_json, write_table
from comparisons.stats.bootstrap import PAIR_COLUMNS, PAIR_METRICS
from tests.test_cli import ROOT, SMALL, assert_no_raw_text, run_main


def test_json_is_rounded_even_for_numpy_values(tmp_path):
    path = atomic_write_json(tmp_path / "a.json", {"x": np.float32(0.0573829710483551),
                                                   "m": np.array([[0.12345678901, 2.0]]), "n": 3})
    assert json.loads(path.read_text()) == {"x": 0.057383, "m": [[0.123457, 2.0]], "n": 3}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left behind
    # the mode open() gives under this umask, not the temporary file's 0600 (reports others could not read)
    from comparisons.outputs import _UMASK

    assert path.stat().st_mode & 0o777 == 0o666 & ~_UMASK
    plain = tmp_path / "plain"
    plain.write_text("x")
    assert path.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777


def test_tables_are_written_as_csv_markdown_and_html(tmp_path):
    paths = write_table(pd.DataFrame({"a": [1.23456789], "b": ["x"]}), tmp_path, "t", title="T", html=True)
    assert sorted(p.name for p in paths) == ["t.csv", "t.html", "t.md"]
    assert "1.2346" in (tmp_path / "t.md").read_text() and "<table" in (tmp_path / "t.html").read_text()


# -- which runs may be compared (comparisons/comparability.py) --------------------------------
PLAN = {"profile": "fast", "threads": 2, "device": "auto", "hf_model": None, "variants": {"tfidf_logreg": {}},
        "seeds": [0, 1], "split": {"sha256": "s" * 64}, "data": {"sha256": "d" * 64},
        "code_commit": "c" * 40, "code_dirty": False, "code_sha256": "h" * 64, "versions": {"numpy": "2.4.6"},
        "precision": {"tfidf_logreg": "fp32"},
        "numerics": {"digest": "n" * 16}}


def record(**changes):
    base = {"variant": "tfidf_logreg", "seed": 0, "status": "ok", "profile": "fast",
            "threads": {"threads": 2, "OMP_NUM_THREADS": "2"}, "device_requested": "auto", "hf_model": None,
            "split_sha256": "s" * 64, "data_sha256": "d" * 64, "code_commit": "c" * 40, "code_dirty": False,
            "code_sha256": "h" * 64, "versions": {"numpy": "2.4.6"}, "precision": "fp32",
            "numerics_digest": "n" * 16}
    return {**base, **changes}


def test_runs_of_another_profile_split_threads_code_or_seed_are_left_out_with_their_reason():
    runs = [record(), record(seed=1, profile="tiny"), record(seed=1, split_sha256="x" * 64),
            record(seed=1, threads={"threads": 4}), record(seed=1, code_sha256="e" * 64), record(seed=7),
            record(code_commit="f" * 40, code_dirty=True),  # other commit, same code: comparable
            record(seed=1, versions={"numpy": "1.0"}), record(variant="keras_layers")]
    kept, left_out = select_runs(runs, PLAN)
    assert kept == [runs[0], runs[6]]
    assert left_out == ["tfidf_logreg__seed1 (profile tiny, plan fast)",
                        "tfidf_logreg__seed1 (split xxxxxxxxxxxx, plan ssssssssssss)",
                        "tfidf_logreg__seed1 (threads 4, plan 2)", "tfidf_logreg__seed1 (code eeeeeeeeeeee, plan hhhhhhhhhhhh)",
                        "tfidf_logreg__seed7 (seed not in the plan)", "tfidf_logreg__seed1 (library versions)",
                        "keras_layers__seed0 (variant not in the plan)"]


def test_resume_needs_every_identity_field_but_report_judges_older_records_on_what_they_carry():
    old = {k: v for k, v in record().items() if k not in ("code_sha256", "versions", "device_requested", "numerics_digest")}
    assert differences(record(), PLAN) == []
    assert differences(old, PLAN, strict=True) == ["device not recorded", "code not recorded",
                                                    "library versions not recorded", "numerics not recorded"]
    assert differences(old, PLAN, strict=False) == [] and select_runs([old], PLAN)[0] == [old]


def test_report_leaves_out_runs_of_another_thread_count_and_run_reruns_them(tmp_path, capfd):
    out = tmp_path / "run"
    quick = ["--profile", "tiny", "--quality-only"]  # no cost column is read here
    first = run_main(capfd, "run", "--backends", "tfidf_logreg", "--seeds", "2", *SMALL, "--threads", "1", *quick,
                     "--out", str(out))
    assert first.returncode == 0, first.stderr
    changed = out / "runs" / "tfidf_logreg__seed1.json"
    changed.write_text(json.dumps({**json.loads(changed.read_text()), "threads": {"threads": 4}}))
    report = run_main(capfd, "report", "--out", str(out))
    assert report.returncode == 0, report.stderr
    lines = [line for line in report.stderr.splitlines() if "left out" in line]
    assert lines == ["report: left out 1 run(s) not comparable with this folder's plan: "
                     "tfidf_logreg__seed1 (threads 4, plan 1)"]
    assert list(pd.read_csv(out / "summary.csv")["seed"]) == [0]
    assert pd.read_csv(out / "aggregate.csv").loc[0, "seeds"] == 1
    planned = json.loads((out / "manifest.json").read_text())
    again = run_main(capfd, "run", "--backends", "tfidf_logreg", "--seeds", "2", *SMALL, "--threads", "1", *quick,
                     "--out", str(out))
    assert again.returncode == 0, again.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["code_sha256"] == planned["code_sha256"]
    assert "tfidf_logreg__seed0: finished earlier, kept" in again.stderr
    assert "tfidf_logreg__seed1: finished earlier" not in again.stderr and "left out" not in again.stderr
    assert json.loads(changed.read_text())["threads"]["threads"] == 1
    assert manifest["command"].startswith("python -m comparisons run ") and str(ROOT) not in manifest["command"]
    assert {"code_commit", "code_dirty", "code_sha256", "versions"} <= set(manifest)


def test_report_recomputes_verdicts_from_the_predictions_alone(tmp_path, capfd):
    """verdicts.csv from predictions/*.npz + thresholds in the run records: a copied folder, figures and all."""
    out = tmp_path / "run"
    assert run_main(capfd, "run", "--backends", "tfidf_logreg:seed", "--seeds", "1", *SMALL, "--profile", "tiny",
                    "--quality-only", "--out", str(out)).returncode == 0
    record_path = out / "runs" / "tfidf_logreg-seed__seed0.json"
    twin = json.loads(record_path.read_text())
    twin["variant"] = "torch_scratch"  # a second "variant" with the very same predictions
    (out / "runs" / "torch_scratch__seed0.json").write_text(json.dumps(twin))
    (out / "predictions" / "torch_scratch__seed0.npz").write_bytes((out / "predictions" / "tfidf_logreg-seed__seed0.npz").read_bytes())
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["variants"]["torch_scratch"] = {"backend": "torch_scratch", "params": {}}
    (out / "manifest.json").write_text(json.dumps(manifest))
    for name in ("verdicts.csv", "verdicts.md", "summary.csv"):
        (out / name).unlink(missing_ok=True)
    assert run_main(capfd, "report", "--out", str(out), "--lang", "zh").returncode == 0
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert list(verdicts.columns) == list(PAIR_COLUMNS) and len(verdicts) == len(PAIR_METRICS)
    assert (verdicts["difference"] == 0).all() and (verdicts["p_value"] == 1).all()
    assert set(verdicts["verdict"]) == {"equivalent"}, "identical predictions: no gap, no spread"
    assert set(pd.read_csv(out / "zh" / "verdicts.csv")["verdict"]) == {"在容差内等价"}
    assert "torch_scratch − tfidf_logreg:seed" in (out / "verdicts.md").read_text()
    assert (out / "figures" / "forest.png").stat().st_size > 5000 and (out / "zh" / "verdicts.md").exists()
    aggregate = pd.read_csv(out / "aggregate.csv")
    assert (aggregate["average_precision_ci_low"] < aggregate["average_precision_mean"]).all()
    summary = pd.read_csv(out / "summary.csv")
    assert (summary["average_precision_ci_low"] < summary["average_precision"]).all()
    assert_no_raw_text(out)
