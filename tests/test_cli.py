"""The command line: bad input, the tfidf run end to end, failure isolation, resume, privacy."""
import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from common.datasets import load_sms_spam
from comparisons.cli import main

ROOT = Path(__file__).resolve().parent.parent
REQUIRED_COLUMNS = ["variant", "seed", "status", "accuracy", "macro_f1", "average_precision", "params_total",
                    "params_trainable", "train_seconds", "latency_ms_b1_p50", "latency_ms_b32_p50",
                    "throughput_per_s", "peak_rss_train_mb", "peak_rss_serve_mb", "cold_start_s", "split_sha256"]
SMALL = ["--limit-per-class", "40", "--threads", "1"]  # one thread a worker: the two xdist workers share 2 cores


def run_cli(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "comparisons", *args], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=timeout)


@contextlib.contextmanager
def environment(changes: dict):
    """os.environ with `changes` (a value of None unsets the variable) and ROOT as the working directory, as
    run_cli's child has them; both restored afterwards."""
    saved, cwd = {name: os.environ.get(name) for name in changes}, os.getcwd()
    try:
        for name, value in changes.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        os.chdir(ROOT)
        yield
    finally:
        os.chdir(cwd)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_main(capfd, *args, env=None) -> subprocess.CompletedProcess:
    """run_cli's command in this process: `comparisons.cli.main(args)`, the function `python -m comparisons` calls,
    with `env` set for the call and the output read at file-descriptor level (capfd: the orchestrator's lines, its tee
    of each worker's output, anything a child writes straight to the terminal). The workers are still processes of
    their own; what is saved is this interpreter's start and imports (about 2 s a command, and the precision probe's
    torch import once per test process). Where the process itself is under test (signals, the shell's exit status
    and traceback, a framework hidden from the orchestrator's imports, an outside package on its path) run_cli stays."""
    capfd.readouterr()  # what came before is not this command's output
    with environment(env or {}):
        code = main(list(args))
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["python", "-m", "comparisons", *args], code, out, err)


def write(tmp_path, name, content: bytes) -> str:
    (tmp_path / name).write_bytes(content)
    return str(tmp_path / name)


GOOD = "".join(f"{'spam' if i % 3 == 0 else 'ham'}\tmessage number {i}\n" for i in range(60)).encode()


