import asyncio
import json
import time
from typing import Any

import aiohttp
import pytest

from bridge.api.openapi import OPENAPI_KEY, router_operations
from bridge.auth.keys import NodeKey
from bridge.auth.tokens import Constraints, issue_token, parse_token
from bridge.errors import DeviceUnavailableError
from bridge.tools.context import CallContext
from bridge.tools.definition import Confirmation, Execution, Requires, ToolDefinition
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer

PARAMS = {
    "type": "object",
    "properties": {"device_id": {"type": "string"}, "level": {"type": "integer", "default": 5}},
    "required": ["device_id"],
    "additionalProperties": False,
}


class Calls:
    def __init__(self, fail_first: int = 0) -> None:
        self.params: list[dict[str, Any]] = []
        self.fail_first = fail_first

    async def __call__(self, params: dict[str, Any], ctx: CallContext) -> Any:
        self.params.append(params)
        if len(self.params) <= self.fail_first:
            raise DeviceUnavailableError("asleep")
        return {"device": params["device_id"], "level": params["level"], "agent": ctx.agent_id}


@pytest.fixture(name="server")
async def server_fixture(bridge_server: BridgeServer) -> BridgeServer:
    return bridge_server


def register(server: BridgeServer, name: str, handler: Any, **kw: Any) -> None:
    server.service.registry.register(
        ToolDefinition(
            name=name, namespace="test", description=f"{name} tool", parameters=PARAMS, **kw
        ),
        handler,
    )


async def post(server: BridgeServer, path: str, body: Any, token: str | None) -> tuple[int, Any]:
    headers = bearer(token) if token else {}
    async with server.client.post(server.url + path, json=body, headers=headers) as resp:
        return resp.status, await resp.json()


async def test_everything_but_healthz_needs_a_token(server: BridgeServer) -> None:
    async with server.client.get(server.url + "/healthz") as resp:
        assert resp.status == 200
    for method, path in [
        ("GET", "/v1/tools"),
        ("POST", "/v1/invoke"),
        ("GET", "/v1/approvals"),
        ("GET", "/v1/jobs/x"),
        ("GET", "/v1/openapi.json"),
    ]:
        async with server.client.request(method, server.url + path) as resp:
            assert resp.status == 401, path
            body = await resp.json()
            assert body["error"]["code"] == "UNAUTHENTICATED"
            assert body["error"]["details"]["reason"] == "missing"
    async with server.client.get(
        server.url + "/v1/tools", headers={"Authorization": "Basic abc"}
    ) as resp:
        assert resp.status == 401
    token = service_token(server.service)
    async with server.client.get(server.url + "/v1/tools", headers=bearer(token)) as resp:
        assert resp.status == 200


