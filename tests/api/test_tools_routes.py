"""The catalogue endpoints and the error form, over a real aiohttp server on loopback."""

from __future__ import annotations

import json
import logging
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.api.app import create_app
from bridge.api.openapi import OPENAPI_KEY, router_operations
from bridge.config import BridgeConfig
from bridge.service import BridgeService
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer
from tests.tools.catalog import catalog

SEED = Path(__file__).parents[1] / "tools" / "seed"


async def handler(params: dict[str, Any], ctx: CallContext) -> Any:
    return params


@pytest.fixture
async def server(bridge_server: BridgeServer) -> BridgeServer:
    registry = bridge_server.service.registry
    for name in ("notify", "search_web", "control_matter_device"):
        doc = json.loads((SEED / f"{name}.json").read_text())
        registry.register(ToolDefinition.from_json(doc), handler)
    registry.register(
        ToolDefinition(
            name="notify", namespace="mcp_slack", description="Post to Slack", server_name="peer-2"
        ),
        None,
        available=False,
    )
    for d in catalog():
        registry.register(d, handler)
    return bridge_server


def auth(server: BridgeServer) -> dict[str, str]:
    return bearer(service_token(server.service, "catalogue-reader", ("*",)))


async def get(server: BridgeServer, path: str, **params: str) -> tuple[int, Any]:
    async with server.client.get(server.url + path, params=params, headers=auth(server)) as resp:
        assert resp.content_type == "application/json"
        return resp.status, await resp.json()


async def test_healthz(server: BridgeServer) -> None:
    status, body = await get(server, "/healthz")
    assert status == 200
    assert body["status"] == "ok"
    # + the five automations:* rule tools the automations runner registers
    assert body["tools"] == 2 + 3 + 1 + 330 + 5
    assert body["components"]["matter"] is False
    assert body["components"]["mesh"] is False
    assert body["problems"] == []


LEAKY_TOOLS = """
def make(config, env):
    raise RuntimeError(f"login refused for key {config['api_key']}")
"""


async def healthz_with_manifest(
    config: BridgeConfig, manifest: str, caplog: pytest.LogCaptureFixture
) -> tuple[int, str]:
    path = config.state_dir.parent / "tools.yaml"
    path.write_text(manifest)
    (path.parent / "leaky.py").write_text(LEAKY_TOOLS)
    service = BridgeService(replace(config, tools_manifest=path), enable_matter=False)
    with caplog.at_level(logging.ERROR, logger="bridge.service"):
        await service.start()
    try:
        port = await service.start_api("127.0.0.1", 0)
        async with (
            aiohttp.ClientSession() as client,
            client.get(f"http://127.0.0.1:{port}/healthz") as resp,
        ):
            return resp.status, await resp.text()
    finally:
        await service.stop()


async def test_healthz_reports_manifest_problems_without_secrets(
    bridge_config: BridgeConfig, caplog: pytest.LogCaptureFixture
) -> None:
    status, text = await healthz_with_manifest(
        bridge_config,
        textwrap.dedent("""
        tools:
          - source: file:./leaky.py
            entry: make
            config: {api_key: sk-SECRET-123}
          - source: builtin:vision
          - source: ftp:x
            config: {token: sk-SECRET-456}
          - name: get_data
            source: builtin:store
    """),
        caplog,
    )
    assert status == 200
    assert "SECRET" not in text
    body = json.loads(text)
    assert body["status"] == "degraded"
    assert body["problems"] == [
        {
            "component": "tools_manifest",
            "entry": 0,
            "name": None,
            "source": "file:./leaky.py",
            "code": "TOOL_FAILED",
            "message": "entry #0 (-, file:./leaky.py): did not load (TOOL_FAILED); "
            "the bridge log has the reason",
        },
        {
            "component": "tools_manifest",
            "entry": 1,
            "name": None,
            "source": "builtin:vision",
            "code": "INVALID_DEFINITION",
            "message": "entry #1 (-, builtin:vision): did not load (INVALID_DEFINITION); "
            "the bridge log has the reason",
        },
        {
            "component": "tools_manifest",
            "entry": 2,
            "name": None,
            "source": "ftp:x",
            "code": "CONFIG_INVALID",
            "message": "entry #2 (-): source 'ftp:x' must be 'builtin:NAME', "
            "'plugin:ENTRY_POINT', 'file:PATH' or 'definition:PATH'",
        },
        {
            "component": "tools_manifest",
            "entry": 3,
            "name": "get_data",
            "source": "builtin:store",
            "code": "CONFLICT",
            "message": "entry #3 (get_data, builtin:store): did not load (CONFLICT); "
            "the bridge log has the reason",
        },
    ]
    # The operator still gets the full reasons in the log.
    logged = [r.getMessage().split(": ", 1)[1] for r in caplog.records]
    assert logged == [
        "entry #0 (-, file:./leaky.py): RuntimeError: login refused for key sk-SECRET-123",
        "entry #1 (-, builtin:vision): unknown builtin 'vision' (known: get_data, store, "
        "store_data)",
        "entry #2 (-): source 'ftp:x' must be 'builtin:NAME', 'plugin:ENTRY_POINT', "
        "'file:PATH' or 'definition:PATH'",
        "entry #3 (get_data, builtin:store): tool 'core:get_data@1.0.0' is already registered",
    ]


