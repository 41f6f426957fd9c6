"""Heads one by one: attention per layer and per head for the course's scratch encoder and for all-MiniLM-L6-v2,
with per-head statistics over the test messages and a constructed sentence on which heads disagree.

Lesson 9 averaged the last layer's heads into one map. Averaging hides what multi-head attention is for: each
head has its own query, key and value projections and may look somewhere else. Here every (layer, head) map is
kept apart: for the scratch encoder (2 layers x 4 heads, trained on the SMS training part, the epoch chosen on
validation) and for the shipped MiniLM (6 layers x 12 heads, read offline with output_attentions). For each head:
flatness (row entropy over log T), weight on the token itself, on the previous token, on the first token, and
the mean distance it looks over. A sentence written for the lesson ("The animal didn't cross the street because
it was too tired.") shows, for the query "it", which word each head weights most: how far the heads disagree is
counted (distinct top words per layer, and the mean Jensen-Shannon divergence between heads' rows).

Run: python -m comparisons.course.attention_heads [--epochs N] [--messages N] [--lang en|zh] [--quick]
"""
# %% [markdown]
# # 第 19 课　一个头一个头地看：每层、每个头的注意力
#
# 第 9 课把最后一层的各个头**平均**成一张图。平均把多头注意力的用意藏起来了：每个头有自己的 $W_q, W_k, W_v$，
# 可以看不同的地方。本课把每一层、每一个头分开：课程的从零编码器 (2 层 × 4 头，在训练部分上训练，验证集选轮次)
# 和随项目发布的 MiniLM (6 层 × 12 头，离线读出 `output_attentions`)。每个头给出几个数：平坦度 (行熵除以 $\log T$)、
# 放在自己身上的权重、放在前一个词上的、放在第一个词上的 (MiniLM 是 `[CLS]`)，以及平均看多远。
# 最后用一句为本课写的句子 ("The animal didn't cross the street because it was too tired.") 看查询 "it" 时
# 每个头最关注哪个词，并数一数各头分歧有多大。
#
# <!-- en -->
# # Lesson 19. Heads one by one: attention per layer and per head
#
# Lesson 9 **averaged** the last layer's heads into one map. Averaging hides what multi-head attention is for: each
# head has its own $W_q, W_k, W_v$ and may look somewhere else. This lesson keeps every layer and every head apart:
# for the course's scratch encoder (2 layers × 4 heads, trained on the training part, the epoch chosen on
# validation) and for the shipped MiniLM (6 layers × 12 heads, read offline with `output_attentions`). Each head
# gets a few numbers: flatness (row entropy over $\log T$), the weight on the token itself, on the previous token,
# on the first token (`[CLS]` for MiniLM), and how far it looks on average. Last, a sentence written for the lesson
# ("The animal didn't cross the street because it was too tired.") shows which word each head weights most for the
# query "it", and how much the heads disagree is counted.

# %%
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from comparisons.course.shared import (course_parser, display_tokens, load_course_splits, report_written,
                                       run_course, scratch_config)
from comparisons.outputs import atomic_write_json, save_figure, write_table
from comparisons.report.i18n import setup_matplotlib, text

MODULE = "attention_heads"
EPOCHS, QUICK_EPOCHS, PATIENCE = 10, 1, 3
MESSAGES, QUICK_MESSAGES = 200, 20  # test messages the per-head statistics average over
SENTENCE, QUERY = "The animal didn't cross the street because it was too tired.", "it"  # written for the lesson


