"""TF-IDF + logistic regression: the strong, cheap baseline every Transformer must beat."""
from backends.tfidf_logreg.model import TfidfLogReg

__all__ = ["TfidfLogReg"]
