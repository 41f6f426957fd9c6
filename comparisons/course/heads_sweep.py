"""How many attention heads? A sweep at equal parameter count: what the student learns.

Multi-head attention splits d_model into H heads of width d_model / H. The q/k/v/out projections
stay d_model x d_model whatever H is, so with d_model fixed every row of this sweep has EXACTLY the
same number of parameters (the table states it per row): only how the attention is divided
changes. More heads can look at several things at once, but each head is narrower (8 heads of
width 4 here). The torch_scratch encoder is trained for 1, 2, 4 and 8 heads, several seeds each,
on the suite's split; validation average precision chooses the epoch, and test AP is reported as
mean ± std over seeds, with every seed's row kept, and every pair of head counts gets the suite's paired
verdict (same test messages and seeds, Holm over the pairs). A lesson in reading error bars for what they are
(the spread over seeds) and taking claims from paired verdicts, where "inconclusive" is not "equal".

Run: python -m comparisons.course.heads_sweep [--heads 1,2,4,8] [--seeds 3] [--epochs 3] [--d-model 32]
     [--out DIR] [--lang en|zh] [--quick]
"""
# %% [markdown]
# # 第 7 课　多头注意力：头数多少合适？在参数量相同的条件下做一次扫描
#
# **多头注意力** (multi-head attention) 把宽度 $d_{model}$ 分成 $H$ 个头，每个头的宽度是 $d_k = d_{model}/H$，
# 各自做一次缩放点积注意力，再把结果拼接起来：
#
# $$\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)\,W^O, \quad
# \mathrm{head}_h = \mathrm{Attention}(XW^Q_h, XW^K_h, XW^V_h)$$
#
# 无论 $H$ 是多少，$W^Q, W^K, W^V, W^O$ 加起来都是 $d_{model} \times d_{model}$ 的矩阵，所以本课每一行的
# **参数量完全相同**：变的只是注意力怎样分割。头多，能同时关注几种关系；但每个头更窄 (这里 8 个头时每头只有 4 维)。
# 本课对 1、2、4、8 个头各训练几个随机种子，在验证集上按平均精度 (AP) 选轮次 (epoch)，在测试集上只评一次。
#
# <!-- en -->
# # Lesson 7. Multi-head attention: how many heads? A sweep at equal parameter count
#
# **Multi-head attention** splits the width $d_{model}$ into $H$ heads of width $d_k = d_{model}/H$, runs
# scaled dot-product attention in each and concatenates the results:
#
# $$\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_H)\,W^O, \quad
# \mathrm{head}_h = \mathrm{Attention}(XW^Q_h, XW^K_h, XW^V_h)$$
#
# Whatever $H$ is, $W^Q, W^K, W^V, W^O$ together stay $d_{model} \times d_{model}$ matrices, so every row
# here has **exactly the same number of parameters**: only how attention is divided changes. More heads
# can attend to several relations at once, but each is narrower (4 dimensions each with 8 heads here).
# The lesson trains 1, 2, 4 and 8 heads with several seeds; validation AP chooses the epoch, test is scored once.

# %%
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from backends.base import build
from common.errors import UserInputError
from common.scoring import fit_and_score
from comparisons.course.shared import course_parser, load_course_splits, report_written, run_course
from comparisons.report.i18n import label, phrase, setup_matplotlib, text
from comparisons.stats.bootstrap import compare
from comparisons.outputs import atomic_write_json, save_figure, write_table

MODULE = "heads_sweep"


# %% [markdown]
# ## 1. 每个头数一个配置：只有 `num_heads` 变化
#
# $d_{model}$ 必须能被头数整除 (否则每个头的宽度不是整数)，不能整除时本课给出一行清楚的错误提示。
#
# <!-- en -->
# ## 1. One configuration per head count: only `num_heads` changes
#
# $d_{model}$ must be divisible by the number of heads (else a head's width is not an integer); otherwise
# the lesson stops with one clear error line.

