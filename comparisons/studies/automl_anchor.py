"""One AutoML tool fitted within a time limit on a training CSV and scored once on a held-out CSV: an anchor for
`select` (comparisons/studies/automl_side_by_side.py writes the CSVs and runs this script).

    .venv-autogluon/bin/python comparisons/studies/automl_anchor.py --tool autogluon --train train.csv \
        --test test.csv --text-col text --label-col label --positive spam --time-limit 1800 --threads 2 \
        --out result.json

It runs INSIDE the tool's own virtual environment (`make anchors-venvs`), whose pins conflict with the project's
(AutoGluon caps pandas below 2.4, FLAML's automl extra caps xgboost below 3), so it imports only the standard
library, numpy, pandas, scikit-learn and the tool: never the project's packages.

- autogluon: TabularPredictor on the text column as it is (AutoGluon Tabular turns a text column into its own
  n-gram counts and text statistics), the medium_quality preset (AutoGluon's default), `time_limit`, num_cpus =
  --threads, num_gpus 0; metric: average_precision on two classes, else the macro one-vs-rest AP below (a custom
  scorer: AutoGluon has no multi-class AP). The pick is predictor.model_best, its validation score the
  leaderboard's score_val.
- flaml: TF-IDF (word 1-2-grams, sublinear, 20,000 features; character 1-2-grams where a tenth of the training
  texts hold a CJK character), fitted on the training texts only, then AutoML.fit(task="classification",
  time_budget, n_jobs = --threads) over ESTIMATORS; metric "ap" on two classes, else the macro AP as a custom
  metric. The pick is automl.best_estimator, its validation score 1 - best_loss.
- flaml-transformer: FLAML's transformer estimator (task seq-classification, estimator_list ["transformer"]) fine-
  tuning --model-folder (the shipped all-MiniLM-L6-v2 folder) with the hub, transformers and datasets offline; its
  own environment (`make anchors-venv-hf`: flaml[automl,hf], transformers 4.46, whose Trainer.log still has the
  one-argument signature FLAML's trainer overrides). Opt-in: whether it runs offline is part of what is measured.

Measured: the wall seconds from the start of featurizing to the end of fit (time.perf_counter), against the time
limit (the overrun ratio); the tool's validation score of its pick; the held-out AP of the pick's test
probabilities (positive class on two classes, macro one-vs-rest otherwise: common/metrics.py's definition). The
result holds no text: counts, names, versions and scores. The tool's own log is kept quiet (errors only).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score

LABEL = "label"  # the encoded label column handed to AutoGluon: 0..k-1 in sorted class order, the positive class 1
PRESETS = "medium_quality"
ESTIMATORS = ["lgbm", "xgboost", "rf", "extra_tree", "lrl1", "lrl2"]  # FLAML's learners that take sparse TF-IDF
TFIDF_FEATURES = 20000


def macro_average_precision(y_true, proba) -> float:
    """Macro one-vs-rest AP over the classes present (common/metrics.classification_metrics's multi-class AP)."""
    proba = np.asarray(proba, dtype=float)
    onehot = np.eye(proba.shape[1])[np.asarray(y_true, dtype=int)]
    present = onehot.sum(axis=0) > 0
    return float(average_precision_score(onehot[:, present], proba[:, present], average="macro"))


def held_out_ap(y_true: np.ndarray, proba: np.ndarray) -> float:
    """Test AP: of the positive class (column 1) on two classes, macro one-vs-rest on more."""
    if proba.shape[1] == 2:
        return float(average_precision_score(np.asarray(y_true) == 1, proba[:, 1]))
    return macro_average_precision(y_true, proba)


def encode_labels(train: pd.Series, test: pd.Series, positive: str | None) -> tuple[np.ndarray, np.ndarray, list]:
    """(train codes, test codes, class names): sorted classes, on two classes the positive one last (code 1)."""
    classes = sorted(set(train.astype(str)))
    if len(classes) < 2:
        raise SystemExit("error: the training CSV holds a single class")
    if positive is not None:
        if positive not in classes:
            raise SystemExit(f"error: --positive {positive!r} is not a class of the training CSV")
        if len(classes) == 2:
            classes = [c for c in classes if c != positive] + [positive]
    unseen = sorted(set(test.astype(str)) - set(classes))
    if unseen:
        raise SystemExit(f"error: the test CSV holds {len(unseen)} class(es) the training CSV does not")
    code = {name: i for i, name in enumerate(classes)}
    return (train.astype(str).map(code).to_numpy(dtype=int), test.astype(str).map(code).to_numpy(dtype=int),
            classes)


def version_of(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def fit_autogluon(texts: pd.Series, y: np.ndarray, test_texts: pd.Series, n_classes: int, args) -> dict:
    from autogluon.core.metrics import make_scorer
    from autogluon.tabular import TabularPredictor

    binary = n_classes == 2
    metric = "average_precision" if binary else make_scorer(
        "macro_average_precision", macro_average_precision, optimum=1, greater_is_better=True, needs_proba=True)
    excluded = [] if importlib.util.find_spec("fastai") else ["FASTAI"]  # not installed: not tried (a quiet log)
    frame = pd.DataFrame({"text": texts.astype(str).to_numpy(), LABEL: y})
    with tempfile.TemporaryDirectory(prefix="anchor-autogluon-") as folder:  # models and cached data, then gone
        started = time.perf_counter()
        predictor = TabularPredictor(label=LABEL, problem_type="binary" if binary else "multiclass",
                                     eval_metric=metric, path=folder, verbosity=1)
        predictor.fit(frame, time_limit=args.time_limit, presets=PRESETS, num_cpus=args.threads, num_gpus=0,
                      excluded_model_types=excluded or None)
        wall = time.perf_counter() - started
        pick = predictor.model_best
        board = predictor.leaderboard()
        validation = float(board.set_index("model").loc[pick, "score_val"])
        proba = predictor.predict_proba(pd.DataFrame({"text": test_texts.astype(str).to_numpy()}), as_multiclass=True)
        proba = proba.reindex(columns=list(range(n_classes)), fill_value=0.0).to_numpy(dtype=float)
        models = int(len(board))
    return {"pick": pick, "validation_score": validation, "validation_metric": getattr(metric, "name", metric),
            "wall_seconds": wall, "proba": proba, "models_trained": models,
            "version": version_of("autogluon.tabular"),
            "settings": {"presets": PRESETS, "num_cpus": args.threads, "num_gpus": 0,
                         "excluded_model_types": excluded, "text": "AutoGluon's own text n-gram features"}}


def tfidf_settings(texts: pd.Series) -> dict:
    """Word 1-2-grams; character 1-2-grams (within words) on Chinese texts, which have no spaces between words."""
    cjk = texts.astype(str).str.contains(r"[\u3400-\u9fff]", regex=True).mean()
    shape = {"analyzer": "char_wb", "ngram_range": (1, 2)} if cjk >= 0.1 else {"analyzer": "word",
                                                                               "ngram_range": (1, 2)}
    return {**shape, "sublinear_tf": True, "max_features": TFIDF_FEATURES}


def flaml_macro_ap(X_val, y_val, estimator, labels, X_train, y_train, *args, **kwargs):
    """FLAML's custom-metric signature: (loss to minimize, metrics to log), the macro AP on validation."""
    proba = estimator.predict_proba(X_val)
    score = macro_average_precision(y_val, proba)
    return 1.0 - score, {"macro_average_precision": score}


def fit_flaml(texts: pd.Series, y: np.ndarray, test_texts: pd.Series, n_classes: int, args) -> dict:
    from flaml import AutoML
    from sklearn.feature_extraction.text import TfidfVectorizer

    settings = tfidf_settings(texts)
    metric = "ap" if n_classes == 2 else flaml_macro_ap
    started = time.perf_counter()
    vectorizer = TfidfVectorizer(**settings)
    features = vectorizer.fit_transform(texts.astype(str).tolist())  # the training texts only
    automl = AutoML()
    automl.fit(features, y, task="classification", metric=metric, time_budget=args.time_limit,
               estimator_list=ESTIMATORS, n_jobs=args.threads, verbose=1, log_file_name="")
    wall = time.perf_counter() - started
    proba = np.asarray(automl.predict_proba(vectorizer.transform(test_texts.astype(str).tolist())), dtype=float)
    return {"pick": automl.best_estimator, "validation_score": 1.0 - float(automl.best_loss),
            "validation_metric": "ap" if n_classes == 2 else "macro_average_precision",
            "wall_seconds": wall, "proba": proba, "version": version_of("flaml"),
            "settings": {"estimator_list": ESTIMATORS, "n_jobs": args.threads, "retrain_full": True,
                         "tfidf": {k: list(v) if isinstance(v, tuple) else v for k, v in settings.items()},
                         "tfidf_features": int(features.shape[1])}}


def fit_flaml_transformer(texts: pd.Series, y: np.ndarray, test_texts: pd.Series, n_classes: int, args) -> dict:
    """FLAML's transformer estimator (task seq-classification) fine-tuning the model folder given, offline."""
    if args.model_folder is None or not (args.model_folder / "config.json").exists():
        raise SystemExit("error: --tool flaml-transformer needs --model-folder, a transformers model folder")
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[name] = "1"  # nothing is downloaded: the folder or a failure
    from flaml import AutoML

    metric = "ap" if n_classes == 2 else flaml_macro_ap
    with tempfile.TemporaryDirectory(prefix="anchor-flaml-hf-") as folder:  # its checkpoints, then gone
        started = time.perf_counter()
        automl = AutoML()
        automl.fit(X_train=pd.DataFrame({"text": texts.astype(str).tolist()}), y_train=pd.Series(y),
                   task="seq-classification", metric=metric, time_budget=args.time_limit,
                   estimator_list=["transformer"], n_jobs=args.threads, verbose=1, log_file_name="",
                   custom_hp={"transformer": {"model_path": {"domain": str(args.model_folder)}}},
                   fit_kwargs_by_estimator={"transformer": {"output_dir": folder}})
        wall = time.perf_counter() - started
        proba = np.asarray(automl.predict_proba(pd.DataFrame({"text": test_texts.astype(str).tolist()})),
                           dtype=float)
    return {"pick": f"transformer ({args.model_folder.name})", "validation_score": 1.0 - float(automl.best_loss),
            "validation_metric": "ap" if n_classes == 2 else "macro_average_precision",
            "wall_seconds": wall, "proba": proba, "version": version_of("flaml"),
            "settings": {"estimator_list": ["transformer"], "n_jobs": args.threads,
                         "model_folder": args.model_folder.name, "transformers": version_of("transformers"),
                         "best_config": {k: v for k, v in (automl.best_config or {}).items()
                                         if isinstance(v, (int, float, str)) and k != "model_path"}}}


TOOLS = {"autogluon": fit_autogluon, "flaml": fit_flaml, "flaml-transformer": fit_flaml_transformer}


def run(args) -> dict:
    train, test = pd.read_csv(args.train, dtype=str, keep_default_na=False), pd.read_csv(
        args.test, dtype=str, keep_default_na=False)
    for frame, name in ((train, "--train"), (test, "--test")):
        missing = [c for c in (args.text_col, args.label_col) if c not in frame.columns]
        if missing:
            raise SystemExit(f"error: {name} has no column {', '.join(missing)}")
    y_train, y_test, classes = encode_labels(train[args.label_col], test[args.label_col], args.positive)
    result = {"tool": args.tool, "time_limit_seconds": args.time_limit, "threads": args.threads,
              "n_train": int(len(train)), "n_test": int(len(test)), "classes": len(classes),
              "positive": classes[1] if len(classes) == 2 else None, "python": sys.version.split()[0],
              "versions": {name: version_of(name) for name in ("numpy", "pandas", "scikit-learn")}}
    try:
        fitted = TOOLS[args.tool](train[args.text_col], y_train, test[args.text_col], len(classes), args)
    except Exception as exc:  # the tool's failure is a finding: its kind is recorded, never its message (texts)
        where = traceback.extract_tb(exc.__traceback__)  # where it failed, for the log: files and lines only
        print("\n".join(f"  {Path(f.filename).name}:{f.lineno} in {f.name}" for f in where[-6:]), file=sys.stderr)
        return {**result, "failed": type(exc).__name__}
    proba = fitted.pop("proba")
    test_ap = held_out_ap(y_test, proba)
    return {**result, **fitted, "test_ap": test_ap,
            "overrun_ratio": fitted["wall_seconds"] / args.time_limit,
            "validation_optimism": fitted["validation_score"] - test_ap}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=sorted(TOOLS), required=True)
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--test", type=Path, required=True)
    parser.add_argument("--text-col", default="text")
    parser.add_argument("--label-col", default="label")
    parser.add_argument("--positive", help="the positive class on two classes (default: the last in sorted order)")
    parser.add_argument("--time-limit", type=float, required=True, help="seconds the tool is given")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model-folder", type=Path, help="flaml-transformer: the model folder it fine-tunes")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.time_limit <= 0 or args.threads < 1:
        parser.error("--time-limit must be positive and --threads at least 1")
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(f"{args.tool}: " + (f"failed ({result['failed']})" if "failed" in result else
                              f"picked {result['pick']}, test AP {result['test_ap']:.4f}, "
                              f"wall {result['wall_seconds']:.0f} s of {args.time_limit:.0f} s"), file=sys.stderr)
    return 1 if "failed" in result else 0


if __name__ == "__main__":
    sys.exit(main())