@pytest.mark.parametrize("args, message", [
    (["--data", "{tmp}/missing.tsv"], "data file not found"),
    (["--data", "{bad_bytes}"], r"d\.tsv:3 is not valid utf-8.*--encoding latin-1"),
    (["--data", "{no_tab}"], r"d\.tsv:61 has no tab"),
    (["--data", "{empty_text}"], r"d\.tsv:61 has an empty text"),
    (["--data", "{no_label}"], r"d\.tsv:61 has no label"),
    (["--data", "{good}", "--positive-label", "junk"], "positive label 'junk' not found"),
    (["--data", "{single}"], "single class"),
    (["--data", "{few}"], "too few rows per class"),
    (["--data", "{csv}", "--text-col", "body", "--label-col", "label"], "column 'body' not in"),
    (["--backends", "tfidf_logreg,bert_large"], "unknown backend 'bert_large'"),
    (["--profile", "huge"], "unknown profile 'huge'"),
    (["--lang", "fr"], "unknown language 'fr'"),
    (["--limit-per-class", "0"], "--limit-per-class must be at least 1"),
    (["--timeout", "-1"], "--timeout must be a positive"),
    (["--cpu-hour-price", "0"], "--cpu-hour-price must be a positive number"),
    (["--cpu-hour-price", "cheap"], "--cpu-hour-price must be a positive number"),
])
def test_bad_input_gives_one_line_exit_2_and_writes_nothing(tmp_path, capsys, args, message):
    files = {
        "tmp": str(tmp_path),
        "bad_bytes": write(tmp_path, "d.tsv", b"ham\thi\nspam\tyo\nham\tcaf\xe9\n"),
        "good": write(tmp_path, "good.tsv", GOOD),
        "single": write(tmp_path, "single.tsv", b"ham\thi\nham\tyo\n"),
        "few": write(tmp_path, "few.tsv", b"ham\thi\nham\tho\nham\tha\nspam\tyo\n" * 2),
        "csv": write(tmp_path, "d.csv", b"text,label\nhi,ham\nyo,spam\n"),
    }
    for name, extra in (("no_tab", b"spam no tab here\n"), ("empty_text", b"spam\t \n"), ("no_label", b"\tsome text\n")):
        files[name] = write(tmp_path / name if (tmp_path / name).mkdir() is None else tmp_path, "d.tsv", GOOD + extra)
    out = tmp_path / "out"
    code = main(["run", *[a.format(**files) for a in args], "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and re.search(message, err), err
    assert not out.exists()


def test_bad_input_from_the_shell_has_no_traceback(tmp_path):
    result = run_cli("run", "--backends", "nope", "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "error: unknown backend 'nope'; choose from " \
        "tfidf_logreg, tfidf_logreg:seed, torch_scratch, keras_layers, hf_bert:frozen, hf_bert:full, hf_bert:setfit, " \
        "or name an outside backend as " \
        "MODULE:CLASS (docs/adding_a_backend.md)"


def test_orchestrator_imports_no_deep_learning_framework():
    code = ("import sys, comparisons.cli, comparisons.run.runner, comparisons.report.split_tables, comparisons.report.figures;"
            "bad = [m for m in ('torch', 'tensorflow', 'keras', 'transformers') if m in sys.modules];"
            "assert not bad, bad")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_tfidf_run_reproduces_the_seed_and_resumes(tmp_path, capfd):
    out = tmp_path / "run"
    first = run_main(capfd, "run", "--backends", "tfidf_logreg:seed", "--threads", "1", "--out", str(out))
    assert first.returncode == 0, first.stderr
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns[:4]) == ["variant", "seed", "status", "reason"]
    assert set(REQUIRED_COLUMNS) <= set(summary.columns)
    row = summary.iloc[0]
    assert (row["accuracy"].round(6), row["macro_f1"].round(6), row["average_precision"].round(6)) == \
        (0.982079, 0.961199, 0.978796)
    split = json.loads((out / "splits.json").read_text())
    assert split["sizes"] == {"train": 3901, "valid": 836, "test": 837} and row["split_sha256"] == split["sha256"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["split"]["sha256"] == split["sha256"] and manifest["threads"] == 1
    for name in ("summary_table.md", "summary_table.html", "figures/metrics.png", "figures/pareto.png",
                 "figures/pr_curves.png", "figures/confusion_matrices.png", "predictions/tfidf_logreg-seed__seed0.npz"):
        assert (out / name).exists(), name

    kept = {p: p.read_bytes() for p in [*(out / "runs").iterdir(), *(out / "predictions").iterdir()]}
    mtimes = {p: p.stat().st_mtime_ns for p in kept}
    second = run_main(capfd, "run", "--backends", "tfidf_logreg:seed", "--threads", "1", "--out", str(out))
    assert second.returncode == 0 and "finished earlier, kept" in second.stderr
    assert all(p.read_bytes() == kept[p] and p.stat().st_mtime_ns == mtimes[p] for p in kept)
    assert_no_raw_text(out)


def test_failures_are_isolated_rows(tmp_path, capfd):
    out = tmp_path / "run"
    result = run_main(capfd, "run", "--backends", "tfidf_logreg", "--seeds", "3", "--timeout", "8", *SMALL,
                      "--quality-only", "--out", str(out),
                      env={"COMPARISONS_FAULT": "tfidf_logreg@0:crash,tfidf_logreg@1:hang"})
    assert result.returncode == 1
    rows = pd.read_csv(out / "summary.csv").set_index("seed")
    assert rows.loc[0, "status"] == "failed" and "SIGABRT" in rows.loc[0, "reason"]
    assert rows.loc[1, "status"] == "failed" and "time limit" in rows.loc[1, "reason"]
    assert rows.loc[2, "status"] == "ok"
    assert rows.loc[2, "average_precision"] == pytest.approx(expected_tfidf_ap(40), abs=1e-6)
    rerun = run_main(capfd, "run", "--backends", "tfidf_logreg", "--seeds", "3", *SMALL, "--quality-only",
                     "--out", str(out))
    assert rerun.returncode == 0 and (pd.read_csv(out / "summary.csv")["status"] == "ok").all()


def test_missing_framework_gives_a_skipped_row_and_a_zh_report_has_chinese_headers(tmp_path):
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\")\n")
    out = tmp_path / "run"
    result = run_cli("run", "--backends", "tfidf_logreg,torch_scratch", *SMALL, "--profile", "tiny", "--quality-only",
                     "--lang", "zh", "--out", str(out), env={"PYTHONPATH": f"{fake}{os.pathsep}{ROOT}"})
    assert result.returncode == 0, result.stderr
    rows = pd.read_csv(out / "summary.csv").set_index("variant")
    assert rows.loc["tfidf_logreg", "status"] == "ok"
    assert rows.loc["torch_scratch", "status"] == "skipped" and "torch" in rows.loc["torch_scratch", "reason"]
    # --lang zh (was test_zh_report_has_chinese_headers, its own run): the Chinese report beside the English one
    assert "平均精度" in (out / "zh" / "summary_table.md").read_text()
    assert (out / "zh" / "figures" / "metrics.png").exists() and (out / "summary_table.md").exists()


# a link, or a phone-like digit run that is not part of a hexadecimal hash
# a link, or a phone-like run of 9+ digits (spaces or dashes between them), wherever it stands: real messages
# hold "...2209am" and "...731from", so letters beside the digits do not excuse them. The fractional part of a
# number (after a point) is not a phone number; hashes (hex runs of 24+ with a letter a-f) are blanked first.
_PHONE_OR_LINK = re.compile(r"(https?://|www\.)[A-Za-z0-9]|(?<![\d.])\d(?:[ \-]?\d){8,}")
_HASH = re.compile(r"(?<![0-9a-f])(?=[0-9a-f]*[a-f])[0-9a-f]{24,}(?![0-9a-f])")


class _LinkOrPhone:
    """LINK_OR_PHONE.search(text): the first link or phone-like run outside hashes, or None."""

    @staticmethod
    def search(text: str):
        # blanking hashes only removes matches (a blanked run is whole: the hex digits beside a match would be in
        # it), so a text without a match before blanking has none after; most files are spared the blanking pass
        if not _PHONE_OR_LINK.search(text):
            return None
        return _PHONE_OR_LINK.search(_HASH.sub(lambda m: "#" * len(m.group(0)), text))


LINK_OR_PHONE = _LinkOrPhone()
# the payload of a base64 data: URI (report/html.py png_figure breaks its digit runs with newlines)
_BASE64_PAYLOAD = re.compile(r"(data:[\w/+.-]+;base64,)[A-Za-z0-9+/=\n]+")


def expected_tfidf_ap(limit_per_class: int) -> float:
    """TF-IDF's test AP fitted here, in-process, on the suite's split of the same data: what a worker must record."""
    from sklearn.metrics import average_precision_score

    from backends.base import build
    from common.datasets import DataSpec, load
    from common.splits import stratified_split

    data = load(DataSpec(limit_per_class=limit_per_class))
    split = stratified_split(data)
    model = build("tfidf_logreg", seed=0).fit(data.subset(split.train), data.subset(split.valid))
    score = model.predict_proba([data.texts[i] for i in split.test])[:, data.positive_index]
    return float(average_precision_score(data.labels[split.test] == data.positive_index, score))


def assert_no_raw_text(directory: Path) -> None:
    """No message text (any 25-character stretch of a message), link or phone number in any text file."""
    messages = [t for t in load_sms_spam().texts if len(t) >= 25]
    for path in directory.rglob("*"):
        if not path.is_file() or path.suffix in (".npz", ".png", ".joblib", ".keras", ".pt", ".safetensors"):
            continue
        content = path.read_text(errors="replace")
        if path.suffix == ".html":  # a page's embedded PNGs (base64 data: URIs) are no text; scanning their megabytes
            content = _BASE64_PAYLOAD.sub(r"\1", content)  # is slow. The page's own privacy tests read it whole
        # a binary SQLite store (MLflow's) packs ids and keys together, so its digit runs are not text:
        # its values are checked through the MLflow client (tests/test_tracking.py); raw messages here too
        if path.suffix != ".db":
            assert not LINK_OR_PHONE.search(content), f"{path} shows a link or phone number"
        assert not any(message[:25] in content for message in messages), f"{path} shows a raw message"


def test_changed_data_is_rerun_not_kept(tmp_path, capfd):
    data = tmp_path / "d.tsv"
    data.write_bytes(GOOD)
    out = tmp_path / "run"
    quick = ["--profile", "tiny", "--quality-only", "--threads", "1"]  # no serving costs: only the resume decision is under test
    assert run_main(capfd, "run", "--backends", "tfidf_logreg", "--data", str(data), *quick,
                    "--out", str(out)).returncode == 0
    data.write_bytes(GOOD.replace(b"message number 7\n", b"message number seven\n"))
    again = run_main(capfd, "run", "--backends", "tfidf_logreg", "--data", str(data), *quick, "--out", str(out))
    assert again.returncode == 0 and "finished earlier" not in again.stderr


def test_a_run_folder_under_a_file_and_an_empty_report_are_clear_errors(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["run", "--backends", "tfidf_logreg", "--out", str(tmp_path / "file" / "sub")]) == 2
    assert main(["report", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: cannot use") and err[1].startswith("error: ") and "no finished runs" in err[1]


def test_another_budget_is_rerun_not_kept(tmp_path, capfd):
    out = tmp_path / "run"
    assert run_main(capfd, "run", "--backends", "tfidf_logreg", *SMALL, "--profile", "tiny", "--quality-only",
                   "--out", str(out)).returncode == 0
    again = run_main(capfd, "run", "--backends", "tfidf_logreg", *SMALL, "--profile", "fast", "--quality-only",
                     "--out", str(out))
    assert again.returncode == 0 and "finished earlier" not in again.stderr
    assert json.loads((out / "runs" / "tfidf_logreg__seed0.json").read_text())["profile"] == "fast"


# --- the orchestrator owns its workers and its run folder --------------------------------------
def start_cli(*args, env=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "comparisons", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def worker_pids(out: Path) -> list[int]:
    """Worker processes writing into `out`, found by their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"comparisons.run.worker" in cmdline and str(out).encode() in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie that nobody reaped yet counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(condition, timeout=120.0):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out waiting")


def start_hanging_run(out: Path) -> tuple[subprocess.Popen, int]:
    """An orchestrator whose worker hangs (testing hook); returns it and the worker's pid."""
    orchestrator = start_cli("run", "--backends", "tfidf_logreg", *SMALL, "--out", str(out),
                             env={"COMPARISONS_FAULT": "tfidf_logreg:hang"})
    def worker_started():
        assert orchestrator.poll() is None, orchestrator.communicate()[1]  # it must not end on its own
        return worker_pids(out)

    (worker,) = wait_for(worker_started)
    return orchestrator, worker


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the worker through /proc")
def test_a_stop_signal_while_the_worker_starts_still_ends_it(tmp_path, monkeypatch, capsys):
    """SIGTERM landing inside Popen, after the worker exists: the orchestrator must still end it."""
    import signal

    import comparisons.run.runner as runner

    real_popen, started = subprocess.Popen, []

    def popen_then_stopped(command, *args, **kwargs):
        process = real_popen(command, *args, **kwargs)
        if "comparisons.run.worker" in command:  # not git and the like
            started.append(process.pid)
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs here, before Popen has returned
        return process

    monkeypatch.setenv("COMPARISONS_FAULT", "tfidf_logreg:hang")
    monkeypatch.setattr(runner.subprocess, "Popen", popen_then_stopped)
    out = tmp_path / "run"
    assert main(["run", "--backends", "tfidf_logreg", *SMALL, "--out", str(out)]) == 143
    assert "interrupted by SIGTERM" in capsys.readouterr().err
    assert len(started) == 1 and not alive(started[0]), "the worker outlived its orchestrator"
    assert not worker_pids(out) and not (out / ".run.lock").exists()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the worker through /proc")
@pytest.mark.parametrize("signum, code", [(15, 143), (1, 129), (2, 130)])  # SIGTERM, SIGHUP, SIGINT
def test_a_signal_ends_the_worker_records_nothing_and_says_how_to_resume(tmp_path, signum, code):
    import signal

    out = tmp_path / "run"
    orchestrator, worker = start_hanging_run(out)
    assert (out / ".run.lock").read_text().strip() == str(orchestrator.pid)
    if signum == signal.SIGTERM:  # (was test_a_second_run_on_a_busy_folder_...): a second run exits 2 naming the holder
        try:
            second = run_cli("run", "--backends", "tfidf_logreg", *SMALL, "--out", str(out))
            assert second.returncode == 2
            assert second.stderr.strip() == (f"error: another `comparisons run` (process {orchestrator.pid}) is using "
                                             f"{out}; wait for it to finish or stop it, or choose another --out")
        except BaseException:
            orchestrator.terminate()
            orchestrator.communicate(timeout=60)
            raise
    orchestrator.send_signal(signal.Signals(signum))
    _, err = orchestrator.communicate(timeout=60)
    assert orchestrator.returncode == code, err
    assert f"interrupted by {signal.Signals(signum).name}" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    assert not alive(worker), "the worker outlived its orchestrator"
    assert not (out / ".run.lock").exists()
    assert not (out / "runs" / "tfidf_logreg__seed0.json").exists()  # nothing half-done is recorded
    assert not list(out.rglob("*.tmp"))


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    from comparisons.run.lock import LOCK_NAME, RunFolderLock

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / LOCK_NAME).write_text(dead.stdout)
    with RunFolderLock(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getpid())
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_lock_held_by_a_live_process_refuses_with_its_pid(tmp_path):
    from comparisons.run.lock import RunFolderBusy, RunFolderLock

    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from comparisons.run.lock import RunFolderLock;"
                               f"lock = RunFolderLock({str(tmp_path)!r}).acquire(); print('held', flush=True); "
                               "time.sleep(60)"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunFolderBusy, match=rf"\(process {holder.pid}\)"):
            RunFolderLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    with RunFolderLock(tmp_path):  # its lock died with it
        pass


def test_progress_lines_pass_as_they_are_and_everything_else_is_redacted(tmp_path):
    """A real child process writes a tqdm bar through common.progress and prints a message; the
    orchestrator's tee shows our rates and counts intact and the message redacted."""
    import io

    from comparisons.run.runner import _tee, progress_mark

    mark = progress_mark()
    # Deterministic by construction: every write goes through the one sys.stderr, the bar is closed (its line ended
    # with a newline) before anything else is written, and each other line is one write with its own line end.
    script = ("import sys; from tqdm import tqdm; from common.progress import progress_line, progress_stream\n"
              "bar = tqdm(range(122), desc='torch_scratch epoch 1/2', file=progress_stream(), mininterval=0)\n"
              "for _ in bar: pass\n"
              "bar.close(); progress_stream().write('\\n'); sys.stderr.flush()\n"
              "progress_line('epoch 1/2: loss 0.69314 valid AP 0.97881')\n"
              "sys.stderr.write('oops: call 0871.2345678 or see example.de/win\\n'); sys.stderr.flush()\n"
              f"sys.stderr.write({mark!r} + 'forged 09061701461\\n'); sys.stderr.flush()\n")  # another worker's mark
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env={**os.environ, "COMPARISONS_PROGRESS_MARK": mark, "PYTHONUNBUFFERED": "1"})
    log = io.BytesIO()
    _tee(child.stdout, log, progress_mark().encode())  # the orchestrator's own, different mark
    child.wait()
    assert "forged <NUM>" in log.getvalue().decode()
    log = io.BytesIO()
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env={**os.environ, "COMPARISONS_PROGRESS_MARK": mark, "PYTHONUNBUFFERED": "1"})
    _tee(child.stdout, log, mark.encode())
    child.wait()
    shown = log.getvalue().decode()
    assert "122/122" in shown and re.search(r"\d+\.\d+it/s|\ds/it", shown), shown
    assert "epoch 1/2: loss 0.69314 valid AP 0.97881\n" in shown
    assert "oops: call <NUM> or see <URL>\n" in shown
    assert "\x1e" not in shown and "0871" not in shown


# TensorFlow 2.21's start-up lines on this 2-core host without a GPU (TF_CPP_MIN_LOG_LEVEL does not reach
# those written before absl::InitializeLog), one of PyTorch's c10 and one of ONNX Runtime's, verbatim
FRAMEWORK_LINES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1796140667.245030    5786 port.cc:153] oneDNN custom operations are on. You may see slightly "
    "different numerical results due to floating-point round-off errors from different computation orders. To turn "
    "them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.",
    "I0000 00:00:1796140667.249984    5786 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will "
    "not be used.",
    "I0000 00:00:1796140667.603326    5786 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use "
    "available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the "
    "appropriate compiler flags.",
    "E0000 00:00:1796140672.222336    5786 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed "
    "call to cuInit: UNKNOWN ERROR (303)",
    "[W1201 15:58:01.123456789 NNPACK.cpp:56] Could not initialize NNPACK! Reason: Unsupported hardware.",
    "2026-12-01 15:58:01.123456 [W:onnxruntime:, graph.cc:4285 CleanUnusedInitializersAndNodeArgs] Removing "
    "initializer 'x'.",
]


