"""Redaction of text that could come from the data: links, e-mail addresses, user handles and digit runs.

Redaction by design, not by list:

- `<NUM>`: any run of digits that, with the separators space, `.`, `-`, `/`, `_` and
  parentheses removed, holds 5 or more digits (`0871.2345678`, `087/1234/5678`, `+44 (0)20 7946`).
  Decimals too: a message's `0.6931` is hidden like any other number.
- `<URL>`: a scheme (`http://`, `ftp:/` ...) or `www.` and what follows; any dotted host with a
  path (`example.de/win`) or a host with a port and a path, whatever its ending; a bare host
  on a common ending (`getzed.co.uk`).
- `<EMAIL>`: an address with or without a dotted domain (`a.b@example.org`, `user@localhost`).
- `<USER>`: a user handle, `@` and the letters, digits and underscores after it (`@jack_1`,
  `RT @jack:`, `@李雷`); an `@` inside an address is part of the `<EMAIL>` (`.@jack` is one).

Numbers the suite shows on purpose (metrics, losses, progress rates, times) are formatted by our
own code and never pass through `redact`: the worker marks its own progress lines (see
`common.progress`) and the orchestrator redacts every other line.

`redaction_spans` is the one place that decides what is hidden; `redact` replaces exactly those
spans, so the two always agree (the attention-map lesson labels tokens with the spans).
"""
from __future__ import annotations

import re

# The lookbehinds anchor each pattern at the start of its run, so a 1 MB message without a match
# costs one pass, not one pass per character.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@\s?[\w-]+(?:\.[\w-]+)*")
_URL = re.compile(
    r"(?<![\w+.-])[a-z][\w+.-]*:/{1,2}\S*"  # a scheme: http://, ftp:/ ...
    r"|(?:https?|ftp):/{1,2}\S*"  # a web scheme glued to what precedes it: 参考http://, ...http://
    r"|(?<![\w.-])(?:https?|ftp)//\S*"  # a scheme that lost its colon
    r"|(?<![\w.-])www\.\S*"
    # a dotted host (or a host:port) with a path, whatever its ending: example.de/win, 10.0.0.1:80/x
    r"|(?<![\w.-])(?:(?=[\w.-]*?\w\.\w)[\w.-]++(?::\d+)?|[\w.-]++:\d++)/\S*"
    # a bare host on a common ending: getzed.co.uk, usc.edu
    r"|(?<![\w.-])[\w.-]*?\.(?:com|net|org|co\.uk|uk|biz|info|tv|mobi|ly|me|io"
    r"|(?:edu|gov|ac\.uk|de|fr|eu|us|au|ca|ie)\b)",
    re.IGNORECASE,
)
# a handle: @ and the word after it, wherever it stands (inside an address the e-mail span, which
# starts first, names the merged span); "@ x" and a lone "@" are not handles
_USER = re.compile(r"@\w+")
_SEPARATOR = r"[\s.\-/_()]"
# a run of digits joined by separators; a leading + or ( belongs to it
_DIGIT_RUN = re.compile(rf"\+?\(?\d(?:{_SEPARATOR}*\d)*")
_DIGIT = re.compile(r"\d")
MIN_DIGITS = 5
_PRIORITY = {"<EMAIL>": 0, "<URL>": 1, "<USER>": 2, "<NUM>": 3}  # names spans that start together


def redaction_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, placeholder) of each part of `text` that `redact` hides, in text order.

    Every e-mail, link, handle and long digit run is found in the original text; spans that overlap are
    merged into one, named by the one that starts first (the longest, then e-mail before link
    before handle before number, where they start together).
    """
    found = [(m.start(), m.end(), "<EMAIL>") for m in _EMAIL.finditer(text)]
    found += [(m.start(), m.end(), "<URL>") for m in _URL.finditer(text)]
    found += [(m.start(), m.end(), "<USER>") for m in _USER.finditer(text)]
    found += [(m.start(), m.end(), "<NUM>") for m in _DIGIT_RUN.finditer(text)
              if len(_DIGIT.findall(m.group(0))) >= MIN_DIGITS]
    merged: list[tuple[int, int, str]] = []
    for start, end, placeholder in sorted(found, key=lambda span: (span[0], -span[1], _PRIORITY[span[2]])):
        if merged and start < merged[-1][1]:  # overlaps the span before: one span, named by that one
            merged[-1] = (merged[-1][0], max(merged[-1][1], end), merged[-1][2])
        else:
            merged.append((start, end, placeholder))
    return merged


def redact(text: str) -> str:
    """`text` with links, e-mail addresses, user handles and long digit runs replaced by <URL>, <EMAIL>,
    <USER>, <NUM>."""
    parts, position = [], 0
    for start, end, placeholder in redaction_spans(text):
        parts += [text[position:start], placeholder]
        position = end
    parts.append(text[position:])
    return "".join(parts)


def snippet(text: str, width: int = 60) -> str:
    """A redacted, single-line, shortened form of a message, safe to show."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"
