"""The course wing: one lesson a file, in teaching order, runnable as `python -m comparisons.course.<lesson>`.

Each lesson is a script with `# %%` cells (Markdown cells in Chinese and English) that jupytext
turns into a notebook: `python -m comparisons.course notebooks`.
"""

# Teaching order. scratch_vs_pretrained is written under issue 13, chinese_reviews under issue 25,
# transformer_block, attention_before_transformers and keras_and_bert under issue 66; rnn_bottleneck,
# pretraining_objectives and attention_heads under issue 78 (appended, so earlier lessons keep their numbers).
LESSONS = [
    "eda",
    "attention_by_hand",
    "positional_encoding",
    "padding_ablation",
    "causal_mask",
    "transformer_block",
    "heads_sweep",
    "attention_cost",
    "attention_map",
    "attention_deletion",
    "threshold",
    "sine_forecast",
    "attention_before_transformers",
    "keras_and_bert",
    "scratch_vs_pretrained",
    "chinese_reviews",
    "rnn_bottleneck",
    "pretraining_objectives",
    "attention_heads",
]