# %% [markdown]
# ## 1. 每个头的几个数
#
# 对一条长度为 $T$ 的消息，一个头的权重是 $T \times T$ 矩阵 $A$ (每行和为 1)。本课对每个头、在测试短信上平均：
#
# - **平坦度** $= \frac{1}{T}\sum_i H(A_{i\cdot}) / \log T$：1 是均匀，越小越集中；
# - **自己** $= \frac{1}{T}\sum_i A_{ii}$；**前一个词** $= \frac{1}{T-1}\sum_{i>0} A_{i,i-1}$；**第一个词** $= \frac{1}{T}\sum_i A_{i0}$；
# - **平均距离** $= \frac{1}{T}\sum_i \sum_j A_{ij}\,|i-j|$。
#
# 均匀的头：自己、前一个词、第一个词都约等于 $1/T$。
#
# <!-- en -->
# ## 1. A few numbers per head
#
# For a message of $T$ tokens a head's weights are a $T \times T$ matrix $A$ (rows sum to 1). For each head, averaged
# over test messages:
#
# - **flatness** $= \frac{1}{T}\sum_i H(A_{i\cdot}) / \log T$: 1 is uniform, lower is more focused;
# - **self** $= \frac{1}{T}\sum_i A_{ii}$; **previous** $= \frac{1}{T-1}\sum_{i>0} A_{i,i-1}$; **first**
#   $= \frac{1}{T}\sum_i A_{i0}$;
# - **mean distance** $= \frac{1}{T}\sum_i \sum_j A_{ij}\,|i-j|$.
#
# A uniform head puts about $1/T$ on self, previous and first.

# %%
def head_statistics(maps: np.ndarray) -> dict[str, np.ndarray]:
    """(H, T, T) weights of one message and layer -> per-head flatness, self, previous, first, mean distance."""
    heads, length, _ = maps.shape
    entropy = -(maps * np.log(np.clip(maps, 1e-12, None))).sum(axis=-1)  # (H, T)
    positions = np.arange(length)
    distance = np.abs(positions[:, None] - positions[None, :])  # (T, T)
    return {"flatness": entropy.mean(axis=1) / np.log(length) if length > 1 else np.full(heads, np.nan),
            "self": np.einsum("hii->h", maps) / length,
            "previous": (maps[:, positions[1:], positions[:-1]].mean(axis=1) if length > 1
                         else np.full(heads, np.nan)),
            "first": maps[:, :, 0].mean(axis=1),
            "distance": (maps * distance).sum(axis=-1).mean(axis=1)}


def statistics_table(per_message: list[list[np.ndarray]], model: str, lang: str) -> pd.DataFrame:
    """Per (layer, head): each statistic averaged over messages (messages of 2 tokens or more)."""
    names = {"flatness": text("flatness", "平坦度", lang), "self": text("self", "自己", lang),
             "previous": text("previous token", "前一个词", lang), "first": text("first token", "第一个词", lang),
             "distance": text("mean distance", "平均距离", lang)}
    rows = []
    for layer in range(len(per_message[0])):
        stats = [head_statistics(layers[layer]) for layers in per_message if layers[layer].shape[-1] > 1]
        for head in range(per_message[0][layer].shape[0]):
            row = {text("model", "模型", lang): model, text("layer", "层", lang): layer + 1,
                   text("head", "头", lang): head + 1}
            row.update({names[key]: float(np.nanmean([s[key][head] for s in stats])) for key in names})
            rows.append(row)
    return pd.DataFrame(rows)


# %% [markdown]
# ## 2. 分歧：同一个查询，各头看向哪里
#
# 对一个查询词 $q$，每个头 $h$ 给出一行权重 $A^h_{q\cdot}$。两种数法：每一层里各头**最关注的词**有几个不同的
# (1 表示所有头一致)，以及各头两两之间 Jensen–Shannon 散度的平均 (以 2 为底，0 是完全相同，1 是完全不重叠)。
#
# <!-- en -->
# ## 2. Disagreement: where the heads look for one query
#
# For a query token $q$ each head $h$ gives a row $A^h_{q\cdot}$. Two counts: how many different **most-weighted
# words** the heads of a layer pick (1: every head agrees), and the mean pairwise Jensen–Shannon divergence between
# the heads' rows (base 2: 0 is identical, 1 is no overlap).

# %%
def disagreement(rows: np.ndarray) -> tuple[int, float]:
    """(H, T) rows of one query -> (distinct arg-max keys over heads, mean pairwise JS divergence in bits)."""
    from scipy.spatial.distance import jensenshannon

    pairs = [jensenshannon(rows[a], rows[b], base=2) ** 2 for a in range(len(rows)) for b in range(a + 1, len(rows))]
    return int(len(set(rows.argmax(axis=1).tolist()))), float(np.mean(pairs)) if pairs else 0.0