async def test_invoke_outcomes_over_http(server: BridgeServer) -> None:
    calls = Calls()
    register(server, "dim", calls, requires=Requires(permissions=("device:control:{device_id}",)))
    svc = server.service
    allowed = service_token(svc, "alice", ["device:control:lamp-1"])
    status, body = await post(
        server, "/v1/invoke", {"tool": "dim", "params": {"device_id": "lamp-1"}}, allowed
    )
    assert status == 200
    assert body["type"] == "tool_response"
    assert body["status"] == "success"
    assert body["result"] == {"device": "lamp-1", "level": 5, "agent": "alice"}
    assert body["tool"] == "test:dim@1.0.0"

    status, body = await post(
        server, "/v1/invoke", {"tool": "dim", "params": {"device_id": "lamp-2"}}, allowed
    )
    assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
    assert body["error"]["details"]["required"] == "device:control:lamp-2"

    forged = allowed[:-3] + ("AAA" if not allowed.endswith("AAA") else "BBB")
    stranger = issue_token(NodeKey.generate(), agent_id="eve", permissions=["*"], ttl_s=60)
    expired = issue_token(
        svc.invocation.key, agent_id="old", permissions=["*"], ttl_s=1, now=time.time() - 7200
    )
    for token, reason in [
        (forged, "bad_signature"),
        (stranger, "unknown_issuer"),
        (expired, "expired"),
        ("garbage", "malformed"),
    ]:
        status, body = await post(
            server, "/v1/invoke", {"tool": "dim", "params": {"device_id": "lamp-1"}}, token
        )
        assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
            401,
            "UNAUTHENTICATED",
            reason,
        )

    replay = {"tool": "dim", "params": {"device_id": "lamp-1"}, "id": "fixed-id-1"}
    status, _ = await post(server, "/v1/invoke", replay, allowed)
    assert status == 200
    status, body = await post(server, "/v1/invoke", replay, allowed)
    assert (status, body["error"]["details"]["reason"]) == (401, "replayed")
    status, body = await post(
        server, "/v1/invoke", {**replay, "id": "other", "timestamp": time.time() - 3600}, allowed
    )
    assert (status, body["error"]["details"]["reason"]) == (401, "clock_skew")

    limited = service_token(svc, "bob", ["*"], constraints=Constraints(rate_limit_per_minute=1))
    status, _ = await post(
        server, "/v1/invoke", {"tool": "dim", "params": {"device_id": "lamp-1"}}, limited
    )
    assert status == 200
    status, body = await post(
        server, "/v1/invoke", {"tool": "dim", "params": {"device_id": "lamp-1"}}, limited
    )
    assert (status, body["error"]["code"], body["error"]["retryable"]) == (
        429,
        "RATE_LIMITED",
        True,
    )

    status, body = await post(
        server, "/v1/invoke", {"tool": "dim", "params": {"device_id": 3}}, allowed
    )
    assert (status, body["error"]["code"]) == (400, "INVALID_PARAMS")
    status, body = await post(server, "/v1/invoke", {"tool": "nope"}, allowed)
    assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND")
    assert len(calls.params) == 3

    entries = await svc.invocation.audit.query(limit=1000)
    decisions = [(e.agent_id, e.decision) for e in reversed(entries)]
    assert decisions == [
        ("alice", "allowed"),
        ("alice", "permission_denied"),
        ("alice", "allowed"),
        ("alice", "unauthenticated"),
        ("alice", "unauthenticated"),
        ("bob", "allowed"),
        ("bob", "rate_limited"),
        ("alice", "invalid_params"),
        ("alice", "tool_not_found"),
    ]
    # Requests without a valid token are counted per source and minute, not kept as rows.
    counted = {
        (r["source"], r["reason"]): r["count"] for r in svc.invocation.audit.rejections_sync()
    }
    # ... and a genuine token refused (expired) under its id.
    expired_id = parse_token(expired)[0].id
    assert counted == {
        ("127.0.0.1", "bad_signature"): 1,
        ("127.0.0.1", "unknown_issuer"): 1,
        (f"token:{expired_id}", "expired"): 1,
        ("127.0.0.1", "malformed"): 1,
    }


async def test_idempotent_retry_and_safe_retries(server: BridgeServer) -> None:
    once = Calls()
    register(server, "once", once)
    token = service_token(server.service)
    body = {"tool": "test:once", "params": {"device_id": "d"}, "idempotency_key": "abc"}
    first = await post(server, "/v1/invoke", body, token)
    second = await post(server, "/v1/invoke", body, token)
    assert first[0] == second[0] == 200
    assert second[1]["call_id"] == first[1]["call_id"]
    assert len(once.params) == 1

    flaky = Calls(fail_first=1)
    register(server, "flaky", flaky, execution=Execution(retries=2, idempotent=False))
    status, resp = await post(
        server, "/v1/invoke", {"tool": "flaky", "params": {"device_id": "d"}}, token
    )
    assert (status, resp["error"]["code"]) == (503, "DEVICE_UNAVAILABLE")
    assert len(flaky.params) == 1
    flaky2 = Calls(fail_first=1)
    register(server, "flaky2", flaky2, execution=Execution(retries=2, idempotent=True))
    status, resp = await post(
        server, "/v1/invoke", {"tool": "flaky2", "params": {"device_id": "d"}}, token
    )
    assert status == 200
    assert len(flaky2.params) == 2


