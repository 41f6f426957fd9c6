"""English and Chinese labels for tables and figures (`--lang zh`), and a CJK font that ships with
the project's dependencies (mplfonts' Noto Sans CJK SC), so figures render on a fresh machine."""
from __future__ import annotations

from pathlib import Path

LANGUAGES = ("en", "zh")

LABELS: dict[str, tuple[str, str]] = {
    # key: (English, Chinese)
    "variant": ("variant", "模型变体"),
    "seed": ("seed", "随机种子"),
    "seeds": ("seeds", "种子数"),
    "status": ("status", "状态"),
    "reason": ("reason", "原因"),
    "accuracy": ("accuracy", "准确率"),
    "macro_f1": ("macro-F1", "宏平均 F1"),
    "average_precision": ("average precision", "平均精度 (AP)"),
    "positive_precision": ("spam precision", "垃圾短信精确率"),
    "positive_recall": ("spam recall", "垃圾短信召回率"),
    "params_total": ("parameters", "参数量"),
    "params_trainable": ("trainable parameters", "可训练参数量"),
    "train_seconds": ("train time (s)", "训练时间 (秒)"),
    "latency_ms_b1_p50": ("latency b=1 p50 (ms)", "延迟 批量1 中位数 (毫秒)"),
    "latency_ms_b32_p50": ("latency b=32 p50 (ms)", "延迟 批量32 中位数 (毫秒)"),
    "latency_b32_cv_over_seeds": ("b=32 p50 CV over seeds", "批量32 中位数的种子间变异系数"),
    "throughput_per_s": ("throughput (texts/s, batch 32)", "吞吐量 (条/秒，批量32)"),
    "peak_rss_mb": ("peak RSS (MB)", "峰值内存 (MB)"),
    "size_mb": ("size on disk (MB)", "磁盘大小 (MB)"),
    "unknown_token_rate": ("unknown tokens on test", "测试集未知词元比例"),
    # the cut a decision metric uses (report tables, verdicts)
    "accuracy_0_5_cut": ("accuracy (0.5 cut)", "准确率（0.5 阈值）"),
    "accuracy_at_threshold": ("accuracy (validation threshold)", "准确率（验证集所选阈值）"),
    "macro_f1_0_5_cut": ("macro-F1 (0.5 cut)", "宏平均 F1（0.5 阈值）"),
    "macro_f1_at_threshold": ("macro-F1 (validation threshold)", "宏平均 F1（验证集所选阈值）"),
    # probability calibration as verdict rows (lower is better: 'A better' means A's is lower)
    "brier": ("Brier score (lower is better)", "Brier 分数（越低越好）"),
    "ece": ("ECE, 10 equal-mass bins (lower is better)", "ECE，10 个等量分箱（越低越好）"),
    # costs measured alike for every backend (comparisons/run/measure.py, comparisons/run/measure.py)
    "epochs_run": ("epochs run", "训练轮数"),
    "seconds_per_epoch": ("s per epoch", "每轮秒数"),
    "compile_seconds": ("compile/tracing (s)", "编译/追踪 (秒)"),
    "throughput_batch": ("throughput batch size", "吞吐量批量大小"),
    "cold_start_s": ("cold start, fresh process (s)", "冷启动，新进程 (秒)"),
    "peak_rss_train_mb": ("train peak RSS (MB)", "训练峰值内存 (MB)"),
    "peak_rss_serve_mb": ("serving peak RSS (MB)", "推理服务峰值内存 (MB)"),
    "serve_max_abs_diff": ("reloaded model: max |Δp|", "重新加载模型：最大 |Δp|"),
    # the serving table (comparisons/report/serving.py)
    "serving_path": ("serving path", "服务路径"),
    "flips_vs_native": ("flips vs native", "相对原生模型翻转的判定数"),
    "max_proba_change_vs_native": ("largest Δp vs native", "相对原生模型的最大 Δp"),
    "batch_dependence": ("batch dependence: largest Δp / flips", "批量依赖：最大 Δp / 翻转数"),
    "ok": ("ok", "完成"),
    "skipped": ("skipped", "跳过"),
    "refused": ("refused", "拒绝"),
    "failed": ("failed", "失败"),
    "verdict_vs_native": ("AP verdict vs native", "AP 相对原生模型的结论"),
    # verdicts.csv columns (comparisons/stats/bootstrap.py)
    "variant_a": ("A", "A"),
    "variant_b": ("B", "B"),
    "n_items": ("test items", "测试样本数"),
    "difference": ("difference A − B", "差值 A − B"),
    "ci_low": ("95% interval, low", "95% 区间下限"),
    "ci_high": ("95% interval, high", "95% 区间上限"),
    "p_value": ("p (bootstrap)", "p（自助法）"),
    "p_holm": ("p (Holm-corrected)", "p（Holm 校正）"),
    "smallest_detectable_difference": ("smallest detectable difference", "可检测的最小差异"),
    "verdict": ("verdict", "结论"),
    "a_right_b_wrong": ("only A right (items)", "仅 A 正确（条）"),
    "a_wrong_b_right": ("only B right (items)", "仅 B 正确（条）"),
    "mcnemar_p_per_seed": ("McNemar exact p per seed", "每个种子的 McNemar 精确 p"),
    "decisions_p": ("decisions p (pooled sign-flip)", "判定检验 p（合并符号翻转）"),
    "decisions_p_holm": ("decisions p (Holm-corrected)", "判定检验 p（Holm 校正）"),
    "verdict_decisions": ("verdict on decisions (pooled)", "基于判定的结论（合并检验）"),
    "margin": ("equivalence margin", "等价容差"),
    "p_equivalence": ("equivalence p (TOST)", "等价检验 p（双单侧）"),
    "p_equivalence_holm": ("equivalence p (Holm-corrected)", "等价检验 p（Holm 校正）"),
    "standard_error": ("standard error", "标准误"),
    "precision": ("precision", "精确率"),
    "recall": ("recall", "召回率"),
    "predicted": ("predicted", "预测类别"),
    "true": ("true", "真实类别"),
    "metric": ("metric", "指标"),
    "value": ("value", "数值"),
    "threshold": ("threshold", "阈值"),
    "ham": ("ham", "正常短信"),
    "spam": ("spam", "垃圾短信"),
    # course-B modules (eda, threshold, heads_sweep, sine_forecast)
    "split": ("split", "数据划分"),
    "class": ("class", "类别"),
    "count": ("count", "数量"),
    "share": ("share", "占比"),
    "train": ("train", "训练集"),
    "valid": ("valid", "验证集"),
    "test": ("test", "测试集"),
    "all": ("all", "全部"),
    "unit": ("unit", "单位"),
    "tokens": ("tokens", "词元数"),
    "characters": ("characters", "字符数"),
    "mean": ("mean", "均值"),
    "median": ("median", "中位数"),
    "p90": ("90th percentile", "90 分位数"),
    "max": ("max", "最大值"),
    "example": ("example (redacted)", "示例 (已脱敏)"),
    "rows": ("rows", "行数"),
    "unique_texts": ("unique texts", "不同文本数"),
    "duplicate_rows": ("duplicate rows", "重复行数"),
    "test_rows_whose_text_is_in_train": ("test rows whose text is in train", "文本也出现在训练集中的测试行"),
    "precision_floor": ("precision floor", "精确率下限"),
    "rule": ("rule", "规则"),
    "num_heads": ("heads", "注意力头数"),
    "head_dim": ("width per head", "每个头的维度"),
    "ap_mean": ("test AP mean", "测试集 AP 均值"),
    "ap_std": ("test AP std", "测试集 AP 标准差"),
    "best_epoch": ("chosen epoch", "选中的轮次"),
    "model": ("model", "模型"),
    "mse": ("test MSE", "测试集均方误差 (MSE)"),
    "forecast": ("forecast", "预测"),
    "truth": ("truth", "真实值"),
    "history": ("history", "历史"),
    "time_step": ("time step", "时间步"),
    # the report page (report_page.py)
    "valid_average_precision": ("valid AP", "验证集 AP"),
    "train_size": ("training messages", "训练条数"),
}


