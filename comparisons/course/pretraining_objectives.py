"""How BERT and GPT are pretrained: masked-language modelling against next-token prediction on the project's own
unlabelled SMS texts, then fine-tuning at 50 and 200 labels against the same model from random weights, decoding
from the GPT-style model (greedy, sampling with a temperature, beam search, every text redacted), and what the
shipped all-MiniLM-L6-v2 has and lacks for Hugging Face's fill-mask pipeline.

The models are the backends' scratch encoder (backends/torch_scratch/encoder.py), read at every position by
backends/torch_scratch/language_model.py: bidirectional with the masked-language-model objective (Devlin et al.
2019), causal with next-token prediction (Radford et al. 2018). Pretraining reads only the training part's texts,
labels hidden; a run at n labels sees n labelled texts in all (the suite's label budget: training and validation
together, common/splits.budget_parts), trains for a fixed number of steps and keeps the last (validation at these
budgets is too small to choose, common/small_budget.py); the test part is scored once. The verdict per model and
budget is the paired difference of test AP (pretrained minus random weights), a 95% t interval over seeds, the verdict
reading the paired t-test's p corrected by Holm over the cells.

Run: python -m comparisons.course.pretraining_objectives [--seeds N] [--lang en|zh] [--quick]
"""
# %% [markdown]
# # 第 18 课　BERT 与 GPT 怎样预训练：掩码语言模型与下一个词预测
#
# 第 15 课比较了**已经**预训练好的 MiniLM 与从零训练的模型；本课自己做预训练。两种目标都只需要**没有标注的文本**：
#
# - **掩码语言模型** (BERT，Devlin 等 2019)：随机选 15% 的词，其中 80% 换成 `[MASK]`、10% 换成随机词、10% 保持不变，
#   让**双向**编码器从两边的上下文猜出原词；只在选中的位置计算损失。
# - **下一个词预测** (GPT，Radford 等 2018)：**因果**掩码 (第 5 课) 让第 $t$ 个位置只看见 $0..t$，每个位置预测下一个词。
#
# 然后把预训练好的模型放到只有 50 条或 200 条标注的分类任务上微调，与**同样结构、随机初始权重**的模型配对比较。
# 最后让 GPT 式的模型自己写短信 (贪心、带温度的采样、束搜索)，并看看随项目发布的 MiniLM 在 Hugging Face 里能做什么。
#
# <!-- en -->
# # Lesson 18. How BERT and GPT are pretrained: masked-language modelling and next-token prediction
#
# Lesson 15 compared an **already** pretrained MiniLM with models trained from scratch; this lesson pretrains. Both
# objectives need only **unlabelled text**:
#
# - **masked-language modelling** (BERT, Devlin et al. 2019): choose 15% of the tokens at random; of those, 80%
#   become `[MASK]`, 10% a random token, 10% stay; a **bidirectional** encoder guesses the original from the context
#   on both sides, with the loss on the chosen positions only.
# - **next-token prediction** (GPT, Radford et al. 2018): a **causal** mask (lesson 5) lets position $t$ see only
#   $0..t$, and every position predicts the next token.
#
# Then the pretrained models are fine-tuned on a classification task with only 50 or 200 labels, each paired with
# **the same architecture from random weights**. Last, the GPT-style model writes messages of its own (greedy,
# sampling with a temperature, beam search), and we look at what the shipped MiniLM can do in Hugging Face.

# %%
from __future__ import annotations

import argparse
import copy
import re
import time

import numpy as np
import pandas as pd

from common.redaction import redact
from comparisons.course.shared import course_parser, paired_seed_tests, report_written, run_course
from comparisons.outputs import atomic_write_json, save_figure, write_table
from comparisons.report.i18n import setup_matplotlib, text

MODULE = "pretraining_objectives"
SIZES, SEEDS = (50, 200), 5
MODEL = {"d_model": 64, "num_heads": 4, "num_layers": 2, "ff_dim": 128, "dropout": 0.1, "max_len": 40}
QUICK_MODEL = {"d_model": 16, "num_heads": 2, "num_layers": 1, "ff_dim": 32, "dropout": 0.1, "max_len": 24}
PRETRAIN = {"epochs": 6, "batch_size": 64, "learning_rate": 2e-3}
QUICK_PRETRAIN = {"epochs": 1, "batch_size": 64, "learning_rate": 2e-3}
FINE_TUNE = {"steps": 100, "batch_size": 16, "learning_rate": 1e-3}  # one recipe for every model, set before the run
QUICK_FINE_TUNE = {"steps": 4, "batch_size": 16, "learning_rate": 1e-3}
KINDS = {"encoder (masked LM)": False, "decoder (next token)": True}  # name -> causal


