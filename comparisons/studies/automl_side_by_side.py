"""AutoGluon and FLAML beside `select`, on the same labelled texts, the same held-out test and the same budget.

    python -m comparisons.studies.automl_side_by_side --corpora sms,tweets,zh-reviews --labels 200,1000 \
        --budget-minutes 30 --select --out results/selection

Per corpus (loaded as `select --data NAME` loads it) and label budget N, in WORK/<corpus>-<N>/:

- test.csv: a held-out test, one group-aware stratified fold in HOLD_OUT_FOLDS of the corpus
  (common/partitions.stratified_group_folds, seed HOLD_OUT_SEED): no text of it, nor any equal text, is anywhere else.
- pool.txt: every other text (label<TAB>text lines, line breaks inside a text turned to spaces, everywhere alike), the
  data `select --data pool.txt --labels N` runs on: its folds, pilot and all, never see the test.
- train.csv: the N labelled texts the tools learn from: exactly those the selection's shipped model learns from
  (comparisons/deploy.py: the pool's group-aware split, `budget_parts` at N with the deployment's subset seed), so the
  three picks are trained on the same N labels and scored on the same test. (The selection's folds draw their own N
  from the pool to estimate each recipe: that is how `select --labels N` decides, so its decision rests on more than
  N labelled texts in all, where the tools decide on their own validation split of train.csv alone. The table says
  so; select on the N texts alone would need `--folds` small enough for the rarer class at N.)

pool.txt is written as label<TAB>text lines because `select` takes --text-col but no --label-col: a CSV with a
header reaches it only through `run`'s options.

Each tool runs in its own virtual environment (`make anchors-venvs`) through comparisons/studies/automl_anchor.py,
given the budget as its time limit; with --select, the selection runs in this one with the same budget in minutes.
The table (OUT/anchors.csv, .md) has, a row per (corpus, N, tool): the pick, the budget, the wall used and the
overrun ratio, the tool's validation score of its pick, the held-out AP, the validation optimism (validation minus
test), and how far the pick is below the best held-out AP in its cell (the best of the picks: the best known). No
text is written into it. Every cell resumes: a tool's result file or a finished selection is kept.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from common.arguments import OneLineParser
from common.datasets import DataSpec, LabelledTexts, load
from common.errors import UserInputError
from comparisons.run.measure import thread_environment
from comparisons.run_folder.selection_record import SelectionRecord

HOLD_OUT_FOLDS = 5         # the held-out test: one fold in 5 of the corpus (a fifth of the texts)
HOLD_OUT_SEED = 20261207
TOOLS = ("autogluon", "flaml", "flaml-transformer")  # the last opt-in (--tools): FLAML fine-tuning MiniLM, offline
VENVS = {"autogluon": ".venv-autogluon", "flaml": ".venv-flaml", "flaml-transformer": ".venv-flaml-hf"}  # Makefile
ANCHOR = Path(__file__).with_name("automl_anchor.py")
HARD_STOP = 4.0            # a tool still running at 4x its budget is stopped and recorded as such
DELTA = 0.01               # select's default indifference zone: a pick further below the best known is "worse"
SCHEME = ("Per corpus and label budget N: a held-out test (one group-aware stratified fold in 5 of the corpus, no "
          "text of it anywhere else); the N labelled texts every tool learns from, the same N the selection's "
          "shipped model learns from (drawn from the rest as `select --labels N` draws them); `select` runs on the "
          "rest only, its folds each drawing their own N from it (so its decision rests on more than N labels in "
          "all, the tools' on N). budget_s: the time limit given (select: its --budget-minutes); wall_s: the tool's "
          "fit (select: its runs, the shipped model's training not counted); overrun: wall / budget; validation: "
          "the tool's own validation score of its pick (select: the pick's mean AP over its folds); test_ap: the "
          "pick's AP on the held-out test; optimism: validation - test_ap; behind_best: the best test_ap of the "
          "cell's picks minus this one. AutoGluon: TabularPredictor on the text column, presets medium_quality, "
          "num_gpus 0; FLAML: TF-IDF then AutoML.fit (lgbm, xgboost, rf, extra_tree, lrl1, lrl2); "
          "flaml-transformer (where run): FLAML's transformer estimator fine-tuning the shipped MiniLM folder "
          "offline; all on the study's --threads (comparisons/studies/automl_anchor.py; versions in the table).")
COLUMNS = ["corpus", "labels", "tool", "version", "pick", "budget_s", "wall_s", "overrun", "validation", "test_ap",
           "optimism", "behind_best", "worse_than_delta", "failed"]


def flat(text: str) -> str:
    """A text on one line (the pool is read line by line); every side gets the same flattened texts."""
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def held_out_rows(data: LabelledTexts) -> tuple[np.ndarray, np.ndarray]:
    """(pool rows, test rows): one group-aware stratified fold of the corpus is the test, the rest the pool."""
    from common.partitions import stratified_group_folds, text_groups

    test = np.sort(stratified_group_folds(data.labels, text_groups(data.texts), HOLD_OUT_FOLDS, HOLD_OUT_SEED)[0])
    return np.setdiff1d(np.arange(len(data)), test), test


def labelled_rows(pool: LabelledTexts, labels: int) -> np.ndarray:
    """The pool rows the selection's shipped model learns from at N labels (training and validation together)."""
    from common.splits import DEFAULT_SPLIT_SEED, budget_parts, subset_seed
    from comparisons.deploy import DEPLOY_SEED, deployment_split

    split = deployment_split(pool, DEFAULT_SPLIT_SEED)  # select's split seed is the plan's default
    train, valid = budget_parts(split, pool.labels, pool.texts, labels, "train+valid", where="the pool",
                                subset_seed=subset_seed(split.seed, DEPLOY_SEED))
    return np.sort(np.concatenate([train, valid]))


