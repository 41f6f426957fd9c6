"""common/redaction.py and common/progress.py: what people see hides links, addresses and numbers.

A property over every whole message of the shipped data, a corpus of crafted cases, the spans
that label attention-map tokens, and our own progress lines that must pass unmangled.
"""
import io
import re
import time

import pytest

from common.datasets import load_sms_spam
from common.progress import MARK_VARIABLE, MarkedStream, progress_line, progress_stream
from common.redaction import redact, redaction_spans, snippet

# Independent of the implementation's patterns: what must never be visible after redaction.
SEPARATORS = re.compile(r"[\s.\-/_()]")
FIVE_DIGITS = re.compile(r"\d{5}")
LINK = re.compile(r"://|(?<![\w.-])(?:https?|ftp)//|\bwww\.|[\w-]\.[\w-]+(?::\d+)?/|[\w-]:\d+/", re.IGNORECASE)
ADDRESS = re.compile(r"[\w.+-]@\s?[\w-]")


def visible_problems(shown: str) -> list[str]:
    """The digit runs (separators removed), links and addresses still visible in `shown`."""
    return (FIVE_DIGITS.findall(SEPARATORS.sub("", shown)) + [m.group(0) for m in LINK.finditer(shown)]
            + [m.group(0) for m in ADDRESS.finditer(shown)])


@pytest.fixture(scope="module")
def sms():
    return load_sms_spam()


def test_every_whole_message_of_the_data_is_redacted(sms):
    """The whole message, not a prefix: no 5-digit run, link or address survives anywhere."""
    leaks = {text: visible_problems(redact(text)) for text in sms.texts}
    leaks = {text[:40]: found for text, found in leaks.items() if found}
    assert not leaks
    # the property is not vacuous: the data holds many of each
    joined = " ".join(redact(text) for text in sms.texts)
    assert joined.count("<NUM>") > 500 and joined.count("<URL>") > 100 and joined.count("<EMAIL>") > 10


def test_the_check_itself_sees_what_the_old_rules_let_through():
    for raw in ("0871.2345678", "087/1234/5678", "example.de/win", "user@localhost", "087147123779.2stop"):
        assert visible_problems(raw), raw


@pytest.mark.parametrize("raw, expected", [
    ("Call 09061701461 now", "Call <NUM> now"),
    ("call +44 (0)20 7946 0958!", "call <NUM>!"),
    ("visit http://www.win.com/x?y=1 today", "visit <URL> today"),
    ("go to www.getzed.co.uk", "go to <URL>"),
    ("txt WIN to 87121", "txt WIN to <NUM>"),
    ("mail me at a.b@example.org", "mail me at <EMAIL>"),
    ("see you at 7.30, 2 of us", "see you at 7.30, 2 of us"),
    ("staff.science.nus.edu.sg/~phyhcmk/teaching/pc1323 ok", "<URL> ok"),
    ("call 0800.123.4567", "call <NUM>"),
    # what the list-based rules let through
    ("call 0871.2345678 now", "call <NUM> now"),
    ("ring 09061.701461", "ring <NUM>"),
    ("087/1234/5678", "<NUM>"),
    ("id 12_345_678", "id <NUM>"),
    ("win at example.de/win!", "win at <URL>"),
    ("see shop.example.xyz/a?b=1 or localhost:8080/admin", "see <URL> or <URL>"),
    ("write to user@localhost please", "write to <EMAIL> please"),
    ("its olowoyey@ usc.edu have fun", "its <EMAIL> have fun"),
    ("mjzgroup. 08714342399.2stop reply STOP", "mjzgroup. <NUM>stop reply STOP"),
    ("from www.Applausestore.com x", "from <URL> x"),
    ("hxxp go to http//win.example now", "hxxp go to <URL> now"),
    # a decimal in a message is data like any other number: our own metrics never pass through here
    ("loss=0.6931", "loss=<NUM>"),
    ("2 cats, 3 dogs, 1,000 fish", "2 cats, 3 dogs, 1,000 fish"),
])
def test_redaction(raw, expected):
    assert redact(raw) == expected


def test_spans_are_exactly_what_redact_hides():
    text = "x 12345john@x.com y www.a.com/b@c.de z 0871 234 5678 ok"
    spans = redaction_spans(text)
    assert [placeholder for *_, placeholder in spans] == ["<EMAIL>", "<URL>", "<NUM>"]
    assert all(a_end <= b_start for (_, a_end, _), (b_start, _, _) in zip(spans, spans[1:]))
    rebuilt, position = "", 0
    for start, end, placeholder in spans:
        rebuilt += text[position:start] + placeholder
        position = end
    assert rebuilt + text[position:] == redact(text) == "x <EMAIL> y <URL> z <NUM> ok"


