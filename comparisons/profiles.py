"""Budgets per profile: what each variant is given (`fast` for make compare, `full` for the
reference run, `tiny` for the end-to-end test), and how long latency is measured."""
from __future__ import annotations

from typing import Any

from common.errors import UserInputError
from common.fast_budget import FAST_HF_BERT_FULL
from common.recipe import RECIPE as SCRATCH_RECIPE

TINY_ENCODER = {"d_model": 16, "num_heads": 2, "num_layers": 1, "ff_dim": 32, "max_len": 32, "epochs": 1,
                "min_steps": 16}

PROFILES: dict[str, dict[str, Any]] = {
    "tiny": {
        "variants": {
            "torch_scratch": {"config": TINY_ENCODER, "progress": False},
            "keras_layers": {"config": TINY_ENCODER, "progress": False},
            "hf_bert:frozen": {"max_length": 24, "epochs": 2, "min_steps": 0, "progress": False},
            "hf_bert:full": {"max_length": 24, "epochs": 1, "min_steps": 0, "progress": False},
        },
        "latency": {"min_calls": 5, "min_seconds": 0.05},
        "timeout_s": 600,
    },
    "fast": {
        "variants": {
            # the scratch recipe (common/recipe.py, chosen on validation) at 2 of its 3 epochs
            "torch_scratch": {"config": {"epochs": 2}, "tokenizer": SCRATCH_RECIPE["tokenizer"]},
            "keras_layers": {"config": {"epochs": 2}, "tokenizer": SCRATCH_RECIPE["tokenizer"]},
            # 2 epochs, the learning rate decaying over both: chosen on validation (common/fast_budget.py)
            "hf_bert:full": dict(FAST_HF_BERT_FULL["params"]),
        },
        "latency": {"min_calls": 20, "min_seconds": 1.0},
        "timeout_s": 900,
    },
    "full": {
        "variants": {  # each backend's own defaults, and the scratch recipe's tokenizer (common/recipe.py)
            "torch_scratch": {"tokenizer": SCRATCH_RECIPE["tokenizer"]},
            "keras_layers": {"tokenizer": SCRATCH_RECIPE["tokenizer"]},
        },
        "latency": {"min_calls": 20, "min_seconds": 2.0},  # p50 of >= 20 warm calls; CV recorded
        "timeout_s": 1800,
    },
}


# Where the suite's finding is: the committed full-budget run (5 group-aware partitions), and the command that remakes it.
REFERENCE_PAGE = "results/reference/report.html"
REFERENCE_COMMAND = "make reference"


def preview_note(profile_name: str, seeds: int, lang: str = "en") -> str | None:
    """One line for a run whose budget is a preview (`fast`, `tiny`): which budget, how many seeds,
    and where the reference is, so that no one reads its ranking as the suite's finding. None for
    `full`, the reference's budget."""
    from comparisons.i18n import text

    if profile_name not in PROFILES or profile_name == "full":
        return None
    seeds_en = "one seed" if seeds == 1 else f"{seeds} seeds"
    return text(f"Preview: the {profile_name} budget, {seeds_en}; not the suite's finding. The reference "
                f"(full budget, verdicts over 5 partitions) is {REFERENCE_PAGE}; `{REFERENCE_COMMAND}` remakes it.",
                f"预览：{profile_name} 预算，{seeds} 个种子；不是本套件的结论。参考结果（full 预算，"
                f"5 个划分上的结论）见 {REFERENCE_PAGE}；`{REFERENCE_COMMAND}` 可重新生成。", lang)


def profile(name: str) -> dict[str, Any]:
    if name not in PROFILES:
        raise UserInputError(f"unknown profile {name!r}; choose from {', '.join(PROFILES)}")
    return PROFILES[name]


def variant_overrides(profile_name: str, variant: str) -> dict[str, Any]:
    """Keyword arguments the profile gives a variant (a copy, safe to update)."""
    return {k: (dict(v) if isinstance(v, dict) else v)
            for k, v in profile(profile_name)["variants"].get(variant, {}).items()}
