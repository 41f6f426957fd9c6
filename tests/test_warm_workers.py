"""Warm workers: a quality-only design keeps one worker process per backend; its runs give the
records and predictions a fresh process a run gives, and a run that does not finish (a crash, a time limit) is the
same failed row and ends its process, so the next run of that backend starts a fresh one."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

from comparisons.run.warm import WarmPool
from tests.test_cli import run_cli
from tests.test_executors import small_spec_and_inputs

SMALL = ["--profile", "tiny", "--limit-per-class", "40", "--threads", "1", "--quality-only", "--seeds", "2"]
SAME = ["status", "accuracy", "macro_f1", "average_precision", "threshold", "confusion_matrix", "params_total",
        "valid_average_precision", "epochs_run"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def records(folder: Path) -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in sorted((folder / "runs").glob("*.json"))}


def test_warm_workers_give_a_fresh_workers_records_and_predictions(tmp_path):
    """The Keras encoder (a framework with global seed state), two seeds: the warm design's second run reuses the
    process, and every figure and prediction equals the fresh design's. (torch_scratch and the MiniLM seed torch
    inside fit as Keras does; the Ray test compares a warm local run of torch_scratch; TF-IDF's warm runs are the
    pool's test below.)"""
    plan = ["run", "--backends", "keras_layers", *SMALL]
    warm = run_cli(*plan, "--out", str(tmp_path / "warm"))
    assert warm.returncode == 0, warm.stderr[-3000:]
    fresh = run_cli(*plan, "--fresh-workers", "--out", str(tmp_path / "fresh"))
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    warm_runs, fresh_runs = records(tmp_path / "warm"), records(tmp_path / "fresh")
    assert sorted(warm_runs) == sorted(fresh_runs) and len(warm_runs) == 2
    for name, record in warm_runs.items():
        assert {k: record.get(k) for k in SAME} == {k: fresh_runs[name].get(k) for k in SAME}, name
        assert fresh_runs[name]["worker_run_number"] == 1, name
        with np.load(tmp_path / "warm" / "predictions" / f"{name}.npz") as a, \
                np.load(tmp_path / "fresh" / "predictions" / f"{name}.npz") as b:
            assert (a["test"] == b["test"]).all() and (a["proba"] == b["proba"]).all(), name
        assert f"{name}: done" in (tmp_path / "warm" / "logs" / f"{name}.log").read_text()
    first, second = warm_runs["keras_layers__seed0"], warm_runs["keras_layers__seed1"]
    assert (first["worker_run_number"], second["worker_run_number"]) == (1, 2)
    assert first["worker_pid"] == second["worker_pid"]
    assert fresh_runs["keras_layers__seed0"]["worker_pid"] != fresh_runs["keras_layers__seed1"]["worker_pid"]
    again = run_cli(*plan, "--out", str(tmp_path / "warm"))  # resume: every run kept, none rerun
    assert again.returncode == 0 and again.stderr.count("finished earlier, kept") == 2, again.stderr[-2000:]
    assert not any(alive(record["worker_pid"]) for record in warm_runs.values())  # the orchestrator ended them


def test_a_crashed_or_timed_out_warm_run_is_a_failed_row_and_the_next_run_gets_a_fresh_process(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPARISONS_FAULT", "tfidf_logreg@0:crash,tfidf_logreg@2:hang")
    pool = WarmPool()
    try:
        results = []
        for seed in range(4):
            # the hung run (seed 2, in a warm process) waits out its limit: a short one; the others may start fresh
            spec, inputs = small_spec_and_inputs(seed=seed, timeout_s=4.0 if seed == 2 else 60.0)
            results.append(pool.run_worker(tmp_path, spec, inputs.to_json_bytes()))
    finally:
        pool.close()
    crashed, after_crash, hung, after_hang = results
    assert crashed["status"] == "failed" and crashed["reason"] == "worker died with SIGABRT"
    assert after_crash["status"] == "ok" and after_crash["worker_run_number"] == 1
    assert hung["status"] == "failed" and hung["reason"] == "time limit of 4 s exceeded"
    assert after_hang["status"] == "ok" and after_hang["worker_run_number"] == 1
    assert after_hang["worker_pid"] != after_crash["worker_pid"]
    # the pool hands records back and writes none: the executor writes each once; no staged record is left
    assert not list((tmp_path / "runs").glob("*")) and (tmp_path / "predictions" / "tfidf_logreg__seed1.npz").exists()
    assert not alive(after_hang["worker_pid"])  # closed with the pool


@pytest.mark.parametrize("fault", ["unusable_validation"])
def test_a_warm_run_that_fails_quotes_the_workers_last_line_and_ends_its_process(tmp_path, monkeypatch, fault):
    monkeypatch.setenv("COMPARISONS_FAULT", f"tfidf_logreg@0:{fault}")
    pool = WarmPool()
    try:
        spec, inputs = small_spec_and_inputs(seed=0)
        failed = pool.run_worker(tmp_path, spec, inputs.to_json_bytes())
        assert not pool.workers  # ended: the next run starts a fresh process
        spec, inputs = small_spec_and_inputs(seed=1)
        ok = pool.run_worker(tmp_path, spec, inputs.to_json_bytes())
    finally:
        pool.close()
    assert failed["status"] == "failed" and failed["reason"].startswith("no epoch had a finite validation score")
    assert ok["status"] == "ok" and ok["worker_run_number"] == 1


def test_idle_warm_workers_are_not_counted_as_sharing_the_node(monkeypatch):
    import time

    import comparisons.run.executors as executors

    monkeypatch.setattr(executors, "worker_processes", lambda: 4)  # the running worker and 3 idle ones
    with executors.SharingMonitor(interval_s=0.01, idle=3) as alone:
        time.sleep(0.1)
    with executors.SharingMonitor(interval_s=0.01, idle=2) as shared:  # one more process than the pool's
        time.sleep(0.1)
    assert alone.fields() == {"runs_sharing_node": 1, "timings_shared": False}
    assert shared.fields() == {"runs_sharing_node": 2, "timings_shared": True}
