"""Run specs and executors: the spec round-trips, a worker needs only its spec and data, and the
Ray executor (a local 2-CPU instance, started once for this module) gives the local executor's
metrics, isolates failures, resumes, and leaves no worker behind on Ctrl-C."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from common.datasets import DataSpec, load
from common.errors import UserInputError
from common.splits import stratified_split
from comparisons.cli import main
from comparisons.run.executors import worker_processes
from comparisons.run.spec import RunInputs, RunSpec
from tests.test_cli import assert_no_raw_text, expected_tfidf_ap, run_cli

ROOT = Path(__file__).resolve().parent.parent
SMALL = ["--profile", "tiny", "--limit-per-class", "40", "--threads", "1", "--quality-only"]  # no cost figures asserted
METRICS = ["accuracy", "macro_f1", "average_precision", "positive_precision", "positive_recall", "threshold",
           "params_total", "params_trainable"]


def small_spec_and_inputs(**changes) -> tuple[RunSpec, RunInputs]:
    data_spec = DataSpec(limit_per_class=40)
    data = load(data_spec)
    split = stratified_split(data)
    inputs = RunInputs(data, split.to_dict())
    from common.datasets import fingerprint

    spec = RunSpec(variant="tfidf_logreg", seed=0, profile="tiny", threads=1, device="cpu", timeout_s=120.0,
                   data=data_spec, data_sha256=fingerprint(data), split_seed=split.seed, split_sha256=split.sha256)
    return RunSpec.from_dict({**spec.to_dict(), **changes}), inputs


def start_worker(spec: RunSpec, out: Path, cwd: Path, env=None) -> subprocess.Popen:
    cwd.mkdir(parents=True, exist_ok=True)
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "comparisons.run.worker", "--out", str(out), "--spec", spec.to_json()],
                            cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=environment)


# -- the run spec ---------------------------------------------------------------------------------
def test_run_spec_round_trips_through_json():
    spec = RunSpec(variant="hf_bert:full", seed=3, profile="fast", threads=4, device="cuda", timeout_s=900.0,
                   data=DataSpec(source="file", path="/data/x.tsv", dedup=True, limit_per_class=7),
                   data_sha256="d" * 64, split_seed=11, split_sha256="s" * 64, hf_model="some/model",
                   train_size=200, executor="ray")
    text = spec.to_json()
    assert json.loads(text)["data"]["path"] == "/data/x.tsv"
    again = RunSpec.from_json(text)
    assert again == spec and isinstance(again.data, DataSpec)
    assert again.name == "hf_bert-full__n200__seed3"
    with pytest.raises(UserInputError, match="unknown fields"):
        RunSpec.from_dict({**spec.to_dict(), "surprise": 1})
    with pytest.raises(UserInputError, match="incomplete"):
        RunSpec.from_dict({"variant": "tfidf_logreg", "seed": 0})


def test_worker_with_a_spec_needs_no_file_of_the_drivers(tmp_path):
    spec, inputs = small_spec_and_inputs()
    out = tmp_path / "own_output"
    worker = start_worker(spec, out, cwd=tmp_path / "elsewhere")
    log, _ = worker.communicate(inputs.to_json_bytes(), timeout=300)
    assert worker.returncode == 0, log.decode()[-2000:]
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    # the record left for the orchestrator, not runs/NAME.json: the executor writes that once
    assert written == ["predictions/tfidf_logreg__seed0.npz", "runs/tfidf_logreg__seed0.json.worker"]
    record = json.loads((out / "runs/tfidf_logreg__seed0.json.worker").read_text())
    assert record["status"] == "ok" and record["data_sha256"] == spec.data_sha256
    assert record["split_sha256"] == spec.split_sha256 and record["executor"] == "local"
    assert not list((tmp_path / "elsewhere").iterdir())

    wrong = RunSpec.from_dict({**spec.to_dict(), "split_sha256": "0" * 64})  # inputs are not what it names
    worker = start_worker(wrong, tmp_path / "wrong", cwd=tmp_path / "elsewhere")
    log, _ = worker.communicate(inputs.to_json_bytes(), timeout=300)
    assert worker.returncode == 1 and b"not the split of its run spec" in log
    assert not (tmp_path / "wrong" / "runs").exists()


def test_worker_dies_with_the_process_that_started_it(tmp_path):
    spec, inputs = small_spec_and_inputs(timeout_s=777.125)
    (tmp_path / "inputs.json").write_bytes(inputs.to_json_bytes())
    parent = subprocess.Popen(
        [sys.executable, "-c",
         "import os, subprocess, sys, time\n"
         "os.environ['COMPARISONS_PARENT_PID'] = str(os.getpid())  # as the runner does\n"
         f"child = subprocess.Popen([sys.executable, '-m', 'comparisons.run.worker', '--out', {str(tmp_path / 'o')!r},"
         f" '--spec', {spec.to_json()!r}], stdin=open({str(tmp_path / 'inputs.json')!r}, 'rb'))\n"
         "print(child.pid, flush=True)\n"
         "time.sleep(600)\n"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "COMPARISONS_FAULT": "tfidf_logreg:hang"})
    child = int(parent.stdout.readline())
    time.sleep(2)  # the worker is importing or already hanging on purpose
    assert alive(child) and worker_processes() >= 1  # the scan behind runs_sharing_node sees it
    parent.kill()  # SIGKILL: no finally, no handler runs in the parent
    parent.wait()
    assert wait_until(lambda: not alive(child), 15), "the worker outlived its parent"


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its parent's reaping is left


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.25)
    return condition()


def test_local_executor_refuses_ray_options(tmp_path, capsys):
    code = main(["run", "--backends", "tfidf_logreg", "--max-concurrent", "2", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: --ray-address and --max-concurrent need --executor ray")
    assert not (tmp_path / "o").exists()


# -- the Ray executor on a local 2-CPU instance ----------------------------------------------------
@pytest.fixture(scope="module")
def ray_address():
    ray = pytest.importorskip("ray")
    for attempt in range(3):  # on an overloaded machine the raylet may miss Ray's fixed 30 s start-up window
        try:
            context = ray.init(num_cpus=2, object_store_memory=100 * 2**20, include_dashboard=False,
                               log_to_driver=False, logging_level="WARNING")
            break
        except Exception:
            ray.shutdown()
            if attempt == 2:
                raise
    yield context.address_info["gcs_address"]
    ray.shutdown()


def ray_cli(address, *args, env=None, timeout=600):
    return run_cli("run", *args, "--executor", "ray", "--ray-address", address, env=env, timeout=timeout)


def test_same_plan_gives_the_same_metrics_under_both_executors(tmp_path, ray_address, capfd):
    """TF-IDF, the scratch encoder and an outside backend (tests/test_plugins.py's package, on the driver's
    PYTHONPATH only) under both executors. The driver's PYTHONPATH does not reach the Ray instance's workers: the
    plugin's package is uploaded (runtime_env py_modules) and resolved there, with the same identity the driver
    planned. (The outside backend was its own test and Ray driver; one plan now carries it.)"""
    from tests.test_plugins import SPEC, outside_package, run_with_package

    env = outside_package(tmp_path / "plugins")
    plan = ["--backends", f"tfidf_logreg,torch_scratch,{SPEC}", *SMALL]
    local = run_with_package(capfd, env, "run", *plan, "--out", str(tmp_path / "local"))  # in this process
    assert local.returncode == 0, local.stderr[-3000:]
    remote = ray_cli(ray_address, *plan, "--out", str(tmp_path / "ray"), env=env)
    assert remote.returncode == 0, remote.stderr[-3000:]
    rows = {name: pd.read_csv(tmp_path / name / "summary.csv").set_index("variant") for name in ("local", "ray")}
    assert list(rows["ray"].index) == ["tfidf_logreg", "torch_scratch", SPEC]
    pd.testing.assert_frame_equal(rows["local"][METRICS], rows["ray"][METRICS])
    for name in ("tfidf_logreg__seed0", "torch_scratch__seed0"):
        local_run, ray_run = (json.loads((tmp_path / f / "runs" / f"{name}.json").read_text()) for f in ("local", "ray"))
        assert (local_run["executor"], ray_run["executor"]) == ("local", "ray")
        assert local_run["confusion_matrix"] == ray_run["confusion_matrix"]
        assert ray_run["node_cpu"] and ray_run["runs_sharing_node"] >= 1
        assert ray_run["timings_shared"] == (ray_run["runs_sharing_node"] > 1)
        with np.load(tmp_path / "local" / "predictions" / f"{name}.npz") as a, \
                np.load(tmp_path / "ray" / "predictions" / f"{name}.npz") as b:
            assert (a["test"] == b["test"]).all() and np.allclose(a["proba"], b["proba"], atol=1e-6)
        log = (tmp_path / "ray" / "logs" / f"{name}.log").read_text()
        assert f"{name}: done" in log
    # the outside backend traveled to the Ray workers (was test_an_outside_backend_package_travels_to_the_ray_workers)
    record = json.loads(next((tmp_path / "ray" / "runs").glob("outside_nb*seed0.json")).read_text())
    assert record["status"] == "ok" and record["executor"] == "ray", record.get("reason")
    assert record["plugin"] == json.loads((tmp_path / "ray" / "manifest.json").read_text())["variants"][SPEC]["plugin"]
    assert_no_raw_text(tmp_path / "ray")


def looks_without_minutes(design: dict) -> list:
    return [{k: v for k, v in look.items() if k != "run_minutes"} for look in design["sequential"]["looks"]]


def test_a_sequential_design_runs_under_ray_records_its_looks_resumes_locally_and_refuses_to_mix(
        tmp_path, ray_address, capfd):
    """`run --cv K --until-decided` (comparisons/sequential_run.py) through the Ray executor: a repeat at a
    time, the looks recorded and shown, only open contrasts' variants run on; an interrupted sequence resumed by the
    same command on the local executor makes the same looks; refusals in one line."""
    from tests.test_plugins import SMALL as PLUGIN_SMALL
    from tests.test_plugins import SPEC, outside_package, run_with_package

    env = outside_package(tmp_path / "plugins")
    out = tmp_path / "sequential"
    plan = [*PLUGIN_SMALL[1:], "--cv", "3", "--until-decided", "--max-repeats", "2",
            "--backends", f"tfidf_logreg,{SPEC}", "--out", str(out)]
    first = ray_cli(ray_address, *plan, env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    design = json.loads((out / "design.json").read_text())
    sequential = design["sequential"]
    assert sequential["max_repeats"] == 2 and sequential["stopped"] and 1 <= len(sequential["looks"]) <= 2
    assert [p["name"] for p in design["partitions"]] == [f"r{r}f{f}" for r in range(2) for f in range(3)]
    for look in sequential["looks"]:  # each look ran exactly its variants on its repeat's partitions, on Ray
        for fold in range(3):
            records = [json.loads(p.read_text())
                       for p in (out / "partitions" / f"r{look['look'] - 1}f{fold}" / "runs").glob("*.json")]
            assert {r["variant"] for r in records} == set(look["variants_run"])
            assert {r["executor"] for r in records} == {"ray"} and {r["status"] for r in records} == {"ok"}
        assert [c["state"] for c in look["contrasts"]] and all(c["reason"] for c in look["contrasts"])
    ran_looks = len(sequential["looks"])
    assert f"over {3 * ran_looks} partitions" in first.stderr  # the partitions made, not the most allowed
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert verdicts["interval_method"].str.startswith("repeated confidence interval").all()
    assert (verdicts["look"] <= ran_looks).all() and verdicts["nominal_level"].lt(0.05).all()
    page = (out / "report.html").read_text()
    assert "Run until decided" in page and sequential["stopped"].split(";")[0] in page
    assert "Run until decided: the looks" in (out / "verdicts.md").read_text()

    # an interruption mid-sequence: a run of each look lost; the same command, on the local executor, resumes the
    # same sequence, each look decided on its own repeats only (a later look's runs on disk must not leak into it)
    for look in sequential["looks"]:
        next(iter(sorted((out / "partitions" / f"r{look['look'] - 1}f2" / "runs").glob("*.json")))).unlink()
    again = run_with_package(capfd, env, "run", *plan)
    assert again.returncode == 0, again.stderr[-3000:]
    made = sum(3 * len(look["variants_run"]) for look in sequential["looks"])
    assert again.stderr.count("finished earlier, kept") == made - ran_looks
    assert looks_without_minutes(json.loads((out / "design.json").read_text())) == looks_without_minutes(design)

    # a sequential folder is not a fixed design's, and the options refuse what they do not belong to
    fixed = run_with_package(capfd, env, *PLUGIN_SMALL, "--cv", "3", "--repeats", "2",
                             "--backends", f"tfidf_logreg,{SPEC}", "--out", str(out))
    assert fixed.returncode == 2 and "holds a sequential design" in fixed.stderr and "Traceback" not in fixed.stderr
    for extra, words in ((["--until-decided", "--repeats", "2"], "instead of --repeats"),
                         (["--max-repeats", "4"], "add --until-decided"),
                         (["--until-decided", "--budget-minutes", "0"], "positive number of minutes")):
        refused = run_with_package(capfd, env, *PLUGIN_SMALL, "--cv", "3", *extra, "--backends", "tfidf_logreg",
                                   "--out", str(tmp_path / "never"))
        assert refused.returncode == 2 and words in refused.stderr, refused.stderr[-500:]
        assert not (tmp_path / "never").exists()


def test_a_crashing_task_and_a_dead_ray_worker_are_failed_rows_the_others_complete_and_rerun_resumes(
        tmp_path, ray_address):
    """One plan of 4 seeds, two kinds of failure (were two tests, each with its own Ray driver): seed 0's worker
    crashes (SIGABRT); seed 1's hangs and its Ray worker is killed, as a dead node or Ray's memory monitor would,
    and takes its worker subprocess with it; seeds 2 and 3 complete. Rerun, the failed seeds run again and the
    finished ones are kept byte for byte."""
    marker = b"400.625"  # a time limit no other test uses: it is in each of this test's worker command lines
    out = tmp_path / "run"
    plan = ["--backends", "tfidf_logreg", "--seeds", "4", *SMALL, "--timeout", marker.decode(), "--out", str(out)]
    driver = subprocess.Popen(
        [sys.executable, "-m", "comparisons", "run", *plan, "--executor", "ray", "--ray-address", ray_address],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "COMPARISONS_FAULT": "tfidf_logreg@0:crash,tfidf_logreg@1:hang"})
    done = [out / "runs" / f"tfidf_logreg__seed{seed}.json" for seed in (0, 2, 3)]
    try:
        assert wait_until(lambda: len(ours(marker)) == 1 and all(path.exists() for path in done), 300), \
            "seed 1 never hung while the others finished"
        hanging = ours(marker)[0]
        ray_worker = int(Path(f"/proc/{hanging}/stat").read_text().rsplit(")", 1)[1].split()[1])
        os.kill(ray_worker, signal.SIGKILL)  # as a dead node or Ray's memory monitor would
        _, err = driver.communicate(timeout=180)
    finally:
        driver.kill()
    assert driver.returncode == 1, err.decode()[-3000:]
    rows = pd.read_csv(out / "summary.csv").set_index("seed")
    assert rows.loc[0, "status"] == "failed" and "SIGABRT" in rows.loc[0, "reason"], rows.loc[0, "reason"]
    assert rows.loc[1, "status"] == "failed" and rows.loc[1, "reason"].startswith("ray: "), rows.loc[1, "reason"]
    assert (rows.loc[[2, 3], "status"] == "ok").all()
    assert np.allclose(rows.loc[[2, 3], "average_precision"], expected_tfidf_ap(40), atol=1e-6)
    assert wait_until(lambda: not alive(hanging), 15), "the worker outlived its Ray worker"
    kept = {seed: (out / "runs" / f"tfidf_logreg__seed{seed}.json").read_bytes() for seed in (2, 3)}

    rerun = ray_cli(ray_address, *plan)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert (pd.read_csv(out / "summary.csv")["status"] == "ok").all()
    for seed in (0, 1):
        assert f"tfidf_logreg__seed{seed}: started (ray)" in rerun.stderr
    for seed in (2, 3):
        assert f"tfidf_logreg__seed{seed}: finished earlier, kept" in rerun.stderr
        assert (out / "runs" / f"tfidf_logreg__seed{seed}.json").read_bytes() == kept[seed]


def test_sigint_cancels_outstanding_tasks_and_leaves_no_worker_behind(tmp_path, ray_address):
    marker = b"500.375"  # a time limit no other test uses: it is in each of this test's worker command lines
    out = tmp_path / "run"
    driver = subprocess.Popen(
        [sys.executable, "-m", "comparisons", "run", "--backends", "tfidf_logreg", "--seeds", "4", *SMALL,
         "--max-concurrent", "2",
         "--timeout", marker.decode(), "--out", str(out), "--executor", "ray", "--ray-address", ray_address],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "COMPARISONS_FAULT": "tfidf_logreg@1:hang,tfidf_logreg@2:hang,tfidf_logreg@3:hang"})
    try:
        first_done = out / "runs" / "tfidf_logreg__seed0.json"
        assert wait_until(lambda: first_done.exists() and len(ours(marker)) == 2, 300), "seeds 1 and 2 never hung"
        driver.send_signal(signal.SIGINT)
        _, err = driver.communicate(timeout=120)
    finally:
        driver.kill()
    assert driver.returncode == 130, err.decode()[-3000:]
    assert b"interrupted" in err and b"finished runs are kept" in err
    assert wait_until(lambda: not ours(marker), 30), f"workers left behind: {ours(marker)}"
    records = {p.name: json.loads(p.read_text())["status"] for p in (out / "runs").glob("*.json")}
    # seeds 0 and 1 went first (--max-concurrent 2); 0 finished and is kept, 2 was running, 3 never started
    assert records == {"tfidf_logreg__seed0.json": "ok"}


def ours(marker: bytes) -> list[int]:
    """Live worker processes whose command line carries the marker."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"\0comparisons.run.worker\0" in cmdline and marker in cmdline and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def test_a_worker_started_after_a_code_change_refuses_to_run(tmp_path):
    """The plan's code hash against the code on disk when the worker starts: a copy of the code in its own
    git repository, planned, then edited (a real change to a file the hash covers)."""
    copy = tmp_path / "checkout"
    for name in ("common", "backends", "comparisons"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "course", "studies"))
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, copy / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(copy)]
    subprocess.run(git[:5] + ["init", "-q", str(copy)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "plan"], check=True)
    planned = subprocess.run([sys.executable, "-c", "from comparisons.comparability import code_sha256; print(code_sha256())"],
                             cwd=copy, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(copy)}).stdout.strip()
    spec, inputs = small_spec_and_inputs(code_sha256=planned)

    def start(out):
        worker = subprocess.Popen([sys.executable, "-m", "comparisons.run.worker", "--out", str(out), "--spec", spec.to_json()],
                                  cwd=copy, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  env={**os.environ, "PYTHONPATH": str(copy)})
        log, _ = worker.communicate(inputs.to_json_bytes(), timeout=300)
        return worker.returncode, log.decode()

    code, log = start(tmp_path / "same")
    assert code == 0, log[-2000:]
    with open(copy / "backends" / "tfidf_logreg" / "model.py", "a") as changed:
        changed.write("\nCHANGED_AFTER_PLANNING = True\n")
    code, log = start(tmp_path / "changed")
    assert code == 1 and "failed: the code on disk changed since the run was planned" in log.strip().splitlines()[-1]
    assert not (tmp_path / "changed" / "runs").exists()


def test_a_dead_ray_workers_task_folder_is_removed_by_the_next_task_on_its_node(tmp_path):
    """A Ray worker killed mid-task never leaves its `with`: its comparisons-run-PID-* folder stays in the temporary
    folder. The next task on the node removes the folders whose process is gone, and only those."""
    from comparisons.run.ray_executor import RUN_FOLDER_PREFIX, remove_stale_run_folders

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        dead = tmp_path / f"{RUN_FOLDER_PREFIX}{ended.stdout.strip()}-abc"
        living = tmp_path / f"{RUN_FOLDER_PREFIX}{alive.pid}-def"
        mine = tmp_path / f"{RUN_FOLDER_PREFIX}{os.getpid()}-ghi"
        for folder in (dead, living, mine):
            (folder / "logs").mkdir(parents=True)
        assert remove_stale_run_folders(tmp_path) == [dead]
        assert not dead.exists() and living.exists() and mine.exists()
    finally:
        alive.kill()
        alive.wait()
