"""Slow and idle connections cannot starve real ones; the connection cap answers JSON.

A real bridge on loopback with short timeouts: 300 sockets dripping a request head one
byte at a time and 2,000 idle ones are open while ``/healthz`` and a real invoke are
answered (latencies printed: timing belongs to benchmarks, not to asserts), and then
the server closes every one of them: the slow ones with 408 ``REQUEST_TIMEOUT``.
"""

from __future__ import annotations

import asyncio
import json
import resource
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from tests.support.auth import bearer, service_token
from tests.support.server import BridgeServer

SLOW = 300
IDLE = 2000
HEADER_TIMEOUT_S = 4.0
IDLE_TIMEOUT_S = 8.0


@pytest.fixture
def bridge_config(tmp_path: Path) -> BridgeConfig:
    """A bridge with short head and idle timeouts."""
    return BridgeConfig(
        state_dir=tmp_path / "state",
        api=ApiConfig(host="127.0.0.1", port=0, header_timeout_s=HEADER_TIMEOUT_S,
                      idle_timeout_s=IDLE_TIMEOUT_S),
        matter=replace(MatterConfig(), enabled=False),
    )


def _port(server: BridgeServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


async def _drip(writer: asyncio.StreamWriter, stop: asyncio.Event) -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"s" * 200
    for byte in head:
        if stop.is_set() or writer.is_closing():
            return
        try:
            writer.write(bytes([byte]))
            await writer.drain()
        except ConnectionError:
            return
        await asyncio.sleep(0.5)


RESET = b"<reset>"


async def _closed_by_server(reader: asyncio.StreamReader, within_s: float) -> bytes:
    """Return what the server sent before closing; fail if it did not close in time."""
    try:
        data = await asyncio.wait_for(reader.read(), within_s)
    except ConnectionResetError:
        # The server closed while our drip was still arriving: the kernel answers unread
        # input with a reset, which can overtake the 408 it wrote. Closed all the same.
        return RESET
    assert reader.at_eof()
    return data


async def _timed(server: BridgeServer, token: str) -> tuple[float, float, Any]:
    t0 = time.perf_counter()
    async with server.client.get(server.url + "/healthz") as resp:
        assert resp.status == 200
        assert (await resp.json())["status"] in ("ok", "degraded")
    t1 = time.perf_counter()
    call = {"tool": "core:store_data", "params": {"key": "slowloris", "value": {"n": 1}}}
    async with server.client.post(server.url + "/v1/invoke", json=call,
                                  headers=bearer(token)) as resp:  # fmt: skip
        body = await resp.json()
        assert resp.status == 200, body
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, body["result"]


async def test_slow_and_idle_sockets_do_not_starve_real_ones(bridge_server: BridgeServer) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * (SLOW + IDLE) + 512  # both ends live in this process
    if soft < needed:
        pytest.skip(f"open-file limit {soft} (hard {hard}) is below the {needed} this test needs")
    port = _port(bridge_server)
    token = service_token(bridge_server.service, "real", ("*",))
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    for start in range(0, IDLE, 250):
        idle += await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port)
                                       for _ in range(start, min(IDLE, start + 250))))  # fmt: skip
    slow = await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port)
                                  for _ in range(SLOW)))  # fmt: skip
    stop = asyncio.Event()
    drips = [asyncio.create_task(_drip(w, stop)) for _, w in slow]
    server = bridge_server.service._runner.server  # type: ignore[union-attr]
    deadline = time.monotonic() + 5
    while len(server.connections) < SLOW + IDLE and time.monotonic() < deadline:
        await asyncio.sleep(0.1)  # the server accepts what the kernel queued
    open_now = len(server.connections)
    health_s, invoke_s, result = await _timed(bridge_server, token)
    print(f"\nwith {open_now} connections open ({SLOW} slow, {IDLE} idle): "
          f"/healthz {health_s * 1000:.1f} ms, invoke {invoke_s * 1000:.1f} ms")
    assert open_now >= SLOW + IDLE
    assert result["success"] is True
    assert result["key"] == "slowloris"

    slow_answers = await asyncio.gather(
        *(_closed_by_server(r, HEADER_TIMEOUT_S + 10) for r, _ in slow)
    )
    idle_answers = await asyncio.gather(
        *(_closed_by_server(r, IDLE_TIMEOUT_S + 10) for r, _ in idle)
    )
    stop.set()
    await asyncio.gather(*drips)
    answered = [a for a in slow_answers if a != RESET]
    print(f"slow sockets: {len(answered)} read the 408, {SLOW - len(answered)} were reset")
    assert answered, "no slow socket read its 408 answer"
    for answer in answered:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), answer[:80]
        assert json.loads(body)["error"]["code"] == "REQUEST_TIMEOUT"
    assert set(idle_answers) == {b""}  # idle keep-alive sockets are closed silently
    for _, writer in (*slow, *idle):
        writer.close()
    # The real client's own keep-alive socket may still be open; nothing else is.
    assert len(server.connections) <= 1
    health_s, invoke_s, _ = await _timed(bridge_server, token)
    print(f"after they were closed: /healthz {health_s * 1000:.1f} ms, "
          f"invoke {invoke_s * 1000:.1f} ms")


async def test_connections_beyond_the_cap_get_503_json(tmp_path: Path) -> None:
    from bridge.service import BridgeService

    config = BridgeConfig(
        state_dir=tmp_path / "state",
        api=ApiConfig(host="127.0.0.1", port=0, max_connections=20),
        matter=replace(MatterConfig(), enabled=False),
    )
    service = BridgeService(config, enable_matter=False)
    await service.start()
    try:
        port = await service.start_api("127.0.0.1", 0)
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(20)]
        await asyncio.sleep(0.2)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        answer = await asyncio.wait_for(reader.read(), 10)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ")
        error = json.loads(body)["error"]
        assert (error["code"], error["retryable"]) == ("OVERLOADED", True)
        assert error["details"] == {"max_connections": 20}
        writer.close()
        for _, w in held[:5]:
            w.close()
        await asyncio.sleep(0.3)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert (await asyncio.wait_for(reader.read(), 10)).startswith(b"HTTP/1.1 200 ")
        for _, w in (*held[5:], (reader, writer)):
            w.close()
    finally:
        await service.stop_api()
        await service.stop()
