"""Pretraining the scratch encoder as BERT and as GPT were pretrained, fine-tuning it, and decoding from it.

The body is encoder.py's TransformerClassifier (embeddings, blocks, final LayerNorm, a linear head); this module
adds what pretraining needs and nothing else (the course lesson comparisons/course/pretraining_objectives.py):

- a vocabulary with three more tokens, <mask>, <bos> and <eos>, and texts encoded as <bos> words <eos>;
- masked-language modelling (Devlin et al. 2019): 15% of the word tokens are chosen; of those 80% become <mask>,
  10% a random word, 10% stay; the loss is cross-entropy on the chosen positions only, the body bidirectional;
- next-token prediction (Radford et al. 2018): causal attention (token t sees 0..t), every position predicts
  the next token;
- both predict tokens with the input embedding matrix (tied weights) plus a bias: no new matrix;
- fine-tuning for classification: the encoder's masked mean over its tokens, the decoder's state at <eos> (the
  one position that has read the whole text, as GPT read its last token), into the body's linear head;
- decoding from the causal model: greedy, sampling with a temperature, beam search.

Optimiser as the backend's (backend.py): AdamW, decay on matrices only, clipping at 1, linear warm-up then decay;
batches from common.batching.epoch_batches.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from backends.torch_scratch.backend import warmup_then_linear_decay
from backends.torch_scratch.encoder import TransformerClassifier
from common.batching import epoch_batches
from common.vocabulary import PAD_ID, UNK_ID, Vocabulary, trim_padding

MASK, BOS, EOS = "<mask>", "<bos>", "<eos>"
IGNORE = -100  # targets cross-entropy skips
MASK_RATE, MASK_SHARE, RANDOM_SHARE = 0.15, 0.8, 0.1  # BERT's 15%, and 80% <mask> / 10% random / 10% unchanged


def lm_vocabulary(texts, min_count: int = 2, max_size: int = 8000) -> Vocabulary:
    """The regex vocabulary of `texts` (words by falling count) with <mask>, <bos>, <eos> appended."""
    fitted = Vocabulary.fit(texts, min_count, max_size)
    return Vocabulary([*fitted.itos[2:], MASK, BOS, EOS])


def word_ids(vocabulary: Vocabulary) -> tuple[int, int]:
    """[first, last) ids of ordinary words (after <pad>, <unk>; before the three appended tokens)."""
    return 2, len(vocabulary) - 3


def encode_with_ends(vocabulary: Vocabulary, texts, max_len: int) -> np.ndarray:
    """(n, max_len) ids: <bos>, the words (truncated to max_len - 2), <eos>, right padding."""
    inner = vocabulary.encode(list(texts), max_len - 2)
    lengths = (inner != PAD_ID).sum(axis=1)
    ids = np.zeros((len(inner), max_len), dtype=np.int64)
    ids[:, 0] = vocabulary.stoi[BOS]
    ids[:, 1:max_len - 1] = inner
    ids[np.arange(len(ids)), lengths + 1] = vocabulary.stoi[EOS]
    return ids


def mask_tokens(ids: torch.Tensor, vocabulary: Vocabulary, generator: torch.Generator,
                rate: float = MASK_RATE) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's corruption of (B, T) ids -> (inputs, targets): targets hold the original id where a token was
    chosen (a word or <unk>, probability `rate`) and IGNORE elsewhere; a chosen input is <mask> with probability
    0.8, a random word with 0.1, unchanged with 0.1."""
    special = torch.tensor([PAD_ID, *(vocabulary.stoi[t] for t in (MASK, BOS, EOS))])
    eligible = ~torch.isin(ids, special)
    chosen = eligible & (torch.rand(ids.shape, generator=generator) < rate)
    roll = torch.rand(ids.shape, generator=generator)
    inputs = ids.clone()
    inputs[chosen & (roll < MASK_SHARE)] = vocabulary.stoi[MASK]
    replace = chosen & (roll >= MASK_SHARE) & (roll < MASK_SHARE + RANDOM_SHARE)
    first, last = word_ids(vocabulary)
    inputs[replace] = torch.randint(first, last, ids.shape, generator=generator)[replace]
    return inputs, torch.where(chosen, ids, torch.full_like(ids, IGNORE))


