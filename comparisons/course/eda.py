"""Exploratory data analysis of the SMS data before any model: what the student learns.

- Class balance: spam is the minority (about 13%), overall and in each split, which is why the
  suite reports average precision and spam precision/recall rather than accuracy alone.
- Length: spam messages are longer (tokens and characters), a signal any model can pick up, and
  the reason a `max_len` of 64 tokens truncates few messages.
- Duplicates: the same text appears several times, some across train and test, which flatters
  test scores a little (see `common.splits.duplicate_report`).
- Examples: a few messages per class, redacted (links, e-mails and numbers hidden) and shortened;
  raw text is never printed or written.

Run: python -m comparisons.course.eda [--out DIR] [--lang en|zh] [--examples 3] [--quick]
"""
# %% [markdown]
# # 第 1 课　探索性数据分析 (EDA)：训练模型之前先看数据
#
# 本课不训练任何模型，只回答三个问题：
# 1. **类别分布**：垃圾短信 (spam) 占多少？训练集、验证集、测试集里的比例是否一致？
# 2. **长度**：垃圾短信是不是更长？以词元 (token) 计，有多少短信超过模型的最大长度 `max_len = 64`？
# 3. **重复**：同一条短信是否出现多次？有没有测试集的短信在训练集里原样出现过？
#
# 为什么要先看数据：如果正常短信占 87%，一个"永远回答正常"的模型准确率 (accuracy) 也有 87%，
# 所以本套件报告平均精度 (AP)、垃圾短信的精确率和召回率，而不只是准确率。
# 所有示例短信都经过脱敏：链接、邮箱、号码显示为 `<URL>`、`<EMAIL>`、`<NUM>`，原文从不输出。
#
# <!-- en -->
# # Lesson 1. Exploratory data analysis: look at the data before any model
#
# No model is trained here. The lesson answers three questions:
# 1. **Class balance**: what share is spam, and is it the same in train, validation and test?
# 2. **Length**: are spam messages longer? How many exceed the models' `max_len = 64` tokens?
# 3. **Duplicates**: does the same text occur several times, and does any test text also occur in train?
#
# Why first: with 87% ham, a model that always answers "ham" is 87% accurate, which is why the suite
# reports average precision (AP) and spam precision/recall, not accuracy alone. Every example is
# redacted (links, e-mails and numbers become `<URL>`, `<EMAIL>`, `<NUM>`); raw text is never shown.

# %%
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common.datasets import DataSpec, LabelledTexts, load
from common.errors import UserInputError
from common.redaction import snippet
from common.splits import duplicate_report, stratified_split
from common.vocabulary import tokenize
from comparisons.course.shared import course_parser, report_written, run_course
from comparisons.report.i18n import label, setup_matplotlib, text
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "eda"
SPLITS = ("train", "valid", "test")


# %% [markdown]
# ## 1. 类别分布：全部数据和每个划分
#
# 分层划分 (stratified split) 让训练集、验证集、测试集的垃圾短信比例几乎相同。
# 下面的函数对每个划分数出每类的条数和占比 (share)。
#
# <!-- en -->
# ## 1. Class balance, overall and per split
#
# A stratified split keeps the spam share almost the same in train, validation and test. The
# function below counts each class and its share in every split.

# %%
def class_balance(data: LabelledTexts, split, lang: str) -> pd.DataFrame:
    """Rows per class and their share, in every split and overall."""
    rows = []
    groups = [(name, getattr(split, name)) for name in SPLITS] + [("all", np.arange(len(data)))]
    for split_name, indices in groups:
        labels = data.labels[indices]
        for index, class_name in enumerate(data.class_names):
            count = int((labels == index).sum())
            rows.append({label("split", lang): label(split_name, lang),
                         label("class", lang): label(class_name, lang),
                         label("count", lang): count,
                         label("share", lang): count / max(len(labels), 1)})
    return pd.DataFrame(rows)


# %% [markdown]
# ## 2. 每类短信的长度：词元数和字符数
#
# 词元数按从零实现的模型所用的分词方式计算 (`common.vocabulary.tokenize`)。
# 表中给出均值、中位数、第 90 百分位数 (p90) 和最大值，以及超过 `max_len` 个词元、会被截断的短信比例。
#
# <!-- en -->
# ## 2. Message length per class: tokens (as the scratch models see them) and characters
#
# Tokens are counted with the scratch models' tokenizer (`common.vocabulary.tokenize`). The table
# gives mean, median, 90th percentile (p90) and maximum, and the share longer than `max_len` tokens,
# which the models truncate.

