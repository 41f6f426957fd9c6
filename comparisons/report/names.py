"""The only place a report's files are named (the run folder's own files: comparisons/run_folder/names.py).

Every kind writes some of them in its folder (English) and the language-dependent ones again under zh/:
a single split's summary, aggregate, summary table, verdicts, serving table and a sweep's curve tables; a partition
design's scores, recipe variants, verdicts, learning curve and labels saved; a benchmark's cross-corpus tables; and
each kind's page.
"""
from __future__ import annotations

SCORES_CSV = "scores.csv"                      # the long scores table (every kind; run_folder/scores.py)
VERDICTS_CSV, VERDICTS_MD = "verdicts.csv", "verdicts.md"  # the one verdict schema (stats/family.py), and in words
SUMMARY_CSV = "summary.csv"                    # a single split: one row per run
AGGREGATE_CSV = "aggregate.csv"                # a single split: one row per variant, the largest training size
SUMMARY_TABLE_CSV, SUMMARY_TABLE_MD = "summary_table.csv", "summary_table.md"  # ... as people read it
SERVING_TABLE_CSV, SERVING_TABLE_MD = "serving_table.csv", "serving_table.md"  # serving paths against native
PRETRAINED_VS_SCRATCH_CSV, PRETRAINED_VS_SCRATCH_MD = "pretrained_vs_scratch.csv", "pretrained_vs_scratch.md"
LEARNING_CURVE_VERDICTS_CSV = "learning_curve_verdicts.csv"  # a single split's sweep: every size's pairs
RECIPE_VARIANTS_CSV = "recipe_variants.csv"    # a partition design: each recipe over the partitions
LEARNING_CURVE_CSV = "learning_curve.csv"      # a design (or a sweep): each recipe at each training size
LABELS_SAVED_CSV = "labels_saved.csv"          # a design with sizes: labels the pretrained recipes save
CROSS_CORPUS_CSV, CROSS_CORPUS_JSON, CROSS_CORPUS_MD = "cross_corpus.csv", "cross_corpus.json", "cross_corpus.md"
CROSS_CORPUS_VERDICTS_CSV = "cross_corpus_verdicts.csv"  # a benchmark's pairs across corpora
REPORT_HTML = "report.html"                    # every kind's page (report/html.page_path)
SELECTION_MD, SELECTION_HTML = "selection.md", "selection.html"  # a selection's decision (report/selection_report.py)
MODEL_CARD_MD = "MODEL_CARD.md"                # a selection's shipped pick, in DIR/deploy (report/model_card.py)
