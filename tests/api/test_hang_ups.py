"""A route's call is cancelled when its HTTP client hangs up, on a real aiohttp server.

``until_hang_up`` serves every route that runs a call (invoke, compact, a peer's
forwarded call); the end-to-end test with a real device is
``tests/matter/test_room_events_fabric.py::test_a_wait_whose_client_hangs_up_ends_at_once``.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
from aiohttp import web

from bridge.api.http import HANG_UPS_KEY, until_hang_up, watch_hang_ups


async def test_a_hung_up_call_is_cancelled_and_a_connected_one_is_not() -> None:
    cancelled: list[float] = []

    async def slow(request: web.Request) -> web.Response:
        seconds = float(request.query["s"])
        try:
            await until_hang_up(request, asyncio.sleep(seconds))
        except asyncio.CancelledError:
            cancelled.append(time.monotonic())
            raise
        return web.json_response({"slept": seconds})

    app = web.Application()
    watch_hang_ups(app)
    watch_hang_ups(app)  # once per app, however many route modules ask
    app.router.add_get("/slow", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        # a client that stays gets its answer, across two checks
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/slow?s=2.2") as resp,
        ):
            assert (resp.status, await resp.json()) == (200, {"slept": 2.2})
        assert cancelled == []
        # a client that hangs up: its call is cancelled within two checks
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /slow?s=60 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.close()
        await writer.wait_closed()
        hung_up = time.monotonic()
        async with asyncio.timeout(10):
            while not cancelled:
                await asyncio.sleep(0.05)
        assert cancelled[0] - hung_up < 2.5
        assert app[HANG_UPS_KEY]._running == {}  # nothing left watched
    finally:
        await runner.cleanup()
