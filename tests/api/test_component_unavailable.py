"""A part of the bridge that is not running is one answer everywhere: 503 COMPONENT_UNAVAILABLE.

It once was 401 on some routes (invocation missing: "cannot verify tokens"), 404 on the
mesh routes and ``CONTROLLER_UNAVAILABLE`` on the Matter ones. Real bridges on
loopback: one whose service is not started (no invocation pipeline: every route that
needs a token), one started with Matter and the mesh off; and the MCP server with no
pipeline. Every route that can give the answer is asked.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.api.bearer import NODE_SIGNED_ROUTES, PUBLIC_ROUTES
from bridge.api.openapi import OPENAPI_KEY
from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.events import EventBus
from bridge.mcp.server import BridgeMcpServer
from bridge.service import BridgeService
from bridge.tools.registry import ToolRegistry
from tests.support.auth import bearer, service_token

# Routes of the started bridge below whose part is off: (method, path, body) -> part.
OFF_PARTS: dict[tuple[str, str], tuple[Any, str]] = {
    ("GET", "/v1/devices"): (None, "matter"),
    ("PATCH", "/v1/devices/d1"): ({"name": "Lamp"}, "matter"),
    ("DELETE", "/v1/devices/d1"): (None, "matter"),
    ("POST", "/v1/devices/d1/share"): ({}, "matter"),
    ("GET", "/v1/rooms"): (None, "matter"),
    ("PATCH", "/v1/rooms/kitchen"): ({"name": "Kitchen"}, "matter"),
    ("GET", "/v1/floors"): (None, "matter"),
    ("POST", "/v1/floors"): ({"name": "Attic"}, "matter"),
    ("PATCH", "/v1/floors/attic"): ({"level": 2}, "matter"),
    ("DELETE", "/v1/floors/attic"): (None, "matter"),
    ("POST", "/v1/intents/handle"): ({"text": "turn on the lights"}, "voice"),
    ("GET", "/v1/mesh/peers"): (None, "mesh"),
    ("GET", "/v1/mesh/tools"): (None, "mesh"),
    ("GET", "/v1/mesh/trust"): (None, "mesh"),
    ("PUT", "/v1/mesh/trust/n1"): ({}, "mesh"),
    ("DELETE", "/v1/mesh/trust/n1"): (None, "mesh"),
    ("POST", "/v1/mesh/hello"): ({}, "mesh"),
    ("POST", "/v1/mesh/gossip"): ({}, "mesh"),
    ("POST", "/v1/mesh/push"): ({}, "mesh"),
    ("POST", "/v1/mesh/invoke"): ({}, "mesh"),
}


def _config(tmp: Path) -> BridgeConfig:
    return BridgeConfig(
        state_dir=tmp / "state",
        api=ApiConfig(host="127.0.0.1", port=0),
        matter=replace(MatterConfig(), enabled=False),
    )


def _filled(path: str) -> str:
    return path.replace("{", "x").replace("}", "")


async def _ask(
    session: aiohttp.ClientSession, url: str, method: str, token: str, body: Any
) -> tuple[int, Any]:
    async with session.request(method, url, headers=bearer(token), json=body) as resp:
        return resp.status, await resp.json(content_type=None)


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as client:
        yield client


async def test_every_route_of_a_bridge_without_its_pipeline_says_so(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    service = BridgeService(_config(tmp_path), enable_matter=False)  # built, not started
    port = await service.start_api("127.0.0.1", 0)
    try:
        runner = service._runner
        assert runner is not None
        operations = sorted(runner.app[OPENAPI_KEY].operations)
        asked: set[str] = set()
        for method, path in operations:
            if (method, path) in PUBLIC_ROUTES or path.startswith("/console") or path == "/":
                continue
            status, answer = await _ask(
                session, f"http://127.0.0.1:{port}{_filled(path)}", method, "any.token.at-all", {}
            )
            part = (
                "mesh"
                if (method, path) in NODE_SIGNED_ROUTES and path != "/v1/mesh/invoke"
                else "invocation"
            )
            assert (status, answer["error"]["code"], answer["error"]["details"]) == (
                503,
                "COMPONENT_UNAVAILABLE",
                {"component": part},
            ), (method, path)
            assert answer["error"]["retryable"] is False
            asked.add(path)
        assert {
            "/v1/invoke",
            "/v1/jobs",
            "/v1/calls/ws",
            "/v1/tokens",
            "/v1/events",
            "/mcp",
            "/v1/automations",
            "/v1/devices",
            "/v1/intents/handle",
            "/v1/mesh/invoke",
            "/v1/mesh/push",
        } <= asked
    finally:
        await service.stop_api()


async def test_routes_of_parts_that_are_off_say_which(
    tmp_path: Path, session: aiohttp.ClientSession
) -> None:
    service = BridgeService(_config(tmp_path), enable_matter=False)
    await service.start()
    port = await service.start_api("127.0.0.1", 0)
    try:
        token = service_token(service, "admin", ("*",))
        for (method, path), (body, part) in OFF_PARTS.items():
            status, answer = await _ask(
                session, f"http://127.0.0.1:{port}{path}", method, token, body
            )
            assert (status, answer["error"]["code"], answer["error"]["details"]) == (
                503,
                "COMPONENT_UNAVAILABLE",
                {"component": part},
            ), (method, path)
        # A malformed body is still the caller's fault first, whether the part runs or not.
        status, answer = await _ask(
            session, f"http://127.0.0.1:{port}/v1/intents/handle", "POST", token, {"text": 5}
        )
        assert (status, answer["error"]["code"]) == (400, "INVALID_PARAMS")
    finally:
        await service.stop_api()
        await service.stop()


async def test_mcp_without_its_pipeline_says_so() -> None:
    server = BridgeMcpServer(ToolRegistry(), lambda: None, EventBus())
    with tempfile.TemporaryDirectory() as tmp:
        service = BridgeService(_config(Path(tmp)), enable_matter=False)
        await service.start()
        try:
            assert service.invocation is not None
            token = service.invocation.verifier.verify(service_token(service, "a", ("*",)))
            result = await server.call(token, "core__echo", {})
        finally:
            await service.stop()
    assert result.is_error
    assert result.structured_content == {
        "error": {
            "code": "COMPONENT_UNAVAILABLE",
            "message": "invocation is not running on this node",
            "details": {"component": "invocation"},
            "retryable": False,
        }
    }