async def test_two_of_n_approval_over_http(server: BridgeServer) -> None:
    unlock = Calls()
    register(
        server,
        "unlock",
        unlock,
        dangerous=True,
        confirmation=Confirmation(
            mode="always", message="Unlock {device_id}?", multi_party=2, timeout_s=10
        ),
    )
    svc = server.service
    caller = service_token(svc, "agent", ["device:*"])
    admins = [service_token(svc, name, ["admin:*"]) for name in ("alice", "bob")]
    call = asyncio.create_task(
        post(server, "/v1/invoke", {"tool": "unlock", "params": {"device_id": "front"}}, caller)
    )
    pending: list[Any] = []
    for _ in range(200):
        async with server.client.get(
            server.url + "/v1/approvals?status=pending", headers=bearer(admins[0])
        ) as resp:
            pending = (await resp.json())["approvals"]
        if pending:
            break
        await asyncio.sleep(0.02)
    assert [p["message"] for p in pending] == ['Unlock "front"?']
    approval_id = pending[0]["id"]
    async with server.client.get(server.url + "/v1/approvals", headers=bearer(caller)) as resp:
        assert resp.status == 403
    status, body = await post(
        server, f"/v1/approvals/{approval_id}", {"decision": "approve"}, caller
    )
    assert status == 403
    status, body = await post(
        server, f"/v1/approvals/{approval_id}", {"decision": "approve"}, admins[0]
    )
    assert (status, body["status"], body["approvals"]) == (200, "pending", 1)
    status, body = await post(
        server, f"/v1/approvals/{approval_id}", {"decision": "approve"}, admins[0]
    )
    assert (status, body["error"]["code"]) == (409, "CONFLICT")
    assert not call.done()
    status, body = await post(
        server, f"/v1/approvals/{approval_id}", {"decision": "approve"}, admins[1]
    )
    assert (status, body["status"]) == (200, "approved")
    assert [v["approver"] for v in body["votes"]] == ["alice", "bob"]
    status, resp = await call
    assert status == 200
    assert resp["result"]["device"] == "front"
    status, body = await post(
        server, f"/v1/approvals/{approval_id}", {"decision": "deny"}, admins[1]
    )
    assert (status, body["error"]["code"]) == (409, "CONFLICT")

    call = asyncio.create_task(
        post(server, "/v1/invoke", {"tool": "unlock", "params": {"device_id": "back"}}, caller)
    )
    for _ in range(200):
        pending = await svc.invocation.approvals.list(status="pending")
        if pending:
            break
        await asyncio.sleep(0.02)
    status, _ = await post(
        server, f"/v1/approvals/{pending[0].id}", {"decision": "deny"}, admins[1]
    )
    assert status == 200
    status, resp = await call
    assert (status, resp["error"]["code"]) == (403, "CONFIRMATION_DENIED")
    assert len(unlock.params) == 1


async def test_jobs_over_http(server: BridgeServer) -> None:
    gate = asyncio.Event()

    async def slow(params: dict[str, Any], ctx: CallContext) -> Any:
        await gate.wait()
        return {"done": params["device_id"]}

    register(server, "slow", slow, execution=Execution(async_allowed=True))
    token = service_token(server.service, "alice")
    status, job = await post(
        server, "/v1/jobs", {"tool": "slow", "params": {"device_id": "x"}}, token
    )
    assert status == 202
    assert job["status"] in ("queued", "running")
    url = f"{server.url}/v1/jobs/{job['job_id']}"
    other = service_token(server.service, "mallory", ["device:*"])
    async with server.client.get(url, headers=bearer(other)) as resp:
        assert resp.status == 403
    gate.set()
    for _ in range(200):
        async with server.client.get(url, headers=bearer(token)) as resp:
            job = await resp.json()
        if job["status"] == "completed":
            break
        await asyncio.sleep(0.02)
    assert job["response"]["result"] == {"done": "x"}
    async with server.client.delete(url, headers=bearer(token)) as resp:
        assert resp.status == 409

    gate.clear()
    status, job = await post(
        server, "/v1/jobs", {"tool": "slow", "params": {"device_id": "y"}}, token
    )
    async with server.client.delete(
        f"{server.url}/v1/jobs/{job['job_id']}", headers=bearer(token)
    ) as resp:
        assert resp.status == 200
        assert (await resp.json())["status"] == "cancelled"
    async with server.client.get(f"{server.url}/v1/jobs/nope", headers=bearer(token)) as resp:
        assert resp.status == 404


