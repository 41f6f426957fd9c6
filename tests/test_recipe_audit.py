"""The recipe audit (comparisons/studies/recipe_audit.py) on 2 of the committed curve's partitions at 50
labels, TF-IDF only: a row per draw, the peer fitted on the draw's budget and scored on the partition's test fold,
the verdict's difference the mean paired difference, a rerun that refits nothing, and a one-line refusal."""
import json

import numpy as np
import pandas as pd
import pytest

from comparisons.studies import recipe_audit

ARGS = ["--curve", "results/learning_curve", "--variants", "tfidf_logreg", "--sizes", "50", "--partitions", "2"]


def test_the_audit_pairs_each_draw_with_its_peer_and_resumes(tmp_path, capsys):
    assert recipe_audit.main([*ARGS, "--out", str(tmp_path)]) == 0
    runs = pd.read_csv(tmp_path / "audit_runs.csv", dtype={"partition": str})
    assert len(runs) == 6 and set(runs["partition"]) == {"r0f0", "r0f1"} and (runs["n_train"] == 50).all()
    # the peer written plainly: its AP on one draw recomputed here from the draw's indices
    from common.datasets import DataSpec, load
    from common.metrics import classification_metrics

    record = json.loads(open("results/learning_curve/partitions/r0f0/splits.json").read())
    key = sorted(record["train_subsets"]["draws"]["50"], key=int)[0]
    draw = record["train_subsets"]["draws"]["50"][key]
    data = load(DataSpec())
    budget, test = data.subset(draw["train"] + draw["valid"]), data.subset(record["test"])
    assert not set(record["test"]) & set(draw["train"] + draw["valid"]), "the budget never holds a test text"
    proba = recipe_audit.tfidf_peer(list(budget.texts), np.asarray(budget.labels), list(test.texts))
    ap = classification_metrics(test.labels, proba, test.positive_index)["average_precision"]
    row = runs[(runs["partition"] == "r0f0") & (runs["draw"] == int(key))].iloc[0]
    assert row["peer_ap"] == pytest.approx(ap, abs=1e-6)
    verdicts = pd.read_csv(tmp_path / "audit.csv")
    assert len(verdicts) == 1 and verdicts.loc[0, "variant_b"] == recipe_audit.PEERS["tfidf_logreg"]
    # the design's mean difference: draws averaged within a partition, partitions averaged
    per_partition = (runs["variant_ap"] - runs["peer_ap"]).groupby(runs["partition"]).mean().mean()
    assert verdicts.loc[0, "difference"] == pytest.approx(per_partition, abs=1e-9)
    assert verdicts.loc[0, "ci_low"] < verdicts.loc[0, "difference"] < verdicts.loc[0, "ci_high"]
    import re

    assert re.search(r"\|\s+50 \| tfidf_logreg", (tmp_path / "audit.md").read_text())
    before = (tmp_path / "audit_runs.csv").read_text()
    capsys.readouterr()
    assert recipe_audit.main([*ARGS, "--out", str(tmp_path)]) == 0
    assert "'variant_ap'" not in capsys.readouterr().out, "a rerun refits nothing done"
    assert (tmp_path / "audit_runs.csv").read_text() == before


def test_a_variant_without_a_peer_is_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        recipe_audit.main([*ARGS[:2], "--variants", "torch_scratch", "--out", str(tmp_path)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no textbook peer" in err[0]


def test_small_budgets_sets_a_rerun_beside_the_committed_curve_on_the_same_draws(tmp_path):
    """--rerun: per variant and size, the committed curve's mean AP on the draws the rerun holds, the rerun's, and
    their change; a rerun whose draws hold other texts is refused."""
    import shutil

    committed = recipe_audit.Path("results/learning_curve")
    after = tmp_path / "after"
    for partition in ("r0f0", "r0f1"):
        (after / "partitions" / partition / "runs").mkdir(parents=True)
        shutil.copy(committed / "partitions" / partition / "splits.json", after / "partitions" / partition)
        for path in (committed / "partitions" / partition / "runs").glob("tfidf_logreg__n50__*.json"):
            record = json.loads(path.read_text())
            record["average_precision"] = record["average_precision"] + 0.01  # a rerun 0.01 better everywhere
            (after / "partitions" / partition / "runs" / path.name).write_text(json.dumps(record))
    table = recipe_audit.small_budgets(committed, after)
    assert list(table["variant"]) == ["tfidf_logreg"] and list(table["train_size"]) == [50]
    row = table.iloc[0]
    assert row["draws"] == 6 and row["change"] == pytest.approx(0.01)
    before = [json.loads(p.read_text())["average_precision"] for partition in ("r0f0", "r0f1")
              for p in (committed / "partitions" / partition / "runs").glob("tfidf_logreg__n50__*.json")]
    assert row["ap_before"] == pytest.approx(np.mean(before))
    splits = json.loads((after / "partitions" / "r0f0" / "splits.json").read_text())
    splits["train_subsets"]["draws"]["50"][sorted(splits["train_subsets"]["draws"]["50"])[0]]["train"][0] += 1
    (after / "partitions" / "r0f0" / "splits.json").write_text(json.dumps(splits))
    with pytest.raises(SystemExit, match="draws other texts"):
        recipe_audit.small_budgets(committed, after)
