"""Each compared recipe against the field's plain textbook peer, on the learning curve's own draws.

`python -m comparisons.studies.recipe_audit --curve results/learning_curve --out results/recipe_audit`

A comparison is only as honest as its weakest recipe. For every variant with a textbook peer, on each partition of
the committed learning curve (its splits.json: the test fold, and at each size the draws' training + validation
indices, the label budget), the variant is built and fitted through the suite's own code (backends.base.build,
the run's training and validation parts) and the peer is written here plainly, from the libraries' documented
defaults, on the same budget; both score the partition's test fold once (average precision). Nothing is chosen
on the test fold: the variant chooses as its recipe says (common/small_budget.py), the peers choose nothing.

Peers:
- tfidf_logreg: TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True) + LogisticRegression(max_iter=1000);
- hf_bert:frozen: SentenceTransformer(all-MiniLM-L6-v2).encode(normalize_embeddings=True) + LogisticRegression;
- hf_bert:setfit: setfit's SetFitModel on the same MiniLM with TrainingArguments() defaults (fp32; the library's
  pair sampling grows with the budget squared: 122 steps at 50 labels, about 1,900 at 200, so by default only at
  50 labels: --setfit-sizes).

Verdicts go through the engine: the paired AP differences (variant - peer) per draw, the partition design's
variance with the draws' overlaps (comparisons/stats/corrected_t.partition_pair_rows, design_variance.py), every
audited (size, pair) one Holm family (comparisons/stats/family.correct_family), the AP margin 0.005. A variant
shown worse than its peer is a defect in its recipe.

Resumes: audit_runs.csv gains a row per (pair, size, partition, draw) as each finishes; a rerun skips those done.
Writes audit_runs.csv, audit.csv (verdict rows) and audit.md. Quality figures do not depend on load; the seconds
do (run it with nothing else on the cores).

`--rerun FOLDER` fits nothing: it sets a rerun of the curve's small sizes with the new recipes (a `comparisons run`
folder on the same partitions and draws) beside the committed curve, per variant and size on the draws both hold:
small_budgets.{csv,md} (the lesson scratch_vs_pretrained now reads the powered curve run on these recipes).
"""
from __future__ import annotations

import inspect
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from common.datasets import DataSpec, load
from common.metrics import classification_metrics
from comparisons.outputs import atomic_write_text
from comparisons.run_folder.names import PARTITIONS, SPLITS
from comparisons.run_folder.open_folder import DesignFolder
from comparisons.run_folder.records import SplitsRecord

PEERS = {"tfidf_logreg": "peer: TF-IDF 1-2-grams + LR", "hf_bert:frozen": "peer: MiniLM embeddings + LR",
         "hf_bert:setfit": "peer: SetFit defaults"}
SIZES = (50, 100, 200, 500, 1000)
RUN_COLUMNS = ["variant", "peer", "train_size", "partition", "draw", "n_train", "n_test", "variant_ap", "peer_ap",
               "variant_seconds", "peer_seconds", "variant_macro_f1", "peer_macro_f1"]
# macro-F1: the variant's at the threshold its recipe chooses (common/scoring.score_fitted), the peer's at the
# arg-max (a plain peer chooses nothing); rows written before these two columns existed read as missing


# -- the peers, written plainly --------------------------------------------------------------------------------
def tfidf_peer(texts: list[str], labels: np.ndarray, test_texts: list[str], **_) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True), LogisticRegression(max_iter=1000))
    return model.fit(texts, labels).predict_proba(test_texts)


def embeddings_peer(texts: list[str], labels: np.ndarray, test_texts: list[str], embed=None, **_) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000).fit(embed(texts), labels).predict_proba(embed(test_texts))


def setfit_peer(texts: list[str], labels: np.ndarray, test_texts: list[str], seed: int = 0, **_) -> np.ndarray:
    from datasets import Dataset
    from setfit import SetFitModel, Trainer, TrainingArguments

    from backends.hf_bert.pretrained import shipped_model_folder

    model = SetFitModel.from_pretrained(str(shipped_model_folder()), local_files_only=True)
    with tempfile.TemporaryDirectory(prefix="setfit_peer_") as scratch:
        arguments = TrainingArguments(output_dir=scratch, seed=seed, report_to="none", show_progress_bar=False)
        Trainer(model=model, args=arguments,
                train_dataset=Dataset.from_dict({"text": list(texts), "label": [int(y) for y in labels]})).train()
    return np.asarray(model.predict_proba(list(test_texts), as_numpy=True), dtype=np.float64)


