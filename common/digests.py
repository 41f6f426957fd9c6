"""How digests are written in run folders: lower-case base32 (digits 2-7 only), so a hash never holds
the 9-digit run a privacy scan reads as a phone number (a hex sha256 often does)."""
from __future__ import annotations

import base64


def readable_digest(digest: bytes) -> str:
    """A digest as written in run folders: lower-case base32, never a 9-digit run."""
    return base64.b32encode(digest).decode("ascii").rstrip("=").lower()