# %%
def sweep_configs(heads: list[int], d_model: int, epochs: int, quick: bool) -> dict[int, dict]:
    """EncoderConfig settings per head count; d_model (and so every projection) stays the same."""
    base = {"d_model": d_model, "num_layers": 1 if quick else 2, "ff_dim": 2 * d_model,
            "max_len": 32 if quick else 64, "epochs": epochs, "dropout": 0.1}
    if quick:
        base["min_steps"] = 0  # --quick: the epochs asked for, no growth to 200 steps on the small split (seconds)
    configs = {}
    for h in heads:
        if h < 1 or d_model % h:
            raise UserInputError(f"--heads {h} does not divide --d-model {d_model}; use divisors such as 1,2,4,8")
        configs[h] = {**base, "num_heads": h}
    return configs


# %% [markdown]
# ## 2. 训练每个 (头数, 种子)：在验证集上选轮次，测试集只评一次
#
# 每一行记录参数量、选中的轮次、验证集 AP、测试集 AP 和训练时间。
#
# <!-- en -->
# ## 2. Train every (heads, seed): the epoch is chosen on validation AP, test AP is scored once
#
# Each row records parameters, the chosen epoch, validation AP, test AP and training time.

# %%
def run_sweep(configs: dict[int, dict], seeds: int, splits) -> tuple[list[dict], list[dict]]:
    """(one row per (heads, seed) with parameters, chosen epoch, valid AP and test AP; the test predictions for
    the paired verdicts), each through the suite's one fit-and-score (common/scoring.py)."""
    train, valid, test = splits
    rows, predictions = [], []
    for heads, config in configs.items():
        for seed in range(seeds):
            model = build("torch_scratch", config=config, seed=seed, choose_on="validation", progress=False)
            scored = fit_and_score(model, train, valid, test)  # threshold on validation, test scored once
            best = model.fit_info_["best_epoch"]
            rows.append({"num_heads": heads, "head_dim": config["d_model"] // heads, "seed": seed,
                         "params_total": model.param_count().total, "best_epoch": best,
                         "valid_average_precision": model.fit_info_["history"][best - 1]["valid_average_precision"],
                         "test_average_precision": scored.test["average_precision"],
                         "test_macro_f1_at_threshold": scored.headline["macro_f1"], "train_seconds": scored.fit_seconds,
                         "device": model.fit_info_["device"]})
            predictions.append({"variant": f"{heads} heads", "seed": seed, "threshold": scored.threshold,
                                "proba": scored.test_proba})
            print(f"heads={heads} seed={seed}: params {rows[-1]['params_total']}, best epoch {best}, "
                  f"test AP {scored.test['average_precision']:.4f} ({scored.fit_seconds:.1f}s)")
    return rows, predictions


# %% [markdown]
# ## 3. 每个头数的均值 ± 标准差，以及带误差棒的图
#
# **怎样读图**：横轴是头数，纵轴是测试集平均精度 (AP)。大点和误差棒是各种子的均值 ± 标准差，
# 灰色小点是每个种子自己的结果。误差棒只说明**种子之间**波动有多大：两根误差棒重叠，并不说明"没有差别"，
# 不重叠也不证明"有差别"（它们不是配对比较，也不含测试集抽样）。要说某个头数更好，看下面的**配对结论**：
# 各头数在同一批测试短信、同样的种子上的 AP 差值及其 95% 区间（两级自助法），Holm 校正覆盖所有两两比较；
# Holm 校正后的 p 低于 0.05 才说"更好"或"等价" (±0.005 的容差内)，否则是"无定论"——"无定论"不等于"相同"。
# 一行自己的 95% 区间不含 0 是必要的，但还不够：校正覆盖了所有比较。
#
# <!-- en -->
# ## 3. Mean ± std per head count, a figure with error bars, and the paired verdicts
#
# **How to read it**: x is the number of heads, y the test average precision (AP). Big dots with error
# bars are the mean ± std over seeds, small grey dots each seed's own result. Error bars show how much
# the seeds alone move the score: bars that overlap do **not** show "no difference", and bars apart do not
# prove one (they are not a paired comparison and leave out test-set sampling). To say one head count is
# better, read the **paired verdicts** below: each pair of head counts on the same test messages and seeds,
# the AP difference with its 95% interval (two-level bootstrap), Holm-corrected over every pair. A Holm p below
# 0.05 says "better" (or "equivalent", within ±0.005); otherwise "inconclusive", which is not "the same". A row's
# own 95% interval excluding 0 is needed but not enough: the correction spans every pair.

