"""JSON from outside, read once with limits: the one reader every boundary uses.

``loads(data, limits)`` turns bytes or text from a client, a peer, a WebSocket frame or a
Wyoming event into Python values, or raises a ``BridgeError`` with a stable code:
``PAYLOAD_TOO_LARGE`` (413) past ``max_bytes``, else ``INVALID_REQUEST`` (400) with
``details.reason`` one of ``not_utf8``, ``not_json``, ``too_deep``, ``string_too_long``,
``too_many_items``, ``lone_surrogate``, ``not_finite``, ``number_out_of_range``.

Parsing is orjson's where that cannot change the answer (it refuses NaN, Infinity,
lone surrogates and bad UTF-8 like the rules here do); anything orjson refuses is read
again by the standard parser, which words the refusal as before.

Details: docs/modules.md, ``bridge.jsonlimits``.
"""

from __future__ import annotations

import json
import re
from array import array
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import orjson

from bridge.errors import InvalidRequestError, PayloadTooLargeError

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Outside strings, 19 digits in a row: maybe an integer orjson would read as a float.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
# Outside strings, an exponent: a number the value walk must look at.
_EXPONENT = re.compile(rb"[0-9][eE]")


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonLimits:
    """What one JSON document from outside may weigh."""

    max_bytes: int = 1_048_576
    max_depth: int = 64
    max_string: int = 1_048_576
    max_items: int = 100_000
    max_int: int = 2**63 - 1
    max_float: float = 1e300


DEFAULT_LIMITS = JsonLimits()


def _bad(reason: str, message: str, **details: Any) -> InvalidRequestError:
    return InvalidRequestError(message, {"reason": reason, **details})


def depth_of(raw: bytes) -> int:
    """Return how deeply ``raw`` nests arrays and objects (strings skipped); never recurses."""
    return _depth(_outside_strings(raw))


def _outside_strings(raw: bytes) -> bytes:
    return _STRING.sub(b"", raw) if b'"' in raw else raw


def _depth(outside: bytes) -> int:
    brackets = outside.translate(_BRACKETS, _NOT_BRACKETS)
    if not brackets:
        return 0
    steps = array("b")
    steps.frombytes(brackets)
    return max(0, max(accumulate(steps)))


def _reject_constant(name: str) -> Any:
    raise _bad("not_finite", f"{name} is not a JSON number; send a finite number")


def loads(data: bytes | str, limits: JsonLimits = DEFAULT_LIMITS) -> Any:
    """Return the JSON value in ``data``; raise ``InvalidRequestError``/``PayloadTooLargeError``."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > limits.max_bytes:
        raise PayloadTooLargeError(
            f"request body is larger than {limits.max_bytes} bytes", {"max_bytes": limits.max_bytes}
        )
    if raw.count(b"{") + raw.count(b"[") <= limits.max_depth and _LONG_DIGITS.search(raw) is None:
        # Small documents (most requests): fewer opening brackets than the depth limit
        # cannot nest past it, and what the whole text lacks (19 digits in a row, an
        # exponent) its part outside strings lacks too - no need to cut the strings out.
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _loads_std(raw, limits)
        if not _fits_unchecked(raw, raw, limits):
            check(value, limits)
        return value
    outside = _outside_strings(raw)
    if _depth(outside) > limits.max_depth:
        raise _bad(
            "too_deep",
            f"JSON nests deeper than {limits.max_depth} levels",
            max_depth=limits.max_depth,
        )
    if _LONG_DIGITS.search(outside) is not None:
        return _loads_std(raw, limits)  # integers beyond 64 bits stay integers (and refused)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _loads_std(raw, limits)  # refused: the standard parser says why, as ever
    if not _fits_unchecked(raw, outside, limits):
        check(value, limits)
    return value


def _fits_unchecked(raw: bytes, outside: bytes, limits: JsonLimits) -> bool:
    """Return whether orjson's value of ``raw`` is within ``limits`` without a walk.

    orjson refused lone surrogates, NaN/Infinity and nesting past the depth checked
    before; a string has no more characters and a document no more values than ``raw``
    has bytes; a number without an exponent and with fewer than 19 digits in a row is
    below 10**18.
    """
    size = len(raw)
    return (
        size <= limits.max_string
        and size <= limits.max_items
        and limits.max_int >= 10**18
        and limits.max_float >= 1e19
        and _EXPONENT.search(outside) is None
    )


def _loads_std(raw: bytes, limits: JsonLimits) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _bad(
            "not_utf8",
            f"body is not valid UTF-8 (byte {err.start}); JSON must be UTF-8",
        ) from err
    if not text.strip():
        raise _bad("not_json", "body is empty; send a JSON value")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except InvalidRequestError:
        raise
    except (ValueError, RecursionError) as err:
        where = ""
        if isinstance(err, json.JSONDecodeError):
            where = f": {err.msg} at line {err.lineno} column {err.colno}"
        raise _bad("not_json", f"body is not valid JSON{where}") from err
    check(value, limits)
    return value


def check(value: Any, limits: JsonLimits = DEFAULT_LIMITS) -> None:
    """Check strings, numbers, size and depth of a parsed value; raise ``InvalidRequestError``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    items = 0
    while stack:
        node, depth = stack.pop()
        items += 1
        if items > limits.max_items:
            raise _bad(
                "too_many_items",
                f"JSON has more than {limits.max_items} values",
                max_items=limits.max_items,
            )
        if isinstance(node, str):
            _check_string(node, limits)
        elif isinstance(node, bool) or node is None:
            continue
        elif isinstance(node, int):
            if abs(node) > limits.max_int:
                raise _bad("number_out_of_range", f"integer beyond +-{limits.max_int}")
        elif isinstance(node, float):
            if node != node or node in (float("inf"), float("-inf")):
                raise _bad("not_finite", "numbers must be finite (no NaN or Infinity)")
            if abs(node) > limits.max_float:
                raise _bad("number_out_of_range", f"number beyond +-{limits.max_float:g}")
        elif isinstance(node, (dict, list)):
            if depth >= limits.max_depth:
                raise _bad(
                    "too_deep",
                    f"JSON nests deeper than {limits.max_depth} levels",
                    max_depth=limits.max_depth,
                )
            if isinstance(node, dict):
                for key, item in node.items():
                    if not isinstance(key, str):
                        raise _bad("not_json", "object keys must be strings")
                    _check_string(key, limits)
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in node)
        else:
            raise _bad("not_json", f"{type(node).__name__} is not a JSON value")


def _check_string(text: str, limits: JsonLimits) -> None:
    if len(text) > limits.max_string:
        raise _bad(
            "string_too_long",
            f"a string is longer than {limits.max_string} characters",
            max_string=limits.max_string,
        )
    if not text.isascii() and _SURROGATE.search(text):
        raise _bad("lone_surrogate", "a string holds a lone UTF-16 surrogate (not valid Unicode)")