async def test_jobs_refused_for_a_tool_without_async_allowed(server: BridgeServer) -> None:
    calls = Calls()
    register(server, "sync_only", calls)
    token = service_token(server.service, "alice")
    status, body = await post(
        server, "/v1/jobs", {"tool": "sync_only", "params": {"device_id": "x"}}, token
    )
    assert status == 400
    assert body == {
        "error": {
            "code": "INVALID_REQUEST",
            "message": "tool 'test:sync_only@1.0.0' does not allow asynchronous invocation "
            "(execution.async_allowed is false); invoke it synchronously",
            "details": {"tool": "test:sync_only@1.0.0", "reason": "async_not_allowed"},
            "retryable": False,
        }
    }
    assert calls.params == []
    refused = await server.service.invocation.audit.query(decision="async_not_allowed")
    assert [(e.agent_id, e.tool, e.outcome, e.error_code) for e in refused] == [
        ("alice", "test:sync_only@1.0.0", "error", "INVALID_REQUEST")
    ]
    # The same tool still runs synchronously.
    status, body = await post(
        server, "/v1/invoke", {"tool": "sync_only", "params": {"device_id": "x"}}, token
    )
    assert (status, body["result"]) == (200, {"device": "x", "level": 5, "agent": "alice"})


async def test_body_errors_are_4xx_json(server: BridgeServer) -> None:
    token = service_token(server.service)
    headers = bearer(token)
    cases: list[tuple[dict[str, Any], int]] = [
        ({"data": b"{not json", "headers": {"Content-Type": "application/json"}}, 400),
        ({"data": b"tool=x", "headers": {"Content-Type": "text/plain"}}, 400),
        ({"data": b"\x86{}", "headers": {"Content-Type": "application/json"}}, 400),
        (
            {
                "data": b'{"tool": "x"}',
                "headers": {"Content-Type": "application/json; charset=latin-1"},
            },
            400,
        ),
        (
            {
                "data": b'{"tool": "x"}',
                "headers": {"Content-Type": "application/json; charset=bogus"},
            },
            400,
        ),
        ({"json": {"tool": "x", "bogus": 1}}, 400),
        ({"json": ["tool"]}, 400),
        ({"json": {"tool": 5}}, 400),
        ({"json": {"tool": "x", "params": []}}, 400),
        ({"json": {"tool": "x", "routing": {"hop_budget": -1}}}, 400),
        (
            {
                "data": b"{" + b" " * (2 * 1024 * 1024) + b"}",
                "headers": {"Content-Type": "application/json"},
            },
            413,
        ),
    ]
    for kwargs, expected in cases:
        extra = kwargs.pop("headers", {})
        async with server.client.post(
            server.url + "/v1/invoke", headers={**headers, **extra}, **kwargs
        ) as resp:
            assert resp.status == expected, kwargs
            body = await resp.json()
            code = "PAYLOAD_TOO_LARGE" if expected == 413 else "INVALID_REQUEST"
            assert body["error"]["code"] == code
            assert "Traceback" not in json.dumps(body)