# %%
def summarize(rows: list[dict]) -> pd.DataFrame:
    """Per head count: parameters, mean/std test AP, mean valid AP, mean chosen epoch and time."""
    frame = pd.DataFrame(rows)
    grouped = frame.groupby("num_heads", sort=True)
    summary = grouped.agg(head_dim=("head_dim", "first"), params_total=("params_total", "first"),
                          params_min=("params_total", "min"), params_max=("params_total", "max"),
                          ap_mean=("test_average_precision", "mean"), ap_std=("test_average_precision", "std"),
                          valid_ap_mean=("valid_average_precision", "mean"), best_epoch=("best_epoch", "mean"),
                          train_seconds=("train_seconds", "mean"), seeds=("seed", "count")).reset_index()
    summary["ap_std"] = summary["ap_std"].fillna(0.0)  # one seed: no spread to show
    return summary


def paired_verdicts(predictions: list[dict], test, lang: str) -> pd.DataFrame:
    """Every pair of head counts on AP: the suite's paired two-level bootstrap (comparisons/stats/bootstrap.py),
    Holm over every pair and both hypotheses; A − B, its 95% interval, Holm p and the verdict in words."""
    pairs = compare(pd.DataFrame(predictions), test.labels, test.positive_index).pairs
    rows = pairs[pairs["metric"] == "average_precision"]
    return pd.DataFrame({
        text("pair (A − B)", "比较对（A − B）", lang): [f"{a} − {b}" for a, b in zip(rows["variant_a"], rows["variant_b"])],
        text("ΔAP [95% interval]", "ΔAP [95% 区间]", lang):
            [f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]" for d, lo, hi in zip(rows["difference"], rows["ci_low"], rows["ci_high"])],
        text("p (Holm)", "p（Holm 校正）", lang): [f"{p:.3g}" for p in rows["p_holm"]],
        label("verdict", lang): [phrase(v, a, b, lang) for v, a, b in zip(rows["verdict"], rows["variant_a"],
                                                                         rows["variant_b"])],
    })