def test_framework_start_up_lines_reach_the_log_but_not_the_terminal(capsys):
    """The worker's C++ framework lines (cuInit on a machine without a GPU reads like a failure) are kept
    in its log only; the suite's progress, its own lines and a Python warning still reach the terminal."""
    import io

    from comparisons.run.runner import _tee, progress_mark

    mark = progress_mark()
    ours = [f"{mark}keras_layers epoch 1/3: train loss 0.6276, valid AP 0.7953",
            "UserWarning: a framework warning from Python stays", "failed: out of memory (the reason line stays)"]
    lines = FRAMEWORK_LINES[:3] + ours[:1] + FRAMEWORK_LINES[3:] + ours[1:]
    stream = io.BufferedReader(io.BytesIO("".join(line + "\n" for line in lines).encode()), buffer_size=7)
    log = io.BytesIO()
    _tee(stream, log, mark.encode())
    shown = capsys.readouterr().err
    assert shown.splitlines() == [line.removeprefix(mark) for line in ours]
    kept = log.getvalue().decode()
    assert "failed call to cuInit" in kept and "oneDNN custom operations" in kept and len(kept.splitlines()) == 11


def test_an_unusable_validation_split_is_a_failed_row_with_its_reason(tmp_path, capfd):
    """UnusableValidationError in a worker (the testing hook raises it where fit would) becomes a
    failed row whose reason is the error's own sentence, not a class name and a traceback."""
    out = tmp_path / "run"
    result = run_main(capfd, "run", "--backends", "tfidf_logreg", *SMALL, "--out", str(out),
                      env={"COMPARISONS_FAULT": "tfidf_logreg:unusable_validation"})
    assert result.returncode == 1
    row = pd.read_csv(out / "summary.csv").iloc[0]
    assert row["status"] == "failed"
    assert row["reason"].startswith("no epoch had a finite validation score"), row["reason"]
    assert "Traceback" not in (out / "logs" / "tfidf_logreg__seed0.log").read_text()


