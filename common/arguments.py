"""The command lines' one parser class: a bad option, a missing one or an invalid choice is one line on stderr
(what is wrong, and where the help is) and exit code 2, never argparse's usage block before its error."""
from __future__ import annotations

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose errors are a single line; its subcommands' parsers are of this class too."""

    def error(self, message: str):
        print(f"error: {message} (see `{self.prog} --help`)", file=sys.stderr)
        self.exit(2)
