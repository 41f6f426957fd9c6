"""The course wing: one lesson a file, in teaching order, runnable as `python -m comparisons.course.<lesson>`.

Each lesson is a script with `# %%` cells (Markdown cells in Chinese and English) that jupytext
turns into a notebook: `python -m comparisons.course notebooks`.
"""

# Teaching order. The last four (rnn_bottleneck, pretraining_objectives, attention_heads, train_eval_mode) were written
# after the rest and appended, so earlier lessons keep their numbers.
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
    "train_eval_mode",  # model.train() / model.eval() and the logits the loss takes: every lesson relied on both
]
