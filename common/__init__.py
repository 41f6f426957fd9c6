"""Framework-free layer: datasets, splits, vocabulary, metrics, redaction, configs.

Nothing in this package imports torch, tensorflow, keras or transformers.
"""
