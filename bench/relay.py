"""A bare WebSocket relay: the floor for any process between an agent and the controller.

``python bench/relay.py CONTROLLER_URL KEY_FILE`` listens on 127.0.0.1 (port printed on stdout as
``relay listening on PORT``) and, for each client connection, opens one uncompressed
WebSocket to the controller and passes text frames both ways untouched: no parsing, no
auth, no audit. ``bench/overhead.py --channel relay`` sends the direct Toggle through it,
so the same run shows what one extra Python process hop costs on this machine (two more
socket reads and writes and two more wake-ups per command) beside what the bridge adds.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import aiohttp
from aiohttp import web


async def main(controller: str, key_file: str) -> None:
    # The controller answers only clients with its key (bridge/matter/controller/guard.py).
    key = Path(key_file).read_text(encoding="ascii").strip()
    session = aiohttp.ClientSession(headers={"X-Atmosphere-Controller-Key": key})

    async def relay(request: web.Request) -> web.WebSocketResponse:
        client = web.WebSocketResponse(max_msg_size=0)
        await client.prepare(request)
        async with session.ws_connect(controller, compress=0, max_msg_size=0) as upstream:

            async def down() -> None:
                async for msg in upstream:
                    if msg.type is not aiohttp.WSMsgType.TEXT:
                        break
                    await client.send_str(msg.data)

            pump = asyncio.create_task(down())
            async for msg in client:
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    break
                await upstream.send_str(msg.data)
            pump.cancel()
        return client

    app = web.Application()
    app.router.add_get("/ws", relay)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"relay listening on {port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
        await session.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
