"""Bare processes for the floors of ``bench/compare.py``: what any Python peer spends.

  server [URL HEADERS NODE]
                       an aiohttp server on the bridge's event loop with the bridge's call
                       routes' shapes and nothing else: ``POST /v1/invoke`` parses the
                       JSON body and answers a ``tool_response``-sized JSON document;
                       ``GET /v1/calls/ws`` answers each ``tool_invoke`` frame the same
                       way. No middleware, no auth, no pipeline, no audit: its CPU per
                       round trip is the floor of the HTTP part of a bridged call. Given
                       the controller's URL, key headers and a node id, each call first
                       sends that node's OnOff Toggle over one WebSocket to the controller
                       and waits for its answer, as the bridge does: the floor of a whole
                       HTTP -> Matter call in Python. Prints ``{"port": N}`` once listening.
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


class Controller:
    """One WebSocket to the controller: send a Toggle, wait for its answer."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, node_id: int) -> None:
        self.ws, self.node_id = ws, node_id
        self.waiting: dict[str, asyncio.Future[Any]] = {}
        self.ids = 0

    async def read(self) -> None:
        async for msg in self.ws:
            if msg.type is aiohttp.WSMsgType.TEXT:
                doc = orjson.loads(msg.data)
                future = self.waiting.pop(str(doc.get("message_id")), None)
                if future is not None and not future.done():
                    future.set_result(doc)

    async def toggle(self) -> Any:
        self.ids += 1
        msg_id = str(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.waiting[msg_id] = future
        args = {"node_id": self.node_id, "endpoint_id": 1, "cluster_id": 6}
        command = {"command_name": "Toggle", "payload": {}}
        await self.ws.send_frame(  # a text frame of orjson's bytes, as the bridge sends
            orjson.dumps(
                {"message_id": msg_id, "command": "device_command", "args": args | command}
            ),
            aiohttp.WSMsgType.TEXT,
        )
        answer = await future
        if "error_code" in answer:
            raise RuntimeError(f"the controller refused the toggle: {answer}")
        return answer.get("result")


CONTROLLER: web.AppKey[Controller] = web.AppKey("controller", Controller)


async def invoke(request: web.Request) -> web.Response:
    body = orjson.loads(await request.read())
    controller = request.app.get(CONTROLLER)
    if controller is not None:
        await controller.toggle()
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


async def server(controller: tuple[str, dict[str, str], int] | None) -> None:
    app = web.Application()
    if controller is not None:
        url, headers, node_id = controller
        session = aiohttp.ClientSession()
        ws = await session.ws_connect(url, headers=headers, compress=0, max_msg_size=0)
        await ws.receive()  # the server's greeting
        app[CONTROLLER] = Controller(ws, node_id)
        reader = asyncio.get_running_loop().create_task(app[CONTROLLER].read())
    app.router.add_post("/v1/invoke", invoke)
    app.router.add_get("/v1/calls/ws", calls_ws)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(json.dumps({"port": port}), flush=True)
    try:
        await asyncio.Event().wait()  # until the bench stops it with SIGINT
    finally:
        if controller is not None:
            reader.cancel()
            await session.close()


async def listener(url: str, headers: dict[str, str]) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, headers=headers, compress=0, max_msg_size=0) as ws,
    ):
        await ws.receive()  # the server's greeting
        await ws.send_str(json.dumps({"message_id": "listen", "command": "start_listening"}))
        print(json.dumps({"listening": True}), flush=True)
        frames: dict[str, int] = {}
        try:
            async for msg in ws:
                if msg.type is aiohttp.WSMsgType.TEXT:
                    doc = orjson.loads(msg.data)
                    kind = str(doc.get("event") or "answer")
                    frames[kind] = frames.get(kind, 0) + 1
        finally:
            print(json.dumps({"frames": frames}), file=sys.stderr, flush=True)


def main() -> None:
    if sys.argv[1:] == ["server"]:
        job: Coroutine[Any, Any, None] = server(None)
    elif sys.argv[1:2] == ["server"] and len(sys.argv) == 5:
        job = server((sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])))
    elif sys.argv[1:2] == ["listener"] and len(sys.argv) == 4:
        job = listener(sys.argv[2], json.loads(sys.argv[3]))
    else:
        raise SystemExit(__doc__)
    with contextlib.suppress(KeyboardInterrupt):  # the bench stops it with SIGINT
        eventloop.run(job)


if __name__ == "__main__":
    main()
