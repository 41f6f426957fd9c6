"""SetFit on the shipped MiniLM (the variant hf_bert:setfit): contrastive fine-tuning, then logistic regression."""
from backends.setfit_minilm.model import SetFitMiniLM

__all__ = ["SetFitMiniLM"]
