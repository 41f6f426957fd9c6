"""MLflow tracking against a real SQLite store: parent and nested runs, metrics equal to the
records, stepped history, artefacts, no duplicate on resume, failed runs, `track DIR`, redaction, and
the exit-2 line without mlflow."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from comparisons.cli import main
from comparisons.tracking import INSTALL, default_uri, record_metrics
from tests.test_cli import LINK_OR_PHONE, ROOT, SMALL, assert_no_raw_text

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient  # noqa: E402

REFERENCE = ROOT / "results" / "single_split_bc0aeaf"  # a committed run folder with per-epoch history
TINY = ["run", "--backends", "tfidf_logreg", "--profile", "tiny", *SMALL, "--seeds", "2"]


def store(uri: str):
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("transformer-compare")
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    return client, parents, children


def assert_child_matches(client, child, folder: Path) -> None:
    name = child.info.run_name
    record = json.loads((folder / "runs" / f"{name}.json").read_text())
    for key, value in record_metrics(record).items():
        assert child.data.metrics[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    for key in ("average_precision", "macro_f1", "train_seconds", "latency_ms_b1_p50"):
        if isinstance(record.get(key), float):
            assert key in child.data.metrics
    assert child.data.params["variant"] == record["variant"] and child.data.params["seed"] == str(record["seed"])
    tags = child.data.tags
    assert tags["comparisons.code_sha256"] == record["code_sha256"]
    assert tags["comparisons.split_sha256"] == record["split_sha256"]
    assert tags["comparisons.executor"] == record.get("executor", "") and tags["comparisons.node"] == record.get("node", "")
    assert child.info.status == ("FINISHED" if record["status"] == "ok" else "FAILED")
    artefacts = {a.path for a in client.list_artifacts(child.info.run_id)}
    assert f"{name}.json" in artefacts
    assert (f"{name}.npz" in artefacts) == (folder / "predictions" / f"{name}.npz").exists()
    local = Path(client.download_artifacts(child.info.run_id, f"{name}.json"))
    assert local.read_bytes() == (folder / "runs" / f"{name}.json").read_bytes()


def assert_nothing_raw(client, runs) -> None:
    from common.datasets import load_sms_spam

    messages = [t for t in load_sms_spam().texts if len(t) >= 25]
    for run in runs:
        for value in [*run.data.params.values(), *run.data.tags.values()]:
            assert not LINK_OR_PHONE.search(value), value
            assert not any(message[:25] in value for message in messages), value


def test_a_tracked_run_is_a_parent_with_nested_runs_matching_the_folder_and_resume_logs_nothing_twice(
        tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    monkeypatch.setenv("COMPARISONS_FAULT", "tfidf_logreg@1:crash")
    assert main([*TINY, "--out", str(out), "--track", "mlflow"]) == 1
    assert "tracking: 2 run(s) logged" in capsys.readouterr().err
    assert (out / "mlflow.db").exists()  # the default store: SQLite in the run folder, no server
    client, parents, children = store(default_uri(out))
    assert len(parents) == 1 and len(children) == 2
    parent = parents[0]
    manifest = json.loads((out / "manifest.json").read_text())
    assert parent.data.params["profile"] == "tiny" and parent.data.params["seeds"] == "[0, 1]"
    assert parent.data.params["split.sha256"] == manifest["split"]["sha256"]
    assert parent.data.tags["comparisons.code_sha256"] == manifest["code_sha256"]
    assert {a.path for a in client.list_artifacts(parent.info.run_id)} == {"report.html"}
    assert all(c.data.tags["mlflow.parentRunId"] == parent.info.run_id for c in children)
    for child in children:
        assert_child_matches(client, child, out)
    failed = next(c for c in children if c.info.run_name == "tfidf_logreg__seed1")
    reason = json.loads((out / "runs" / "tfidf_logreg__seed1.json").read_text())["reason"]  # SIGABRT
    assert failed.info.status == "FAILED" and failed.data.tags["comparisons.reason"] == reason

    monkeypatch.delenv("COMPARISONS_FAULT")  # resume: seed 0 is kept (not logged again), seed 1 reruns
    assert main([*TINY, "--out", str(out), "--track", "mlflow"]) == 0
    err = capsys.readouterr().err
    rerun = err.count(": started (")
    assert rerun == 1, "resume reruns the failed seed only (2 would mean the finished one was redone)"
    assert f"tracking: {rerun} run(s) logged to MLflow, {2 - rerun} logged earlier" in err, err[-2000:]
    client, parents, children = store(default_uri(out))
    assert len(parents) == 1 and len(children) == 2 + rerun
    hashes = [c.data.tags["comparisons.record_sha256"] for c in children]
    assert len(set(hashes)) == len(hashes)  # no record logged twice
    for name in ("tfidf_logreg__seed0", "tfidf_logreg__seed1"):
        latest = max((c for c in children if c.info.run_name == name), key=lambda c: c.info.start_time)
        assert latest.info.status == "FINISHED"
        assert_child_matches(client, latest, out)

    assert main(["track", str(out)]) == 0  # the folder again: everything is in the store already
    assert "0 run(s) logged to MLflow, 2 logged earlier" in capsys.readouterr().err
    client, parents, children = store(default_uri(out))
    assert len(parents) == 1 and len(children) == 2 + rerun
    assert_nothing_raw(client, parents + children)
    assert_no_raw_text(out)  # the store (mlflow.db) and its artefacts (mlartifacts/) included


def test_track_dir_logs_an_existing_folder_with_its_stepped_validation_history(tmp_path, capsys):
    folder = tmp_path / "reference"
    for name in ("manifest.json", "report.html", "runs/torch_scratch__seed0.json",
                 "predictions/torch_scratch__seed0.npz", "runs/tfidf_logreg__seed0.json"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REFERENCE / name, folder / name)
    uri = f"sqlite:///{tmp_path / 'elsewhere' / 'store.db'}"
    (tmp_path / "elsewhere").mkdir()
    assert main(["track", str(folder), "--mlflow-uri", uri]) == 0
    assert "2 run(s) logged to MLflow" in capsys.readouterr().err
    client, parents, children = store(uri)
    assert len(parents) == 1 and len(children) == 2
    assert (tmp_path / "elsewhere" / "mlartifacts").is_dir()  # artefacts beside the given store
    torch_run = next(c for c in children if c.info.run_name == "torch_scratch__seed0")
    assert_child_matches(client, torch_run, folder)
    record = json.loads((folder / "runs" / "torch_scratch__seed0.json").read_text())
    history = client.get_metric_history(torch_run.info.run_id, "history.valid_average_precision")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == \
        [(row["epoch"], row["valid_average_precision"]) for row in record["fit_info"]["history"]]
    assert torch_run.data.params["params.tokenizer"] == record["params"]["tokenizer"]
    assert main(["track", str(folder), "--mlflow-uri", uri]) == 0  # twice: nothing new
    assert len(store(uri)[2]) == 2
    assert_nothing_raw(client, parents + children)
    assert_no_raw_text(tmp_path / "elsewhere")


def test_without_mlflow_track_exits_2_with_the_install_line_before_writing(tmp_path):
    out = tmp_path / "run"
    code = ("import sys; sys.modules['mlflow'] = None; from comparisons.cli import main; "
            f"sys.exit(main({[*TINY, '--out', str(out), '--track', 'mlflow']!r}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: --track mlflow needs MLflow: {INSTALL}"]
    assert not out.exists()
