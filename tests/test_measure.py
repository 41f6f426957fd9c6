"""comparisons/run/measure.py: latency inputs and statistics, throughput,
peak memory, and cold start + serving memory from a fresh process."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from comparisons.run.measure import latency_batches, latency_stats, measure_throughput, serve
from comparisons.run.profiles import variant_overrides


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
from comparisons.run.measure import peak_rss_mb, reset_peak_rss
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


def test_throughput_scores_the_same_texts_in_order_at_the_declared_batch_and_keeps_compilation_apart():
    seen: list[list[str]] = []
    compiled: set[int] = set()

    def predict(batch):
        seen.append(list(batch))
        if len(batch) not in compiled:  # a new shape "compiles" once, as Keras/XLA would
            compiled.add(len(batch))
            time.sleep(0.05)
        return np.array([[1.0 - len(t) / 10, len(t) / 10] for t in batch])

    texts = [f"text {i}" for i in range(70)]
    result = measure_throughput(predict, texts, batch_size=32)
    assert [len(b) for b in seen] == [32, 32, 6] * 6  # an untimed pass, then 5 timed passes, same batches
    assert [t for b in seen[3:] for t in b] == texts * 5
    assert result["throughput_passes"] == 5 and result["throughput_cv"] >= 0  # the median, with its spread
    assert result["throughput_batch"] == 32 and result["throughput_texts"] == 70
    assert result["compile_seconds"] >= 0.09  # both shapes' compilation is outside the timed pass
    assert result["throughput_per_s"] > 70 / 0.09
    expected = np.array([[1.0 - len(t) / 10, len(t) / 10] for t in texts])
    np.testing.assert_array_equal(result["proba"], expected)  # the first pass's scores, row i for texts[i]


def test_peak_rss_context_measures_the_block_only():
    script = """
import numpy as np
from comparisons.run.measure import PeakRss
block = np.ones(64 * 2**20 // 8)  # 64 MB before the block: not the block's peak
del block
with PeakRss() as quiet:
    pass
with PeakRss() as busy:
    inner = np.ones(64 * 2**20 // 8)
if quiet.mb is None:
    raise SystemExit(3)
assert quiet.mb < quiet.baseline_mb + 20, (quiet.baseline_mb, quiet.mb)
assert busy.mb > busy.baseline_mb + 50, (busy.baseline_mb, busy.mb)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if result.returncode == 3:
        pytest.skip("clear_refs is not writable here")
    assert result.returncode == 0, result.stderr


# One backend here, in-process; every variant's fresh serving process is checked by the same
# assertions on its run record in tests/test_comparisons_e2e.py (one worker per variant already).
@pytest.mark.parametrize("variant", ["tfidf_logreg"])
def test_cold_start_and_serving_memory_come_from_a_fresh_process(variant, tiny_splits, tmp_path):
    """Saved, then loaded and served by a new process that gives the same probabilities."""
    from backends.base import build

    train, valid, test = tiny_splits
    model = build(variant, seed=0, **variant_overrides("tiny", variant)).fit(train, valid)
    model.save(tmp_path)
    served = serve(variant, tmp_path, test.texts, threads=1, device="cpu")
    assert served["serve_pid"] != os.getpid()
    np.testing.assert_allclose(served["proba"], model.predict_proba(test.texts), atol=1e-5)
    assert served["cold_start_s"] > served["serve_import_s"] + served["serve_load_s"] > 0
    assert served["peak_rss_serve_mb"] >= served["rss_serve_loaded_mb"] > 30