class LanguageModel(nn.Module):
    """A TransformerClassifier body read at every position: (B, T) ids -> (B, T, vocabulary) logits."""

    def __init__(self, body: TransformerClassifier, causal: bool):
        super().__init__()
        self.body, self.causal = body, causal
        self.bias = nn.Parameter(torch.zeros(body.config.vocab_size))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        states, _, _ = self.body.token_states(ids, causal=self.causal)  # (B, T, d)
        return self.token_logits(states)

    def token_logits(self, states: torch.Tensor) -> torch.Tensor:
        """(..., d) states -> (..., V) logits with the input embedding matrix (tied weights)."""
        return states @ self.body.embedding.token_embedding.weight.T + self.bias

    def objective(self, ids: torch.Tensor, vocabulary: Vocabulary, generator: torch.Generator) -> torch.Tensor:
        """The pretraining loss of a batch: next-token cross-entropy (causal) or masked-token cross-entropy."""
        if self.causal:
            inputs, targets = ids[:, :-1], ids[:, 1:].masked_fill(ids[:, 1:] == PAD_ID, IGNORE)
        else:
            inputs, targets = mask_tokens(ids, vocabulary, generator)
        states, _, _ = self.body.token_states(inputs, causal=self.causal)  # (B, T, d)
        scored = targets != IGNORE  # only these positions carry a loss: project only them onto the vocabulary
        return F.cross_entropy(self.token_logits(states[scored]), targets[scored])


def _optimiser(model: nn.Module, learning_rate: float, steps: int, weight_decay: float = 0.01):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimiser = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=learning_rate)
    return optimiser, torch.optim.lr_scheduler.LambdaLR(optimiser, warmup_then_linear_decay(steps, 0.1))


def _step(model: nn.Module, loss: torch.Tensor, optimiser, schedule) -> float:
    optimiser.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimiser.step()
    schedule.step()
    return loss.item()


def pretrain(model: LanguageModel, ids: np.ndarray, vocabulary: Vocabulary, epochs: int, batch_size: int,
             learning_rate: float, seed: int) -> list[float]:
    """Train on unlabelled ids with the model's objective; the mean training loss of each epoch."""
    generator = torch.Generator().manual_seed(seed)
    optimiser, schedule = _optimiser(model, learning_rate, epochs * math.ceil(len(ids) / batch_size))
    losses = []
    for epoch in range(1, epochs + 1):
        model.train()
        total = 0.0
        for rows in epoch_batches(len(ids), batch_size, seed, epoch):
            batch = torch.as_tensor(trim_padding(ids[rows]))
            total += _step(model, model.objective(batch, vocabulary, generator), optimiser, schedule) * len(rows)
        losses.append(total / len(ids))
    return losses


@torch.no_grad()
def held_out_loss(model: LanguageModel, ids: np.ndarray, vocabulary: Vocabulary, seed: int = 0) -> float:
    """The objective on texts the model did not train on (the masking drawn with `seed`), mean over batches."""
    generator = torch.Generator().manual_seed(seed)
    model.eval()
    losses = [model.objective(torch.as_tensor(trim_padding(ids[start:start + 256])), vocabulary, generator).item()
              for start in range(0, len(ids), 256)]
    return float(np.mean(losses))


def pooled_logits(body: TransformerClassifier, ids: torch.Tensor, causal: bool) -> torch.Tensor:
    """Class logits: the encoder's masked mean over real tokens, or the decoder's state at its last real token."""
    states, real, _ = body.token_states(ids, causal=causal)  # (B, T, d), (B, T)
    if causal:
        pooled = states[torch.arange(len(ids)), real.sum(dim=1) - 1]  # <eos>: it has read every token
    else:
        weight = real.unsqueeze(-1).to(states.dtype)
        pooled = (states * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1.0)
    return body.head(pooled)


def fine_tune(body: TransformerClassifier, causal: bool, ids: np.ndarray, labels: np.ndarray, steps: int,
              batch_size: int, learning_rate: float, seed: int) -> TransformerClassifier:
    """Cross-entropy on the labelled ids for a fixed number of steps, the last step kept (no validation)."""
    torch.manual_seed(seed)  # dropout masks
    optimiser, schedule = _optimiser(body, learning_rate, steps)
    labels_t = torch.as_tensor(labels, dtype=torch.long)
    done, epoch = 0, 0
    body.train()
    while done < steps:
        epoch += 1
        for rows in epoch_batches(len(ids), min(batch_size, len(ids)), seed, epoch):
            if done == steps:
                break
            logits = pooled_logits(body, torch.as_tensor(trim_padding(ids[rows])), causal)
            _step(body, F.cross_entropy(logits, labels_t[rows]), optimiser, schedule)
            done += 1
    return body.eval()