@pytest.mark.parametrize("text", [
    "a." * 200_000, "a" * 500_000, "1 " * 200_000, "a@" * 100_000, ".a" * 200_000 + "/", "-" * 500_000,
])
def test_long_texts_are_redacted_in_one_pass(text):
    """A 1 MB message must not hang the suite (patterns anchored at the start of each run)."""
    started = time.process_time()
    redact(text)
    assert time.process_time() - started < 20  # quadratic scanning would take hours here


def test_snippets_of_every_message_hide_links_and_numbers(sms):
    for text in sms.texts:
        shown = snippet(text)
        assert len(shown) <= 60 and "\n" not in shown
        assert not visible_problems(shown.replace("…", " ")), shown


def test_progress_lines_are_marked_and_always_end_their_line():
    target = io.StringIO()
    stream = MarkedStream(target, "@M@")
    stream.write("\rtorch_scratch epoch 1/2:  50%|#####     | 61/122 [00:02<00:02, 21.14it/s]")
    stream.write("\rdone\n\n")
    assert target.getvalue() == ("\r@M@torch_scratch epoch 1/2:  50%|#####     | 61/122 "
                                 "[00:02<00:02, 21.14it/s]\r\r@M@done\n\n")


def test_progress_goes_to_plain_stderr_without_a_mark(monkeypatch, capsys):
    monkeypatch.delenv(MARK_VARIABLE, raising=False)
    progress_line("epoch 1/3: valid AP 0.9788")
    assert capsys.readouterr().err == "epoch 1/3: valid AP 0.9788\n"
    monkeypatch.setenv(MARK_VARIABLE, "@M@")
    assert isinstance(progress_stream(), MarkedStream)
    progress_line("epoch 2/3: valid AP 0.9790")
    assert capsys.readouterr().err == "@M@epoch 2/3: valid AP 0.9790\n"


def test_attention_map_labels_stay_aligned_when_lower_case_is_longer():
    """'İ'.lower() is two characters: the number's label must stay on the number's token."""
    from common.vocabulary import tokenize
    from comparisons.course.attention_map import display_tokens

    message = "İİİ İstanbul call 09061701461 now"
    tokens = tokenize(message)
    shown = display_tokens(message, tokens)
    assert len(shown) == len(tokens)
    assert shown[tokens.index("09061701461")] == "<NUM>"
    assert [label for label, token in zip(shown, tokens) if label != token] == ["<NUM>"]


def test_the_committed_results_hold_no_phone_like_run_and_no_host_of_the_data():
    """Every text file under results/ (pages, tables, records, logs, notes): no 9+ digit run outside a
    decimal fraction or a hash, and none of the web hosts the SMS messages name."""
    import re
    from pathlib import Path

    from common.datasets import load_sms_spam
    from tests.test_cli import LINK_OR_PHONE

    hosts = {h.lower() for text in load_sms_spam().texts
             for h in re.findall(r"(?i)\b(?:www\.)?[a-z0-9-]+\.(?:com|co\.uk|net|org|biz|info|tv|mobi)\b", text)}
    assert len(hosts) > 50, "the data names its hosts: the scan below can fail"
    # a host ends in its domain: each place a file names a domain, the hosts ending there are looked up (a 300-way
    # alternation scanned every file 150 times slower)
    domain = re.compile(r"\.(?:com|co\.uk|net|org|biz|info|tv|mobi)")
    by_domain: dict[str, set[str]] = {}
    for host in hosts:
        by_domain.setdefault(re.search(r"\.(?:com|co\.uk|net|org|biz|info|tv|mobi)$", host).group(0), set()).add(host)
    lengths = {name: sorted({len(host) for host in named}) for name, named in by_domain.items()}

    def any_host(content: str) -> bool:
        return any(content[found.end() - n:found.end()] in by_domain[found.group(0)]
                   for found in domain.finditer(content) for n in lengths[found.group(0)])

    assert all(any_host(f"see x{host}/offer") for host in hosts)  # a host inside a longer name counts too
    assert "not-a-host-of-the-data.com" not in hosts and not any_host("see not-a-host-of-the-data.com")
    results = Path(__file__).resolve().parent.parent / "results"
    scanned = 0
    for path in results.rglob("*"):
        if not path.is_file() or path.suffix in (".npz", ".png", ".joblib", ".keras", ".pt", ".safetensors", ".db"):
            continue
        if "exports" in path.relative_to(results).parts:  # serving graphs (model files, vocabularies inside), never committed
            continue
        content = path.read_text(errors="replace")  # subset seeds are written in hex (common/splits.seed_label)
        scanned += 1
        found = LINK_OR_PHONE.search(content)
        assert not found, f"{path.relative_to(results)} shows {found.group(0)!r}"
        named = any_host(content.lower())
        assert not named, f"{path.relative_to(results)} names a host of the data"
    assert scanned > 100
