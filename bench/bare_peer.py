"""Bare processes for the floors of ``bench/compare.py``: what any Python peer spends.

  server               an aiohttp server on the bridge's event loop with the bridge's call
                       routes' shapes and nothing else: ``POST /v1/invoke`` parses the
                       JSON body and answers a ``tool_response``-sized JSON document;
                       ``GET /v1/calls/ws`` answers each ``tool_invoke`` frame the same
                       way. No middleware, no auth, no pipeline, no audit, no device: its
                       CPU per round trip is the floor of the HTTP part of a bridged call.
                       Prints ``{"port": N}`` once listening.
  listener URL HEADERS a WebSocket client of the controller (``start_listening``, as the
                       bridge's adapter) that parses every frame with orjson and does
                       nothing else: its CPU per round is the floor of receiving that
                       round's state reports, which each bridge also receives.

Usage: python bench/bare_peer.py server | listener ws://host:5580/ws '{"Header": "value"}'
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Coroutine
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from bridge import eventloop

# A toggle's tool_response as the bridge answers it, with made-up values (~0.5 kB).
ANSWER: dict[str, Any] = {
    "type": "tool_response",
    "id": "00000000000000000000000000000000",
    "request_id": "",
    "status": "success",
    "result": {
        "ok": True,
        "device_id": "4-1",
        "sent": [
            {
                "kind": "command",
                "node_id": 4,
                "endpoint_id": 1,
                "cluster": "OnOff",
                "command": "Toggle",
                "payload": {},
            }
        ],
        "results": [None],
    },
    "execution": {"node_id": "0" * 32, "duration_ms": 3.21, "hops": 0, "route": []},
    "timestamp": 1764167625.123,
}


async def invoke(request: web.Request) -> web.Response:
    body = orjson.loads(await request.read())
    return web.Response(
        body=orjson.dumps(ANSWER | {"request_id": str(body.get("id", ""))}),
        content_type="application/json",
    )


async def calls_ws(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    async for msg in ws:
        if msg.type is aiohttp.WSMsgType.TEXT:
            body = orjson.loads(msg.data)
            await ws.send_str(orjson.dumps(ANSWER | {"request_id": body["id"]}).decode())
    return ws


async def server() -> None:
    app = web.Application()
    app.router.add_post("/v1/invoke", invoke)
    app.router.add_get("/v1/calls/ws", calls_ws)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(json.dumps({"port": port}), flush=True)
    await asyncio.Event().wait()


async def listener(url: str, headers: dict[str, str]) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, headers=headers, compress=0, max_msg_size=0) as ws,
    ):
        await ws.receive()  # the server's greeting
        await ws.send_str(json.dumps({"message_id": "listen", "command": "start_listening"}))
        print(json.dumps({"listening": True}), flush=True)
        async for msg in ws:
            if msg.type is aiohttp.WSMsgType.TEXT:
                orjson.loads(msg.data)


def main() -> None:
    if sys.argv[1:2] == ["server"]:
        job: Coroutine[Any, Any, None] = server()
    elif sys.argv[1:2] == ["listener"] and len(sys.argv) == 4:
        job = listener(sys.argv[2], json.loads(sys.argv[3]))
    else:
        raise SystemExit(__doc__)
    with contextlib.suppress(KeyboardInterrupt):  # the bench stops it with SIGINT
        eventloop.run(job)


if __name__ == "__main__":
    main()
