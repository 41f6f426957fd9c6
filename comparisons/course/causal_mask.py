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
# %% [markdown]
# # 第 5 课　因果掩码：第 $t$ 个位置只能看见 $0..t$，而分类器并不需要它
#
# **因果掩码** (causal mask，也叫"前瞻掩码" look-ahead mask) 是一个上三角矩阵：对 $j > t$ 的键，
# 在 softmax 之前把得分设为 $-\infty$，于是第 $t$ 个词对后面的词的注意力权重恰好为 0：
#
# $$w_{tj} = \frac{\exp(s_{tj})}{\sum_{j' \le t} \exp(s_{tj'})} \ (j \le t), \qquad w_{tj} = 0 \ (j > t)$$
#
# 解码器 (decoder，例如 GPT) 逐词生成文本，训练时必须用它，否则模型会"偷看"要预测的下一个词。
# 编码器 (encoder) 分类器一次读完整条短信，不需要预测下一个词，加上因果掩码只会丢掉信息。
#
# 本课把同一个小分类器训练两次：一次照常 (双向 bidirectional)，一次在每个注意力层加因果掩码
# (用 PyTorch 的 forward pre-hook 加上，不复制模型代码)。先在真实短信上检查：因果模型放在"未来"词上的权重是否严格为 0；
# 再比较两个模型的测试分数。
#
# <!-- en -->
# # Lesson 5. The causal mask: position $t$ may only look at $0..t$, and a classifier does not need it
#
# A **causal mask** (look-ahead mask) is upper-triangular: for keys $j > t$ the score is set to $-\infty$
# before the softmax, so token $t$ puts exactly zero weight on later tokens:
#
# $$w_{tj} = \frac{\exp(s_{tj})}{\sum_{j' \le t} \exp(s_{tj'})} \ (j \le t), \qquad w_{tj} = 0 \ (j > t)$$
#
# A decoder (GPT) writes text token by token and needs it in training, or it would peek at the token it
# must predict. An encoder classifier reads the whole message at once; the mask only takes information away.
#
# The lesson trains the same small classifier twice, as it is (bidirectional) and with a causal mask in
# every attention layer (added by a PyTorch forward pre-hook, not by copying the model). It checks on
# real messages that the causal model's weight on the future is exactly zero, then scores both.

# %% imports
from __future__ import annotations

import argparse
from contextlib import contextmanager

import numpy as np
import pandas as pd

from common.metrics import classification_metrics
from comparisons.course.shared import (attention_figure, choose_message, course_parser, display_tokens,
                                       load_course_splits, report_written, run_course, scratch_config)
from comparisons.report.i18n import label, setup_matplotlib, text
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
    return {kind: cls(config=config, seed=seed, device="cpu", choose_on="validation", progress=False).fit(train, valid)
            for kind, cls in (("bidirectional", TorchScratchBackend), ("causal", causal_backend_class()))}


# %% [markdown]
# ## 1. 在真实短信上检查：没有任何权重落在"未来"
#
# `future_weight` 取出每一层、每一个头的注意力权重，统计 $j > t$ 的位置上的最大权重和总权重
# (因果模型应为 0)，以及每行权重之和与 1 的最大偏差 (应在舍入误差以内)。
#
# <!-- en -->
# ## 1. The check on real messages: no weight on the future
#
# `future_weight` takes every layer's and head's weights and reports the largest and total weight on
# positions $j > t$ (zero for the causal model) and the largest deviation of a row sum from 1 (rounding only).

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


# %% [markdown]
# ## 2. 图：同一条短信，双向注意力与因果注意力并排
#
# **怎样读图**：两张热图都是最后一层、各头平均后的注意力权重，行是查询 (发出关注的词)，列是键 (被关注的词)。
# 左图 (无因果掩码) 整个方阵都有颜色；右图 (因果掩码) 对角线以上全是 0 (最深的底色)：每个词只看它自己和它前面的词。
# 第一个词只能看自己，所以它那一行的权重全在对角线上。
#
# <!-- en -->
# ## 2. Figure: one message, bidirectional and causal attention side by side
#
# **How to read it**: both heatmaps are the last layer's weights averaged over heads, rows = queries,
# columns = keys. On the left (no mask) the whole square is coloured; on the right (causal) everything
# above the diagonal is zero: each token sees itself and the tokens before it. The first token can
# only see itself, so its row is all on the diagonal.

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


# %% [markdown]
# ## 与原文的不同
#
# 原文 (手写 Transformer 与正弦预测) 用 `torch.triu(torch.ones(T, T), diagonal=1).bool()` 作为前瞻掩码：它把
# **未来**标为 True。它的注意力却用 `scores.masked_fill(mask == 0, -1e9)`，遮住等于 0 的位置，也就是**过去和当前**。
# 两个约定相反，结果是解码器只能看见未来，正好与因果掩码的本意相反，而且不会报错。注意力理论那份来源 (001) 的
# `generate_square_subsequent_mask` 返回**浮点**掩码 (未来为 -inf，过去和当前为 0)，本意是加到得分上；可它的
# `scaled_dot_product_attention` 同样用 `masked_fill(mask == 0, -1e9)`，等于 0 的正是过去和当前：同一个错误，
# 换了一种写法。本项目只用一个约定：
# 掩码中 True = 可以看 (`attention_allowed` 用 `tril`)，与 `torch.nn.functional.scaled_dot_product_attention`
# 的布尔 `attn_mask` 相同；上面的检查证明未来的权重严格为 0。
#
# <!-- en -->
# ## How this differs from the source
#
# The source (the hand-written Transformer with the sine forecast) builds its look-ahead mask as
# `torch.triu(torch.ones(T, T), diagonal=1).bool()`, which marks the **future** True, while its attention hides
# the entries equal to 0 with `scores.masked_fill(mask == 0, -1e9)`: the **past and the present**. The two
# conventions are opposite, so its decoder sees only the future, the reverse of a causal mask, with no error. The
# attention-theory source (001) has the same bug in another form: its `generate_square_subsequent_mask` returns a
# **float** mask (-inf on the future, 0 on the past and present) meant to be added to the scores, but its
# `scaled_dot_product_attention` also applies `masked_fill(mask == 0, -1e9)`, and the entries equal to 0 are the
# past and the present. This project keeps one convention: True = may look (`attention_allowed` uses `tril`), as in the bool `attn_mask`
# of `torch.nn.functional.scaled_dot_product_attention`; the check above shows every weight on the future is 0.


# %% [markdown]
# ## 练习
#
# 1. 读 `future_weight` 表：因果模型的最大未来权重是多少？双向模型呢？
# 2. 比较两个模型的测试平均精度 (AP)。差别大于随机种子之间的波动吗？(用 `--seeds 3` 再跑一次。)
# 3. 因果模型用平均池化时，最后一个词看见了全部词，第一个词只看见自己。如果改用 `<cls>` 放在句首做池化，会发生什么？
#
# 运行：`python -m comparisons.course.causal_mask --lang zh [--seeds 1]`。
#
# <!-- en -->
# ## Exercises
#
# 1. Read the `future_weight` table: the causal model's largest weight on the future? The bidirectional one's?
# 2. Compare the two test APs. Is the gap larger than the spread between seeds? (Run again with `--seeds 3`.)
# 3. With mean pooling in the causal model the last token sees everything and the first only itself. What if a `<cls>` token at the start did the pooling?
#
# Run: `python -m comparisons.course.causal_mask [--seeds 1]`.

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
