"""The console script `transformer-compare` (pyproject.toml [project.scripts]): installed with the package, the
same commands as `python -m comparisons`."""
import subprocess
import sys
from pathlib import Path

import pandas as pd

SCRIPT = Path(sys.executable).parent / "transformer-compare"


def test_the_console_script_runs_help_and_a_tiny_plan(tmp_path):
    assert SCRIPT.exists(), f"{SCRIPT} is missing: pip install -e . (make test reinstalls when pyproject.toml changes)"
    shown = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: transformer-compare") and "reproduce" in shown.stdout
    out = tmp_path / "run"
    ran = subprocess.run([str(SCRIPT), "run", "--backends", "tfidf_logreg", "--profile", "tiny", "--limit-per-class", "30",
                          "--threads", "1", "--quality-only", "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert pd.read_csv(out / "summary.csv")["status"].eq("ok").all()
