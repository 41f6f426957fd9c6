"""The bridge to the SMS case's published figures starts from the source's own split and vocabulary."""
from __future__ import annotations

from common.datasets import DataSpec, load
from common.splits import stratified_split
from comparisons.studies import source_bridge


def test_the_sources_vocabulary_and_unknown_rate_reproduce_on_its_split():
    data = load(DataSpec())
    split = stratified_split(data)
    assert (len(split.train), len(split.valid), len(split.test)) == (3901, 836, 837)  # the source's printed sizes
    stoi, unknown_rate = source_bridge.source_vocabulary(data.subset(split.train).texts)
    assert len(stoi) == source_bridge.PUBLISHED["vocabulary"] == 3486
    assert round(unknown_rate, 5) == source_bridge.PUBLISHED["unknown_rate"]
    ids, valid = source_bridge.encode(["Call 0800 now!!", ""], stoi)
    assert ids.shape == valid.shape == (2, source_bridge.MAX_LEN)
    assert valid[0].sum() == 5 and not valid[1].any()  # "call", "0800", "now", "!", "!"; an empty text is all padding