# %% [markdown]
# ## 1. 语料与词表：只用训练部分的文本，标签藏起来
#
# 预训练语料是训练部分 (3,901 条) 的**文本**，不看标签；验证部分的文本 (同样不看标签) 用来测预训练目标在没见过的
# 文本上的损失；测试部分只在最后给分类打一次分。词表来自训练文本 (出现至少两次的词)，再加三个特殊词：
# `<mask>`、`<bos>` (开头)、`<eos>` (结尾)。表 `masking` 在整个语料上数一遍 BERT 的规则：选中约 15%，
# 其中约 80% / 10% / 10%。下面还给一条垃圾短信 (广告，不是私人消息) 掩码前后的样子，号码和链接已脱敏。
#
# <!-- en -->
# ## 1. Corpus and vocabulary: the training part's texts, labels hidden
#
# The pretraining corpus is the **texts** of the training part (3,901 messages), labels unseen; the validation
# part's texts (labels unseen too) measure the objective on texts the model never read; the test part scores the
# classifiers once, at the end. The vocabulary comes from the training texts (words seen at least twice) plus
# three tokens: `<mask>`, `<bos>` (start) and `<eos>` (end). Table `masking` counts BERT's rule over the whole
# corpus: about 15% chosen, of them about 80% / 10% / 10%. One spam message (an advertisement, not a private note)
# is shown before and after masking, numbers and links redacted.

# %%
def load_parts(quick: bool):
    """(data, split): the shipped SMS data and the suite's split (quick: 60 messages a class)."""
    from common.datasets import DataSpec, load
    from common.splits import stratified_split

    data = load(DataSpec(limit_per_class=60 if quick else None))
    return data, stratified_split(data)


def masking_table(ids: np.ndarray, vocabulary, lang: str) -> pd.DataFrame:
    """BERT's corruption applied once to the whole corpus: the shares it chose, masked, replaced and kept."""
    import torch

    from backends.torch_scratch.language_model import MASK, mask_tokens

    ids_t = torch.as_tensor(ids)
    inputs, targets = mask_tokens(ids_t, vocabulary, torch.Generator().manual_seed(0))
    chosen = targets != -100
    eligible = (ids_t > 1) & (ids_t < vocabulary.stoi[MASK]) | (ids_t == 1)
    masked = chosen & (inputs == vocabulary.stoi[MASK])
    kept = chosen & (inputs == ids_t)
    rows = [(text("word tokens in the corpus", "语料中的词元", lang), int(eligible.sum()), 1.0),
            (text("chosen (target 15%)", "选中 (目标 15%)", lang), int(chosen.sum()), float(chosen.sum() / eligible.sum())),
            (text("of the chosen: <mask> (80%)", "选中里换成 <mask> (80%)", lang), int(masked.sum()),
             float(masked.sum() / chosen.sum())),
            (text("of the chosen: a random word (10%)", "选中里换成随机词 (10%)", lang),
             int((chosen & ~masked & ~kept).sum()), float((chosen & ~masked & ~kept).sum() / chosen.sum())),
            (text("of the chosen: unchanged (10%, a random word can also draw itself)", "选中里保持不变 (10%)", lang),
             int(kept.sum()), float(kept.sum() / chosen.sum()))]
    return pd.DataFrame(rows, columns=[text("tokens", "词元", lang), text("count", "个数", lang),
                                       text("share", "比例", lang)])


def shown_text(words: list[str]) -> str:
    """Tokens as one redacted line: '.', '/', ':', '@', '-' glued to their neighbours so that links, addresses
    and numbers are whole again before redact() hides them."""
    return redact(re.sub(r" ?([./:@_-]) ?", r"\1", " ".join(words)))


# %% [markdown]
# ## 2. 预训练：同一个编码器，两种读法
#
# 两个模型结构完全相同 (`backends/torch_scratch/encoder.py` 的编码器：2 层，$d_{model} = 64$，4 个头，前馈 128)，
# 区别只在注意力是否因果、目标是哪一个 (`backends/torch_scratch/language_model.py`)。两者都用输入词嵌入矩阵
# 把每个位置的向量投到词表上 (权重共享，不加新矩阵)。表 `pretraining` 给出验证文本上的损失：预训练前 (随机权重，约
# $\ln V$)、预训练后，以及只按词频猜 (一元模型) 的交叉熵：低于一元模型，说明模型学到了词频以外的上下文。
# 两个损失不能直接比较：掩码模型只猜 15% 的位置、看得见两边；因果模型猜每个位置、只看得见左边。
#
# <!-- en -->
# ## 2. Pretraining: one encoder, read two ways
#
# The two models are the same architecture (`backends/torch_scratch/encoder.py`'s encoder: 2 layers,
# $d_{model} = 64$, 4 heads, feed-forward 128); they differ only in whether attention is causal and which objective
# trains them (`backends/torch_scratch/language_model.py`). Both project each position onto the vocabulary with the
# input embedding matrix (tied weights, no new matrix). Table `pretraining` gives the loss on the validation texts:
# before pretraining (random weights, about $\ln V$), after, and the cross-entropy of guessing by word frequency
# alone (a unigram model): below the unigram, the model has learnt context beyond frequencies. The two losses do not
# compare with each other: the masked model guesses 15% of the positions seeing both sides, the causal one every
# position seeing only the left.

