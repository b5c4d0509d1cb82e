import pytest

from bridge.auth.keys import NodeKey
from bridge.errors import InvalidRequestError, ToolFailedError, UnauthenticatedError
from bridge.invocation.messages import (
    ReplayGuard,
    RequestContext,
    RequestRouting,
    ToolRequest,
    ToolResponse,
)


def test_request_round_trip_and_signature() -> None:
    key = NodeKey.generate()
    request = ToolRequest(
        tool="matter:light_on@>=1.0.0",
        params={"level": 5, "name": "Küche"},
        context=RequestContext(agent_id="a", session_id="s", trace_id="t"),
        routing=RequestRouting(
            prefer_nodes=("n1",), exclude_nodes=("n2",), hop_budget=2, timeout_ms=500, path=("n0",)
        ),
        token="tok",
        idempotency_key="k",
    ).signed(key)
    wire = request.to_json()
    assert wire["type"] == "tool_invoke"
    assert wire["auth"] == {"token": "tok"}
    parsed = ToolRequest.from_json(wire)
    assert parsed == request
    assert parsed.signature_valid()
    tampered = ToolRequest.from_json({**wire, "params": {"level": 6, "name": "Küche"}})
    assert not tampered.signature_valid()
    assert b'"name":"K\xc3\xbcche"' in request.signing_bytes()
    assert b" " not in request.signing_bytes()


def test_response_round_trip() -> None:
    key = NodeKey.generate()
    request = ToolRequest(tool="x")
    ok = ToolResponse.success(request, "c1", "core:x@1.0.0", {"v": 1}, 1.5, "n").signed(key)
    assert ToolResponse.from_json(ok.to_json()) == ok
    assert ok.signature_valid()
    err = ToolResponse.failure(request, "c2", None, ToolFailedError("boom"), 2.0, "n")
    back = ToolResponse.from_json(err.to_json())
    assert back.error == {
        "code": "TOOL_FAILED",
        "message": "boom",
        "details": {},
        "retryable": False,
    }
    assert not back.ok


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"tool": 5},
        {},
        {"tool": "x", "bogus": 1},
        {"tool": "x", "params": []},
        {"tool": "x", "type": "other"},
        {"tool": "x", "routing": {"hop_budget": 99}},
        {"tool": "x", "routing": {"timeout_ms": True}},
        {"tool": "x", "context": {"x": 1}},
        {"tool": "x", "timestamp": "now"},
        {"tool": "x", "auth": {"token": 5}},
        {"tool": "x", "routing": {"path": [1]}},
        {"tool": "x", "id": ""},
    ],
)
def test_request_rejects_malformed(doc: object) -> None:
    with pytest.raises(InvalidRequestError):
        ToolRequest.from_json(doc)


def test_replay_guard() -> None:
    now = [1000.0]
    guard = ReplayGuard(clock_skew_s=10, clock=lambda: now[0])
    guard.check("a", 1000.0)
    with pytest.raises(UnauthenticatedError) as info:
        guard.check("a", 1000.0)
    assert info.value.details["reason"] == "replayed"
    with pytest.raises(UnauthenticatedError) as info:
        guard.check("b", 1011.0)
    assert info.value.details["reason"] == "clock_skew"
    now[0] = 1025.0
    guard.check("c", 1025.0)
    # "a" left the remembered window (2 x skew) and is now stale by timestamp instead.
    with pytest.raises(UnauthenticatedError) as info:
        guard.check("a", 1000.0)
    assert info.value.details["reason"] == "clock_skew"
    assert ("", "a") not in guard._seen


def test_replay_ids_are_per_agent() -> None:
    guard = ReplayGuard(clock_skew_s=10, clock=lambda: 1000.0)
    guard.check("shared-id", 1000.0, agent_id="alice")
    guard.check("shared-id", 1000.0, agent_id="bob")  # bob's own id space
    with pytest.raises(UnauthenticatedError) as info:
        guard.check("shared-id", 1000.0, agent_id="alice")
    assert info.value.details["reason"] == "replayed"
