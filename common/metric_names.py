"""The suite's metric names, defined once: every module that lists metrics takes its tuple from here.

Framework-free, so common/, comparisons/stats/, comparisons/run/ and comparisons/report/ all import it. Two orders of
the same quality metrics exist on purpose: the long scores table and the verdicts read average precision first (the
primary metric); summary.csv's columns read accuracy first, as they always have (committed CSVs keep their order).
"""
from __future__ import annotations

PRIMARY = "average_precision"                                  # the metric a design is powered and decided on
AT_THRESHOLD = ("macro_f1_at_threshold", "accuracy_at_threshold")  # decisions at the threshold chosen on validation
ARGMAX = ("macro_f1", "accuracy")                              # decisions at the arg-max (the 0.5 cut on two classes)
CALIBRATION = ("brier", "ece")                                 # probability calibration
LOWER_IS_BETTER = CALIBRATION                                  # "A better" means A's score is lower

DESIGN_QUALITY = (PRIMARY, *AT_THRESHOLD)                      # a partition design's verdict metrics (with CALIBRATION
                                                               # where every run has them)
QUALITY = (PRIMARY, *AT_THRESHOLD, *ARGMAX)                    # every quality metric, primary first (scores.csv)
SUMMARY_QUALITY = ("accuracy", "accuracy_at_threshold", "macro_f1", "macro_f1_at_threshold", PRIMARY)  # summary.csv
PAIR_METRICS = (*QUALITY, *CALIBRATION)                        # the single split's paired verdicts
CURVE_METRICS = (PRIMARY, "macro_f1_at_threshold", "macro_f1")  # the learning curve's panels
REPRODUCED = (PRIMARY, "macro_f1_at_threshold")                # what `comparisons reproduce` compares

DEFAULT_MARGINS = {PRIMARY: 0.005, "macro_f1": 0.01, "accuracy": 0.005, "brier": 0.005, "ece": 0.01}

# costs: what a decision weighs (lower is better but throughput), and the costs the scores table carries
DECISION_COSTS = ("latency_ms_b1_p50", "throughput_per_s", "peak_rss_serve_mb", "size_mb", "train_seconds")
SUMMARY_COSTS = ("params_total", "params_trainable", "train_seconds", "epochs_run", "seconds_per_epoch",  # aggregate.csv
                 "latency_ms_b1_p50", "latency_ms_b32_p50", "latency_ms_b32_cv", "throughput_per_s", "compile_seconds",
                 "cold_start_s", "peak_rss_train_mb", "peak_rss_serve_mb", "size_mb")
DIGEST_COSTS = ("latency_ms_b1_p50", "peak_rss_serve_mb", "train_seconds", "size_mb")  # a split page's "best on each"
SCORE_COSTS = ("params_total", "train_seconds", "latency_ms_b1_p50", "throughput_per_s", "peak_rss_serve_mb", "size_mb")
INPUT = ("unknown_token_rate",)                                # what the model could not read