@torch.no_grad()
def predict_proba(body: TransformerClassifier, causal: bool, ids: np.ndarray) -> np.ndarray:
    """(n, classes) softmax probabilities, in batches of 256."""
    body.eval()
    return np.concatenate([torch.softmax(pooled_logits(body, torch.as_tensor(trim_padding(ids[s:s + 256])),
                                                       causal).double(), dim=-1).numpy()
                           for s in range(0, len(ids), 256)])


# --- decoding from the causal model: one next-token distribution at a time, the prefix growing
def _next_log_probs(model: LanguageModel, prefix: torch.Tensor, blocked: torch.Tensor) -> torch.Tensor:
    """(B, V) log-probabilities of the token after each prefix (B, t); `blocked` ids get none."""
    logits = model(prefix)[:, -1]
    return torch.log_softmax(logits.masked_fill(blocked, float("-inf")), dim=-1)


def _blocked(vocabulary: Vocabulary) -> torch.Tensor:
    """Tokens never generated: <pad>, <unk>, <mask>, <bos> (the model may still end the text with <eos>)."""
    blocked = torch.zeros(len(vocabulary), dtype=torch.bool)
    blocked[[PAD_ID, UNK_ID, vocabulary.stoi[MASK], vocabulary.stoi[BOS]]] = True
    return blocked


@torch.no_grad()
def generate(model: LanguageModel, vocabulary: Vocabulary, prompt: list[str], max_tokens: int,
             temperature: float = 0.0, generator: torch.Generator | None = None) -> list[str]:
    """Greedy (temperature 0: the most probable next token each time) or sampling from softmax(logits / T);
    stops at <eos> or max_tokens new tokens. Returns the prompt and the generated words."""
    model.eval()
    ids = [vocabulary.stoi[BOS], *(vocabulary.stoi.get(w, UNK_ID) for w in prompt)]
    blocked, eos = _blocked(vocabulary), vocabulary.stoi[EOS]
    for _ in range(max_tokens):
        if len(ids) >= model.body.config.sequence_length:
            break
        prefix = torch.tensor([ids])
        if temperature == 0:
            token = int(_next_log_probs(model, prefix, blocked)[0].argmax())
        else:
            logits = model(prefix)[0, -1].masked_fill(blocked, float("-inf")) / temperature
            token = int(torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator))
        if token == eos:
            break
        ids.append(token)
    return [vocabulary.itos[i] for i in ids[1:]]


@torch.no_grad()
def beam_search(model: LanguageModel, vocabulary: Vocabulary, prompt: list[str], max_tokens: int,
                beams: int = 4) -> tuple[list[str], float]:
    """Keep the `beams` most probable continuations (sum of log-probabilities) at each step; one that emits <eos>
    is finished (and leaves the beam). Returns the finished text (the prompt and its words) with the best mean
    log-probability per generated token, and that mean; unfinished beams count when max_tokens is reached."""
    model.eval()
    start = [vocabulary.stoi[BOS], *(vocabulary.stoi.get(w, UNK_ID) for w in prompt)]
    blocked, eos = _blocked(vocabulary), vocabulary.stoi[EOS]
    alive: list[tuple[list[int], float]] = [(start, 0.0)]
    finished: list[tuple[list[int], float]] = []
    for _ in range(max_tokens):
        if not alive or len(alive[0][0]) >= model.body.config.sequence_length:
            break
        log_probs = _next_log_probs(model, torch.tensor([ids for ids, _ in alive]), blocked)  # (beams, V)
        totals = torch.tensor([score for _, score in alive])[:, None] + log_probs
        best = torch.topk(totals.flatten(), beams)
        grown = []
        for flat, score in zip(best.indices.tolist(), best.values.tolist()):
            row, token = divmod(flat, totals.size(1))
            ids = [*alive[row][0], token]
            (finished if token == eos else grown).append((ids, score))
        alive = grown
    finished += alive  # what was still growing when the budget ran out
    ids, score = max(finished, key=lambda item: item[1] / max(1, len(item[0]) - len(start)))
    words = [vocabulary.itos[i] for i in ids[1:] if i != eos]
    return words, score / max(1, len(ids) - len(start))