def query_table(tokens: list[str], layers: list[np.ndarray], query: int, model: str, lang: str) -> pd.DataFrame:
    """Per layer: each head's most-weighted word for the query, the distinct count and the JS divergence."""
    rows = []
    for layer, maps in enumerate(layers):
        query_rows = maps[:, query, :]  # (H, T)
        distinct, js = disagreement(query_rows)
        rows.append({text("model", "模型", lang): model, text("layer", "层", lang): layer + 1,
                     text("each head's top word", "每个头最关注的词", lang):
                         " | ".join(tokens[i] for i in query_rows.argmax(axis=1)),
                     text("distinct top words", "不同的最关注词", lang): distinct,
                     text("mean JS divergence (bits)", "平均 JS 散度 (比特)", lang): js})
    return pd.DataFrame(rows)


# %% [markdown]
# ## 3. 两个模型
#
# 从零编码器用课程的小配置 (`shared.scratch_config`)，改成 2 层 × 4 头，最多 10 轮，验证集 AP 选轮次；
# 它的词表里 "it" 这样的常用词都有，但它只学过区分垃圾短信，没有学过语言。MiniLM 先在大规模文本上预训练，
# 再被训练成句向量模型。两者的第 1 层到最后一层都画出来：看每个头在统计上有什么不同，以及 "it" 那一行的分歧。
# 注意：不同的头看不同的地方，并不等于每个头都有人能读懂的"职责"；头的图和第 9 课一样，说明权重去了哪里，不说明为什么。
#
# <!-- en -->
# ## 3. The two models
#
# The scratch encoder is the course's small configuration (`shared.scratch_config`) with 2 layers × 4 heads, up to
# 10 epochs, the epoch chosen on validation AP; its vocabulary holds common words such as "it", but it has learnt
# only to tell spam apart, not language. MiniLM was pretrained on large text corpora and then trained into a
# sentence-embedding model. Both are drawn layer by layer: how the heads differ in their statistics, and how they
# disagree on the "it" row. Heads looking at different places does not mean each has a role a person can read; as
# in lesson 9, a head's map shows where weight went, not why.

# %%
def scratch_maps(quick: bool, epochs: int | None, messages: list[str]):
    """Train the 2 x 4 scratch encoder; its per-layer (H, T, T) maps of each message and of the sentence."""
    from backends.torch_scratch import TorchScratchBackend

    train, valid, _ = load_course_splits(quick)
    config = scratch_config(quick, num_layers=2, num_heads=4, epochs=epochs or (QUICK_EPOCHS if quick else EPOCHS),
                            patience=PATIENCE)
    backend = TorchScratchBackend(config=config, seed=0, device="cpu", choose_on="validation",
                                  progress=False).fit(train, valid)
    tokens, per_layer = backend.attention_maps(messages + [SENTENCE])
    maps = [[layer[i][:, :len(tokens[i]), :len(tokens[i])] for layer in per_layer] for i in range(len(tokens))]
    return maps[:-1], tokens[-1], maps[-1], backend.fit_info_