def check_language(lang: str) -> str:
    from common.errors import UserInputError

    if lang not in LANGUAGES:
        raise UserInputError(f"unknown language {lang!r}; use --lang en or --lang zh")
    return lang


def label(key: str, lang: str = "en") -> str:
    """The header/axis label for `key` in `lang` (the key itself when there is none)."""
    pair = LABELS.get(key)
    if pair is None:
        return key
    return pair[1] if lang == "zh" else pair[0]


def text(english: str, chinese: str, lang: str) -> str:
    """Pick a one-off title or sentence by language."""
    return chinese if lang == "zh" else english


_FONT_KEYS = ("font.family", "font.sans-serif", "axes.unicode_minus")
_DEFAULT_FONTS: dict = {}  # the settings a Chinese figure changed, as they were before it


def setup_matplotlib(lang: str = "en") -> None:
    """Headless backend; for zh, register the shipped Noto Sans CJK SC font and use it."""
    import matplotlib

    matplotlib.use("Agg")
    if lang != "zh":  # the default fonts, even after a Chinese figure in this process: an English figure never
        for key, value in _DEFAULT_FONTS.items():  # depends on what was drawn before it
            matplotlib.rcParams[key] = value
        return
    from matplotlib import font_manager

    import mplfonts

    font = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
    font_manager.fontManager.addfont(str(font))
    name = font_manager.FontProperties(fname=str(font)).get_name()
    _DEFAULT_FONTS.update({key: matplotlib.rcParams[key] for key in _FONT_KEYS if key not in _DEFAULT_FONTS})
    matplotlib.rcParams["font.family"] = "sans-serif"
    matplotlib.rcParams["font.sans-serif"] = [name, "DejaVu Sans"]
    matplotlib.rcParams["axes.unicode_minus"] = False

def phrase(verdict: str, variant_a: str, variant_b: str, lang: str = "en") -> str:
    """'A better' -> 'keras_layers better'; the other verdicts in words (English or Chinese)."""
    if verdict == "A better":
        return text(f"{variant_a} better", f"{variant_a} 更好", lang)
    if verdict == "B better":
        return text(f"{variant_b} better", f"{variant_b} 更好", lang)
    words = {"equivalent": ("equivalent within the margin", "在容差内等价"),
             "inconclusive": ("inconclusive", "无定论")}
    return text(*words[verdict], lang) if verdict in words else str(verdict)