# %%
def unigram_loss(train_ids: np.ndarray, held_ids: np.ndarray, causal: bool, vocabulary) -> float:
    """Cross-entropy (nats) of the training texts' token frequencies (add-one) on the held-out targets: words, and
    <eos> for the causal objective (what each objective predicts)."""
    from backends.torch_scratch.language_model import BOS, MASK

    def targets(ids):
        keep = (ids != 0) & (ids != vocabulary.stoi[BOS]) & (ids != vocabulary.stoi[MASK])
        return ids[keep] if causal else ids[keep & (ids < vocabulary.stoi[MASK])]

    counts = np.bincount(targets(train_ids), minlength=len(vocabulary)) + 1.0
    return float(-np.log(counts / counts.sum())[targets(held_ids)].mean())


def pretrain_both(vocabulary, train_ids, held_ids, model: dict, settings: dict, lang: str):
    """Each kind pretrained once (seed 0): {kind: language model}, the table, the loss curves."""
    import torch

    from backends.torch_scratch.encoder import build_model
    from backends.torch_scratch.language_model import LanguageModel, held_out_loss, pretrain
    from common.config import EncoderConfig

    config = EncoderConfig(vocab_size=len(vocabulary), **model)
    models, rows, curves = {}, [], {}
    for kind, causal in KINDS.items():
        torch.manual_seed(0)
        lm = LanguageModel(build_model(config), causal)
        before = held_out_loss(lm, held_ids, vocabulary)
        started = time.perf_counter()
        curves[kind] = pretrain(lm, train_ids, vocabulary, seed=0, **settings)
        seconds = time.perf_counter() - started
        after = held_out_loss(lm, held_ids, vocabulary)
        models[kind] = lm
        rows.append({text("model", "模型", lang): kind,
                     text("held-out loss, random weights", "验证文本损失，随机权重", lang): before,
                     text("held-out loss, pretrained", "验证文本损失，预训练后", lang): after,
                     text("unigram (frequencies only)", "一元模型 (只按词频)", lang):
                         unigram_loss(train_ids, held_ids, causal, vocabulary),
                     text("pretraining seconds", "预训练秒数", lang): seconds})
        print(f"{kind}: held-out loss {before:.3f} -> {after:.3f} ({seconds:.0f} s)", flush=True)
    return models, pd.DataFrame(rows), curves


# %% [markdown]
# ## 3. 微调：50 条和 200 条标注，预训练对随机权重
#
# 每个种子抽一份标注预算 (与整个套件相同的规则：n 条标注**包括**验证部分，`common/splits.budget_parts`)，
# 四个模型 (编码器/解码器 × 预训练/随机权重) 在**同一份** n 条短信上、用同一个固定配方 (100 步，批量 16，学习率 1e-3，
# 事先定好，没有在任何标注上调过) 训练，保留最后一步；这么小的验证部分选不了轮次 (`common/small_budget.py`)。
# 编码器用所有词的掩码平均，解码器用 `<eos>` 处的向量 (因果模型里只有最后一个位置读过整条短信，GPT 也是读最后一个位置)。
# 两种起点用同一个词表 (来自训练部分的无标注文本)，所以差别只在权重。测试集 (837 条) 只评一次 AP。结论是配对差 (预训练 − 随机权重) 在种子间的 95% $t$ 区间；
# 区间覆盖标注的抽样和微调的种子，**不**覆盖预训练的种子 (每种目标只预训练一次)。
#
# <!-- en -->
# ## 3. Fine-tuning at 50 and 200 labels: pretrained against random weights
#
# Each seed draws a label budget (the suite's rule: n labels **include** the validation part,
# `common/splits.budget_parts`); the four models (encoder / decoder × pretrained / random weights) train on the
# **same** n messages with one fixed recipe (100 steps, batch 16, learning rate 1e-3, set beforehand, tuned on no
# label) and keep the last step: validation parts this small cannot choose (`common/small_budget.py`). The encoder
# pools the masked mean over its tokens, the decoder the vector at `<eos>` (in a causal model only the last position
# has read the whole message; GPT also read the last position). Both starts share one vocabulary (from the unlabelled
# training texts), so they differ in their weights alone. Test (837 messages) is scored once, by AP. The
# verdict is the paired difference (pretrained − random) with a 95% $t$ interval over seeds; it covers the label draw
# and the fine-tuning seed, **not** the pretraining seed (each objective is pretrained once).