def minilm_maps(messages: list[str]):
    """The shipped MiniLM's per-layer (12, T, T) maps of each message and of the sentence, and its tokens."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from backends.hf_bert.pretrained import quiet_transformers, shipped_model_folder

    folder = str(shipped_model_folder())
    with quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = AutoModel.from_pretrained(folder, local_files_only=True, attn_implementation="eager").eval()
    maps = []
    with torch.no_grad():
        for message in messages + [SENTENCE]:
            encoded = tokenizer(message, truncation=True, max_length=64, return_tensors="pt")
            attentions = model(**encoded, output_attentions=True).attentions  # per layer (1, 12, T, T)
            maps.append([layer[0].numpy() for layer in attentions])
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(SENTENCE)["input_ids"])
    return maps[:-1], tokens, maps[-1]


# %% [markdown]
# ## 4. 提交的运行显示了什么
#
# (`results/course/<语言>/attention_heads/`，200 条测试短信。) 从零编码器 (验证集选中第 3 轮) 的 8 个头**都几乎均匀**：
# 平坦度 0.996 到 1.000，看自己、前一个词、第一个词的权重都在 0.081 到 0.088 之间，约等于 $1/T$。查询 "it" 时，
# 它的各头最关注的词各不相同 (第 1 层 3 个、第 2 层 4 个不同的词)，但各行几乎一样 (平均 JS 散度不超过 0.002 比特)：
# 行几乎均匀时，arg-max 只是噪声，所以"不同的最关注词"这一列必须和散度一起读。MiniLM 的头确实各不相同：
# 第 1 层第 3 个头几乎把全部权重放在前一个词上 (0.9996，平坦度 0.001)；72 个头中有 24 个平均把一半以上的权重放在
# `[CLS]` 上 (最多 0.79)。查询 "it" 时，第 1 层 12 个头选了 6 个不同的词 (JS 0.27 比特)，第 5 层全部选 `[CLS]`；
# 有三个头最关注 "animal" (第 1 层第 7 个头、第 4 层第 2 个头、第 6 层第 12 个头)。72 个头里有三个看向 "animal"，并不说明模型解决了指代。
#
# <!-- en -->
# ## 4. What the committed run shows
#
# (`results/course/<lang>/attention_heads/`, 200 test messages.) The scratch encoder's 8 heads (epoch 3 chosen on
# validation) are **all near-uniform**: flatness 0.996 to 1.000, and the weight on self, the previous token and the
# first token all between 0.081 and 0.088, about $1/T$. For the query "it" its heads' top words differ (3 distinct in
# layer 1, 4 in layer 2) while the rows are nearly identical (mean JS divergence at most 0.002 bits): on near-uniform
# rows the arg-max is noise, which is why the "distinct top words" column must be read beside the divergence.
# MiniLM's heads do differ: layer 1's head 3 puts almost all its weight on the previous token (0.9996, flatness
# 0.001); 24 of its 72 heads put more than half their weight on `[CLS]` on average (up to 0.79). For "it", layer
# 1's 12 heads pick 6 different words (JS 0.27 bits) and every head of layer 5 picks `[CLS]`; three heads weight
# "animal" most (layer 1 head 7, layer 4 head 2, layer 6 head 12). Three heads of 72 looking at "animal" do not show
# that the model resolves the reference.

# %% [markdown]
# ## 练习
#
# 1. 从零编码器的头比 MiniLM 的头平多少 (平坦度)？MiniLM 里有没有几乎只看前一个词、或几乎只看 `[CLS]` / `[SEP]` 的头？
# 2. 查询 "it" 时，哪一层的各头分歧最大？有没有头把最多的权重放在 "animal" 上？这能说明模型"懂得"指代吗？
# 3. 把一层的各头平均 (第 9 课的做法) 后，"it" 那一行的最关注词是哪个？平均丢掉了什么？
#
# 运行：`python -m comparisons.course.attention_heads --lang zh [--epochs 10] [--messages 200]`。
#
# <!-- en -->
# ## Exercises
#
# 1. How much flatter are the scratch encoder's heads than MiniLM's? Does MiniLM have a head that looks almost only
#    at the previous token, or almost only at `[CLS]` / `[SEP]`?
# 2. For the query "it", in which layer do the heads disagree most? Does any head weight "animal" most? Does that
#    show the model "understands" reference?
# 3. Average one layer's heads (lesson 9's way): which word does the "it" row weight most then? What did the
#    average lose?
#
# Run: `python -m comparisons.course.attention_heads [--epochs 10] [--messages 200]`.

# %%
def plot_query(tokens: list[str], layers: list[np.ndarray], query: int, title: str, lang: str):
    """One panel per layer: heads (rows) by keys (columns), the query's row of each head."""
    import matplotlib.pyplot as plt

    columns = min(3, len(layers))
    rows = -(-len(layers) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.6 * columns, 0.35 * layers[0].shape[0] * rows + 1.6 * rows),
                             squeeze=False)
    for layer, (axis, maps) in enumerate(zip(axes.flat, layers)):
        axis.imshow(maps[:, query, :], cmap="viridis", vmin=0.0, aspect="auto", interpolation="nearest")
        axis.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=7)
        axis.set_yticks(range(maps.shape[0]), [str(h + 1) for h in range(maps.shape[0])], fontsize=7)
        axis.set_title(text(f"layer {layer + 1}", f"第 {layer + 1} 层", lang), fontsize=9)
        axis.set_ylabel(text("head", "头", lang), fontsize=8)
    for axis in list(axes.flat)[len(layers):]:
        axis.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def run(args: argparse.Namespace) -> int:
    """Both models' per-head statistics over test messages, the 'it' rows, tables and figures."""
    setup_matplotlib(args.lang)
    lang, out = args.lang, args.out
    _, _, test = load_course_splits(args.quick)
    count = args.messages or (QUICK_MESSAGES if args.quick else MESSAGES)
    messages = list(test.texts[:count])  # read by the models; only statistics are written, never a message
    scratch, scratch_tokens, scratch_sentence, info = scratch_maps(args.quick, args.epochs, messages)
    minilm, minilm_tokens, minilm_sentence = minilm_maps(messages)
    scratch_labels = display_tokens(SENTENCE, scratch_tokens)
    written = write_table(pd.concat([statistics_table(scratch, "scratch 2x4", lang),
                                     statistics_table(minilm, "MiniLM 6x12", lang)]), out, "heads",
                          text(f"Per-head statistics, mean over {len(messages)} test messages",
                               f"每个头的统计，{len(messages)} 条测试短信上的平均", lang), float_format="{:.3f}")
    scratch_query = scratch_tokens.index(QUERY) if QUERY in scratch_tokens else len(scratch_tokens) // 2
    minilm_query = minilm_tokens.index(QUERY)
    queries = pd.concat([query_table(scratch_labels, scratch_sentence, scratch_query, "scratch 2x4", lang),
                         query_table(minilm_tokens, minilm_sentence, minilm_query, "MiniLM 6x12", lang)])
    written += write_table(queries, out, "disagreement",
                           text(f"Query '{scratch_tokens[scratch_query]}' in the constructed sentence: each head's "
                                "top word per layer", f"构造句中的查询 '{scratch_tokens[scratch_query]}'：每层每个头最关注的词",
                                lang), float_format="{:.3f}")
    print(queries.to_string(index=False))
    written.append(save_figure(plot_query(scratch_labels, scratch_sentence, scratch_query, text(
        f"Scratch encoder: the '{scratch_tokens[scratch_query]}' row of every head",
        f"从零编码器：每个头的 '{scratch_tokens[scratch_query]}' 这一行", lang), lang), out / "scratch_heads.png"))
    written.append(save_figure(plot_query(minilm_tokens, minilm_sentence, minilm_query, text(
        "MiniLM: the 'it' row of every head, layer by layer", "MiniLM：每层每个头的 'it' 这一行", lang), lang),
        out / "minilm_heads.png"))
    written.append(atomic_write_json(out / "attention_heads.json", {
        "quick": args.quick, "messages": len(messages), "sentence": SENTENCE, "query": QUERY,
        "scratch_best_epoch": info["best_epoch"], "scratch_best_valid_ap": info["best_valid_average_precision"],
        "disagreement": query_table(scratch_labels, scratch_sentence, scratch_query, "scratch 2x4", "en").to_dict(
            orient="records") + query_table(minilm_tokens, minilm_sentence, minilm_query, "MiniLM 6x12", "en").to_dict(
            orient="records")}))
    report_written(written)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__)
    parser.add_argument("--epochs", type=int, default=None, help=f"most epochs for the scratch encoder (default {EPOCHS})")
    parser.add_argument("--messages", type=int, default=None,
                        help=f"test messages the per-head statistics average over (default {MESSAGES})")
    parser.set_defaults(threads=1)  # one thread, as its committed outputs were made: a 2-layer encoder, MiniLM read only
    return run_course(parser, argv, run)


# %%
if __name__ == "__main__":
    raise SystemExit(main())
