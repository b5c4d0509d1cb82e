"""The API's JSON answers: encoded once, valid UTF-8 JSON whatever the value holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.api.http import encode_json, json_response, response_json
from bridge.errors import DeviceUnavailableError
from bridge.invocation.messages import ToolRequest, ToolResponse


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1, "b": [True, None, "é"]}, {"a": 1, "b": [True, None, "é"]}),
        ({"big": 2**70, "neg": -(2**65)}, {"big": 2**70, "neg": -(2**65)}),
        ({1: "x", 2.5: "y"}, {"1": "x", "2.5": "y"}),
        ({"nan": float("nan"), "inf": float("inf")}, {"nan": None, "inf": None}),
        ({"lone": "a\ud800b"}, {"lone": "a\ud800b"}),
        ({"path": Path("/var/lib/x")}, {"path": "/var/lib/x"}),
    ],
)
def test_encode_json_gives_valid_utf8_json(value: object, expected: object) -> None:
    body = encode_json(value)
    text = body.decode("utf-8")  # strict: never a lone surrogate in the bytes
    assert json.loads(text) == expected


def test_json_response_is_utf8_json() -> None:
    resp = json_response({"name": "Küche"}, status=201)
    assert resp.status == 201
    assert resp.content_type == "application/json"
    assert resp.charset == "utf-8"
    assert resp.body == '{"name":"Küche"}'.encode()


def test_a_failed_call_answers_with_its_typed_errors_status() -> None:
    request = ToolRequest(tool="t:lamp_on")
    err = DeviceUnavailableError("lamp is unreachable", {"tool": "t:lamp_on"})
    resp = response_json(ToolResponse.failure(request, "c1", "t:lamp_on", err, 1.0, "n1"))
    assert resp.status == 503
    assert isinstance(resp.body, bytes)
    doc = json.loads(resp.body)
    assert doc["error"] == {
        "code": "DEVICE_UNAVAILABLE",
        "message": "lamp is unreachable",
        "details": {"tool": "t:lamp_on"},
        "retryable": True,
    }
    assert doc["result"] is None


def test_a_result_text_with_a_lone_surrogate_is_answered_escaped() -> None:
    request = ToolRequest(tool="t:echo")
    value = {"text": "a\udc00"}
    text = json.dumps(value, ensure_ascii=False)
    resp = response_json(
        ToolResponse.success(request, "c1", "t:echo", value, 1.0, "n1", result_json=text)
    )
    assert isinstance(resp.body, bytes)
    assert json.loads(resp.body.decode("utf-8"))["result"] == value