# %%
def fine_tune_all(data, split, vocabulary, pretrained: dict, model: dict, settings: dict, seeds: int, quick: bool):
    """One row per (size, seed, kind, start): test AP and seconds."""
    import torch
    from torch import nn

    from backends.torch_scratch.encoder import build_model
    from backends.torch_scratch.language_model import encode_with_ends, fine_tune, predict_proba
    from common.config import EncoderConfig
    from common.metrics import classification_metrics
    from common.splits import budget_parts, subset_seed

    config = EncoderConfig(vocab_size=len(vocabulary), **model)
    test_ids = encode_with_ends(vocabulary, [data.texts[i] for i in split.test], config.max_len)
    test_labels = data.labels[split.test]
    sizes = [s for s in SIZES if s < len(split.train) + len(split.valid)] if quick else list(SIZES)
    rows = []
    for size in sizes:
        for seed in range(seeds):
            train, valid = budget_parts(split, data.labels, data.texts, size, "train+valid",
                                        subset_seed=subset_seed(split.seed, seed))
            budget = np.concatenate([train, valid])  # the whole budget: validation is too small to choose
            ids = encode_with_ends(vocabulary, [data.texts[i] for i in budget], config.max_len)
            for kind, causal in KINDS.items():
                for start in ("pretrained", "random"):
                    torch.manual_seed(seed)
                    if start == "pretrained":
                        body = copy.deepcopy(pretrained[kind].body)
                        nn.init.normal_(body.head.weight, std=0.02)  # a fresh head, drawn by this seed
                        nn.init.zeros_(body.head.bias)
                    else:
                        body = build_model(config)  # the same initial law as before pretraining
                    began = time.perf_counter()
                    fine_tune(body, causal, ids, data.labels[budget], seed=seed, **settings)
                    proba = predict_proba(body, causal, test_ids)
                    ap = classification_metrics(test_labels, proba, data.positive_index)["average_precision"]
                    rows.append({"labels": size, "seed": seed, "model": kind, "start": start,
                                 "average_precision": float(ap), "seconds": time.perf_counter() - began})
            print(f"n = {size}, seed {seed}: " + ", ".join(f"{r['model']} {r['start']} {r['average_precision']:.3f}"
                                                         for r in rows[-4:]), flush=True)
    return pd.DataFrame(rows)


def verdicts(runs: pd.DataFrame, lang: str) -> pd.DataFrame:
    """Per (model, labels): mean AP of each start, pretrained − random with its 95% t interval over seeds, the paired
    t-test's p and Holm's p over the cells (shared.paired_seed_tests); the verdict reads Holm's p."""
    cells, rows = [], []
    for (kind, size), group in runs.groupby(["model", "labels"], sort=False):
        wide = group.pivot(index="seed", columns="start", values="average_precision")
        cells.append((wide["pretrained"] - wide["random"]).to_numpy())
        rows.append({text("model", "模型", lang): kind, text("labels", "标注数", lang): int(size),
                     text("seeds", "种子数", lang): len(wide),
                     text("AP pretrained", "AP 预训练", lang): float(wide["pretrained"].mean()),
                     text("AP random weights", "AP 随机权重", lang): float(wide["random"].mean())})
    for row, test in zip(rows, paired_seed_tests(cells)):
        row.update({text("pretrained − random", "预训练 − 随机", lang): test["mean"], "95% low": test["low"],
                    "95% high": test["high"], "p": test["p"],
                    text("p (Holm over cells)", "p（各格 Holm 校正）", lang): test["p_holm"],
                    text("verdict", "结论", lang): (text("pretrained higher", "预训练更高", lang) if test["mean"] > 0
                                                  else text("random higher", "随机权重更高", lang))
                    if test["p_holm"] < 0.05 else text("inconclusive", "没有定论", lang)})
    return pd.DataFrame(rows)


