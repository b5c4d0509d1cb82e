"""The JSON reader with limits: depth without recursion, strings, numbers, size."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge import jsonlimits
from bridge.errors import InvalidRequestError, PayloadTooLargeError
from bridge.jsonlimits import JsonLimits, depth_of

values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**60), 2**60),
        st.floats(-1e300, 1e300),
        st.text(alphabet='[]{}"\\ab,:\u00e9', max_size=12),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(alphabet='[]{}"\\k', max_size=5), inner, max_size=3),
    ),
    max_leaves=30,
)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=400, deadline=None)
@given(values)
def test_depth_matches_the_structure_whatever_the_strings_hold(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert depth_of(text.encode()) == _depth(value)
        assert jsonlimits.loads(text) == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("[" * 100_000 + "]" * 100_000, "too_deep"),
        ("[" * 100_000, "too_deep"),
        ('{"a":' * 65 + "1" + "}" * 65, "too_deep"),
        ('["\\udead"]', "lone_surrogate"),
        ('{"\\ud800":1}', "lone_surrogate"),
        ('"a\\udfffb"', "lone_surrogate"),
        ("[NaN]", "not_finite"),
        ('{"x":-Infinity}', "not_finite"),
        ("1e999", "not_finite"),
        ("9" * 30, "number_out_of_range"),
        ("1e301", "number_out_of_range"),
        ("", "not_json"),
        ("{", "not_json"),
        ('"\\u12"', "not_json"),
        ("1" * 5000, "not_json"),  # beyond Python's int-parsing digit limit
    ],
)
def test_refusals(text: str, reason: str) -> None:
    with pytest.raises(InvalidRequestError) as info:
        jsonlimits.loads(text)
    assert info.value.details["reason"] == reason


def test_bad_utf8_size_and_string_length() -> None:
    with pytest.raises(InvalidRequestError) as info:
        jsonlimits.loads(b'["\xff"]')
    assert info.value.details["reason"] == "not_utf8"
    with pytest.raises(PayloadTooLargeError) as too_big:
        jsonlimits.loads(b"[" + b"1," * 600 + b"1]", JsonLimits(max_bytes=1000))
    assert too_big.value.http_status == 413
    with pytest.raises(InvalidRequestError) as info:
        jsonlimits.loads('"' + "x" * 11 + '"', JsonLimits(max_string=10))
    assert info.value.details == {"reason": "string_too_long", "max_string": 10}
    assert jsonlimits.loads('{"ok":[1,2.5,"\u00e9\\u00e9",null]}') == {"ok": [1, 2.5, "éé", None]}


def _outcome(read: Any, raw: bytes, limits: JsonLimits) -> Any:
    try:
        value = read(raw, limits)
    except (InvalidRequestError, PayloadTooLargeError) as err:
        return ("refused", err.code, err.details.get("reason"))
    return ("value", json.dumps(value, sort_keys=True), _types(value))


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


def _standard(raw: bytes, limits: JsonLimits) -> Any:
    """Read ``raw`` as the reader did before orjson: limits, depth, then the stdlib."""
    if len(raw) > limits.max_bytes:
        raise PayloadTooLargeError("too large")
    if depth_of(raw) > limits.max_depth:
        raise InvalidRequestError("too deep", {"reason": "too_deep"})
    return jsonlimits._loads_std(raw, limits)


_pieces = st.sampled_from(
    [
        "1",
        "-0",
        "0.5",
        "1e2",
        "1E-2",
        "1e400",
        "-1e999",
        "1e301",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1" * 19,
        "123456789012345678.5",
        "NaN",
        "Infinity",
        "-Infinity",
        "true",
        "null",
        '"a"',
        '"\\ud800"',
        '"\\udc00"',
        '"\\ud83d\\ude00"',
        '"\u00e9"',
        '"\\u0000"',
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        '"k"',
        " ",
        "\ufeff",
        "\x00",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(_pieces, max_size=12),
    st.sampled_from(
        [
            JsonLimits(),
            JsonLimits(max_items=3, max_string=4, max_int=1000, max_float=1e10, max_depth=3),
        ]
    ),
)
def test_the_fast_reader_answers_as_the_standard_one(pieces: list[str], limits: JsonLimits) -> None:
    # orjson reads what it can; whatever it reads must equal the standard parser's value
    # and whatever the limits refuse must be refused with the same reason.
    for raw in ("".join(pieces).encode(), "[" + ",".join(pieces) + "]" if pieces else "[]"):
        data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
        assert _outcome(jsonlimits.loads, data, limits) == _outcome(_standard, data, limits), data
