"""Canonical JSON encoding and base64url helpers shared by everything that signs.

The canonical form of a JSON value is its JSON text with keys sorted, no insignificant
whitespace, non-ASCII characters written as UTF-8 (never escaped), and encoded as
UTF-8 bytes. Floats that are whole numbers are not normalised: signers and verifiers
must encode the same Python values, which the wire round trip guarantees.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    """Return the canonical UTF-8 JSON encoding of ``value``."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def b64e(data: bytes) -> str:
    """Return unpadded base64url text for ``data``."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64d(text: str) -> bytes:
    """Decode unpadded (or padded) base64url text; raise ``ValueError`` when malformed."""
    if not isinstance(text, str) or not text.isascii():
        raise ValueError("not base64url text")
    stripped = text.rstrip("=")
    try:
        return base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"not base64url text: {err}") from err