async def test_healthz_reports_a_broken_manifest_by_position_only(
    bridge_config: BridgeConfig, caplog: pytest.LogCaptureFixture
) -> None:
    status, text = await healthz_with_manifest(
        bridge_config,
        "tools:\n  - source: builtin:store\n    config: {api_key: sk-SECRET: [\n",
        caplog,
    )
    assert status == 200
    assert "SECRET" not in text
    body = json.loads(text)
    # core's two and the five automations:* rule tools
    assert (body["status"], body["tools"]) == ("degraded", 2 + 5)
    assert body["problems"] == [
        {
            "component": "tools_manifest",
            "entry": None,
            "name": None,
            "source": None,
            # Column 32: the second ':' inside the flow mapping, right after the secret.
            "code": "CONFIG_INVALID",
            "message": "invalid YAML at line 3, column 32",
        },
    ]
    assert "sk-SECRET" in caplog.records[0].getMessage()


async def test_list_with_filters(server: BridgeServer) -> None:
    status, body = await get(server, "/v1/tools", namespace="core")
    assert status == 200
    assert [t["identity"] for t in body["tools"]] == [
        "core:get_data@1.0.0",
        "core:notify@1.0.0",
        "core:search_web@1.0.0",
        "core:store_data@1.0.0",
    ]
    assert body["count"] == 4
    notify = body["tools"][1]
    seed = json.loads((SEED / "notify.json").read_text())
    assert notify["tool"] == seed["tool"]
    assert notify["available"] is True
    assert notify["local"] is True
    _, body = await get(server, "/v1/tools", server_name="peer-2")
    assert [(t["identity"], t["available"], t["local"]) for t in body["tools"]] == [
        ("mcp_slack:notify@1.0.0", False, False)
    ]
    _, body = await get(server, "/v1/tools", capability="storage", category="managing")
    assert [t["identity"] for t in body["tools"]] == [
        "core:get_data@1.0.0",
        "core:store_data@1.0.0",
    ]
    _, body = await get(server, "/v1/tools", tag="hallway", available="true")
    assert body["count"] == 11
    _, body = await get(server, "/v1/tools", namespace="core", view="flat")
    assert body["tools"][0] == {
        "identity": "core:get_data@1.0.0",
        "available": True,
        **server.service.registry.resolve("core:get_data").definition.flat(),
    }


async def test_discover(server: BridgeServer) -> None:
    status, body = await get(server, "/v1/tools", q="switch off the hallway lamp", limit="3")
    assert status == 200
    assert body["query"] == "switch off the hallway lamp"
    assert body["count"] == 3
    assert body["tools"][0]["identity"] == "matter:light_hallway_off@1.0.0"
    scores = [t["score"] for t in body["tools"]]
    assert scores == sorted(scores, reverse=True)
    _, body = await get(server, "/v1/tools", q="notify", namespace="mcp_slack")
    assert [t["identity"] for t in body["tools"]] == ["mcp_slack:notify@1.0.0"]


async def test_get_tool(server: BridgeServer) -> None:
    status, body = await get(server, "/v1/tools/core:notify@1.0.0")
    assert status == 200
    assert body["identity"] == "core:notify@1.0.0"
    assert body["tool"]["requires"] == {
        "capabilities": ["notification"],
        "permissions": ["notify:send"],
    }
    status, body = await get(server, "/v1/tools/search_web", version=">=1.0.0")
    assert (status, body["identity"]) == (200, "core:search_web@1.0.0")
    status, body = await get(server, "/v1/tools/control_matter_device@^1")
    assert (status, body["identity"]) == (200, "matter:control_matter_device@1.0.0")


