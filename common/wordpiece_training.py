"""A deterministic WordPiece vocabulary learner: the pieces are a function of the words and settings only.

HF `tokenizers` learns a WordPiece vocabulary by BPE merges, but takes merges of equal count in
hash-map order, which changes from one process to the next (huggingface/tokenizers#1794): two
fresh processes on the same training texts gave 6,103 and 6,098 pieces, and the vocabulary alone
moved torch_scratch's test AP by 0.008. This module learns the same kind of vocabulary the same
way (the words are split into characters, "##" marks a character inside a word; the most frequent
adjacent pair is merged until the vocabulary is full or no pair is seen `min_count` times) with
every tie broken by the pieces' text, so the result never depends on the process. HF `tokenizers`
still normalises, pre-tokenises and encodes (common/subword.py): only the learning is ours.

Pair counts are kept incrementally (a heap of counts, checked against the live table when popped,
and the words each pair occurs in), so a merge touches only the words that hold the pair.
"""
from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from typing import Mapping

CONTINUATION = "##"


def _symbols(word: str) -> list[str]:
    return [word[0]] + [CONTINUATION + c for c in word[1:]]


def _merged(left: str, right: str) -> str:
    return left + right[len(CONTINUATION):]


def learn_pieces(word_counts: Mapping[str, int], max_pieces: int, min_count: int = 2) -> list[str]:
    """The vocabulary's pieces, alphabet first (sorted), then merged pieces in the order they were learned.

    word_counts: each pre-tokenised word and how often it occurs in the training texts.
    max_pieces: the most pieces returned (the alphabet counts; it is never cut).
    """
    words = sorted(w for w in word_counts if w)               # a fixed order, whatever the mapping's
    counts = [int(word_counts[w]) for w in words]
    symbols = [_symbols(w) for w in words]
    alphabet = sorted({s for word in symbols for s in word})
    pieces = list(alphabet)
    known = set(pieces)

    pair_counts: Counter = Counter()
    where: dict[tuple[str, str], set[int]] = defaultdict(set)
    for index, word in enumerate(symbols):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += counts[index]
            where[pair].add(index)
    heap = [(-count, pair) for pair, count in pair_counts.items()]  # ties: the smaller (left, right) first
    heapq.heapify(heap)

    while len(pieces) < max_pieces and heap:
        negative, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -negative:
            continue  # a stale entry: the pair's count changed since it was pushed
        if -negative < min_count:
            break
        new = _merged(*pair)
        if new not in known:
            known.add(new)
            pieces.append(new)
        touched: set[tuple[str, str]] = set()
        for index in sorted(where.pop(pair, ())):
            old = symbols[index]
            for old_pair in zip(old, old[1:]):
                pair_counts[old_pair] -= counts[index]
                touched.add(old_pair)
                where.get(old_pair, set()).discard(index)
            merged, i = [], 0
            while i < len(old):
                if i + 1 < len(old) and (old[i], old[i + 1]) == pair:
                    merged.append(new)
                    i += 2
                else:
                    merged.append(old[i])
                    i += 1
            symbols[index] = merged
            for new_pair in zip(merged, merged[1:]):
                pair_counts[new_pair] += counts[index]
                touched.add(new_pair)
                where[new_pair].add(index)
        pair_counts.pop(pair, None)
        for changed in sorted(touched):
            count = pair_counts.get(changed, 0)
            if count > 0:
                heapq.heappush(heap, (-count, changed))
            else:
                pair_counts.pop(changed, None)
    return pieces
