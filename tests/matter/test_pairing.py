"""Pairing codes: QR payloads and manual codes decode exactly; wrong codes say why."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.errors import InvalidParamsError
from bridge.matter.controller.pairing import (
    INVALID_PASSCODES,
    CodeKind,
    manual_code,
    parse_pairing_code,
    verhoeff_check_digit,
)

# The codes a matter.js device with passcode 20202021 and discriminator 3840 prints.
QR = "MT:Y.K90AFN00KA0648G00"
MANUAL = "34970112332"


def test_qr_payload_decodes_every_field() -> None:
    code = parse_pairing_code(QR)
    assert code.kind is CodeKind.QR
    assert code.passcode == 20202021
    assert code.discriminator == 3840
    assert code.short_discriminator == 15
    assert (code.vendor_id, code.product_id) == (0xFFF1, 0x8000)
    assert code.commissioning_flow == 0
    assert code.discovery_capabilities == 4  # on the IP network


def test_manual_code_decodes_with_separators() -> None:
    for text in (MANUAL, "3497-011-2332", " 3497 011 2332 "):
        code = parse_pairing_code(text)
        assert code.kind is CodeKind.MANUAL
        assert code.text == MANUAL
        assert (code.passcode, code.short_discriminator, code.discriminator) == (20202021, 15, None)
        assert code.to_json() == {
            "kind": "manual",
            "short_discriminator": 15,
            "discriminator": None,
            "vendor_id": None,
            "product_id": None,
        }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("34970112333", "check digit is wrong"),
        ("3497011233", "11 or 21 digits, got 10"),
        ("MT:Y.K90AFN00KA0648G01", "not a Matter onboarding payload"),
        ("MT:abc", "truncated base-38 chunk"),
        ("MT:Y.K90_FN00KA0648G00", "only 0-9, A-Z"),
        ("hello", "11/21 digits"),
        ("", "11/21 digits"),
    ],
)
def test_wrong_codes_are_rejected_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(InvalidParamsError, match=message):
        parse_pairing_code(text)


def test_trivial_passcode_inside_a_well_formed_code_is_rejected() -> None:
    digits = "0" + f"{11111111 & 0x3FFF:05d}" + f"{11111111 >> 14:04d}"
    text = digits + str(verhoeff_check_digit(digits))
    with pytest.raises(InvalidParamsError, match="invalid setup passcode"):
        parse_pairing_code(text)


def test_verhoeff_detects_every_single_digit_error() -> None:
    for position in range(len(MANUAL)):
        for digit in "0123456789":
            if digit == MANUAL[position]:
                continue
            typo = MANUAL[:position] + digit + MANUAL[position + 1 :]
            with pytest.raises(InvalidParamsError):
                parse_pairing_code(typo)


@given(
    passcode=st.integers(1, 99999998).filter(lambda p: p not in INVALID_PASSCODES),
    short=st.integers(0, 15),
)
def test_manual_code_round_trips(passcode: int, short: int) -> None:
    code = parse_pairing_code(manual_code(passcode, short))
    assert (code.passcode, code.short_discriminator) == (passcode, short)


def test_manual_code_of_the_device() -> None:
    assert manual_code(20202021, 15) == MANUAL