async def test_openapi_matches_router(server: BridgeServer) -> None:
    token = service_token(server.service)
    async with server.client.get(server.url + "/v1/openapi.json", headers=bearer(token)) as resp:
        doc = await resp.json()
    for path, method in [
        ("/v1/invoke", "post"),
        ("/v1/jobs", "post"),
        ("/v1/jobs/{job_id}", "get"),
        ("/v1/jobs/{job_id}", "delete"),
        ("/v1/approvals", "get"),
        ("/v1/approvals/{approval_id}", "post"),
        ("/v1/events", "get"),
    ]:
        assert method in doc["paths"][path], (path, method)
    assert doc["paths"]["/v1/invoke"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]["required"] == ["tool"]
    runner_app = server.service._runner.app if server.service._runner else None
    assert runner_app is not None
    documented = set(runner_app[OPENAPI_KEY].operations)
    assert (
        router_operations(runner_app)
        >= documented
        >= {("POST", "/v1/invoke"), ("GET", "/v1/events"), ("DELETE", "/v1/jobs/{job_id}")}
    )


async def test_events_websocket(server: BridgeServer) -> None:
    register(server, "ping", Calls())
    token = service_token(server.service, "alice", ["device:*"])
    other = service_token(server.service, "bob", ["device:*"])
    async with server.client.ws_connect(
        f"{server.url}/v1/events?types=tool_call.&token={token}"
    ) as ws:
        await asyncio.sleep(0.05)
        await post(server, "/v1/invoke", {"tool": "ping", "params": {"device_id": "b"}}, other)
        status, resp = await post(
            server, "/v1/invoke", {"tool": "ping", "params": {"device_id": "a"}}, token
        )
        assert status == 200
        frames = [await ws.receive_json(timeout=5) for _ in range(3)]
    assert [f["data"]["status"] for f in frames] == ["initiated", "running", "completed"]
    assert {f["data"]["toolCallId"] for f in frames} == {resp["call_id"]}
    assert {f["data"]["agentId"] for f in frames} == {"alice"}
    with pytest.raises(aiohttp.WSServerHandshakeError) as info:
        async with server.client.ws_connect(f"{server.url}/v1/events"):
            pass
    assert info.value.status == 401


async def test_events_websocket_registry_and_approvals(server: BridgeServer) -> None:
    admin = service_token(server.service, "root", ["admin:approve"])
    plain = service_token(server.service, "user", ["device:*"])
    async with (
        server.client.ws_connect(f"{server.url}/v1/events", headers=bearer(admin)) as ws_admin,
        server.client.ws_connect(f"{server.url}/v1/events", headers=bearer(plain)) as ws_plain,
    ):
        await asyncio.sleep(0.05)
        register(
            server,
            "door",
            Calls(),
            dangerous=True,
            confirmation=Confirmation(message="Open {device_id}?", timeout_s=0.2),
        )
        for ws in (ws_admin, ws_plain):
            frame = await ws.receive_json(timeout=5)
            assert frame["type"] == "registry.changed"
            assert frame["data"]["action"] == "added"
        status, body = await post(
            server, "/v1/invoke", {"tool": "door", "params": {"device_id": "d1"}}, plain
        )
        assert (status, body["error"]["code"]) == (408, "CONFIRMATION_TIMEOUT")
        admin_types = []
        while len(admin_types) < 2 or admin_types[-1] != "approval.decided":
            frame = await ws_admin.receive_json(timeout=5)
            if frame["type"].startswith("approval."):
                admin_types.append(frame["type"])
                assert frame["data"]["message"] == 'Open "d1"?'
        assert admin_types == ["approval.pending", "approval.decided"]
        frames = [await ws_plain.receive_json(timeout=5) for _ in range(2)]
        assert [(f["type"], f["data"]["status"]) for f in frames] == [
            ("tool_call.status", "initiated"),
            ("tool_call.status", "error"),
        ]
        assert frames[1]["data"]["error"]["code"] == "CONFIRMATION_TIMEOUT"


