"""Redaction of anything shown to people: links, e-mail addresses and phone-like digit runs.

A superset of the seed course's two regexes (URLs and long digit runs).
"""
from __future__ import annotations

import re

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(
    r"(?:(?:https?|ftp):?//|www\.)\S*"  # a scheme (even without its colon) or www.
    r"|\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|co\.uk|uk|biz|info|tv|mobi|ly|me|io)(?:/\S*)?"
    r"|\b[\w-]+(?:\.[\w-]+)+/\S*",  # any dotted host with a path: nus.edu.sg/~x, cherthala.in/a
    re.IGNORECASE,
)
# Digit runs of 5+ digits, allowing spaces, dots, dashes, brackets or a leading + between them:
# phone numbers, short codes and long numeric ids.
_NUMBER = re.compile(r"\+?\(?\d(?:[\d\s().-]{3,}\d)")


_DECIMAL = re.compile(r"\d+\.\d+")


def _replace_number(match: re.Match) -> str:
    """Five or more digits is phone-like; a plain decimal such as a loss 0.6931 is not."""
    found = match.group(0)
    digits = sum(ch.isdigit() for ch in found)
    return "<NUM>" if digits >= 5 and not _DECIMAL.fullmatch(found) else found


def redact(text: str) -> str:
    """Replace URLs, e-mail addresses and phone-like digit runs by <URL>, <EMAIL>, <NUM>."""
    text = _EMAIL.sub("<EMAIL>", text)
    text = _URL.sub("<URL>", text)
    return _NUMBER.sub(_replace_number, text)


def snippet(text: str, width: int = 60) -> str:
    """A redacted, single-line, shortened form of a message, safe to show."""
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def redaction_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, placeholder) of each part of `text` that redact() hides, e-mails first.

    For labelling tokens of a message: a token overlapping a span is shown as the placeholder.
    """
    spans = [(m.start(), m.end(), "<EMAIL>") for m in _EMAIL.finditer(text)]
    spans += [(m.start(), m.end(), "<URL>") for m in _URL.finditer(text)]
    spans += [(m.start(), m.end(), "<NUM>") for m in _NUMBER.finditer(text) if _replace_number(m) == "<NUM>"]
    return spans