def localized(summary: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The summary with a 'mean ± std' column and localized headers."""
    shown = pd.DataFrame({
        label("num_heads", lang): summary["num_heads"],
        label("head_dim", lang): summary["head_dim"],
        label("params_total", lang): summary["params_total"],
        text("test AP (mean ± std)", "测试集 AP (均值 ± 标准差)", lang):
            [f"{m:.4f} ± {s:.4f}" for m, s in zip(summary["ap_mean"], summary["ap_std"])],
        label("ap_mean", lang): summary["ap_mean"],
        label("ap_std", lang): summary["ap_std"],
        text("valid AP (mean)", "验证集 AP (均值)", lang): summary["valid_ap_mean"],
        label("best_epoch", lang): summary["best_epoch"],
        label("train_seconds", lang): summary["train_seconds"],
        label("seeds", lang): summary["seeds"],
    })
    return shown


def plot(summary: pd.DataFrame, rows: list[dict], lang: str):
    """Test AP per head count: mean with ± std error bars, and every seed as a faint point."""
    import matplotlib.pyplot as plt

    fig, axis = plt.subplots(figsize=(6, 4.2))
    positions = np.arange(len(summary))
    where = {h: i for i, h in enumerate(summary["num_heads"])}
    axis.errorbar(positions, summary["ap_mean"], yerr=summary["ap_std"], fmt="o-", capsize=6, color="tab:blue",
                  label=text("mean ± std over seeds", "种子间均值 ± 标准差", lang))
    seeds_x = [where[r["num_heads"]] + 0.08 for r in rows]
    axis.scatter(seeds_x, [r["test_average_precision"] for r in rows], s=14, color="grey", alpha=0.7,
                 label=text("one seed", "单个种子", lang))
    axis.set_xticks(positions, [f"{h}\n(d_k = {d})"
                                for h, d in zip(summary["num_heads"], summary["head_dim"])])
    axis.set_xlabel(label("num_heads", lang))
    axis.set_ylabel(text("test average precision", "测试集平均精度 (AP)", lang))
    params = summary["params_total"].iloc[0]
    same = summary["params_min"].min() == summary["params_max"].max()
    axis.set_title(text(f"Heads at equal size ({params:,} parameters{'' if same else ', nearly'})",
                        f"参数量相同的注意力头数对比 ({'' if same else '约 '}{params:,} 个参数)", lang))
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    fig.tight_layout()
    return fig


# %% [markdown]
# ## 练习
#
# 1. 参数量一列是否每行都相同？用公式 $4(d_{model}^2 + d_{model})$ 验证一层注意力的参数量。
# 2. 哪个头数的平均 AP 最高？配对结论能说它比最低者更好吗？如果是"无定论"，区间告诉你差别最大可能有多大？
# 3. 头数增加到 $d_{model}$ (每个头只有 1 维) 时，你预计会怎样？用 `--heads 1,32 --d-model 32` 试一试。
#
# 运行：`python -m comparisons.course.heads_sweep --lang zh [--heads 1,2,4,8] [--seeds 3]`。
#
# <!-- en -->
# ## Exercises
#
# 1. Is the parameter column the same in every row? Check one attention layer's count with $4(d_{model}^2 + d_{model})$.
# 2. Which head count has the highest mean AP? Can the paired verdict call it better than the lowest? If it says
#    "inconclusive", how large could the difference still be, by its interval?
# 3. What do you expect with as many heads as $d_{model}$ (1 dimension per head)? Try `--heads 1,32 --d-model 32`.
#
# Run: `python -m comparisons.course.heads_sweep [--heads 1,2,4,8] [--seeds 3]`.

# %%
def parse_heads(value: str) -> list[int]:
    """'1,2,4,8' -> [1, 2, 4, 8]."""
    try:
        heads = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise UserInputError(f"--heads {value!r} must be comma-separated integers, e.g. 1,2,4,8") from None
    if not heads:
        raise UserInputError("--heads is empty; give e.g. 1,2,4,8")
    return heads


def run(args: argparse.Namespace) -> int:
    """Sweep, then write per-seed rows, the summary table, JSON and the figure."""
    if args.epochs is not None and args.epochs < 1:
        raise UserInputError(f"--epochs {args.epochs} must be at least 1")
    setup_matplotlib(args.lang)
    d_model = args.d_model or (16 if args.quick else 32)
    epochs = args.epochs or (1 if args.quick else 3)
    configs = sweep_configs(parse_heads(args.heads), d_model, epochs, args.quick)
    splits = load_course_splits(quick=args.quick)
    rows, predictions = run_sweep(configs, args.seeds, splits)
    summary = summarize(rows)
    written = write_table(pd.DataFrame(rows), args.out, "heads_sweep_runs",
                          text("Every (heads, seed) run", "每个 (头数, 种子) 的结果", args.lang))
    written += write_table(localized(summary, args.lang), args.out, "heads_sweep",
                           text(f"Attention heads at d_model={d_model}: test AP over {args.seeds} seed(s)",
                                f"d_model={d_model} 时的注意力头数: {args.seeds} 个种子的测试集 AP", args.lang))
    written += write_table(paired_verdicts(predictions, splits[2], args.lang), args.out, "heads_sweep_verdicts",
                           text("Paired verdicts on test AP: every pair of head counts, the same test messages and "
                                "seeds, Holm over every pair", "测试集 AP 的配对结论：所有头数两两比较，同一批测试短信与种子，"
                                "Holm 校正覆盖所有比较", args.lang))
    written.append(atomic_write_json(args.out / "heads_sweep.json",
                                     {"configs": configs, "seeds": args.seeds, "quick": args.quick, "rows": rows}))
    written.append(save_figure(plot(summary, rows, args.lang), args.out / "heads_sweep.png"))
    report_written(written)
    return 0


def main(argv=None) -> int:
    parser = course_parser(MODULE, __doc__, seeds=3)
    parser.add_argument("--heads", default="1,2,4,8", help="head counts to compare (default 1,2,4,8)")
    parser.add_argument("--epochs", type=int, default=None, help="epochs per run (default 3; 1 with --quick)")
    parser.add_argument("--d-model", type=int, default=None, help="model width, fixed across rows (default 32)")
    return run_course(parser, argv, run)


# %%
if __name__ == "__main__":
    raise SystemExit(main())