# %%
def lengths(data: LabelledTexts) -> pd.DataFrame:
    """One row per message: class index, token count, character count (no text)."""
    return pd.DataFrame({
        "label": data.labels,
        "tokens": [len(tokenize(t)) for t in data.texts],
        "characters": [len(t) for t in data.texts],
    })


def length_summary(frame: pd.DataFrame, class_names, lang: str, max_len: int = 64) -> pd.DataFrame:
    """Mean, median, 90th percentile and max length per class; share longer than max_len tokens."""
    rows = []
    for index, class_name in enumerate(class_names):
        part = frame[frame.label == index]
        for unit in ("tokens", "characters"):
            values = part[unit].to_numpy()
            rows.append({label("class", lang): label(class_name, lang), label("unit", lang): label(unit, lang),
                         label("mean", lang): float(values.mean()), label("median", lang): float(np.median(values)),
                         label("p90", lang): float(np.percentile(values, 90)), label("max", lang): int(values.max())})
        rows[-2][text(f"share > {max_len} tokens", f"超过 {max_len} 个词元的比例", lang)] = float(
            (part.tokens > max_len).mean())
    return pd.DataFrame(rows)


# %% [markdown]
# ## 3. 图：类别分布柱状图和长度箱线图
#
# **怎样读图**：左图是每类的短信条数和占比。中图和右图是箱线图 (box plot)：箱子是中间 50% 的短信
# (第 25 到第 75 百分位数)，箱中横线是中位数，圆点是离群值。中图的灰色虚线是 `max_len = 64`：
# 虚线以上的短信会被截断。两类的箱子位置不同，说明"长度"本身就是区分垃圾短信的线索。
#
# <!-- en -->
# ## 3. Figure: class balance and length box plots
#
# **How to read it**: the left panel counts each class. The middle and right panels are box plots:
# the box holds the middle 50% of messages (25th to 75th percentile), the line inside is the median,
# dots are outliers. The dashed grey line in the middle panel is `max_len = 64`: messages above it
# are truncated. The boxes sit at different heights: length alone is a clue to spam.

# %%
def plot(frame: pd.DataFrame, data: LabelledTexts, lang: str):
    """Bar chart of class counts, then box plots of token and character counts per class."""
    import matplotlib.pyplot as plt

    names = [label(c, lang) for c in data.class_names]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    counts = [int((data.labels == i).sum()) for i in range(data.n_classes)]
    bars = axes[0].bar(names, counts, color=["tab:blue", "tab:red"][: len(names)] or None)
    for bar, count in zip(bars, counts):
        axes[0].annotate(f"{count} ({count / len(data):.1%})", (bar.get_x() + bar.get_width() / 2, count),
                         ha="center", va="bottom")
    axes[0].set_title(text("Class balance (all messages)", "类别分布 (全部短信)", lang))
    axes[0].set_ylabel(label("count", lang))
    for axis, unit in zip(axes[1:], ("tokens", "characters")):
        groups = [frame.loc[frame.label == i, unit].to_numpy() for i in range(data.n_classes)]
        axis.boxplot(groups, tick_labels=names, showfliers=True, flierprops={"markersize": 2, "alpha": 0.4})
        axis.set_title(text(f"Length in {unit} per class", f"每类的长度 ({label(unit, 'zh')})", lang))
        axis.set_ylabel(label(unit, lang))
    axes[1].axhline(64, color="grey", linestyle="--", linewidth=1)
    axes[1].annotate("max_len = 64", (0.5, 66), color="grey", fontsize=8)
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 4. 重复短信，以及每类几条脱敏示例
#
# 完全相同的短信会出现多次。如果同一条文本既在训练集又在测试集，模型等于"见过答案"，
# 测试分数会略微偏高 (数据泄漏 data leakage 的一种)。表中给出重复行数和各划分之间共有的文本数。
# 示例短信经过脱敏并截短。
#
# <!-- en -->
# ## 4. Duplicates, and a few redacted examples per class
#
# Identical messages occur several times. A text in both train and test has been "seen" by the
# model, which flatters the test score a little (a form of data leakage). The table gives the
# duplicate rows and the texts shared between splits. Examples are redacted and shortened.

