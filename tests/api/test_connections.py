"""Slow and idle connections cannot starve real ones; the connection cap answers JSON.

A real bridge on loopback with short timeouts: 300 sockets dripping a request head one
byte at a time and 2,000 idle ones are open while ``/healthz`` and a real invoke are
answered no slower than their baseline measured on the same server just before (with
CI headroom; a starved call would wait for the head timeout), and then the server
closes every one of them: each slow one with its own 408 ``REQUEST_TIMEOUT``.
"""

from __future__ import annotations

import asyncio
import json
import resource
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from tests.support.auth import bearer, service_token
from tests.support.real import missing
from tests.support.server import BridgeServer

SLOW = 300
IDLE = 2000
HEADER_TIMEOUT_S = 12.0
IDLE_TIMEOUT_S = 14.0
SAMPLES = 6
SAMPLE_GAP_S = 0.5
# Under load a real call may take STARVE_FACTOR times its baseline plus STARVE_SLACK_S
# (headroom for a loaded 2-core CI machine); starved, it would wait HEADER_TIMEOUT_S.
STARVE_FACTOR = 20.0
STARVE_SLACK_S = 1.5


@pytest.fixture
def bridge_config(tmp_path: Path) -> BridgeConfig:
    """A bridge with short head and idle timeouts."""
    return BridgeConfig(
        state_dir=tmp_path / "state",
        api=ApiConfig(
            host="127.0.0.1",
            port=0,
            header_timeout_s=HEADER_TIMEOUT_S,
            idle_timeout_s=IDLE_TIMEOUT_S,
        ),
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


async def _closed_by_server(reader: asyncio.StreamReader, within_s: float) -> bytes:
    """Return what the server sent before closing; fail if it did not close in time."""
    data = await asyncio.wait_for(reader.read(), within_s)
    assert reader.at_eof()
    return data


async def _timed(server: BridgeServer, token: str) -> tuple[float, float, Any]:
    t0 = time.perf_counter()
    async with server.client.get(server.url + "/healthz") as resp:
        assert resp.status == 200
        assert (await resp.json())["status"] in ("ok", "degraded")
    t1 = time.perf_counter()
    call = {"tool": "core:store_data", "params": {"key": "slowloris", "value": {"n": 1}}}
    async with server.client.post(
        server.url + "/v1/invoke", json=call, headers=bearer(token)
    ) as resp:
        body = await resp.json()
        assert resp.status == 200, body
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, body["result"]


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


async def _samples(server: BridgeServer, token: str) -> tuple[float, float]:
    """Return the median /healthz and invoke latencies of SAMPLES real calls, spread over
    SAMPLES * SAMPLE_GAP_S seconds (under load: while every slow socket is dripping)."""
    health, invoke = [], []
    for _ in range(SAMPLES):
        await asyncio.sleep(SAMPLE_GAP_S)
        health_s, invoke_s, result = await _timed(server, token)
        assert (result["success"], result["key"]) == (True, "slowloris")
        health.append(health_s)
        invoke.append(invoke_s)
    return _median(health), _median(invoke)


@pytest.fixture
def enough_files() -> Iterator[None]:
    """Raise the soft open-file limit to what the test needs (both ends live here)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * (SLOW + IDLE) + 512
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            missing(f"open-file limit: hard {hard} is below the {needed} this test needs")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_slow_and_idle_sockets_do_not_starve_real_ones(
    bridge_server: BridgeServer, enough_files: None
) -> None:
    port = _port(bridge_server)
    token = service_token(bridge_server.service, "real", ("*",))
    # Baseline: the same real calls on the same server before any hostile socket.
    base_health, base_invoke = await _samples(bridge_server, token)
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    for start in range(0, IDLE, 250):
        idle += await asyncio.gather(
            *(
                asyncio.open_connection("127.0.0.1", port)
                for _ in range(start, min(IDLE, start + 250))
            )
        )
    slow = await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port) for _ in range(SLOW)))
    stop = asyncio.Event()
    dripping_since = time.monotonic()
    drips = [asyncio.create_task(_drip(w, stop)) for _, w in slow]
    server = bridge_server.service._runner.server  # type: ignore[union-attr]
    deadline = time.monotonic() + 5
    while len(server.connections) < SLOW + IDLE and time.monotonic() < deadline:
        await asyncio.sleep(0.1)  # the server accepts what the kernel queued
    open_now = len(server.connections)
    assert open_now >= SLOW + IDLE
    health_s, invoke_s = await _samples(bridge_server, token)
    # Stop dripping well before the head timeout, so that when the server closes a slow
    # socket it has read every byte sent: the 408 then arrives instead of a reset.
    stop.set()
    await asyncio.gather(*drips)
    dripped_s = time.monotonic() - dripping_since
    print(
        f"\nbaseline: /healthz {base_health * 1000:.1f} ms, invoke {base_invoke * 1000:.1f} ms;"
        f" with {open_now} connections open ({SLOW} slow, {IDLE} idle): "
        f"/healthz {health_s * 1000:.1f} ms, invoke {invoke_s * 1000:.1f} ms (medians of "
        f"{SAMPLES}); dripped {dripped_s:.1f} s"
    )
    # Not starved: a starved call waits for the slow heads' timeout (HEADER_TIMEOUT_S).
    # Bound: the baseline times STARVE_FACTOR plus STARVE_SLACK_S of CI headroom.
    assert health_s < STARVE_FACTOR * base_health + STARVE_SLACK_S, (health_s, base_health)
    assert invoke_s < STARVE_FACTOR * base_invoke + STARVE_SLACK_S, (invoke_s, base_invoke)
    assert dripped_s < HEADER_TIMEOUT_S - 2, "the machine is too slow for this test's timing"

    slow_answers = await asyncio.gather(
        *(_closed_by_server(r, HEADER_TIMEOUT_S + 10) for r, _ in slow)
    )
    idle_answers = await asyncio.gather(
        *(_closed_by_server(r, IDLE_TIMEOUT_S + 10) for r, _ in idle)
    )
    # Every slow socket reads its own 408 REQUEST_TIMEOUT, then the close.
    for answer in slow_answers:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), answer[:80]
        assert json.loads(body)["error"]["code"] == "REQUEST_TIMEOUT"
    assert set(idle_answers) == {b""}  # idle keep-alive sockets are closed silently
    for _, writer in (*slow, *idle):
        writer.close()
    # The real client's own keep-alive socket may still be open; nothing else is.
    assert len(server.connections) <= 1
    health_s, invoke_s, _ = await _timed(bridge_server, token)
    print(
        f"after they were closed: /healthz {health_s * 1000:.1f} ms, "
        f"invoke {invoke_s * 1000:.1f} ms"
    )


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