# %% [markdown]
# ## 4. 让解码器写短信：贪心、采样与束搜索
#
# 因果模型每次给出下一个词的概率分布 $p(w \mid \text{前文})$，生成就是一次取一个词、接到前文后面再问：
#
# - **贪心**：每次取概率最大的词。确定、但容易反复说同样的话。
# - **采样**：从 $\mathrm{softmax}(z / T)$ 里抽。温度 $T < 1$ 让分布更尖 (更保守)，$T > 1$ 更平 (更随机、更多错字)。
# - **束搜索** (束宽 4)：同时保留对数概率之和最高的 4 个前缀，结束时取每词平均对数概率最高的一条。
#
# 每条生成的文本都经过脱敏 (号码、链接、邮箱)；"抄了训练短信" 一列说明它是否与某条训练短信逐词相同
# (语言模型会背下训练文本，这是对隐私的真实风险)。`<pad>`、`<unk>`、`<mask>`、`<bos>` 不允许生成。
#
# <!-- en -->
# ## 4. Letting the decoder write: greedy, sampling and beam search
#
# The causal model gives a distribution over the next token, $p(w \mid \text{prefix})$; generating is taking one
# token, appending it and asking again:
#
# - **greedy**: the most probable token each time. Deterministic, and prone to repeating itself.
# - **sampling**: draw from $\mathrm{softmax}(z / T)$. A temperature $T < 1$ sharpens the distribution (safer),
#   $T > 1$ flattens it (more random, more nonsense).
# - **beam search** (4 beams): keep the 4 prefixes with the highest summed log-probability; at the end take the one
#   with the best mean log-probability per token.
#
# Every generated text is redacted (numbers, links, addresses); the column "copies a training text" says whether it
# equals a training message word for word (language models memorise their training text: a real privacy risk).
# `<pad>`, `<unk>`, `<mask>` and `<bos>` are never generated.

# %%
def generations(lm, vocabulary, train_texts, max_tokens: int, lang: str) -> pd.DataFrame:
    """Each decoding method from three prompts, redacted, with whether it copies a training message."""
    import torch

    from backends.torch_scratch.language_model import beam_search, generate
    from common.vocabulary import tokenize

    seen = {" ".join(tokenize(t)) for t in train_texts}
    generator = torch.Generator().manual_seed(0)
    rows = []
    for prompt in ([], ["free"], ["sorry", "i"]):
        methods = [("greedy", lambda: generate(lm, vocabulary, prompt, max_tokens))]
        methods += [(f"sampling T = {t}", lambda t=t: generate(lm, vocabulary, prompt, max_tokens, t, generator))
                    for t in (0.7, 1.0, 1.5)]
        methods += [("beam search, 4 beams", lambda: beam_search(lm, vocabulary, prompt, max_tokens, beams=4)[0])]
        for name, method in methods:
            words = method()
            rows.append({text("prompt", "开头", lang): " ".join(prompt) or "<bos>", text("method", "方法", lang): name,
                         text("generated (redacted)", "生成的文本 (已脱敏)", lang): shown_text(words),
                         text("copies a training text", "抄了训练短信", lang): " ".join(words) in seen})
    return pd.DataFrame(rows)


# %% [markdown]
# ## 5. 随项目发布的 MiniLM：有没有掩码语言模型的头？
#
# Hugging Face 的 `pipeline("fill-mask", model=...)` 需要一个带 **MLM 头** (`cls.predictions.*`：把每个位置投回词表)
# 的检查点；`model.generate(...)` 需要一个因果语言模型的头。all-MiniLM-L6-v2 是 sentence-transformers 的句向量模型，
# 它的权重文件只有 `embeddings.*`、`encoder.*` 和 `pooler.*`。下表把它装进 `AutoModelForMaskedLM` (离线，不下载)，
# 列出 transformers 报告的**缺失**权重：MLM 头的变换层 (dense + LayerNorm) 和偏置都是新随机初始化的 (只有输出矩阵
# 与词嵌入共享，是真的)，所以 fill-mask 在这里给出的词没有意义，本课不运行它；`generate` 同理不适用 (它是编码器)。它**有**的是：分词器的 `[MASK]` (id 103)，以及每个词元的 384 维向量
# (`pipeline("feature-extraction")`，句向量是它们的平均，见 `1_Pooling/config.json`)。对一个带 MLM 头的检查点
# (例如 `bert-base-uncased`，本项目不带) 调用方式是：
#
# ```python
# from transformers import pipeline
# fill = pipeline("fill-mask", model="bert-base-uncased")   # 需要下载：本课不运行
# fill("Free entry to win a [MASK] prize.")                 # 每个候选词及其概率
# ```
#
# <!-- en -->
# ## 5. The shipped MiniLM: does it have a masked-language-model head?
#
# Hugging Face's `pipeline("fill-mask", model=...)` needs a checkpoint with an **MLM head** (`cls.predictions.*`,
# projecting every position back onto the vocabulary); `model.generate(...)` needs a causal language-model head.
# all-MiniLM-L6-v2 is a sentence-transformers sentence-embedding model: its weight file holds only `embeddings.*`,
# `encoder.*` and `pooler.*`. The table loads it into `AutoModelForMaskedLM` (offline, nothing downloaded) and lists
# the weights transformers reports **missing**: the MLM head's transform (dense + LayerNorm) and its biases are
# freshly random (only its output matrix, tied to the word embeddings, is real), so fill-mask would give meaningless
# words here and the lesson does not run it; `generate` does not apply either (an encoder). What it **has**:
# the tokenizer's `[MASK]` (id 103) and a 384-dimensional vector per token (`pipeline("feature-extraction")`; the
# sentence vector is their mean, `1_Pooling/config.json`). With a checkpoint that has an MLM head (e.g.
# `bert-base-uncased`, not shipped here) the call is:
#
# ```python
# from transformers import pipeline
# fill = pipeline("fill-mask", model="bert-base-uncased")   # needs a download: not run here
# fill("Free entry to win a [MASK] prize.")                 # each candidate token with its probability
# ```

