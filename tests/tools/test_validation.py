"""Parameter validation: defaults, formats, every failing path named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.errors import ErrorCode, InvalidParamsError
from bridge.tools.definition import ToolDefinition
from bridge.tools.validation import validate_call, validate_params, validator_for

SEED = Path(__file__).parent / "seed"


def seed(name: str) -> ToolDefinition:
    return ToolDefinition.from_json(json.loads((SEED / f"{name}.json").read_text()))


def errors_of(defn: ToolDefinition, params: object) -> dict[str, str]:
    with pytest.raises(InvalidParamsError) as info:
        validate_call(defn, params)
    assert info.value.code is ErrorCode.INVALID_PARAMS
    assert info.value.details["tool"] == defn.key
    return {e["path"]: e["message"] for e in info.value.details["errors"]}


def test_defaults_are_applied_without_touching_input() -> None:
    params = {"query": "matter thread"}
    out = validate_call(seed("search_web"), params)
    assert out == {"query": "matter thread", "count": 10, "freshness": "any", "safe_search": True}
    assert params == {"query": "matter thread"}


def test_nested_defaults_only_for_present_objects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "opts": {
                "type": "object",
                "properties": {"level": {"type": "integer", "default": 3}},
            },
            "mode": {"type": "string", "default": "auto"},
        },
    }
    assert validate_params(schema, {}) == {"mode": "auto"}
    assert validate_params(schema, {"opts": {}}) == {"opts": {"level": 3}, "mode": "auto"}


def test_every_failing_path_is_named() -> None:
    problems = errors_of(
        seed("send_email"),
        {"to": ["not-an-address", "ok@example.org"], "subject": "x" * 300, "html": "no"},
    )
    assert problems == {
        "$.body": "is required",
        "$.html": "must be of type boolean",
        "$.subject": "must be at most 256 characters long",
        "$.to[0]": "is not a valid email",
    }


def test_message_lists_paths_without_echoing_values() -> None:
    with pytest.raises(InvalidParamsError) as info:
        validate_call(seed("store_data"), {"key": "bad key!", "value": 1, "ttl_seconds": -5})
    assert info.value.message == (
        "invalid parameters for 'core:store_data': "
        "$.key: does not match pattern ^[a-zA-Z0-9_/.-]+$; $.ttl_seconds: must be >= 0"
    )


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2025-02-02T12:00:00Z", True),
        ("2025-02-02T12:00:00.123+02:00", True),
        ("2025-02-30T12:00:00Z", False),
        ("2025-02-02 12:00", False),
        ("yesterday", False),
    ],
)
def test_date_time_format(value: str, ok: bool) -> None:
    params = {"sensor_id": "s1", "time_range": {"start": value}}
    if ok:
        assert validate_call(seed("query_sensor"), params)["time_range"]["start"] == value
    else:
        assert errors_of(seed("query_sensor"), params) == {
            "$.time_range.start": "is not a valid date-time"
        }


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("https://example.org/cat.png", True),
        ("file:///tmp/a.wav", True),
        ("not a uri", False),
        ("//no-scheme", False),
    ],
)
def test_uri_format(value: str, ok: bool) -> None:
    schema = {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}}
    if ok:
        assert validate_params(schema, {"u": value}) == {"u": value}
    else:
        with pytest.raises(InvalidParamsError, match=r"\$\.u: is not a valid uri"):
            validate_params(schema, {"u": value})


def test_enum_type_and_non_object() -> None:
    problems = errors_of(seed("notify"), {"recipient": "a", "message": "m", "urgency": "meh"})
    assert problems == {"$.urgency": 'must be one of "low", "medium", "high", "critical"'}
    assert errors_of(seed("notify"), ["a"]) == {"$": "must be an object"}


def test_validators_are_cached_per_schema() -> None:
    a = {"type": "object", "properties": {"x": {"type": "integer"}}}
    b = {"properties": {"x": {"type": "integer"}}, "type": "object"}
    assert validator_for(a) is validator_for(b)


def test_validate_call_keeps_checking_with_a_cached_validator_per_definition() -> None:
    loose = ToolDefinition(
        name="t",
        description="d",
        parameters={"type": "object", "properties": {"x": {"type": "integer"}}},
    )
    strict = ToolDefinition(
        name="t",
        description="d",
        parameters={"type": "object", "properties": {"x": {"type": "string"}}},
    )
    for _ in range(3):
        assert validate_call(loose, {"x": 1}) == {"x": 1}
        assert errors_of(strict, {"x": 1}) == {"$.x": "must be of type string"}
        assert errors_of(loose, {"x": "1"}) == {"$.x": "must be of type integer"}
        assert validate_call(strict, {"x": "1"}) == {"x": "1"}