def write_csv(data: LabelledTexts, path: Path) -> None:
    pd.DataFrame({"text": data.texts, "label": [data.class_names[c] for c in data.labels]}).to_csv(path, index=False)


def prepare_cell(data: LabelledTexts, labels: int, folder: Path) -> dict:
    """Write pool.txt, train.csv and test.csv of one (corpus, N) cell; what the runs need to know of them."""
    data = LabelledTexts([flat(t) for t in data.texts], data.labels, data.class_names, data.positive_index)
    pool_rows, test_rows = held_out_rows(data)
    folder.mkdir(parents=True, exist_ok=True)
    pool_path = folder / "pool.txt"
    pool_path.write_text("".join(f"{data.class_names[data.labels[i]]}\t{data.texts[i]}\n" for i in pool_rows),
                         encoding="utf-8")
    pool = load(DataSpec(source="file", path=str(pool_path.resolve())))  # as `select --data pool.txt` reads it
    if pool.class_names != data.class_names or len(pool) != len(pool_rows):
        raise UserInputError(f"{pool_path} does not read back as the corpus's pool (classes {pool.class_names})")
    chosen = labelled_rows(pool, labels)
    test = data.subset(test_rows)
    write_csv(pool.subset(chosen), folder / "train.csv")
    write_csv(test, folder / "test.csv")
    positive = data.class_names[data.positive_index] if data.positive_index is not None and data.n_classes == 2 \
        else None
    return {"folder": folder, "pool": pool_path, "positive": positive, "test": test,
            "n_pool": len(pool), "n_train": len(chosen), "n_test": len(test_rows)}


def run_anchor(tool: str, cell: dict, budget_s: float, threads: int, venv: Path, extra: tuple = ()) -> dict:
    """The tool's result (automl_anchor.py's JSON), run in its own environment unless its result is on file;
    extra: more of its options (the model folder of flaml-transformer)."""
    out = cell["folder"] / f"{tool}.json"
    if out.exists():
        return json.loads(out.read_text())
    python = venv / "bin" / "python"
    if not python.exists():
        return {"tool": tool, "failed": f"no {venv}: make anchors-venvs (flaml-transformer: anchors-venv-hf)"}
    command = [str(python), str(ANCHOR), "--tool", tool, "--train", str(cell["folder"] / "train.csv"),
               "--test", str(cell["folder"] / "test.csv"), "--text-col", "text", "--label-col", "label",
               "--time-limit", f"{budget_s:g}", "--threads", str(threads), "--out", str(out)]
    command += (["--positive", cell["positive"]] if cell["positive"] else []) + list(extra)
    env = {**os.environ, **thread_environment(threads)}
    env.pop("PYTHONPATH", None)  # the anchor's environment has none of the project, and must not see it
    print(f"{cell['folder'].name}: {tool}, {budget_s:g} s ...", file=sys.stderr)
    started = time.perf_counter()
    try:
        with open(cell["folder"] / f"{tool}.log", "wb") as log:
            subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=budget_s * HARD_STOP)
    except subprocess.TimeoutExpired:
        return {"tool": tool, "failed": f"stopped at {HARD_STOP:g}x its budget", "overrun_ratio": HARD_STOP}
    if not out.exists():
        return {"tool": tool, "failed": f"no result (its log: {cell['folder'] / (tool + '.log')})"}
    result = json.loads(out.read_text())
    result["process_seconds"] = time.perf_counter() - started  # with the interpreter's start and the imports
    out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    return result