# %%
def redacted_examples(data: LabelledTexts, per_class: int, lang: str, seed: int = 0) -> pd.DataFrame:
    """`per_class` random messages of each class, redacted and shortened by `snippet` (never raw)."""
    rng = np.random.default_rng(seed)
    rows = []
    for index, class_name in enumerate(data.class_names):
        members = np.flatnonzero(data.labels == index)
        for i in rng.choice(members, size=min(per_class, len(members)), replace=False):
            rows.append({label("class", lang): label(class_name, lang), "id": int(i),
                         label("example", lang): snippet(data.texts[i], width=80)})
    return pd.DataFrame(rows)


# %% [markdown]
# ## 练习
#
# 1. 如果一个模型把所有短信都判为正常短信，它在测试集上的准确率是多少？平均精度 (AP) 呢？
#    (提示：看类别分布表中测试集的垃圾短信占比。)
# 2. 在长度表中找出超过 64 个词元的短信比例。把 `max_len` 改成 32，会有多少短信被截断？
# 3. 测试集里有多少条短信的文本也出现在训练集中？这会让测试分数偏高还是偏低？为什么？
#
# 运行：`python -m comparisons.course.eda --lang zh`，结果写在 `results/course/zh/eda/`。
#
# <!-- en -->
# ## Exercises
#
# 1. A model that calls every message ham: what is its test accuracy? Its average precision (AP)?
#    (Hint: the test split's spam share in the class-balance table.)
# 2. Find the share of messages longer than 64 tokens. How many would be truncated at `max_len = 32`?
# 3. How many test messages have their text in train? Does that push the test score up or down, and why?
#
# Run: `python -m comparisons.course.eda`, results in `results/course/en/eda/`.

# %%
def run(args: argparse.Namespace) -> int:
    """Load the data, write the tables, the duplicate report and the figure."""
    if args.examples < 0:
        raise UserInputError(f"--examples {args.examples} must be 0 or more")
    setup_matplotlib(args.lang)
    data = load(DataSpec(limit_per_class=60 if args.quick else None))
    split = stratified_split(data)
    frame = lengths(data)
    written = []
    written += write_table(class_balance(data, split, args.lang), args.out, "class_balance",
                           text("Class balance per split", "各数据划分的类别分布", args.lang))
    written += write_table(length_summary(frame, data.class_names, args.lang), args.out, "lengths",
                           text("Message length per class", "每类短信的长度", args.lang), float_format="{:.2f}")
    duplicates = duplicate_report(data, split)
    written.append(atomic_write_json(args.out / "duplicates.json", duplicates))
    dup_rows = [(label("rows", args.lang), duplicates["rows"]),
                (label("unique_texts", args.lang), duplicates["unique_texts"]),
                (label("duplicate_rows", args.lang), duplicates["duplicate_rows"]),
                (label("test_rows_whose_text_is_in_train", args.lang), duplicates["test_rows_whose_text_is_in_train"])]
    dup_rows += [(text(f"texts shared {pair}", f"{pair} 共有的文本", args.lang), n)
                 for pair, n in sorted(duplicates["texts_shared_between_splits"].items())]
    written += write_table(pd.DataFrame(dup_rows, columns=[label("metric", args.lang), label("value", args.lang)]),
                           args.out, "duplicates", text("Exact duplicates", "完全重复的短信", args.lang))
    if args.examples:
        written += write_table(redacted_examples(data, args.examples, args.lang), args.out, "examples",
                               text("Redacted examples (links, e-mails, numbers hidden)",
                                    "脱敏示例 (已隐藏链接、邮箱和号码)", args.lang))
    written.append(save_figure(plot(frame, data, args.lang), args.out / "eda.png"))
    report_written(written)
    spam = float((data.labels == data.positive_index).mean()) if data.positive_index is not None else float("nan")
    print(f"{len(data)} messages, spam share {spam:.1%}, {duplicates['duplicate_rows']} duplicate rows, "
          f"{duplicates['test_rows_whose_text_is_in_train']} test rows whose text is in train")
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__)
    parser.add_argument("--examples", type=int, default=3, help="redacted example messages per class (default 3)")
    return run_course(parser, argv, run)


# %%
if __name__ == "__main__":
    raise SystemExit(main())
