"""``/v1/tokens`` on a real server: list, issue, revoke; the shapes the web console reads."""

from __future__ import annotations

from typing import Any

from bridge.auth.tokens import parse_token
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer


async def call(
    server: BridgeServer, method: str, path: str, token: str | None, body: Any = None
) -> tuple[int, Any]:
    headers = bearer(token) if token else {}
    async with server.client.request(method, server.url + path, json=body, headers=headers) as resp:
        return resp.status, await resp.json()


async def test_issue_list_revoke(bridge_server: BridgeServer) -> None:
    admin = service_token(bridge_server.service, "admin", ["token:manage", "device:*"])
    status, issued = await call(
        bridge_server,
        "POST",
        "/v1/tokens",
        admin,
        {
            "agent_id": "tablet",
            "permissions": ["device:control:*"],
            "ttl_s": 600,
            "constraints": {"max_hops": 1, "rate_limit_per_minute": 30},
        },
    )
    assert status == 201, issued
    raw = issued.pop("token")
    token, _ = parse_token(raw)
    # Not an administrator: the new token is named under the issuer's agent, and the
    # ledger says which token issued it.
    assert issued == {
        "id": token.id,
        "agent_id": "admin/tablet",
        "permissions": ["device:control:*"],
        "issued_at": token.issued_at,
        "expires_at": token.expires_at,
        "revoked": False,
        "issued_by": parse_token(admin)[0].id,
    }
    assert (token.constraints.max_hops, token.constraints.rate_limit_per_minute) == (1, 30)
    status, listed = await call(bridge_server, "GET", "/v1/tokens?agent_id=admin/tablet", admin)
    assert (status, listed) == (200, {"tokens": [issued]})
    status, body = await call(bridge_server, "GET", "/v1/tools", raw)
    assert status == 200
    status, revoked = await call(bridge_server, "DELETE", f"/v1/tokens/{token.id}", admin)
    assert (status, revoked) == (200, {**issued, "revoked": True})
    status, body = await call(bridge_server, "GET", "/v1/tools", raw)
    assert (status, body["error"]["details"]["reason"]) == (401, "revoked")
    status, listed = await call(bridge_server, "GET", "/v1/tokens", admin)
    assert [t["revoked"] for t in listed["tokens"] if t["id"] == token.id] == [True]


async def test_refusals_are_clear_json(bridge_server: BridgeServer) -> None:
    svc = bridge_server.service
    admin = service_token(svc, "admin", ["token:manage", "device:control:*"])
    plain = service_token(svc, "plain", ["device:control:*"])
    for method, path in [
        ("GET", "/v1/tokens"),
        ("POST", "/v1/tokens"),
        ("DELETE", "/v1/tokens/abc"),
    ]:
        status, body = await call(
            bridge_server, method, path, plain, {"agent_id": "x", "permissions": [], "ttl_s": 1}
        )
        assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED"), path
    cases: list[tuple[Any, int, str]] = [
        ({"agent_id": "x", "permissions": ["*"], "ttl_s": 60}, 403, "PERMISSION_DENIED"),
        ({"agent_id": "x", "permissions": ["device:control:*"]}, 400, "INVALID_REQUEST"),
        ({"agent_id": "x", "permissions": ["bad::p"], "ttl_s": 60}, 400, "INVALID_REQUEST"),
        ({"agent_id": "x", "permissions": [], "ttl_s": 1e308}, 400, "INVALID_REQUEST"),
        ({"agent_id": "x", "permissions": [], "ttl_s": -1}, 400, "INVALID_REQUEST"),
        ({"agent_id": "x", "permissions": [], "ttl_s": True}, 400, "INVALID_REQUEST"),
        ({"agent_id": "", "permissions": [], "ttl_s": 60}, 400, "INVALID_REQUEST"),
        ({"agent_id": "x\udead", "permissions": [], "ttl_s": 60}, 400, "INVALID_REQUEST"),
        ({"agent_id": "x", "permissions": "device:*", "ttl_s": 60}, 400, "INVALID_REQUEST"),
        (
            {"agent_id": "x", "permissions": [], "ttl_s": 60, "constraints": {"max_hops": -1}},
            400,
            "INVALID_REQUEST",
        ),
        ({"agent_id": "x", "permissions": [], "ttl_s": 60, "extra": 1}, 400, "INVALID_REQUEST"),
        ([], 400, "INVALID_REQUEST"),
        (
            {
                "agent_id": "x",
                "ttl_s": 60,
                "permissions": [f"device:control:light-{i:04d}" for i in range(800)],
            },
            400,
            "INVALID_REQUEST",
        ),
    ]
    for body, status_code, code in cases:
        status, answer = await call(bridge_server, "POST", "/v1/tokens", admin, body)
        assert (status, answer["error"]["code"]) == (status_code, code), body
    status, answer = await call(bridge_server, "DELETE", "/v1/tokens/" + "0" * 32, admin)
    assert (status, answer["error"]["code"]) == (404, "NOT_FOUND")
    status, answer = await call(bridge_server, "GET", "/v1/tokens?limit=x", admin)
    assert (status, answer["error"]["code"]) == (400, "INVALID_REQUEST")
    status, answer = await call(bridge_server, "GET", "/v1/tokens", admin)
    assert (status, answer) == (200, {"tokens": []})


async def test_issued_permissions_are_a_pattern_subset(bridge_server: BridgeServer) -> None:
    """A pattern the issuer's patterns do not cover is refused, however it is written."""
    manager = service_token(bridge_server.service, "mgr", ["token:manage", "device:control:*"])
    expected = {
        "device:*:lamp": 403,  # also device:read:lamp
        "device:*": 403,
        "*": 403,
        "device:control": 403,  # the issuer's trailing * stands for one or more segments
        "device:control:lamp": 201,
        "device:control:*": 201,
        "device:control:lamp:dim": 201,
    }
    answers = {}
    for pattern in expected:
        status, _ = await call(
            bridge_server,
            "POST",
            "/v1/tokens",
            manager,
            {"agent_id": "kid", "permissions": [pattern], "ttl_s": 60},
        )
        answers[pattern] = status
    assert answers == expected
