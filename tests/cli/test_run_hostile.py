"""Hostile input against a real ``atmosphere-bridge run`` on each event loop.

The API's guards (head timeout, connection cap, body and frame limits, the JSON reader)
hook into the loop's transports and timers; the in-process API tests run on asyncio's
loop, the service runs on uvloop. Here one process per loop takes the worst we send and
answers each with a stable JSON error, then still serves.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token

BIN = Path(sys.executable).parent / "atmosphere-bridge"

pytestmark = pytest.mark.processes
MAX_BODY = 65_536


@dataclass
class Running:
    url: str
    host: str
    port: int
    key: NodeKey
    proc: asyncio.subprocess.Process


@pytest.fixture(params=["uvloop", "asyncio"])
async def bridge(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Running]:
    pytest.importorskip(request.param)
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(tmp_path / "state"),
                "api": {
                    "host": "127.0.0.1",
                    "port": 0,
                    "max_body_bytes": MAX_BODY,
                    "header_timeout_s": 1.0,
                    "max_connections": 16,
                },
                "auth": {"expiry_skew_s": 0},
            }
        )
    )
    proc = await asyncio.create_subprocess_exec(
        str(BIN),
        "--config",
        str(config),
        "run",
        "--no-matter",
        "--loop",
        request.param,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        url = line.rsplit(" ", 1)[1]
        host, port = url.removeprefix("http://").rsplit(":", 1)
        key = NodeKey.load_or_create(tmp_path / "state" / KEY_FILE_NAME)
        yield Running(url, host, int(port), key, proc)
        assert proc.returncode is None, "the bridge died under hostile input"
    finally:
        if proc.returncode is None:
            proc.terminate()
            await asyncio.wait_for(proc.wait(), 20)
        stderr = (await proc.stderr.read()).decode() if proc.stderr else ""
        assert "Traceback" not in stderr


async def _raw(b: Running, data: bytes, *, wait_s: float = 5.0) -> bytes:
    reader, writer = await asyncio.open_connection(b.host, b.port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65_536), wait_s)
    finally:
        writer.close()


def _status_and_error(answer: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)["error"]


async def test_hostile_requests_get_json_errors_and_the_bridge_keeps_serving(
    bridge: Running,
) -> None:
    token = issue_token(bridge.key, agent_id="t", permissions=["*"], ttl_s=600)
    auth = {"Authorization": f"Bearer {token}"}
    invoke = f"{bridge.url}/v1/invoke"
    async with aiohttp.ClientSession() as http:
        cases: list[tuple[str, bytes | str, int, str]] = [
            ("nan", '{"tool": "core:get_data", "params": {"key": NaN}}', 400, ""),
            ("deep", '{"tool": "x", "params": ' + "[" * 5000 + "]" * 5000 + "}", 400, ""),
            ("surrogate", b'{"tool": "core:get_data", "params": {"key": "\\ud800"}}', 400, ""),
            ("huge int", '{"tool": "x", "params": {"n": ' + "9" * 5000 + "}}", 400, ""),
            (
                "too big",
                b'{"tool": "x", "params": {"s": "' + b"a" * (MAX_BODY * 2) + b'"}}',
                413,
                "PAYLOAD_TOO_LARGE",
            ),
            ("not utf-8", b'{"tool": "\xff\xfe"}', 400, ""),
        ]
        for name, body, status, code in cases:
            data = body.encode() if isinstance(body, str) else body
            async with http.post(
                invoke, data=data, headers={**auth, "Content-Type": "application/json"}
            ) as resp:
                doc = await resp.json()
            assert resp.status == status, (name, doc)
            assert set(doc["error"]) >= {"code", "message"}, name
            if code:
                assert doc["error"]["code"] == code, name
        # An expired token: 401 with the reason, not a 5xx.
        expired = issue_token(bridge.key, agent_id="t", permissions=["*"], ttl_s=1)
        await asyncio.sleep(1.5)
        async with http.get(
            f"{bridge.url}/v1/tools", headers={"Authorization": f"Bearer {expired}"}
        ) as resp:
            doc = await resp.json()
        assert resp.status == 401
        assert doc["error"]["code"] == "UNAUTHENTICATED"
        # A call-channel frame over the limit closes that socket, nothing else.
        async with http.ws_connect(
            f"{bridge.url.replace('http', 'ws', 1)}/v1/calls/ws", headers=auth
        ) as ws:
            await ws.send_str(
                json.dumps(
                    {
                        "type": "tool_invoke",
                        "id": "1",
                        "tool": "x",
                        "params": {"s": "a" * (MAX_BODY * 2)},
                    }
                )
            )
            msg = await ws.receive(timeout=10)
            assert msg.type in (
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
                aiohttp.WSMsgType.CLOSING,
            )
        async with http.get(f"{bridge.url}/healthz") as resp:
            assert resp.status == 200


async def test_a_slow_head_is_answered_408_and_closed(bridge: Running) -> None:
    started = time.monotonic()
    answer = await _raw(bridge, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", wait_s=10)
    assert time.monotonic() - started < 8
    status, error = _status_and_error(answer)
    assert status == 408
    assert error["code"] == "REQUEST_TIMEOUT"


async def test_connections_over_the_cap_get_503_and_the_rest_are_served(
    bridge: Running,
) -> None:
    held = [await asyncio.open_connection(bridge.host, bridge.port) for _ in range(16)]
    try:
        answer = await _raw(bridge, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        status, error = _status_and_error(answer)
        assert status == 503
        assert error["code"] == "OVERLOADED"
    finally:
        for _, writer in held:
            writer.close()
    await asyncio.sleep(0.3)
    async with aiohttp.ClientSession() as http, http.get(f"{bridge.url}/healthz") as resp:
        assert resp.status == 200
