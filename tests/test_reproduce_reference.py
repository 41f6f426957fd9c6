"""The guard: the committed reference's cheap runs are made again and must come back, so that a code
change that moves a committed result fails the tests until the result is remade.

TF-IDF on partition r0f0 of results/reference (15 partitions: 3 repeats of 5 folds), through `python -m
comparisons reproduce` (its main, in this process: tests/test_cli.run_main; quality only; with TF-IDF's inner CV about
30 s a partition inside the suite). torch_scratch on r0f0 at the full budget was part of it (20 s alone, but about 80 s inside
`make test`, where the other xdist worker's frameworks share the two cores: it took the suite from about 7.5 to
8.9 minutes); it is checked by `make reproduce-reference` (all 5 partitions, results/reproduce_reference/), whose
tolerance below stays the one a torch_scratch rerun is held to. Under the committed runs'
numerics identity every figure must come back to 1e-6 (the reference was remade with the audited recipes on
a 2-core AMD EPYC with every partition its own seed, identity fcjtauk72jyq5dxz). Under another one the test AP must agree within the
cross-kernel tolerance measured for that recipe:
- TF-IDF: 0.003. The earlier recipe came back exactly across CPUs (its 5 partitions, AP and macro-F1 to 6 decimals,
  a 2-core AMD EPYC against Intel Xeon runs, 2026-12-01); the audited recipe does not: on a 2-core AMD EPYC Zen 3
  (AVX2 only) against the committed runs (an EPYC with AVX-512), repeat 0's 5 partitions moved test AP by -0.000284,
  +0.000117, +0.002642, -0.000048 and +0.000325 (6 December 2026, `reproduce --backends tfidf_logreg --partitions
  r0f0,...,r0f4`; all 50 verdicts stood). Its logistic regression stops at another point under other BLAS kernels,
  and on r0f2 that flipped inner cross-validation's near-tie between C 100 and C 10: the largest move, rounded up.
  Measured between these two EPYC kinds only: on an Intel Xeon a flip on r0f0 could move it further.
- torch_scratch: 0.0036, the largest per-partition move of test AP seen across kernels (docs/statistics.md's table: Xeon
  against AMD EPYC with the default kernels and with ONEDNN_MAX_CPU_ISA=AVX2 MKL_CBWR=COMPATIBLE); on r0f0 the
  EPYC moved it by 0.000195 and the AVX2 kernels by 0.000996. Its macro-F1 at the threshold is not held to a
  tolerance (no cross-kernel figure was measured for it); it is reported in reproduce.md.
"""
import re

from pathlib import Path

import pandas as pd

from tests.test_cli import ROOT, run_main

EXACT = 1e-6
ACROSS_KERNELS = {"tfidf_logreg": 0.003, "torch_scratch": 0.0036}


def test_the_committed_reference_s_cheap_runs_come_back(tmp_path, capfd):
    reference = Path(ROOT) / "results" / "reference"
    # 1 of the 15 (make reproduce-reference: all): the audited TF-IDF recipe chooses C, n-grams and min_df by inner
    # cross-validation, about 30 s a full-size fit inside the suite, so each partition here costs half a minute
    for backends, partitions in (("tfidf_logreg", "r0f0"),):
        fresh = tmp_path / backends
        result = run_main(capfd, "reproduce", "--from", str(reference), "--out", str(fresh), "--backends", backends,
                          *(["--partitions", partitions] if partitions else []))
        assert result.returncode == 0, result.stderr
        runs = pd.read_csv(fresh / "reproduce.csv")
        assert len(runs) == (len(partitions.split(",")) if partitions else 15) and set(runs["variant"]) == {backends}
        for row in runs.to_dict("records"):
            where = f"{row['partition']}/{row['run']} ({row['identity']})"
            if row["identity"] == "same":
                assert abs(row["difference_average_precision"]) <= EXACT, where
                assert abs(row["difference_macro_f1_at_threshold"]) <= EXACT, where
            else:
                assert abs(row["difference_average_precision"]) <= ACROSS_KERNELS[backends] + 1e-12, where
        stand = re.search(r"verdicts: (\d+) of (\d+) stand with the rerun figures", (fresh / "reproduce.md").read_text())
        assert stand and stand[1] == stand[2] == "50", "every verdict (10 pairs x 5 metrics) stands"
