"""Matter onboarding payloads: QR codes (``MT:…``) and 11/21-digit manual pairing codes.

``parse_pairing_code(text)`` validates a code a person typed or scanned and returns what
it carries (discriminator, passcode, vendor/product when present), so a wrong code is
rejected with a precise message before the controller spends minutes searching for a
device. Manual codes are checked with their Verhoeff digit; QR payloads are decoded from
base-38 and their fields checked (version, passcode rules, padding).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from bridge.errors import InvalidParamsError

_BASE38 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-."
_QR_RE = re.compile(r"^MT:[0-9A-Z.\-]+$")
# The specification forbids trivially guessable setup passcodes.
INVALID_PASSCODES = frozenset(
    {
        0,
        11111111,
        22222222,
        33333333,
        44444444,
        55555555,
        66666666,
        77777777,
        88888888,
        99999999,
        12345678,
        87654321,
    }
)
PASSCODE_MAX = 99999998
DISCRIMINATOR_MAX = 0xFFF

# Verhoeff tables (dihedral group D5): multiplication, permutation, inverse.
_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 2, 3, 4, 0, 6, 7, 8, 9, 5),
    (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7),
    (4, 0, 1, 2, 3, 9, 5, 6, 7, 8),
    (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2),
    (7, 6, 5, 9, 8, 2, 1, 0, 4, 3),
    (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 5, 7, 6, 2, 8, 3, 0, 9, 4),
    (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7),
    (9, 4, 5, 3, 1, 2, 6, 8, 7, 0),
    (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5),
    (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)
_INV = (0, 4, 3, 2, 1, 5, 6, 7, 8, 9)


class CodeKind(StrEnum):
    """How a pairing code was written."""

    QR = "qr"
    MANUAL = "manual"


@dataclass(frozen=True, slots=True, kw_only=True)
class PairingCode:
    """A validated onboarding payload.

    ``discriminator`` is the full 12-bit value for QR codes; manual codes carry only its
    top four bits, given as ``short_discriminator`` (and ``discriminator`` is None).
    """

    kind: CodeKind
    text: str
    passcode: int
    short_discriminator: int
    discriminator: int | None = None
    vendor_id: int | None = None
    product_id: int | None = None
    commissioning_flow: int | None = None
    discovery_capabilities: int | None = None

    def to_json(self) -> dict[str, object]:
        """Return the decoded fields (the passcode is a secret and left out)."""
        return {
            "kind": self.kind.value,
            "short_discriminator": self.short_discriminator,
            "discriminator": self.discriminator,
            "vendor_id": self.vendor_id,
            "product_id": self.product_id,
        }


def verhoeff_check_digit(digits: str) -> int:
    """Return the Verhoeff check digit for a string of decimal digits."""
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _D[c][_P[(i + 1) % 8][int(ch)]]
    return _INV[c]


def _check_passcode(passcode: int, text: str) -> None:
    if not 1 <= passcode <= PASSCODE_MAX or passcode in INVALID_PASSCODES:
        raise InvalidParamsError(
            "the pairing code carries an invalid setup passcode; check the code on the device",
            {"code": text},
        )


def _parse_manual(text: str, digits: str) -> PairingCode:
    if len(digits) not in (11, 21):
        raise InvalidParamsError(
            f"a manual pairing code has 11 or 21 digits, got {len(digits)}", {"code": text}
        )
    if verhoeff_check_digit(digits[:-1]) != int(digits[-1]):
        raise InvalidParamsError(
            "the manual pairing code's check digit is wrong; a digit was mistyped",
            {"code": text},
        )
    chunk1 = int(digits[0])
    chunk2 = int(digits[1:6])
    chunk3 = int(digits[6:10])
    if chunk1 > 7 or chunk2 > 0xFFFF or chunk3 > 0x1FFF:
        raise InvalidParamsError("the manual pairing code is malformed", {"code": text})
    has_vid_pid = bool(chunk1 & 0b100)
    if has_vid_pid != (len(digits) == 21):
        raise InvalidParamsError(
            "the manual pairing code's length does not match its vendor/product flag",
            {"code": text},
        )
    short = ((chunk1 & 0b11) << 2) | (chunk2 >> 14)
    passcode = (chunk3 << 14) | (chunk2 & 0x3FFF)
    _check_passcode(passcode, text)
    vendor = int(digits[10:15]) if has_vid_pid else None
    product = int(digits[15:20]) if has_vid_pid else None
    return PairingCode(
        kind=CodeKind.MANUAL,
        text=digits,
        passcode=passcode,
        short_discriminator=short,
        vendor_id=vendor,
        product_id=product,
    )


def _base38_decode(payload: str, text: str) -> bytes:
    out = bytearray()
    for start in range(0, len(payload), 5):
        chunk = payload[start : start + 5]
        width = {5: 3, 4: 2, 2: 1}.get(len(chunk))
        if width is None:
            raise InvalidParamsError("the QR payload has a truncated base-38 chunk", {"code": text})
        value = 0
        for ch in reversed(chunk):
            value = value * 38 + _BASE38.index(ch)
        if value >= 1 << (8 * width):
            raise InvalidParamsError("the QR payload is not valid base-38", {"code": text})
        out += value.to_bytes(width, "little")
    return bytes(out)


def _parse_qr(text: str) -> PairingCode:
    payload = text[3:].split("*", 1)[0]
    data = _base38_decode(payload, text)
    if len(data) < 11:
        raise InvalidParamsError("the QR payload is too short", {"code": text})
    bits = int.from_bytes(data, "little")

    def take(offset: int, width: int) -> int:
        return (bits >> offset) & ((1 << width) - 1)

    version, vendor, product = take(0, 3), take(3, 16), take(19, 16)
    flow, caps, discriminator = take(35, 2), take(37, 8), take(45, 12)
    passcode, padding = take(57, 27), take(84, 4)
    if version != 0 or padding != 0 or flow == 3:
        raise InvalidParamsError(
            "the QR payload is not a Matter onboarding payload (bad version or padding)",
            {"code": text},
        )
    _check_passcode(passcode, text)
    return PairingCode(
        kind=CodeKind.QR,
        text=text,
        passcode=passcode,
        short_discriminator=discriminator >> 8,
        discriminator=discriminator,
        vendor_id=vendor,
        product_id=product,
        commissioning_flow=flow,
        discovery_capabilities=caps,
    )


def parse_pairing_code(text: str) -> PairingCode:
    """Validate a QR (``MT:…``) or manual code; raise ``InvalidParamsError`` when wrong."""
    raw = text.strip()
    if raw.upper().startswith("MT:"):
        upper = raw.upper()
        if not _QR_RE.match(upper.split("*", 1)[0]):
            raise InvalidParamsError(
                "a QR pairing code has only 0-9, A-Z, '-' and '.' after 'MT:'", {"code": raw}
            )
        return _parse_qr(upper)
    digits = re.sub(r"[\s-]", "", raw)
    if not digits.isdigit():
        raise InvalidParamsError(
            "a pairing code is 'MT:…' (from the QR code) or 11/21 digits (the manual code)",
            {"code": raw},
        )
    return _parse_manual(raw, digits)


def validate_passcode(passcode: int) -> int:
    """Return ``passcode`` if it is a valid setup passcode, else raise ``InvalidParamsError``."""
    _check_passcode(passcode, str(passcode))
    return passcode


def validate_discriminator(discriminator: int) -> int:
    """Return ``discriminator`` if it fits 12 bits, else raise ``InvalidParamsError``."""
    if not 0 <= discriminator <= DISCRIMINATOR_MAX:
        raise InvalidParamsError(
            f"a discriminator is 0-{DISCRIMINATOR_MAX}, got {discriminator}",
            {"discriminator": discriminator},
        )
    return discriminator


def manual_code(passcode: int, short_discriminator: int) -> str:
    """Return the 11-digit manual pairing code for a passcode and 4-bit discriminator."""
    validate_passcode(passcode)
    if not 0 <= short_discriminator <= 0xF:
        raise InvalidParamsError("a short discriminator is 0-15")
    chunk1 = short_discriminator >> 2
    chunk2 = ((short_discriminator & 0b11) << 14) | (passcode & 0x3FFF)
    chunk3 = passcode >> 14
    digits = f"{chunk1:01d}{chunk2:05d}{chunk3:04d}"
    return digits + str(verhoeff_check_digit(digits))
