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
import re
from typing import Any

_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def canonical_json(value: Any) -> bytes:
    """Return the canonical UTF-8 JSON encoding of ``value``."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def b64e(data: bytes) -> str:
    """Return unpadded base64url text for ``data``."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64d(text: str) -> bytes:
    """Decode canonical unpadded base64url text; raise ``ValueError`` for anything else.

    A credential must have exactly one spelling: padding, the standard alphabet
    (``+/``), whitespace, and non-zero spare bits in the last character are all
    refused, so the same bytes can never arrive as two different strings (a revoked
    token re-spelled would otherwise get a new text key).
    """
    if not isinstance(text, str) or not text.isascii():
        raise ValueError("not base64url text")
    if len(text) % 4 == 1 or not _B64URL.fullmatch(text):
        raise ValueError("not canonical unpadded base64url text")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as err:
        raise ValueError(f"not base64url text: {err}") from err
    if b64e(data) != text:
        raise ValueError("not canonical base64url text (spare bits set)")
    return data