PEER_FITS = {"tfidf_logreg": tfidf_peer, "hf_bert:frozen": embeddings_peer, "hf_bert:setfit": setfit_peer}


def sentence_embedder():
    """texts -> L2-normalised sentence embeddings of the shipped MiniLM, every text of the corpus encoded once."""
    from sentence_transformers import SentenceTransformer

    from backends.hf_bert.pretrained import shipped_model_folder

    model, cache = SentenceTransformer(str(shipped_model_folder()), device="cpu"), {}

    def embed(texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in cache))
        if missing:
            cache.update(zip(missing, model.encode(missing, batch_size=64, normalize_embeddings=True)))
        return np.stack([cache[t] for t in texts])

    return embed


# -- the draws -------------------------------------------------------------------------------------------------
def curve_draws(curve: Path, sizes, partitions: int | None = None):
    """(partition, size, draw key, the draw's position in its partition, train indices, valid indices, test indices)
    from the curve's splits.json files."""
    folders = sorted((curve / "partitions").glob("*/splits.json"))[:partitions]
    if not folders:
        raise SystemExit(f"error: no partitions/*/splits.json under {curve}; give --curve a learning curve's folder")
    for path in folders:
        record = json.loads(path.read_text())
        draws = record["train_subsets"]["draws"]
        for size in sizes:
            for position, key in enumerate(sorted(draws.get(str(size), {}), key=int)):
                yield path.parent.name, size, key, position, draws[str(size)][key]["train"], \
                    draws[str(size)][key]["valid"], record["test"]


def average_precision(test, proba: np.ndarray) -> float:
    return round(float(classification_metrics(test.labels, proba, test.positive_index)["average_precision"]), 6)


def macro_f1(test, proba: np.ndarray) -> float:
    return round(float(classification_metrics(test.labels, proba, test.positive_index)["macro_f1"]), 6)


def audit_runs(curve: Path, out: Path, pairs: list[str], sizes, setfit_sizes, partitions: int | None,
               setfit_draws: int | None = None) -> pd.DataFrame:
    """Fit every (pair, size, partition, draw) not yet in out/audit_runs.csv; the whole table."""
    from backends.base import backend_class, build, resolve_variant
    from comparisons.run.precision import plan_precisions
    from comparisons.run.worker import backend_kwargs
    from common.scoring import score_fitted

    precisions = plan_precisions("auto", pairs, "cpu")  # as the curve ran: --profile full --precision auto

    def fit_variant(variant: str, seed: int, train_part, valid_part):
        """The variant as a run of the curve builds it (the worker's one set of constructor arguments)."""
        cls = backend_class(resolve_variant(variant)[0])
        spec = SimpleNamespace(profile="full", variant=variant, seed=seed, device="auto",
                               precision=precisions.get(variant, "fp32"), hf_model=None)
        kwargs = backend_kwargs(cls, spec)
        if "progress" in inspect.signature(cls.__init__).parameters:
            kwargs["progress"] = False
        return build(variant, **kwargs).fit(train_part, valid_part)

    path = out / "audit_runs.csv"
    done = (pd.read_csv(path, dtype={"partition": str}).reindex(columns=RUN_COLUMNS) if path.exists()
            else pd.DataFrame(columns=RUN_COLUMNS))
    seen = set(zip(done["variant"], done["train_size"].astype(int), done["partition"], done["draw"].astype(int)))
    data = load(DataSpec())
    embed = sentence_embedder() if "hf_bert:frozen" in pairs else None
    rows = done.to_dict("records")
    for partition, size, key, position, train, valid, test in curve_draws(curve, sizes, partitions):
        for variant in pairs:
            setfit_skipped = variant == "hf_bert:setfit" and (
                size not in setfit_sizes or (setfit_draws is not None and position >= setfit_draws))
            if (variant, size, partition, int(key)) in seen or setfit_skipped:
                continue
            train_part, valid_part, test_part = data.subset(train), data.subset(valid), data.subset(test)
            started = time.perf_counter()
            model = fit_variant(variant, int(key), train_part, valid_part)
            scored = score_fitted(model, valid_part, test_part, data.positive_index,
                                  test_proba=model.predict_proba(test_part.texts))
            variant_seconds = time.perf_counter() - started
            budget = data.subset(list(train) + list(valid))
            started = time.perf_counter()
            peer_proba = PEER_FITS[variant](list(budget.texts), np.asarray(budget.labels), list(test_part.texts),
                                            embed=embed, seed=int(key))
            peer_seconds = time.perf_counter() - started
            rows.append({"variant": variant, "peer": PEERS[variant], "train_size": size, "partition": partition,
                         "draw": int(key), "n_train": len(budget), "n_test": len(test_part),
                         "variant_ap": average_precision(test_part, scored.test_proba),
                         "peer_ap": average_precision(test_part, peer_proba),
                         "variant_seconds": round(variant_seconds, 1), "peer_seconds": round(peer_seconds, 1),
                         "variant_macro_f1": round(float(scored.headline["macro_f1"]), 6),
                         "peer_macro_f1": macro_f1(test_part, peer_proba)})
            print({k: rows[-1][k] for k in ("variant", "train_size", "partition", "draw", "variant_ap", "peer_ap",
                                            "variant_seconds", "peer_seconds", "variant_macro_f1")}, flush=True)
            atomic_write_text(path, pd.DataFrame(rows, columns=RUN_COLUMNS).to_csv(index=False))
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


