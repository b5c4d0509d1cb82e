"""Where an HTTP call's time goes, layer by layer, client and server in one process.

One run, sequential keep-alive requests, best of three rounds each:
  bare aiohttp POST echo      an aiohttp app that parses a JSON body and answers JSON
  bridge GET /healthz         the bridge's server and middlewares, no auth, no body
  bridge GET /v1/tools/{key}  + token check and a registry read answered as JSON
  bridge POST /v1/invoke      + body, the whole pipeline and the durable audit commit
  ... audit commit skipped    an EXPERIMENT (not how the bridge runs): the same with the
                              SQLite commit of the audit row replaced by nothing, to
                              show what that commit costs amid a call

Usage: .venv/bin/python bench/layers.py [--calls N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web
from benchlib import self_cpu_seconds
from invoke import SCHEMA, trivial

from bridge import eventloop, storage
from bridge.auth.tokens import issue_token
from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.service import BridgeService
from bridge.tools.definition import Requires, ToolDefinition


async def rate(
    session: aiohttp.ClientSession, method: str, url: str, n: int, **kwargs: Any
) -> tuple[float, float]:
    """Return the best of three rounds of ``n`` sequential requests: (calls/s, CPU µs/call).

    CPU is this process's (server and client together), from the same best round.
    """
    for _ in range(min(200, n)):
        async with session.request(method, url, **kwargs) as resp:
            await resp.read()
    best, best_cpu = 0.0, 0.0
    for _ in range(3):
        started, cpu0 = time.perf_counter(), self_cpu_seconds()
        for _ in range(n):
            async with session.request(method, url, **kwargs) as resp:
                await resp.read()
                if resp.status != 200:
                    raise RuntimeError(f"{method} {url}: {resp.status}")
        speed = n / (time.perf_counter() - started)
        if speed > best:
            best, best_cpu = speed, (self_cpu_seconds() - cpu0) * 1e6 / n
    return best, best_cpu


async def main(n: int) -> None:
    async def echo(request: web.Request) -> web.Response:
        doc = orjson.loads(await request.read())
        return web.Response(
            body=orjson.dumps({"ok": True, "doc": doc}), content_type="application/json"
        )

    bare = web.Application()
    bare.router.add_post("/echo", echo)
    runner = web.AppRunner(bare, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    bare_port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = BridgeConfig(
            state_dir=Path(tmp) / "state",
            api=ApiConfig(host="127.0.0.1", port=0),
            matter=replace(MatterConfig(), enabled=False),
        )
        service = BridgeService(config, enable_matter=False)
        await service.start()
        try:
            service.registry.register(
                ToolDefinition(
                    name="dim",
                    namespace="bench",
                    description="Trivial handler",
                    parameters=SCHEMA,
                    requires=Requires(permissions=("device:control:{device_id}",)),
                ),
                trivial,
            )
            runtime = service.invocation
            assert runtime is not None
            token = issue_token(
                runtime.key,
                agent_id="bench",
                ttl_s=3600,
                permissions=["device:control:*", "tools:read"],
            )
            port = await service.start_api("127.0.0.1", 0)
            base = f"http://127.0.0.1:{port}"
            auth = {"Authorization": f"Bearer {token}"}
            body = {"tool": "dim", "params": {"device_id": "lamp-1"}}
            async with aiohttp.ClientSession() as s:
                rows.append(
                    (
                        "bare aiohttp POST echo",
                        await rate(s, "POST", f"http://127.0.0.1:{bare_port}/echo", n, json=body),
                    )
                )
                rows.append(("bridge GET /healthz", await rate(s, "GET", f"{base}/healthz", n)))
                rows.append(
                    (
                        "bridge GET /v1/tools/{key}",
                        await rate(s, "GET", f"{base}/v1/tools/bench:dim", n, headers=auth),
                    )
                )
                rows.append(
                    (
                        "bridge POST /v1/invoke",
                        await rate(s, "POST", f"{base}/v1/invoke", n, json=body, headers=auth),
                    )
                )
                real = storage.Database.try_transaction_now
                storage.Database.try_transaction_now = (  # type: ignore[method-assign]
                    lambda self, fn: (True, None)
                )
                try:
                    rows.append(
                        (
                            "... audit commit skipped (experiment)",
                            await rate(s, "POST", f"{base}/v1/invoke", n, json=body, headers=auth),
                        )
                    )
                finally:
                    storage.Database.try_transaction_now = real  # type: ignore[method-assign]
        finally:
            await service.stop()
            await runner.cleanup()
    for label, (calls_per_s, cpu_us) in rows:
        print(
            f"{label:<40} {calls_per_s:8.0f} calls/s  {1e6 / calls_per_s:7.1f} us/call  "
            f"CPU {cpu_us:7.1f} us/call (server and client)"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="requests per round")
    parser.add_argument(
        "--loop",
        choices=("auto", "uvloop", "asyncio"),
        default="auto",
        help="event loop for the bridge and client (auto: the bridge's default)",
    )
    args = parser.parse_args()
    print(f"event loop: {eventloop.resolve(args.loop)}", flush=True)
    eventloop.run(main(max(100, min(args.calls, 50_000))), args.loop)
