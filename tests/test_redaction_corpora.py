"""Redaction over the named corpora: no raw handle, link, address or long number of any
whole text survives, the same property as the SMS data's in tests/test_redaction.py, plus <USER>."""
import re

import pytest

from common.corpora import CORPORA, load_corpus
from common.errors import UserInputError
from common.redaction import redact, redaction_spans
from tests.test_redaction import visible_problems

HANDLE = re.compile(r"@\w")  # independent of the implementation's pattern: an @ with a word after it


def problems(shown):
    return visible_problems(shown) + HANDLE.findall(shown)


@pytest.mark.parametrize("name, at_least", [("tweets", {"<USER>": 30000, "<URL>": 10000, "<NUM>": 100}),
                                            ("zh-reviews", {"<URL>": 20, "<NUM>": 100}),
                                            ("bbc-news", {"<URL>": 50, "<NUM>": 100})])
def test_every_whole_text_of_each_corpus_is_redacted(name, at_least):
    try:
        data = load_corpus(name)
    except UserInputError as missing:
        pytest.skip(str(missing))
    shown = [redact(text) for text in data.texts]
    leaks = {text[:40]: found for text, after in zip(data.texts, shown) if (found := problems(after))}
    assert not leaks
    joined = " ".join(shown)  # not vacuous: the corpus holds many of each
    assert all(joined.count(token) >= n for token, n in at_least.items()), \
        {token: joined.count(token) for token in at_least}


@pytest.mark.parametrize("raw, expected", [
    ("@united thanks!", "<USER> thanks!"),
    ("RT @jack_1: so true", "RT <USER>: so true"),
    (".@SouthwestAir where is my bag", "<EMAIL> where is my bag"),  # hidden as an address: .@x looks like one
    ("computers@were@down", "<EMAIL><USER>"),  # an address, then a handle glued to it
    ("mail a.b@example.org or @bob", "mail <EMAIL> or <USER>"),
    ("meet @ 5 pm", "meet @ 5 pm"),  # a lone @ is no handle
    ("@李雷 你好", "<USER> 你好"),
    ("参考http://bbs.example.cn/t-1.html 好", "参考<URL> 好"),  # a scheme glued to the text before it
    ("Revenue ...http://t.co/200wqsCPaG", "Revenue ...<URL>"),
])
def test_handles_and_glued_links(raw, expected):
    assert redact(raw) == expected


def test_spans_name_handles():
    assert redaction_spans("hi @ann and www.x.com") == [(3, 7, "<USER>"), (12, 21, "<URL>")]


def test_the_corpora_are_the_named_ones():
    assert set(CORPORA) == {"zh-reviews", "bbc-news", "tweets"}
