"""Pretrained BERT-family encoder (all-MiniLM-L6-v2 shipped offline): frozen features or full fine-tuning."""
from backends.hf_bert.backend import HfBertBackend

__all__ = ["HfBertBackend"]
