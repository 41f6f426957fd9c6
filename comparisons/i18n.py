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
    "throughput_per_s": ("throughput (texts/s)", "吞吐量 (条/秒)"),
    "peak_rss_mb": ("peak RSS (MB)", "峰值内存 (MB)"),
    "size_mb": ("size on disk (MB)", "磁盘大小 (MB)"),
    "precision": ("precision", "精确率"),
    "recall": ("recall", "召回率"),
    "predicted": ("predicted", "预测类别"),
    "true": ("true", "真实类别"),
    "metric": ("metric", "指标"),
    "value": ("value", "数值"),
    "threshold": ("threshold", "阈值"),
    "ham": ("ham", "正常短信"),
    "spam": ("spam", "垃圾短信"),
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


def setup_matplotlib(lang: str = "en") -> None:
    """Headless backend; for zh, register the shipped Noto Sans CJK SC font and use it."""
    import matplotlib

    matplotlib.use("Agg")
    if lang != "zh":
        return
    from matplotlib import font_manager

    import mplfonts

    font = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
    font_manager.fontManager.addfont(str(font))
    name = font_manager.FontProperties(fname=str(font)).get_name()
    matplotlib.rcParams["font.family"] = "sans-serif"
    matplotlib.rcParams["font.sans-serif"] = [name, "DejaVu Sans"]
    matplotlib.rcParams["axes.unicode_minus"] = False
