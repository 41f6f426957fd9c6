"""pretraining_objectives and backends/torch_scratch/language_model.py: BERT's masking rule, the causal model's
blindness to later tokens, tied weights, the decoding methods, the verdict, redacted generations, the quick run."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from backends.torch_scratch import language_model as lm_module  # noqa: E402
from backends.torch_scratch.encoder import build_model  # noqa: E402
from common.config import EncoderConfig  # noqa: E402
from comparisons.course import pretraining_objectives as lesson  # noqa: E402

TEXTS = ["free entry to win a prize now", "call me when you get home", "win a free prize call now",
         "are you home yet", "sorry i will call you later", "free free prize now call"] * 3


def small(causal: bool):
    vocabulary = lm_module.lm_vocabulary(TEXTS, min_count=1)
    config = EncoderConfig(vocab_size=len(vocabulary), d_model=16, num_heads=2, num_layers=1, ff_dim=32,
                           dropout=0.0, max_len=12)
    torch.manual_seed(0)
    return lm_module.LanguageModel(build_model(config), causal), vocabulary


def test_texts_are_encoded_between_bos_and_eos():
    vocabulary = lm_module.lm_vocabulary(TEXTS, min_count=1)
    ids = lm_module.encode_with_ends(vocabulary, ["are you home", ""], 8)
    bos, eos = vocabulary.stoi[lm_module.BOS], vocabulary.stoi[lm_module.EOS]
    assert ids[0, 0] == bos and ids[0, 4] == eos and (ids[0, 5:] == 0).all()
    assert list(ids[1, :3]) == [bos, eos, 0]
    assert [vocabulary.itos[i] for i in ids[0, 1:4]] == ["are", "you", "home"]


def test_masking_follows_bert_15_percent_and_80_10_10():
    vocabulary = lm_module.lm_vocabulary(TEXTS, min_count=1)
    ids = torch.as_tensor(lm_module.encode_with_ends(vocabulary, TEXTS * 200, 12))
    inputs, targets = lm_module.mask_tokens(ids, vocabulary, torch.Generator().manual_seed(0))
    chosen = targets != lm_module.IGNORE
    specials = [0, vocabulary.stoi[lm_module.BOS], vocabulary.stoi[lm_module.EOS]]
    assert not torch.isin(ids[chosen], torch.tensor(specials)).any(), "padding, <bos>, <eos> are never chosen"
    words = (~torch.isin(ids, torch.tensor(specials))).sum()
    assert chosen.sum() / words == pytest.approx(0.15, abs=0.01)
    masked = (inputs[chosen] == vocabulary.stoi[lm_module.MASK]).float().mean()
    unchanged = (inputs[chosen] == ids[chosen]).float().mean()
    assert masked == pytest.approx(0.8, abs=0.02) and unchanged == pytest.approx(0.1, abs=0.02)
    assert torch.equal(inputs[~chosen], ids[~chosen]) and torch.equal(targets[chosen], ids[chosen])


def test_the_causal_model_never_reads_later_tokens_the_masked_one_does():
    for causal in (True, False):
        model, vocabulary = small(causal)
        model.eval()
        ids = torch.as_tensor(lm_module.encode_with_ends(vocabulary, ["free entry to win a prize"], 12))
        changed = ids.clone()
        changed[0, 5] = vocabulary.stoi["home"]
        with torch.no_grad():
            moved = (model(ids)[0, :5] - model(changed)[0, :5]).abs().max()
        assert (moved == 0) == causal


def test_the_language_model_reuses_the_embedding_matrix():
    model, vocabulary = small(causal=True)
    body = sum(p.numel() for p in model.body.parameters())
    assert sum(p.numel() for p in model.parameters()) == body + len(vocabulary)  # only a bias is new


def test_beam_search_with_one_beam_and_cold_sampling_are_greedy():
    model, vocabulary = small(causal=True)
    lm_module.pretrain(model, lm_module.encode_with_ends(vocabulary, TEXTS, 12), vocabulary, epochs=3, batch_size=6,
                       learning_rate=5e-3, seed=0)
    greedy = lm_module.generate(model, vocabulary, ["free"], 8)
    assert lm_module.beam_search(model, vocabulary, ["free"], 8, beams=1)[0] == greedy
    assert lm_module.generate(model, vocabulary, ["free"], 8, 1e-4, torch.Generator().manual_seed(0)) == greedy
    assert greedy[0] == "free" and not {"<pad>", "<unk>", "<mask>", "<bos>"} & set(greedy)


def test_generated_text_is_shown_redacted():
    shown = lesson.shown_text(["call", "08712345678", "or", "www", ".", "example", ".", "co", ".", "uk"])
    assert "08712345678" not in shown and "<NUM>" in shown and "<URL>" in shown


def test_the_verdict_is_a_paired_t_interval_over_seeds():
    rows = []
    for seed, (pre, rand) in enumerate([(0.9, 0.7), (0.85, 0.7), (0.85, 0.6)]):
        for start, ap in (("pretrained", pre), ("random", rand)):
            rows.append({"labels": 50, "seed": seed, "model": "encoder (masked LM)", "start": start,
                         "average_precision": ap})
    table = lesson.verdicts(pd.DataFrame(rows), "en")
    diff = np.array([0.2, 0.15, 0.25])
    half = 4.302653 * diff.std(ddof=1) / np.sqrt(3)
    assert table.iloc[0, 5] == pytest.approx(diff.mean())
    assert table.loc[0, "95% low"] == pytest.approx(diff.mean() - half, rel=1e-5)
    assert table.loc[0, "verdict"] == "pretrained higher"


def test_quick_run_writes_every_table_with_redacted_generations(tmp_path):
    assert lesson.main(["--quick", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "pretraining_objectives.json").read_text(encoding="utf-8"))
    assert summary["seeds"] == 2 and summary["verdicts"]
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert set(runs["start"]) == {"pretrained", "random"} and len(runs) == 2 * 2 * 2 * len(summary["sizes"])
    minilm = (tmp_path / "minilm.md").read_text(encoding="utf-8")
    assert "cls.predictions" in minilm and "[MASK], 103" in minilm
    generations = pd.read_csv(tmp_path / "generations.csv")
    assert len(generations) == 15
    assert not generations.iloc[:, 2].astype(str).str.contains(r"\d{5}").any()
