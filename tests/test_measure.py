"""comparisons/measure.py: fixed latency inputs, statistics, peak memory."""
import subprocess
import sys

import numpy as np
import pytest

from comparisons.measure import latency_batches, latency_stats


def test_latency_inputs_are_fixed_and_span_the_lengths():
    texts = [f"w{'x' * n}" for n in range(100)]
    batches = latency_batches(texts)
    assert batches[1] == [texts[50]] and len(batches[32]) == 32
    assert batches[32][0] == texts[0] and batches[32][-1] == texts[-1]
    stats = latency_stats(np.array([1.0, 1.0, 3.0, 3.0]), "x")
    assert stats["x_p50"] == 2.0 and stats["x_cv"] == pytest.approx(0.5)


def test_peak_memory_sees_a_large_allocation_and_resets():
    """In a fresh process (a long pytest process may keep freed memory mapped)."""
    script = """
import numpy as np
from comparisons.measure import peak_rss_mb, reset_peak_rss
if not reset_peak_rss():
    raise SystemExit(3)
base = peak_rss_mb()
block = np.ones(64 * 2**20 // 8)  # 64 MB, touched
high = peak_rss_mb()
del block
reset_peak_rss()
after = peak_rss_mb()
assert high >= base + 50, (base, high)
assert after < high - 50, (high, after)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if result.returncode == 3:
        pytest.skip("clear_refs is not writable here")
    assert result.returncode == 0, result.stderr