# -- the verdicts ----------------------------------------------------------------------------------------------
def audit_verdicts(runs: pd.DataFrame, curve: Path) -> pd.DataFrame:
    """Variant - peer per (size, pair) through the engine: the partition design's variance, one Holm family."""
    from comparisons.run_folder.training_sets import learnt_from
    from comparisons.stats.corrected_t import partition_pair_rows
    from comparisons.stats.family import correct_family
    from common.splits import size_label

    long = pd.concat([
        runs.assign(variant=runs["variant"], average_precision=runs["variant_ap"]),
        runs.assign(variant=runs["peer"], average_precision=runs["peer_ap"]),
    ])[["variant", "train_size", "partition", "draw", "n_train", "n_test", "average_precision"]]
    long = long.rename(columns={"draw": "seed"})
    records = {p: SplitsRecord.read(curve / PARTITIONS / p).to_dict() for p in long["partition"].unique()}
    sets = {(size_label(size), p, int(seed)): learnt_from(records[p], int(size), int(seed))
            for size, p, seed in long[["train_size", "partition", "seed"]].drop_duplicates().itertuples(index=False)}
    pairs = list(dict.fromkeys(zip(runs["variant"], runs["peer"])))
    rows = partition_pair_rows(long, pairs, ("average_precision",), None, len(records), sets)
    return correct_family(rows, pairs) if len(rows) else rows


def audit_markdown(runs: pd.DataFrame, verdicts: pd.DataFrame, command: str) -> str:
    runs = runs.reindex(columns=RUN_COLUMNS)  # rows from before the macro-F1 columns: missing
    means = runs.groupby(["train_size", "variant", "peer"], sort=False).agg(
        draws=("draw", "size"), variant_ap=("variant_ap", "mean"), peer_ap=("peer_ap", "mean"),
        variant_macro_f1=("variant_macro_f1", "mean"), peer_macro_f1=("peer_macro_f1", "mean"),
        variant_seconds=("variant_seconds", "median"), peer_seconds=("peer_seconds", "median")).reset_index()
    table = means.merge(verdicts[["train_size", "variant_a", "difference", "ci_low", "ci_high", "p_holm", "verdict"]]
                        .rename(columns={"variant_a": "variant"}).astype({"train_size": int}),
                        on=["train_size", "variant"], how="left") if len(verdicts) else means
    worse = table[table.get("verdict", pd.Series(dtype=str)).astype(str).str.contains("B better", na=False)]
    lines = ["# Recipe audit: each variant against a plainly written textbook peer", "",
             f"`{command}`", "",
             "Mean test AP over the draws (the learning curve's partitions x draws), mean test macro-F1 (the "
             "variant's at the threshold its recipe chooses, the peer's at the arg-max; blank for rows measured "
             "before it was recorded), median seconds a fit (fit and "
             "scoring the test fold), and the paired difference variant - peer with its 95% interval, Holm p over "
             "every row and verdict (margin 0.005 AP; the partition design's variance with the draws' overlaps).", "",
             table.round(4).to_markdown(index=False), "",
             ("No variant is shown worse than its peer." if worse.empty else
              f"**{len(worse)} row(s) show the variant worse than its peer**: a defect in its recipe.")]
    return "\n".join(lines) + "\n"