@pytest.mark.parametrize("argv, named", [
    (["run", "--executor", "spark"], "invalid choice: 'spark'"),
    (["run", "--seeds", "two"], "invalid int value: 'two'"),
    (["benchmark", "--corpora", "sms", "--no-such-option"], "unrecognized arguments: --no-such-option"),
    (["report"], "the following arguments are required: --out"),
    (["compare"], "invalid choice: 'compare'"),
])
def test_every_bad_option_is_one_line_and_exit_2(argv, named, capsys):
    """argparse's own refusals (an invalid choice, a bad number, an unknown or missing option, an unknown command) are
    one line saying what is wrong and where the help is, never the usage block before it."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith("error: ") and named in err, err
    assert err.strip().count("\n") == 0 and "usage:" not in err and "--help" in err, err


def test_a_study_command_refuses_a_bad_option_in_one_line():
    """The studies' and lessons' command lines use the same parser class (common/arguments.py)."""
    found = subprocess.run([sys.executable, "-m", "comparisons.studies.power_plan", "--nodes", "four"], cwd=ROOT,
                           capture_output=True, text=True)
    assert found.returncode == 2 and found.stderr.strip().count("\n") == 0, found.stderr
    assert found.stderr.startswith("error: argument --nodes: invalid int value: 'four'"), found.stderr