# %%
def minilm_facts(lang: str) -> pd.DataFrame:
    """What the shipped MiniLM holds: its weight groups, the tokenizer's [MASK], the MLM head's missing weights."""
    from safetensors import safe_open
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    from backends.hf_bert.pretrained import quiet_transformers, shipped_model_folder

    folder = str(shipped_model_folder())
    with safe_open(f"{folder}/model.safetensors", "pt") as weights:
        groups = sorted({key.split(".")[0] for key in weights.keys()})
    sentence = "Free entry to win a [MASK] prize."  # written for this lesson, not a message of the data
    with quiet_transformers():
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        _, info = AutoModelForMaskedLM.from_pretrained(folder, local_files_only=True, output_loading_info=True)
        vectors = pipeline("feature-extraction", model=folder, tokenizer=folder)(sentence)
    encoded = tokenizer(sentence)
    missing = sorted(info["missing_keys"])
    facts = [("weight groups in model.safetensors", "权重文件里的权重组", ", ".join(groups)),
             ("tokenizer.mask_token, mask_token_id", "分词器的掩码词与 id", f"{tokenizer.mask_token}, {tokenizer.mask_token_id}"),
             (f"tokenizer('{sentence}')", f"分词器('{sentence}')",
              " ".join(tokenizer.convert_ids_to_tokens(encoded["input_ids"]))),
             ("AutoModelForMaskedLM: weights missing (freshly random)", "AutoModelForMaskedLM：缺失 (新随机初始化) 的权重",
              f"{len(missing)}: {', '.join(missing)}"),
             ('pipeline("feature-extraction") output shape', 'pipeline("feature-extraction") 输出形状',
              f"{len(vectors)} x {len(vectors[0])} x {len(vectors[0][0])}")]
    return pd.DataFrame([(text(en, zh, lang), value) for en, zh, value in facts],
                        columns=[text("what", "内容", lang), text("value", "值", lang)])


