"""A serving probe whose worker dies does not live on (comparisons/run/parent_death.py, Linux only)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Stands in for a run worker: starts the probe (which inherits this process's stdin, a pipe the test
# keeps open, so the probe waits for its texts forever), says the probe's pid, then waits to be killed.
PARENT = """
import subprocess, sys, time
probe = subprocess.Popen([sys.executable, "-m", "comparisons.run.measure", "--variant", "tfidf_logreg",
                          "--model-dir", "unused", "--result", "unused.json"])
print(probe.pid, flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has ended; only its entry waits to be reaped


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_serving_probe_ends_when_the_worker_that_started_it_is_killed(tmp_path):
    read_end, write_end = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdin=read_end, stdout=subprocess.PIPE,
                              cwd=tmp_path, env=env, text=True)
    os.close(read_end)
    try:
        probe_pid = int(parent.stdout.readline())
        time.sleep(1.0)  # the probe is now blocked reading stdin (or still importing)
        assert alive(probe_pid), "the probe should still be waiting for its texts"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 20
        while alive(probe_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(probe_pid), "the probe outlived the worker that started it"
    finally:
        os.close(write_end)
        if parent.poll() is None:
            parent.kill()