def run_select(cell: dict, labels: int, minutes: float, threads: int) -> None:
    """`select` on the pool with the same budget, unless its folder holds a finished selection."""
    folder = cell["folder"] / "select"
    done = SelectionRecord.read(folder)
    if done is not None and (done.deployment is not None or done.outcome not in ("continue", "selected")):
        return  # shipped, or no pick
    command = [sys.executable, "-m", "comparisons", "select", "--data", str(cell["pool"]), "--labels", str(labels),
               "--budget-minutes", f"{minutes:g}", "--threads", str(threads), "--out", str(folder)]
    print(f"{cell['folder'].name}: select, {minutes:g} min ...", file=sys.stderr)
    started = time.perf_counter()
    with open(cell["folder"] / "select.log", "wb") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT)
    # its process wall and its one-line refusal, if any: the row of a selection that wrote no record (a budget
    # too small for the pilot) still says what it spent and why it stopped
    lines = (cell["folder"] / "select.log").read_text(encoding="utf-8", errors="replace").splitlines()
    refusal = next((line for line in reversed(lines) if line.startswith("error:")), None)
    (cell["folder"] / "select_process.json").write_text(json.dumps(
        {"process_seconds": time.perf_counter() - started, "exit_code": done.returncode,
         "refusal": refusal.replace(str(cell["folder"]), cell["folder"].name) if refusal else None}, indent=2) + "\n")


def select_result(cell: dict, minutes: float) -> dict | None:
    """select's row: its pick, the mean of the pick's fold scores (its validation), the selection's wall minutes
    (the shipped model's training not counted) and the shipped model's held-out AP; a refusal before any record
    (its process wall, its one line); None where select did not run."""
    from common.metrics import classification_metrics

    record, process = SelectionRecord.read(cell["folder"] / "select"), cell["folder"] / "select_process.json"
    if record is None:
        if not process.exists():
            return None
        ran = json.loads(process.read_text())  # refused before a selection record was written
        return {"tool": "select", "time_limit_seconds": minutes * 60, "wall_seconds": ran["process_seconds"],
                "overrun_ratio": ran["process_seconds"] / (minutes * 60), "version": "this suite",
                "failed": (ran["refusal"] or f"exit code {ran['exit_code']}, no selection record")[:200]}
    row = {"tool": "select", "time_limit_seconds": minutes * 60, "wall_seconds": record.wall_minutes * 60}
    row["overrun_ratio"] = row["wall_seconds"] / row["time_limit_seconds"]
    if record.outcome != "selected":
        return {**row, "failed": f"no pick ({record.outcome})"}
    pick = record.pick
    row.update(pick=pick, validation_score=float(np.nanmean(record.scores[:, record.candidates.index(pick)])))
    trained = record.deployment or {"failed": "not trained for deployment"}
    if "failed" in trained:
        return {**row, "failed": "the pick was not trained: " + trained["failed"].split(" (")[0]}
    from backends.base import backend_class

    model = backend_class(trained["backend"]).load(cell["folder"] / "select" / "deploy" / trained["model_folder"])
    test = cell["test"]
    proba = np.asarray(model.predict_proba(test.texts), dtype=float)
    row["test_ap"] = classification_metrics(test.labels, proba, test.positive_index)["average_precision"]
    row["validation_optimism"] = row["validation_score"] - row["test_ap"]
    row["version"] = "this suite"
    return row


