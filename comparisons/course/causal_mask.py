"""Causal mask: position t may only look at positions 0..t — and a classifier does not need it.

The student trains the same small torch_scratch classifier twice, once as it is (every token sees
every real token) and once with a causal mask in every attention layer (added by a forward
pre-hook on the scratch MultiHeadAttention, not by copying the model). On real test messages
the causal model's weights are checked: every weight on a later token (j > t) is exactly zero.
Then both are scored: a decoder (GPT) needs the mask so that training cannot peek at the next
token; an encoder classifier reads the whole message at once, so the mask only takes
information away.

    python -m comparisons.course.causal_mask [--out DIR] [--lang en|zh] [--quick]
"""
# %% imports
from __future__ import annotations

import argparse
from contextlib import contextmanager

import numpy as np
import pandas as pd

from common.metrics import classification_metrics
from comparisons.course.shared import (attention_figure, choose_message, course_parser, display_tokens,
                                       load_course_splits, report_written, run_course, scratch_config)
from comparisons.i18n import label, setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "causal_mask"
CHECKED_MESSAGES = 200


# %% the causal switch: a forward pre-hook on every scratch MultiHeadAttention call
@contextmanager
def causal_attention():
    """While active, every MultiHeadAttention call gets causal=True (query t sees keys 0..t)."""
    from torch.nn.modules.module import register_module_forward_pre_hook

    from backends.torch_scratch.attention import MultiHeadAttention

    def make_causal(module, args):
        if not isinstance(module, MultiHeadAttention):
            return None
        # forward(query, key, value, key_padding_mask=None, causal=False, ...): set the 5th argument
        query, key, value, *rest = args
        key_padding_mask = rest[0] if rest else None
        return (query, key, value, key_padding_mask, True, *rest[2:])

    handle = register_module_forward_pre_hook(make_causal)
    try:
        yield
    finally:
        handle.remove()


def causal_backend_class():
    """TorchScratchBackend whose fit, predictions and attention maps all run causally."""
    from backends.torch_scratch import TorchScratchBackend

    class CausalScratchBackend(TorchScratchBackend):
        """The torch_scratch classifier with a causal mask in every attention layer."""

        name = "torch_scratch_causal"

        def fit(self, train, valid):
            with causal_attention():
                return super().fit(train, valid)

        def predict_proba(self, texts):
            with causal_attention():
                return super().predict_proba(texts)

        def attention_maps(self, texts):
            with causal_attention():
                return super().attention_maps(texts)

    return CausalScratchBackend


def train_pair(train, valid, seed: int, quick: bool) -> dict:
    """{"bidirectional": backend, "causal": backend}, same config, same seed."""
    from backends.torch_scratch import TorchScratchBackend

    config = scratch_config(quick)
    return {kind: cls(config=config, seed=seed, device="cpu", progress=False).fit(train, valid)
            for kind, cls in (("bidirectional", TorchScratchBackend), ("causal", causal_backend_class()))}


# %% the check on real messages: no weight on the future
def future_weight(backend, texts) -> dict:
    """Largest and total weight any query puts on a later real token, over all layers and heads,
    and the largest deviation of a real query's row sum from 1."""
    tokens, per_layer = backend.attention_maps(texts)
    largest, total, row_sum_error = 0.0, 0.0, 0.0
    for i, message_tokens in enumerate(tokens):
        length = len(message_tokens)
        future = np.triu(np.ones((length, length), dtype=bool), k=1)  # (T, T) j > t
        for weights in per_layer:
            w = weights[i, :, :length, :length]  # (H, T, T)
            largest = max(largest, float(w[:, future].max(initial=0.0)))
            total += float(w[:, future].sum())
            row_sum_error = max(row_sum_error, float(np.abs(w.sum(axis=-1) - 1.0).max()))
    return {"max_future_weight": largest, "total_future_weight": total, "max_row_sum_error": row_sum_error,
            "messages": len(tokens)}