async def wait_job(server: BridgeServer, job_id: str, token: str) -> Any:
    url = f"{server.url}/v1/jobs/{job_id}"
    for _ in range(300):
        async with server.client.get(url, headers=bearer(token)) as resp:
            job = await resp.json()
        if job["status"] not in ("queued", "running"):
            return job
        await asyncio.sleep(0.02)
    raise AssertionError(f"job {job_id} did not end: {job}")


async def test_jobs_accept_generated_matter_tools_and_core_data_tools(
    server: BridgeServer,
) -> None:
    from bridge.matter import MatterToolGenerator, NodeData, build_devices, load_cluster_maps
    from tests.matter.dumps import load_dump

    dump = load_dump("matterjs-commissioned/node-2-dimmable")
    devices = build_devices([NodeData.from_json(dump)])
    generated = MatterToolGenerator(load_cluster_maps(), node_id="node-a").generate(devices)
    tool = next(t for t in generated if t.definition.name == "light_test_dimmable_brightness")
    assert tool.definition.execution.async_allowed is True
    assert all(t.definition.execution.async_allowed for t in generated)

    # The handler plans the exact Matter request (no controller runs in this test).
    async def plan(params: dict[str, Any], ctx: CallContext) -> Any:
        return [action.to_json() for action in tool.plan(params)]

    server.service.registry.register(tool.definition, plan)
    token = service_token(server.service, "alice")
    status, job = await post(
        server,
        "/v1/jobs",
        {"tool": "matter:light_test_dimmable_brightness", "params": {"percent": 30}},
        token,
    )
    assert status == 202
    done = await wait_job(server, job["job_id"], token)
    assert done["status"] == "completed"
    assert done["tool"] == "matter:light_test_dimmable_brightness"
    assert done["response"]["result"] == [
        {
            "kind": "command",
            "node_id": 2,
            "endpoint_id": 1,
            "cluster": "LevelControl",
            "command": "MoveToLevelWithOnOff",
            "payload": {
                "level": 77,
                "transitionTime": None,
                "optionsMask": 0,
                "optionsOverride": 0,
            },
        }
    ]

    status, job = await post(
        server,
        "/v1/jobs",
        {"tool": "core:store_data", "params": {"key": "notes/job", "value": {"n": 1}}},
        token,
    )
    assert status == 202
    assert (await wait_job(server, job["job_id"], token))["status"] == "completed"
    status, job = await post(
        server, "/v1/jobs", {"tool": "core:get_data", "params": {"key": "notes/job"}}, token
    )
    assert status == 202
    got = await wait_job(server, job["job_id"], token)
    assert (got["status"], got["response"]["result"]["value"]) == ("completed", {"n": 1})


async def test_local_call_reports_its_execution(server: BridgeServer) -> None:
    import jsonschema

    async def slow(params: dict[str, Any], ctx: CallContext) -> Any:
        await asyncio.sleep(0.02)
        return {"device": params["device_id"]}

    register(server, "exec", slow)
    token = service_token(server.service, "alice")
    status, body = await post(
        server, "/v1/invoke", {"tool": "exec", "params": {"device_id": "lamp-1"}}, token
    )
    assert status == 200
    node_id = server.service.invocation.invoker.node_id
    assert node_id
    assert body["node_id"] == node_id
    execution = body["execution"]
    assert {k: execution[k] for k in ("node_id", "hops", "path", "attempts")} == {
        "node_id": node_id,
        "hops": 0,
        "path": [node_id],
        "attempts": [],
    }
    assert 20.0 <= execution["duration_ms"] <= body["duration_ms"]

    async with server.client.get(server.url + "/v1/openapi.json", headers=bearer(token)) as resp:
        doc = await resp.json()
    ok = doc["paths"]["/v1/invoke"]["post"]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ToolResponse"
    }
    schema = doc["components"]["schemas"]["ToolResponse"]
    jsonschema.validate(body, schema)
    assert schema["properties"]["execution"]["required"] == [
        "node_id",
        "hops",
        "duration_ms",
        "path",
        "attempts",
    ]

    # A call refused before running executed nowhere.
    status, body = await post(server, "/v1/invoke", {"tool": "exec", "params": {"level": 1}}, token)
    assert (status, body["error"]["code"], body["execution"]) == (400, "INVALID_PARAMS", None)
    jsonschema.validate(body, schema)


