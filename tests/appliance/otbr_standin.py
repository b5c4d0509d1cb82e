"""A stand-in for a real Thread border router: otbr-agent's REST API on loopback.

No Thread radio can run here, so this aiohttp server answers the endpoints the doctor
and python-otbr-api read, the way ot-br-posix does: ``GET /api/actions`` (present on
camelCase-era routers), ``GET /node/state`` (a JSON string such as ``"leader"``) and
``GET /node/dataset/active`` (hex TLVs for ``Accept: text/plain``, 204 when empty).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from aiohttp import web


def tlv(tag: int, value: bytes) -> bytes:
    return bytes([tag, len(value)]) + value


# An active operational dataset as an OTBR forms it (values chosen for the tests).
NETWORK_KEY = bytes.fromhex("00112233445566778899aabbccddeeff")
DATASET = b"".join(
    [
        tlv(14, bytes.fromhex("0000000000010000")),  # active timestamp
        tlv(0, bytes.fromhex("00000f")),  # channel page 0, channel 15
        tlv(53, bytes.fromhex("0004001fffe0")),  # channel mask
        tlv(2, bytes.fromhex("dead00beef00cafe")),  # extended PAN ID
        tlv(7, bytes.fromhex("fd4e7a1c2b3d0000")),  # mesh-local prefix
        tlv(5, NETWORK_KEY),  # network key
        tlv(3, b"Atmosphere-1"),  # network name
        tlv(1, bytes.fromhex("1234")),  # PAN ID
        tlv(4, bytes.fromhex("445f2b5ca6f2a93a55ce570a70efeecb")),  # PSKc
        tlv(12, bytes.fromhex("02a0f7f8")),  # security policy
    ]
)


@dataclass
class BorderRouterState:
    role: str = "leader"
    dataset: bytes | None = DATASET
    state_status: int = 200
    requests: list[str] = field(default_factory=list)


def free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def border_router_standin(state: BorderRouterState) -> AsyncIterator[str]:
    """Serve the stand-in on a loopback port; yield its base URL."""

    async def actions(request: web.Request) -> web.Response:
        state.requests.append(f"GET {request.path}")
        return web.json_response({"actions": []})

    async def node_state(request: web.Request) -> web.Response:
        state.requests.append(f"GET {request.path}")
        if state.state_status != 200:
            return web.json_response({"title": "Internal Server Error"}, status=state.state_status)
        return web.json_response(state.role)

    async def dataset_active(request: web.Request) -> web.Response:
        state.requests.append(f"GET {request.path} Accept={request.headers.get('Accept')}")
        if state.dataset is None:
            return web.Response(status=204)
        if request.headers.get("Accept") == "text/plain":
            return web.Response(text=state.dataset.hex().upper(), content_type="text/plain")
        return web.json_response({"networkName": "Atmosphere-1"})

    app = web.Application()
    app.router.add_get("/api/actions", actions)
    app.router.add_get("/node/state", node_state)
    app.router.add_get("/node/dataset/active", dataset_active)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