# %% figure
def pair_figure(maps: dict, labels: list[str], row: int, lang: str):
    """The last layer's mean weights for one message, bidirectional beside causal."""
    import matplotlib.pyplot as plt

    size = 2.5 + 0.26 * len(labels)
    fig, axes = plt.subplots(1, 2, figsize=(2 * size + 2.0, size))
    titles = {"bidirectional": text("no mask: every token sees all", "无因果掩码：每个词看见全部", lang),
              "causal": text("causal: token t sees 0..t only", "因果掩码：第 t 个词只看见 0..t", lang)}
    for ax, kind in zip(axes, ("bidirectional", "causal")):
        attention_figure(maps[kind], labels, f"{titles[kind]} (#{row})", lang, ax=ax)
    fig.tight_layout()
    return fig


# %% main
def _run(args: argparse.Namespace) -> int:
    setup_matplotlib(args.lang)
    train, valid, test = load_course_splits(args.quick)
    rows, checks, maps = [], {}, {}
    row = choose_message(test, None)
    for seed in range(args.seeds):
        models = train_pair(train, valid, seed, args.quick)
        for kind, backend in models.items():
            record = {"seed": seed, "model": kind, "best_epoch": backend.fit_info_["best_epoch"]}
            for split_name, split in (("valid", valid), ("test", test)):
                scores = classification_metrics(split.labels, backend.predict_proba(split.texts), split.positive_index)
                record[f"{split_name}_average_precision"] = scores["average_precision"]
                record[f"{split_name}_accuracy"] = scores["accuracy"]
            rows.append(record)
            if seed == 0:
                checks[kind] = future_weight(backend, test.texts[:CHECKED_MESSAGES])
                tokens, per_layer = backend.attention_maps([test.texts[row]])
                maps[kind] = per_layer[-1][0].mean(axis=0)[: len(tokens[0]), : len(tokens[0])]
                labels = display_tokens(test.texts[row], tokens[0])
    frame = pd.DataFrame(rows)
    print(frame.to_string(index=False))
    causal_ok = checks["causal"]["max_future_weight"] == 0.0 and checks["causal"]["max_row_sum_error"] < 1e-5
    for kind, check in checks.items():
        print(text(f"{kind}: largest weight on a later token over {check['messages']} test messages = "
                   f"{check['max_future_weight']:.3g}", f"{kind}：{check['messages']} 条测试短信中对后面词的最大权重 = "
                   f"{check['max_future_weight']:.3g}", args.lang))
    print(text("causal check " + ("passed: j > t gets exactly zero weight" if causal_ok else "FAILED"),
               "因果检查" + ("通过：j > t 的权重恰好为零" if causal_ok else "失败"), args.lang))
    headers = {"seed": label("seed", args.lang), "model": text("model", "模型", args.lang),
               "best_epoch": text("best epoch", "最佳轮次", args.lang),
               "valid_average_precision": text("valid AP", "验证集 AP", args.lang),
               "valid_accuracy": text("valid accuracy", "验证集准确率", args.lang),
               "test_average_precision": text("test AP", "测试集 AP", args.lang),
               "test_accuracy": text("test accuracy", "测试集准确率", args.lang)}
    check_frame = pd.DataFrame([{text("model", "模型", args.lang): kind, **check} for kind, check in checks.items()])
    paths = [
        *write_table(frame.rename(columns=headers), args.out, "scores",
                     text("Encoder classifier with and without a causal mask", "编码器分类器：有无因果掩码",
                          args.lang)),
        *write_table(check_frame, args.out, "future_weight",
                     text("Weight on later tokens (j > t), all layers and heads", "对后面词 (j > t) 的权重，所有层和头",
                          args.lang), float_format="{:.3g}"),
        save_figure(pair_figure(maps, labels, row, args.lang), args.out / "causal_mask.png"),
        atomic_write_json(args.out / "summary.json", {
            "config": scratch_config(args.quick), "seeds": args.seeds, "rows": rows, "checks": checks,
            "causal_check_passed": causal_ok, "test_row_shown": row,
        }),
    ]
    report_written(paths)
    return 0 if causal_ok else 1


def main(argv=None) -> int:
    return run_course(course_parser(MODULE, __doc__, seeds=1), argv, _run)


if __name__ == "__main__":
    raise SystemExit(main())
