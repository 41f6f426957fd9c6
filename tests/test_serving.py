"""Serving paths: ONNX Runtime fp32 equals native for every backend on a tiny model (accents and
CJK included); TF-IDF's graph refuses what it cannot match; int8 records its flips and batch dependence;
a path that cannot be exported is a row with its reason; the ONNX probe imports no torch or TensorFlow."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

from backends.base import build  # noqa: E402
from backends.precision import bf16_native  # noqa: E402
from common.datasets import LabelledTexts  # noqa: E402
from common.errors import UserInputError  # noqa: E402
from common.onnx_graph import ExportRefused  # noqa: E402
from comparisons.run.profiles import TINY_ENCODER  # noqa: E402
from comparisons.run.serving.onnx_scorer import OnnxScorer  # noqa: E402
from comparisons.run.serving.paths import parse_serve  # noqa: E402
from comparisons.run.serving.text_refusal import RefusedInput, refusal  # noqa: E402

ACCENTED_AND_CJK = ["Café crème à l'hôtel, très cher: reply STOP", "Über günstig! Gewinn: £500 jetzt",
                    "你好，恭喜你中奖了 call 09061701461", "Ñandú año señor — free ringtone ¿sí?",
                    "ÉNORME PROMO ÀÉÎÕÜ now", "ok see you later 😀"]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def texts_of(tiny_splits) -> list[str]:
    return list(tiny_splits[2].texts) + ACCENTED_AND_CJK


def assert_same_as_native(model, folder, texts):
    scorer = OnnxScorer.load(folder, threads=1)
    native, served = model.predict_proba(texts), scorer.predict_proba(texts)
    assert served.shape == native.shape
    assert np.abs(served - native).max() <= 1e-4
    assert np.array_equal(served.argmax(axis=1), native.argmax(axis=1))  # zero flipped decisions
    return scorer


def test_torch_scratch_onnx_equals_native(tiny_splits, tmp_path):
    train, valid, _ = tiny_splits
    model = build("torch_scratch", config=TINY_ENCODER, progress=False, seed=0, device="cpu").fit(train, valid)
    model.export_onnx(tmp_path)
    assert_same_as_native(model, tmp_path, texts_of(tiny_splits))


# TensorFlow's import, a Keras fit and tf2onnx: ~20 s
def test_keras_onnx_equals_native_once_erfc_is_rewritten(tiny_splits, tmp_path):
    pytest.importorskip("tf2onnx")
    train, valid, _ = tiny_splits
    config = {**TINY_ENCODER, "min_steps": 0}  # one epoch: the export is under test, not the training
    model = build("keras_layers", config=config, progress=False, seed=0, device="cpu").fit(train, valid)
    description = model.export_onnx(tmp_path)
    assert description["erfc_rewritten"] > 0  # the exact GELU's Erfc, which ONNX Runtime cannot run
    import onnx

    assert "Erfc" not in {node.op_type for node in onnx.load(str(tmp_path / "model.onnx")).graph.node}
    assert_same_as_native(model, tmp_path, texts_of(tiny_splits))


@pytest.fixture(scope="module")
def tfidf(tiny_splits):
    """TF-IDF fitted with accented, Greek, Cyrillic and CJK words in its vocabulary, upper and lower case."""
    train, valid, _ = tiny_splits
    letters = [chr(c) for c in [*range(0xC0, 0x250, 3), *range(0x391, 0x3CA, 2), *range(0x410, 0x450, 2),
                                *range(0x4E00, 0x9FFF, 499)] if chr(c).isalpha()]
    words = [f"x{letter}y" for letter in letters]
    extra = [" ".join(words[i::5]) for i in range(5)]
    extra = extra + extra + [text.upper() for text in extra]
    train = LabelledTexts(list(train.texts) + extra, np.concatenate([train.labels, np.arange(len(extra)) % 2]),
                          train.class_names, train.positive_index)
    # the word analyzer: the one skl2onnx reproduces (a character analyzer is refused at export, tested below)
    return build("tfidf_logreg", seed=0, analyzers="word").fit(train, valid), words


def test_tfidf_onnx_equals_scikit_learn_on_accents_cjk_and_case(tfidf, tiny_splits, tmp_path):
    model, words = tfidf
    model.export_onnx(tmp_path)
    probes = [f"free {w} call" for w in words] + [f"FREE {w.upper()} now" for w in words] + texts_of(tiny_splits)
    accepted = [text for text in probes if refusal(text) is None]  # 'ɀ'.upper() is U+2C7F, outside the blocks
    assert len(accepted) >= len(probes) - 2
    assert_same_as_native(model, tmp_path, accepted)


def test_tfidf_onnx_refuses_what_it_cannot_match_with_the_reason(tfidf, tmp_path):
    model, _ = tfidf
    model.export_onnx(tmp_path)
    scorer = OnnxScorer.load(tmp_path, threads=1)
    for text, said in (("İstanbul free prize", "U+0130"), ("ΟΔΟΣ win", "final"), ("ሰላም free", "U+1230")):
        with pytest.raises(RefusedInput) as refused:
            scorer.predict_proba(["a plain text", text])
        assert said in str(refused.value) and "1 of 2 texts refused" in str(refused.value)
        assert text not in str(refused.value)  # the reason names a code point, never the message


def test_tfidf_on_character_ngrams_is_refused_at_export_with_the_reason(tiny_splits, tmp_path):
    """Validation may choose character n-grams (Chinese text); skl2onnx's graph reproduces the word
    tokenizer only, so that export is a refused path with its reason, not a silently different one."""
    train, valid, _ = tiny_splits
    model = build("tfidf_logreg", seed=0, analyzers="char_wb_1_3").fit(train, valid)
    assert model.analyzer_ == "char_wb_1_3"
    with pytest.raises(ExportRefused, match="default word tokenizer only"):
        model.export_onnx(tmp_path)


@pytest.mark.parametrize("mode", ["full", "frozen"])
def test_hf_bert_onnx_equals_native_with_the_tokenizers_library_alone(mode, tiny_splits, tmp_path):
    from transformers import BertConfig, BertModel, BertTokenizer

    train, valid, _ = tiny_splits
    words = sorted({w for text in train.texts for w in re.findall(r"[a-z0-9]+", text.lower())})
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdefghijklmnopqrstuvwxyz0123456789", "你", "好", "中",
              *words]
    tokenizer = BertTokenizer(vocab={token: i for i, token in enumerate(dict.fromkeys(tokens))})
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=64)).save_pretrained(tmp_path / "bert")
    tokenizer.save_pretrained(tmp_path / "bert")
    model = build(f"hf_bert:{mode}", model=str(tmp_path / "bert"), epochs=1, batch_size=16, min_steps=0,
                  max_length=24, progress=False, device="cpu").fit(train, valid)
    model.export_onnx(tmp_path / "onnx")
    assert_same_as_native(model, tmp_path / "onnx", texts_of(tiny_splits))


def test_serve_option_refuses_unknown_paths_in_one_line():
    assert parse_serve("onnx-int8,onnx") == "native,onnx,onnx-int8"
    with pytest.raises(UserInputError, match="unknown serving path onnx-fp16; choose from native, native-bf16, onnx"):
        parse_serve("onnx,onnx-fp16")


def test_cli_refuses_a_bad_serve_name_with_exit_2(capsys):
    from comparisons.cli import main

    assert main(["run", "--serve", "native,tensorrt", "--profile", "tiny", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tensorrt" in err[0] and "Traceback" not in err[0]


@pytest.fixture(scope="module")
def scratch_serving(tiny_splits, tmp_path_factory):
    """Every path of a tiny torch_scratch model measured as a run measures them (probes in fresh processes)."""
    from types import SimpleNamespace

    from comparisons.run.serving.measure_paths import ServingRun, measure_serving

    train, valid, test = tiny_splits
    model = build("torch_scratch", config=TINY_ENCODER, progress=False, seed=0, device="cpu").fit(train, valid)
    out = tmp_path_factory.mktemp("serving_run")
    model.save(out / "saved")
    spec = SimpleNamespace(variant="torch_scratch", seed=0, train_size=None, threads=1)
    run = ServingRun(spec, out, model, out / "saved", valid, test, model.predict_proba(test.texts),
                     model.predict_proba(valid.texts), test.positive_index, 0.5, {"min_calls": 3, "min_seconds": 0.01})
    kept = measure_serving(run, {"latency_ms_b1_p50": 1.0, "size_mb": 0.1},
                           ["native", "native-bf16", "onnx", "onnx-int8", "torch-int8"], "torch_scratch")
    return out, kept, json.loads((out / kept["serving_file"]).read_text())


def test_every_path_is_a_measured_row_with_quality_against_native(scratch_serving):
    out, kept, serving = scratch_serving
    assert kept["serve_paths"] == ["native", "native-bf16", "onnx", "onnx-int8", "torch-int8"]
    rows = {row["path"]: row for row in serving["paths"]}
    bf16 = rows.pop("native-bf16")
    assert all(row["status"] == "ok" for row in rows.values()), [row["reason"] for row in rows.values()]
    if not bf16_native("cpu"):
        assert bf16["status"] == "skipped" and "natively" in bf16["reason"]
    else:  # the same weights under bf16 autocast: measured like the others, close to native
        assert bf16["status"] == "ok", bf16["reason"]
        assert bf16["latency_ms_b1_p50"] > 0 and bf16["throughput_per_s"] > 0 and bf16["cold_start_s"] > 0
        assert 0 < bf16["max_proba_change_vs_native"] <= 0.02 and isinstance(bf16["flips_vs_native"], int)
        assert bf16["serve_max_abs_diff"] <= 1e-6, "the fresh process serves bf16 as the worker does"
    onnx = rows["onnx"]
    assert onnx["flips_vs_native"] == 0 and onnx["max_proba_change_vs_native"] <= 1e-4
    assert onnx["latency_ms_b1_p50"] > 0 and onnx["throughput_per_s"] > 0 and onnx["size_mb"] > 0
    assert onnx["cold_start_s"] > 0 and onnx["peak_rss_serve_mb"] > 0
    assert not {"torch", "tensorflow"} & set(onnx["serve_modules"])  # the ONNX probe imported neither
    assert "onnxruntime" in onnx["serve_modules"] and "torch" in rows["torch-int8"]["serve_modules"]
    with np.load(out / "predictions" / "torch_scratch__seed0.serving.npz") as saved:
        assert set(saved.files) - {"native_bf16"} == {"native", "onnx", "onnx_int8", "torch_int8"}
        assert np.abs(saved["onnx"] - saved["native"]).max() <= 1e-4


def test_an_int8_path_records_its_flips_its_weights_choice_and_batch_dependence(scratch_serving):
    _, _, serving = scratch_serving
    int8 = next(row for row in serving["paths"] if row["path"] == "onnx-int8")
    assert int8["int8_weights"] in ("per-tensor", "per-channel")
    assert int8["int8_weights"] == ("per-channel" if int8["valid_flips_per_channel"] < int8["valid_flips_per_tensor"]
                                    else "per-tensor")
    assert isinstance(int8["flips_vs_native"], int) and int8["max_proba_change_vs_native"] > 0  # int8 moves outputs
    dependence = int8["batch_dependence"]
    assert dependence["texts"] == serving["batch_dependence_texts"] > 0
    assert dependence["max_proba_change"] > 0 and isinstance(dependence["flips"], int)  # activation scales per batch


def test_a_path_that_fails_to_export_is_a_row_with_the_reason(tiny_splits, tmp_path, monkeypatch):
    from types import SimpleNamespace

    from comparisons.run.serving.measure_paths import ServingRun, measure_serving

    train, valid, test = tiny_splits
    model = build("tfidf_logreg", seed=0).fit(train, valid)

    def broken(folder):
        raise RuntimeError("the exporter met an op it does not know\nsecond line")

    monkeypatch.setattr(model, "export_onnx", broken)
    spec = SimpleNamespace(variant="tfidf_logreg", seed=0, train_size=None, threads=1)
    proba = model.predict_proba(test.texts)
    run = ServingRun(spec, tmp_path, model, tmp_path, valid, test, proba, model.predict_proba(valid.texts),
                     test.positive_index, 0.5, {"min_calls": 3, "min_seconds": 0.01})
    measure_serving(run, {}, ["native", "onnx", "torch-int8"], "tfidf_logreg")
    rows = {row["path"]: row for row in json.loads((tmp_path / "serving" / "tfidf_logreg__seed0.json").read_text())["paths"]}
    assert rows["onnx"] == {"path": "onnx", "status": "failed",
                            "reason": "RuntimeError: the exporter met an op it does not know"}
    assert rows["torch-int8"]["status"] == "skipped" and "PyTorch models only" in rows["torch-int8"]["reason"]
    assert rows["native"]["status"] == "ok" and rows["native"]["flips_vs_native"] == 0


def test_the_serving_table_and_figure_give_each_path_its_verdict_against_native(scratch_serving, tiny_splits):
    from comparisons.report.serving import serving_frame, serving_tables_html, write_serving

    out, kept, _ = scratch_serving
    test = tiny_splits[2]
    records = [{"variant": "torch_scratch", "seed": 0, "status": "ok", "serving_file": kept["serving_file"]}]
    frame = serving_frame(out, records, test.labels, test.positive_index, None)  # its verdicts computed once
    for lang in ("en", "zh"):
        paths = write_serving(out, lang, frame)
        assert {p.name for p in paths} == {"serving_table.csv", "serving_table.md", "serving.png"}
    import pandas as pd

    table = pd.read_csv(out / "serving_table.csv", keep_default_na=False)
    assert list(table["path"]) == ["native", "native-bf16", "onnx", "onnx-int8", "torch-int8"]
    onnx = table[table["path"] == "onnx"].iloc[0]
    assert onnx["verdict_vs_native"] == "equivalent" and float(onnx["flips_vs_native"]) == 0  # identical outputs
    assert table[table["path"] == "native"].iloc[0]["verdict_vs_native"] == ""
    assert "服务路径" in (out / "zh" / "serving_table.md").read_text(encoding="utf-8")
    assert "在容差内等价" in serving_tables_html(out / "zh", "zh")


def test_a_run_with_serve_measures_the_paths_and_reports_them(tmp_path, capfd):
    import shutil

    from tests.test_cli import assert_no_raw_text, run_main

    out = tmp_path / "run"
    result = run_main(capfd, "run", "--profile", "tiny", "--backends", "tfidf_logreg", "--limit-per-class", "30",
                      "--threads", "1", "--lang", "zh", "--out", str(out), "--serve", "onnx-int8,onnx")
    assert result.returncode == 0, result.stderr[-2000:]
    record = json.loads((out / "runs" / "tfidf_logreg__seed0.json").read_text())
    assert record["serve_paths"] == ["native", "onnx", "onnx-int8"]
    rows = {row["path"]: row for row in json.loads((out / record["serving_file"]).read_text())["paths"]}
    assert rows["onnx"]["status"] == "ok" and rows["onnx"]["flips_vs_native"] == 0
    assert rows["onnx-int8"]["status"] == "refused" and "no MatMul or Gemm" in rows["onnx-int8"]["reason"]
    assert "onnx-int8" in (out / "serving_table.md").read_text() and (out / "zh" / "figures" / "serving.png").exists()
    assert "服务路径" in (out / "zh" / "report.html").read_text(encoding="utf-8")
    shutil.rmtree(out / "exports")  # model files (vocabularies), not written for people, never committed
    assert_no_raw_text(out)


def test_resume_measures_a_run_again_only_when_a_serving_path_is_new(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import comparisons.run.runner as runner

    path = tmp_path / "runs" / "tfidf_logreg__seed0.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"status": "ok", "split_sha256": "s", "data_sha256": "d",
                                "serve_paths": ["native", "onnx"], "latency_ms_b1_p50": 1.0}))
    (tmp_path / "predictions").mkdir()
    (tmp_path / "predictions" / "tfidf_logreg__seed0.npz").write_bytes(b"")
    (tmp_path / "manifest.json").write_text("{}")
    monkeypatch.setattr(runner, "differences", lambda record, manifest, strict: [])  # comparable in every other way
    request = SimpleNamespace(variant="tfidf_logreg", seed=0, train_size=None, serve="native,onnx", measure_costs=True)
    assert runner.finished(tmp_path, request, "s", "d", {})
    assert not runner.finished(tmp_path, SimpleNamespace(**{**vars(request), "serve": "native,onnx,onnx-int8"}), "s", "d",
                               {})
    # a quality-only record (`reproduce`) is finished for a quality-only request, not for a measured one
    path.write_text(json.dumps({"status": "ok", "split_sha256": "s", "data_sha256": "d", "serve_paths": ["native"]}))
    request = SimpleNamespace(variant="tfidf_logreg", seed=0, train_size=None, serve="native", measure_costs=False)
    assert runner.finished(tmp_path, request, "s", "d", {})
    assert not runner.finished(tmp_path, SimpleNamespace(**{**vars(request), "measure_costs": True}), "s", "d", {})