# %% [markdown]
# ## 6. 提交的运行显示了什么
#
# (`results/course/<语言>/pretraining_objectives/`，5 个种子。) 在语料的 74,155 个词元上，BERT 的规则选中了 15.03%，
# 其中 80.0% / 10.0% / 10.0% 换成 `<mask>`、随机词、保持不变。验证文本上，掩码模型的损失从 8.135 (随机权重，
# $\ln 3491 \approx 8.16$) 降到 5.569，低于一元模型的 5.843；因果模型从 8.141 降到 5.031，低于一元模型的 5.753：
# 两者都学到了词频以外的东西 (只预训练了 6 轮，损失还在下降)。配对结论 (测试集 AP，预训练 − 随机权重，种子间 95% 区间)：
#
# | 模型 | 50 条标注 | 200 条标注 |
# |---|---|---|
# | 编码器 (掩码语言模型) | +0.128 [−0.024, +0.280]，Holm p 0.079，没有定论 | +0.033 [+0.027, +0.038]，Holm p 0.0003，预训练更高 |
# | 解码器 (下一个词) | +0.160 [+0.068, +0.252]，Holm p 0.025，预训练更高 | +0.033 [+0.011, +0.054]，Holm p 0.030，预训练更高 |
#
# (四格是四次检验：结论看配对 $t$ 检验的 p 在四格上做 Holm 校正后的值。)
#
# 50 条时编码器的平均差更大，但随机权重的模型在种子间波动很大 (AP 0.64 到 0.90)，区间跨过 0：没有定论不等于没有帮助。
# 这些区间不含预训练种子的波动，模型也远小于 MiniLM。生成的文本：贪心重复 ("a a a"、"£ £ £")，束搜索以一长串 "." 结束，
# 温度 1.5 的采样是词的拼凑；15 条里没有一条与训练短信逐词相同。脱敏只遮住号码、链接和邮箱，人名等词仍可能从训练短信里来。
#
# <!-- en -->
# ## 6. What the committed run shows
#
# (`results/course/<lang>/pretraining_objectives/`, 5 seeds.) Over the corpus's 74,155 word tokens BERT's rule chose
# 15.03%, of them 80.0% / 10.0% / 10.0% turned into `<mask>`, a random word, or left. On the validation texts the
# masked model's loss fell from 8.135 (random weights, $\ln 3491 \approx 8.16$) to 5.569, below the unigram's 5.843;
# the causal model's from 8.141 to 5.031, below the unigram's 5.753: both learnt something beyond word frequencies
# (after only 6 epochs, the loss still falling). The paired verdicts (test AP, pretrained − random weights, 95%
# interval over seeds):
#
# | model | 50 labels | 200 labels |
# |---|---|---|
# | encoder (masked LM) | +0.128 [−0.024, +0.280], Holm p 0.079, inconclusive | +0.033 [+0.027, +0.038], Holm p 0.0003, pretrained higher |
# | decoder (next token) | +0.160 [+0.068, +0.252], Holm p 0.025, pretrained higher | +0.033 [+0.011, +0.054], Holm p 0.030, pretrained higher |
#
# (Four cells are four tests: each verdict reads the paired $t$-test's p corrected by Holm over the four.)
#
# At 50 labels the encoder's mean gain is large, but the random-weight model swings across seeds (AP 0.64 to 0.90)
# and the interval crosses 0: inconclusive is not "no help". These intervals leave out the pretraining seed, and
# the models are far smaller than MiniLM. The generated texts: greedy repeats itself ("a a a", "£ £ £"), beam search
# ends in a long run of ".", sampling at temperature 1.5 is a word salad; none of the 15 equals a training message
# word for word. Redaction hides numbers, links and addresses only: names and other words can still come from the
# training messages.

# %% [markdown]
# ## 练习
#
# 1. 哪种预训练在 50 条标注时帮助更大？到 200 条时区间怎样变？与第 15 课里真正预训练过的 MiniLM 比，差距是多少？
# 2. 把掩码比例改成 40% (`language_model.MASK_RATE`)，验证文本上的损失与微调的 AP 怎样变？
# 3. 贪心生成为什么容易重复？温度 1.5 的文本错在哪里？束搜索的文本是否更"像"训练短信 (看"抄了训练短信"一列)？
# 4. MiniLM 没有 MLM 头：如果硬用 `pipeline("fill-mask")`，它的输出为什么没有意义？
#
# 运行：`python -m comparisons.course.pretraining_objectives --lang zh [--seeds 5]`。
#
# <!-- en -->
# ## Exercises
#
# 1. Which pretraining helps more at 50 labels? How does the interval change at 200? How far are both from lesson
#    15's really pretrained MiniLM?
# 2. Set the masking rate to 40% (`language_model.MASK_RATE`): how do the held-out loss and the fine-tuned AP move?
# 3. Why does greedy decoding repeat itself? What goes wrong at temperature 1.5? Does beam search write text closer
#    to the training messages (the column "copies a training text")?
# 4. MiniLM has no MLM head: why would forcing `pipeline("fill-mask")` on it give meaningless output?
#
# Run: `python -m comparisons.course.pretraining_objectives [--seeds 5]`.