# -- the curve's small sizes before and after ------------------------------------------------------------------
def small_budgets(before: Path, after: Path) -> pd.DataFrame:
    """Per variant and size: mean test AP and median train seconds of the committed curve (before) and of a rerun
    with the new recipes (after), on the (partition, draw) both ran; the draws' indices must be the same."""
    from comparisons.run_folder import read_runs

    rows = []
    for when, folder in (("before", before), ("after", after)):
        for path in [p / SPLITS for p in DesignFolder(folder).partitions if (p / SPLITS).is_file()]:
            if when == "after":
                mine = SplitsRecord.read(path.parent).train_subsets["draws"]
                theirs = SplitsRecord.read(before / PARTITIONS / path.parent.name).train_subsets
                if any(mine[size] != theirs["draws"].get(size) for size in mine):
                    raise SystemExit(f"error: {path} draws other texts than {before}'s; rerun on the same partitions")
            rows += [{"when": when, "variant": r.variant, "train_size": r.train_size, "partition": path.parent.name,
                      "draw": r.seed, "ap": r["average_precision"], "seconds": r.get("train_seconds")}
                     for r in read_runs(path.parent) if r.ok and r.train_size is not None]
    frame = pd.DataFrame(rows)
    after_runs = frame[frame["when"] == "after"]
    keys = ["variant", "train_size", "partition", "draw"]
    paired = after_runs.merge(frame[frame["when"] == "before"], on=keys, how="left", suffixes=("_after", "_before"))
    table = paired.groupby(["train_size", "variant"], sort=True).agg(
        draws=("ap_after", "size"), ap_before=("ap_before", "mean"), ap_after=("ap_after", "mean"),
        train_seconds_before=("seconds_before", "median"), train_seconds_after=("seconds_after", "median"))
    table.insert(3, "change", table["ap_after"] - table["ap_before"])
    return table.reset_index()


def small_budgets_markdown(table: pd.DataFrame, command: str) -> str:
    return ("# The curve's small sizes with the audited recipes\n\n"
            f"`{command}`\n\n"
            "Per variant and size: mean test AP over the draws the rerun finished, with the committed curve's figure "
            "on the same draws (before: the recipes chosen at full size; after: the small-budget recipes), "
            "and the median train seconds a run. No interval here: the paired verdicts of the course's contrasts "
            "are the rerun folder's verdicts.csv.\n\n" + table.round(4).to_markdown(index=False) + "\n")


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m comparisons.studies.recipe_audit", description=__doc__.splitlines()[0])
    parser.add_argument("--curve", default="results/learning_curve", help="a learning curve's folder (its draws)")
    parser.add_argument("--out", default="results/recipe_audit")
    parser.add_argument("--variants", default=",".join(PEERS), help=f"comma-separated, of {', '.join(PEERS)}")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--setfit-sizes", type=int, nargs="+", default=[50])
    parser.add_argument("--setfit-draws", type=int, default=None,
                        help="SetFit pairs on the first N draws of each partition only (default: every draw)")
    parser.add_argument("--partitions", type=int, default=None, help="the first N partitions only (tests)")
    parser.add_argument("--rerun", default=None, help="a rerun folder of the curve's small sizes: before/after only")
    args = parser.parse_args(argv)
    command = "python -m comparisons.studies.recipe_audit " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.rerun:
        table = small_budgets(Path(args.curve), Path(args.rerun))
        Path(args.out).mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(args.out) / "small_budgets.csv", table.to_csv(index=False))
        atomic_write_text(Path(args.out) / "small_budgets.md", small_budgets_markdown(table, command.strip()))
        print((Path(args.out) / "small_budgets.md").read_text())
        return 0
    pairs = [v for v in args.variants.split(",") if v]
    unknown = [v for v in pairs if v not in PEERS]
    if unknown:
        parser.error(f"--variants {','.join(unknown)}: no textbook peer; give some of {', '.join(PEERS)}")
    out, curve = Path(args.out), Path(args.curve)
    out.mkdir(parents=True, exist_ok=True)
    runs = audit_runs(curve, out, pairs, args.sizes, args.setfit_sizes, args.partitions, args.setfit_draws)
    verdicts = audit_verdicts(runs, curve)
    atomic_write_text(out / "audit.csv", verdicts.to_csv(index=False))
    atomic_write_text(out / "audit.md", audit_markdown(runs, verdicts, command.strip()))
    print((out / "audit.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
