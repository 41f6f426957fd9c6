"""Our own progress output, marked so that the orchestrator shows it as it is.

The orchestrator redacts every line a worker prints (`common.redaction`): a library warning or a
traceback could echo message text. Progress lines the suite formats itself from numbers (tqdm
bars with their rates and times, per-epoch losses and validation AP) would be mangled by that:
`21.14it/s` looks like a link, `61/122` like a phone number. So the worker writes them through
`progress_stream()`, which starts every line with a mark; the orchestrator passes a line unredacted
only when it starts with the mark, and redacts every other line.

Why text from the data cannot pass as progress: the mark is a random token that the orchestrator
draws for each worker, after the data is read, and hands over in an environment variable; only
this module writes it, and each marked write ends its own line (a bar's `\\r` included), so no
unmarked text can ride on a marked line. What goes through `progress_stream()` must be built from
numbers and fixed words only (never a message, a token or an exception text).

Run outside the orchestrator (no mark in the environment), progress goes to stderr unchanged.
"""
from __future__ import annotations

import io
import os
import re
import sys

MARK_VARIABLE = "COMPARISONS_PROGRESS_MARK"
_LINE_END = re.compile(r"(?<=[\r\n])")


class MarkedStream(io.TextIOBase):
    """A text stream that writes each line to `target` as `mark + line`, always ending the line."""

    def __init__(self, target, mark: str):
        self.target, self.mark = target, mark

    @property
    def encoding(self) -> str:  # tqdm draws unicode blocks only on a stream that says it can
        return "utf-8"

    def write(self, text: str) -> int:
        out = []
        for piece in _LINE_END.split(text):
            body = piece.rstrip("\r\n")
            if not body:  # an empty piece or a bare line end: nothing to mark
                out.append(piece)
            else:  # an unfinished line (a bar redrawn in place) is ended with \r
                out.append(self.mark + body + (piece[len(body):] or "\r"))
        self.target.write("".join(out))
        self.target.flush()
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def writable(self) -> bool:
        return True


def progress_stream():
    """Where progress bars and per-epoch lines go: marked stderr under the orchestrator, else stderr.

    Looked up at each call, so a bar follows `sys.stderr` as it is then (pytest's capture too).
    """
    mark = os.environ.get(MARK_VARIABLE)
    return MarkedStream(sys.stderr, mark) if mark else sys.stderr


def progress_line(text: str) -> None:
    """One line of our own progress (numbers and fixed words only), e.g. an epoch's validation AP."""
    stream = progress_stream()
    stream.write(text + "\n")  # one write: the line and its end together
    stream.flush()
