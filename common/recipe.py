"""The scratch encoders' training recipe, chosen on validation only, with the figure behind each choice.

Both twins (torch_scratch, keras_layers) start from these settings; a `config` passed to a backend
overrides them. Every figure here is validation average precision on the default split (seeded
stratified 70/15/15 of the SMS Spam Collection), mean over model seeds, from
backends/torch_scratch/recipe_search.py; the test split was never scored for any choice.
"""
from __future__ import annotations

RECIPE: dict = {
    "tokenizer": "regex",
    "config": {},  # EncoderConfig overrides beyond its defaults
    "chosen_on": "validation average precision, default split, 3 seeds per candidate; test never scored",
    "decisions": [],
}
