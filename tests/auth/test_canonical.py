"""Canonical base64url: one spelling per byte string, everything else refused."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.auth.canonical import b64d, b64e


def test_round_trip_of_written_out_values() -> None:
    # Values from RFC 4648's test vectors, written unpadded.
    assert b64e(b"f") == "Zg"
    assert b64e(b"fo") == "Zm8"
    assert b64e(b"foo") == "Zm9v"
    assert b64d("Zg") == b"f"
    assert b64d("Zm8") == b"fo"
    assert b64d("Zm9v") == b"foo"
    assert b64d("") == b""


@pytest.mark.parametrize(
    "text",
    [
        "Zg==",  # padding
        "Zg=",
        "Zm8=",
        "Zh",  # spare bits set: decodes to b"f" too
        "Zm9",  # spare bits set: decodes to b"fo" too
        " Zg",  # whitespace
        "Zg\n",
        "Z g",
        "+/8",  # standard alphabet
        "ab+c",
        "ab/c",
        "Z",  # impossible length
        "Zm9vY",
        "Zé",
        "Zm9v=",
    ],
)
def test_non_canonical_spellings_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="base64url"):
        b64d(text)


@given(st.binary(max_size=96))
def test_every_other_spelling_of_the_same_bytes_is_refused(data: bytes) -> None:
    canonical = b64e(data)
    assert b64d(canonical) == data
    spellings = {
        canonical + "=" * (-len(canonical) % 4) or "====",
        canonical + "==",
        base64.b64encode(data).decode(),
    }
    if len(canonical) % 4:
        # Every other value of the last character's spare low bits decodes the same.
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        last = alphabet.index(canonical[-1])
        spare = 4 if len(canonical) % 4 == 2 else 2
        for low in range(1, 1 << spare):
            spellings.add(canonical[:-1] + alphabet[(last & ~((1 << spare) - 1)) | low])
    spellings.discard(canonical)
    for text in spellings:
        with pytest.raises(ValueError, match="base64url"):
            b64d(text)