PIN = "73918264"
LOCK_PARAMS = {
    "type": "object",
    "properties": {
        "device_id": {"type": "string"},
        "pin_code": {"type": "string", "pattern": "^[0-9]{4,8}$"},
    },
    "required": ["device_id", "pin_code"],
    "additionalProperties": False,
}


async def test_secret_params_never_stored_or_shown(server: BridgeServer) -> None:
    from bridge.errors import InvalidParamsError
    from bridge.service import DB_FILE_NAME
    from bridge.tools.definition import Audit

    received: list[dict[str, Any]] = []

    async def unlock(params: dict[str, Any], ctx: CallContext) -> Any:
        received.append(params)
        if params["device_id"] == "side":
            raise InvalidParamsError(
                f"pin {params['pin_code']} is wrong",
                {"pin_code": params["pin_code"], "tried": params["pin_code"]},
            )
        return {"device": params["device_id"], "note": f"opened with {params['pin_code']}"}

    # Like the generator's DoorLock unlock, but keeping (redacted) params and the result.
    server.service.registry.register(
        ToolDefinition(
            name="lock_unlock",
            namespace="test",
            description="Unlock a door",
            parameters=LOCK_PARAMS,
            dangerous=True,
            confirmation=Confirmation(
                mode="when",
                when={"properties": {"device_id": {"const": "front"}}},
                message="Unlock {device_id} with {pin_code}?",
                timeout_s=10,
            ),
            execution=Execution(async_allowed=True),
            audit=Audit(log_params=True, log_result=True, extra={"secret_params": ["pin_code"]}),
        ),
        unlock,
    )
    svc = server.service
    sub = svc.events.subscribe("tool_call.", "approval.")
    caller = service_token(svc, "agent", ["*"])
    admin = service_token(svc, "alice", ["admin:*"])

    # 1. Approval flow: the approver sees <redacted>, the handler gets the PIN.
    call = asyncio.create_task(
        post(
            server,
            "/v1/invoke",
            {"tool": "test:lock_unlock", "params": {"device_id": "front", "pin_code": PIN}},
            caller,
        )
    )
    pending: list[Any] = []
    for _ in range(200):
        async with server.client.get(
            server.url + "/v1/approvals?status=pending", headers=bearer(admin)
        ) as resp:
            pending = (await resp.json())["approvals"]
        if pending:
            break
        await asyncio.sleep(0.02)
    assert [(p["params"], p["message"]) for p in pending] == [
        ({"device_id": "front", "pin_code": "<redacted>"}, 'Unlock "front" with "<redacted>"?')
    ]
    status, body = await post(
        server, f"/v1/approvals/{pending[0]['id']}", {"decision": "approve"}, admin
    )
    assert (status, body["status"], body["params"]["pin_code"]) == (200, "approved", "<redacted>")
    status, resp = await call
    assert (status, resp["result"]) == (200, {"device": "front", "note": "opened with <redacted>"})
    assert received[-1] == {"device_id": "front", "pin_code": PIN}

    # 2. A failure whose message and details carry the PIN, with an idempotency key.
    status, resp = await post(
        server,
        "/v1/invoke",
        {
            "tool": "test:lock_unlock",
            "params": {"device_id": "side", "pin_code": PIN},
            "idempotency_key": "side-1",
        },
        caller,
    )
    assert (status, resp["error"]) == (
        400,
        {
            "code": "INVALID_PARAMS",
            "message": "pin <redacted> is wrong",
            "details": {"pin_code": "<redacted>", "tried": "<redacted>"},
            "retryable": False,
        },
    )
    assert received[-1]["pin_code"] == PIN

    # 3. A job.
    status, job = await post(
        server,
        "/v1/jobs",
        {"tool": "test:lock_unlock", "params": {"device_id": "back", "pin_code": PIN}},
        caller,
    )
    assert status == 202
    done = await wait_job(server, job["job_id"], caller)
    assert done["response"]["result"] == {"device": "back", "note": "opened with <redacted>"}
    assert received[-1] == {"device_id": "back", "pin_code": PIN}

    # 4. Invalid input echoing a near-PIN is not shown either.
    status, resp = await post(
        server,
        "/v1/invoke",
        {"tool": "test:lock_unlock", "params": {"device_id": "back", "pin_code": PIN + "x"}},
        caller,
    )
    assert (status, resp["error"]["code"]) == (400, "INVALID_PARAMS")
    assert PIN not in json.dumps(resp)

    # Audit rows: params kept with the PIN redacted.
    rows = await svc.invocation.audit.query(tool="test:lock_unlock@1.0.0")
    assert {json.dumps(r.params) for r in rows if r.params is not None} >= {
        json.dumps({"device_id": "front", "pin_code": "<redacted>"})
    }
    events: list[Any] = []
    while not sub.queue.empty():
        events.append(sub.queue.get_nowait())
    svc.events.unsubscribe(sub)
    assert {e.type for e in events} >= {"tool_call.status", "approval.pending", "approval.decided"}
    assert PIN not in json.dumps([e.to_json() for e in events])
    for row in rows:
        assert PIN not in json.dumps(row.to_json())

    # Nothing in the database file or its WAL holds the PIN.
    await svc.invocation.audit.flush()
    files = sorted(svc.state_dir.glob(DB_FILE_NAME + "*"))
    assert [f.name for f in files][:2] == [DB_FILE_NAME, DB_FILE_NAME + "-shm"]
    assert any(f.name.endswith("-wal") for f in files)
    seen_redacted = False
    for path in files:
        data = path.read_bytes()
        assert PIN.encode() not in data, path.name
        assert PIN.encode("utf-16-le") not in data, path.name
        seen_redacted = seen_redacted or b"<redacted>" in data
    assert seen_redacted  # the rows were written where we looked