async def test_a_peer_tool_does_not_make_a_local_name_ambiguous(server: BridgeServer) -> None:
    # mcp_slack:notify is a peer's (no handler here): the bare name is the local tool's.
    status, body = await get(server, "/v1/tools/notify")
    assert status == 200, body
    assert body["tool"]["namespace"] == "core"
    assert body["local"] is True


@pytest.mark.parametrize(
    ("path", "params", "status", "code", "message"),
    [
        ("/v1/tools/core:nothing", {}, 404, "TOOL_NOT_FOUND", "no tool named 'core:nothing'"),
        (
            "/v1/tools/core:notify@^2",
            {},
            404,
            "TOOL_NOT_FOUND",
            "no version of 'core:notify' matches ^2; registered: 1.0.0",
        ),
        ("/v1/tools/bad name", {}, 400, "INVALID_REQUEST", None),
        (
            "/v1/tools",
            {"category": "dancing"},
            400,
            "INVALID_REQUEST",
            "unknown category 'dancing'",
        ),
        (
            "/v1/tools",
            {"colour": "red"},
            400,
            "INVALID_REQUEST",
            "unknown query parameter(s): colour",
        ),
        (
            "/v1/tools",
            {"q": "x", "limit": "0"},
            400,
            "INVALID_REQUEST",
            "limit must be between 1 and 100",
        ),
        (
            "/v1/tools",
            {"available": "maybe"},
            400,
            "INVALID_REQUEST",
            "available must be 'true' or 'false'",
        ),
        ("/v1/nothing", {}, 404, "NOT_FOUND", "no route GET /v1/nothing"),
    ],
)
async def test_errors_are_json(
    server: BridgeServer,
    path: str,
    params: dict[str, str],
    status: int,
    code: str,
    message: str | None,
) -> None:
    got_status, body = await get(server, path, **params)
    assert got_status == status
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details", "retryable"}
    assert body["error"]["code"] == code
    assert body["error"]["retryable"] is False
    if message is not None:
        assert body["error"]["message"] == message


async def test_method_not_allowed(server: BridgeServer) -> None:
    async with server.client.post(
        server.url + "/v1/tools", data=b"{}", headers=auth(server)
    ) as resp:
        body = await resp.json()
    assert resp.status == 405
    assert body["error"]["code"] == "INVALID_REQUEST"
    assert body["error"]["details"] == {"allowed": ["GET"]}


async def test_body_limit(server: BridgeServer) -> None:
    limit = server.service.config.api.max_body_bytes
    big = json.dumps({"tool": "core:get_data", "params": {"key": "x" * (limit + 10)}})
    async with server.client.post(
        server.url + "/v1/invoke",
        data=big,
        headers={**auth(server), "Content-Type": "application/json"},
    ) as resp:
        body = await resp.json()
    assert resp.status == 413
    assert body["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert body["error"]["message"] == f"request body is larger than {limit} bytes"


async def test_unexpected_errors_hide_the_traceback(server: BridgeServer) -> None:
    app = create_app(server.service)

    async def boom(request: Any) -> Any:
        raise RuntimeError("secret internals")

    app.router.add_get("/boom", boom)
    from aiohttp.test_utils import TestClient, TestServer

    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        resp = await client.get("/boom", headers=auth(server))
        text = await resp.text()
    assert resp.status == 500
    body = json.loads(text)
    assert body["error"]["code"] == "INTERNAL"
    assert body["error"]["message"] == "internal error"
    assert set(body["error"]["details"]) == {"incident"}
    assert "secret" not in text
    assert "Traceback" not in text


async def test_openapi_matches_router(server: BridgeServer) -> None:
    status, doc = await get(server, "/v1/openapi.json")
    assert status == 200
    assert doc["openapi"] == "3.1.0"
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    app = create_app(server.service)
    assert documented == router_operations(app)
    assert documented >= {
        ("GET", "/healthz"),
        ("GET", "/v1/tools"),
        ("GET", "/v1/tools/{ref}"),
        ("GET", "/v1/openapi.json"),
    }
    assert len(app[OPENAPI_KEY].operations) == len(documented)