# %%
def plot(curves: dict, runs: pd.DataFrame, lang: str):
    """Left: pretraining loss by epoch; right: test AP of every fine-tuning run, pretrained against random."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for kind, losses in curves.items():
        left.plot(range(1, len(losses) + 1), losses, marker="o", label=kind)
    left.set_xlabel(text("pretraining epoch", "预训练轮次", lang))
    left.set_ylabel(text("training loss (nats)", "训练损失 (nats)", lang))
    left.set_title(text("The two objectives (their losses do not compare)", "两种目标 (两者的损失不可比)", lang),
                   fontsize=10)
    left.legend(fontsize=8)
    labels = []
    for position, ((kind, size), group) in enumerate(runs.groupby(["model", "labels"], sort=False)):
        wide = group.pivot(index="seed", columns="start", values="average_precision")
        for seed, row in wide.iterrows():
            right.plot([position - 0.15, position + 0.15], [row["random"], row["pretrained"]], color="grey",
                       alpha=0.5, linewidth=1)
        right.scatter(np.full(len(wide), position - 0.15), wide["random"], color="tab:orange", s=14,
                      label=text("random weights", "随机权重", lang) if position == 0 else None)
        right.scatter(np.full(len(wide), position + 0.15), wide["pretrained"], color="tab:blue", s=14,
                      label=text("pretrained", "预训练", lang) if position == 0 else None)
        labels.append(f"{kind.split(' ')[0]}\nn = {size}")
    right.set_xticks(range(len(labels)), labels, fontsize=8)
    right.set_ylabel(text("test AP (each line one seed)", "测试集 AP (每条线一个种子)", lang))
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def run(args: argparse.Namespace) -> int:
    """Corpus and masking, both pretrainings, fine-tuning at each budget, verdicts, generations, MiniLM."""
    from backends.torch_scratch.language_model import encode_with_ends, lm_vocabulary

    setup_matplotlib(args.lang)
    lang, out, quick = args.lang, args.out, args.quick
    model = QUICK_MODEL if quick else MODEL
    seeds = 2 if quick and args.seeds == SEEDS else args.seeds  # quick: 2 seeds unless told otherwise
    data, split = load_parts(quick)
    train_texts = [data.texts[i] for i in split.train]  # the corpus: texts only, labels never read here
    vocabulary = lm_vocabulary(train_texts)
    train_ids = encode_with_ends(vocabulary, train_texts, model["max_len"])
    held_ids = encode_with_ends(vocabulary, [data.texts[i] for i in split.valid], model["max_len"])
    written = write_table(masking_table(train_ids, vocabulary, lang), out, "masking",
                          text("BERT's masking rule counted over the corpus", "在整个语料上数 BERT 的掩码规则", lang),
                          float_format="{:.4f}")
    pretrained, table, curves = pretrain_both(vocabulary, train_ids, held_ids, model,
                                              QUICK_PRETRAIN if quick else PRETRAIN, lang)
    written += write_table(table, out, "pretraining", text("Each objective on the validation texts (nats a token)",
                                                           "验证文本上的预训练目标 (每个词元的 nats)", lang),
                           float_format="{:.3f}")
    runs = fine_tune_all(data, split, vocabulary, pretrained, model, QUICK_FINE_TUNE if quick else FINE_TUNE,
                         seeds, quick)
    written += write_table(runs, out, "runs", text("Every fine-tuning run: test AP, scored once",
                                                   "每次微调：测试集 AP，只评一次", lang), float_format="{:.4f}")
    table = verdicts(runs, lang)
    written += write_table(table, out, "verdicts",
                           text("Pretrained minus random weights, test AP, 95% t interval over seeds, Holm over the "
                                "cells", "预训练减随机权重，测试集 AP，种子间 95% t 区间，各格 Holm 校正", lang),
                           float_format="{:.4f}")
    readings = [f"{row.iloc[0]}, n = {row.iloc[1]}: {row.iloc[5]:+.4f} [{row['95% low']:+.4f}, "
                f"{row['95% high']:+.4f}], Holm p {row.iloc[-2]:.3g}: {row.iloc[-1]}" for _, row in table.iterrows()]
    print("\n".join(readings))
    decoder = pretrained["decoder (next token)"]
    written += write_table(generations(decoder, vocabulary, train_texts, model["max_len"] - 2, lang), out,
                           "generations", text("The decoder writes: every text redacted",
                                               "解码器写的短信：全部已脱敏", lang))
    written += write_table(minilm_facts(lang), out, "minilm", text("What the shipped all-MiniLM-L6-v2 has",
                                                                   "随项目发布的 all-MiniLM-L6-v2 有什么", lang))
    written.append(atomic_write_json(out / "pretraining_objectives.json", {
        "quick": quick, "seeds": seeds, "sizes": sorted(runs["labels"].unique().tolist()), "model": model,
        "pretrain": QUICK_PRETRAIN if quick else PRETRAIN, "fine_tune": QUICK_FINE_TUNE if quick else FINE_TUNE,
        "corpus_texts": len(train_texts), "vocabulary": len(vocabulary), "pretraining_curves": curves,
        "verdicts": verdicts(runs, "en").to_dict(orient="records"), "readings": readings}))
    written.append(save_figure(plot(curves, runs, lang), out / "pretraining_objectives.png"))
    report_written(written)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=SEEDS)
    parser.set_defaults(threads=1)  # one thread: models this small gain little from a second
    return run_course(parser, argv, run)


# %%
if __name__ == "__main__":
    raise SystemExit(main())