def table_rows(corpus: str, labels: int, results: list[dict]) -> list[dict]:
    """One cell's rows: every figure of the table, and how far each pick is below the best held-out AP of the cell."""
    scored = [r["test_ap"] for r in results if r.get("test_ap") is not None]
    best = max(scored) if scored else None
    rows = []
    for r in results:
        behind = None if best is None or r.get("test_ap") is None else best - r["test_ap"]
        rows.append({"corpus": corpus, "labels": labels, "tool": r["tool"], "version": r.get("version"),
                     "pick": r.get("pick"), "budget_s": r.get("time_limit_seconds"), "wall_s": r.get("wall_seconds"),
                     "overrun": r.get("overrun_ratio"), "validation": r.get("validation_score"),
                     "test_ap": r.get("test_ap"), "optimism": r.get("validation_optimism"), "behind_best": behind,
                     "worse_than_delta": None if behind is None else bool(behind > DELTA), "failed": r.get("failed")})
    return rows


def write_table(rows: list[dict], out: Path) -> None:
    from comparisons.outputs import atomic_write_text
    from comparisons.report.pair_tables import markdown_table

    frame = pd.DataFrame(rows, columns=COLUMNS)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "anchors.csv", frame.to_csv(index=False, float_format="%.4f"))
    shown = [["" if v is None or (isinstance(v, float) and np.isnan(v)) else f"{v:.4f}" if isinstance(v, float)
              else str(v) for v in row] for row in frame.astype(object).itertuples(index=False)]
    def overran(r) -> bool:
        return (r["overrun"] or 0) > 1

    def worse(r) -> bool:
        return bool(r["worse_than_delta"])

    def count(rows_of, test) -> int:
        return sum(1 for r in rows_of if test(r))

    # the tools' rows and select's counted apart: select's budget is held to the same line as theirs
    tools, chosen = [r for r in rows if r["tool"] != "select"], [r for r in rows if r["tool"] == "select"]
    atomic_write_text(out / "anchors.md", "# AutoGluon and FLAML beside select: same labels, held-out test and "
                      f"budget\n\n{SCHEME}\n\nRows that overran the budget: {count(tools, overran)} of the tools' "
                      f"{len(tools)}, {count(chosen, overran)} of select's {len(chosen)}; whose pick was more than "
                      f"{DELTA} AP below the best pick of its cell: {count(tools, worse)} of the tools', "
                      f"{count(chosen, worse)} of select's.\n\n" + markdown_table(COLUMNS, shown) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="automl_side_by_side", description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="sms,tweets,zh-reviews")
    parser.add_argument("--labels", default="200,1000", help="label budgets N, comma-separated")
    parser.add_argument("--budget-minutes", type=float, default=30.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tools", default="autogluon,flaml", help=f"of {', '.join(TOOLS)}")
    parser.add_argument("--select", action="store_true", help="also run select on each pool with the same budget")
    for tool in TOOLS:
        parser.add_argument(f"--venv-{tool}", type=Path, default=Path(VENVS[tool]), help=f"{tool}'s environment")
    parser.add_argument("--work", type=Path, default=Path("runs/anchors"), help="CSVs, results and logs")
    parser.add_argument("--out", type=Path, default=Path("results/selection"))
    args = parser.parse_args(argv)
    os.environ.update(thread_environment(args.threads))  # before select_result imports a framework
    tools = [t for t in args.tools.split(",") if t]
    unknown = sorted(set(tools) - set(TOOLS))
    if unknown:
        raise UserInputError(f"--tools {','.join(unknown)}: the anchors are {', '.join(TOOLS)}")
    budgets = [int(n) for n in args.labels.split(",") if n]
    venvs = {tool: getattr(args, "venv_" + tool.replace("-", "_")) for tool in TOOLS}
    extra = {tool: () for tool in TOOLS}
    if "flaml-transformer" in tools:  # the shipped MiniLM folder, found in this environment
        from backends.hf_bert.pretrained import shipped_model_folder

        extra["flaml-transformer"] = ("--model-folder", str(shipped_model_folder()))
    rows = []
    for corpus in [c for c in args.corpora.split(",") if c]:
        from comparisons.plan import Plan, data_spec

        data = load(data_spec(Plan(data=corpus)))
        for labels in budgets:
            cell = prepare_cell(data, labels, args.work / f"{corpus}-{labels}")
            results = [run_anchor(t, cell, args.budget_minutes * 60, args.threads, venvs[t], extra[t]) for t in tools]
            if args.select:
                run_select(cell, labels, args.budget_minutes, args.threads)
            chosen = select_result(cell, args.budget_minutes)  # None: select not run here (see --select)
            rows += table_rows(corpus, labels, results + ([chosen] if chosen else []))
            write_table(rows, args.out)  # after every cell: an interrupted study keeps what it measured
    print(f"results: {args.out / 'anchors.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UserInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