async def test_device_events_go_only_to_tokens_that_may_read_the_device(
    server: BridgeServer,
) -> None:
    readers = {
        "all": service_token(server.service, "all", ["device:read:*"]),
        "lamp": service_token(server.service, "lamp", ["device:read:lamp-1"]),
        "control": service_token(server.service, "control", ["device:control:*"]),
    }
    url = f"{server.url}/v1/events?types=device."
    async with (
        server.client.ws_connect(url, headers=bearer(readers["all"])) as ws_all,
        server.client.ws_connect(url, headers=bearer(readers["lamp"])) as ws_lamp,
        server.client.ws_connect(url, headers=bearer(readers["control"])) as ws_control,
    ):
        await asyncio.sleep(0.05)
        for device in ("door-9", "lamp-1"):
            server.service.events.publish(
                "device.state",
                {"device_id": device, "name": device, "path": "1/6/0", "value": True},
            )
        server.service.events.publish(
            "device.availability", {"device_id": "door-9", "name": "door-9", "available": False}
        )
        seen_all = [await ws_all.receive_json(timeout=5) for _ in range(3)]
        assert [(f["type"], f["data"]["device_id"]) for f in seen_all] == [
            ("device.state", "door-9"),
            ("device.state", "lamp-1"),
            ("device.availability", "door-9"),
        ]
        frame = await ws_lamp.receive_json(timeout=5)
        assert (frame["type"], frame["data"]["device_id"]) == ("device.state", "lamp-1")
        with pytest.raises(TimeoutError):
            await ws_lamp.receive_json(timeout=0.3)
        with pytest.raises(TimeoutError):
            await ws_control.receive_json(timeout=0.3)
