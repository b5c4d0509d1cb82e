"""``atmosphere-bridge commission`` sends its token in the Authorization header only."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from bridge.cli.commission import commission_via_bridge
from bridge.matter import CommissionRequest

TOKEN = "atm1.secret-token-value_with+odd/chars=="


async def test_the_token_never_goes_in_a_url() -> None:
    """A query string ends up in proxies' request logs; the header does not."""
    seen: list[dict[str, Any]] = []
    commissioned = asyncio.Event()

    def note(request: web.Request) -> None:
        seen.append({"url": str(request.rel_url), "auth": request.headers.get("Authorization")})

    async def events(request: web.Request) -> web.WebSocketResponse:
        note(request)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await commissioned.wait()
        await ws.send_str(
            json.dumps(
                {
                    "type": "commissioning.tools_ready",
                    "data": {
                        "commission_id": "c-1",
                        "stage": "tools_ready",
                        "node_id": 7,
                        "tools": [],
                    },
                }
            )
        )
        await ws.close()
        return ws

    async def commission(request: web.Request) -> web.Response:
        note(request)
        commissioned.set()
        return web.json_response({"commission_id": "c-1"}, status=202)

    app = web.Application()
    app.router.add_get("/v1/events", events)
    app.router.add_post("/v1/devices/commission", commission)
    async with TestServer(app, host="127.0.0.1") as server:
        url = str(server.make_url("")).rstrip("/")
        done = await commission_via_bridge(
            url, TOKEN, CommissionRequest(code="MT:Y.K90AFN00KA0648G00"), timeout_s=10
        )
    assert done["node_id"] == 7
    assert [r["url"].split("?")[0] for r in seen] == ["/v1/events", "/v1/devices/commission"]
    for request in seen:
        assert request["auth"] == f"Bearer {TOKEN}"
        assert "token" not in request["url"]
        assert "secret-token" not in request["url"]
