"""``atmosphere-bridge run``: a real process serving on loopback, stopped by SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

BIN = Path(sys.executable).parent / "atmosphere-bridge"

pytestmark = pytest.mark.processes


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_run_serves_and_stops_gracefully(tmp_path: Path, sig: signal.Signals) -> None:
    state = tmp_path / "state"
    proc = await asyncio.create_subprocess_exec(
        str(BIN),
        "run",
        "--state-dir",
        str(state),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--no-matter",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout=30)).decode()
        match = re.match(r"atmosphere-bridge listening on (http://127\.0\.0\.1:(\d+))", line)
        assert match, line
        async with aiohttp.ClientSession() as client:
            async with client.get(match.group(1) + "/healthz") as resp:
                body = json.loads(await resp.text())
        assert resp.status == 200
        assert body["status"] == "ok"
        assert body["tools"] >= 2
        assert (state / "bridge.db").is_file()
        proc.send_signal(sig)
        code = await asyncio.wait_for(proc.wait(), timeout=20)
        assert code == 0
        stderr = (await proc.stderr.read()).decode() if proc.stderr else ""
        assert "Traceback" not in stderr
        assert "shutting down" in stderr
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_run_reports_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("api: {port: not-a-port}\n")
    proc = await asyncio.create_subprocess_exec(
        str(BIN),
        "--config",
        str(config),
        "run",
        "--state-dir",
        str(tmp_path / "s"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode == 1
    text = err.decode()
    assert text.startswith("error [CONFIG_INVALID]: ")
    assert "api.port" in text
    assert "Traceback" not in text


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
async def test_run_on_either_event_loop(tmp_path: Path, loop: str) -> None:
    pytest.importorskip(loop)
    proc = await asyncio.create_subprocess_exec(
        str(BIN),
        "run",
        "--state-dir",
        str(tmp_path / "s"),
        "--port",
        "0",
        "--no-matter",
        "--loop",
        loop,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout=30)).decode()
        url = line.rsplit(" ", 1)[1].strip()
        async with aiohttp.ClientSession() as client, client.get(url + "/healthz") as resp:
            assert resp.status == 200
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), timeout=20) == 0
        stderr = (await proc.stderr.read()).decode() if proc.stderr else ""
        assert f"event loop: {loop}." in stderr
        assert "Traceback" not in stderr
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_run_refuses_an_unknown_event_loop(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        str(BIN),
        "run",
        "--state-dir",
        str(tmp_path / "s"),
        "--no-matter",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "ATMOSPHERE_EVENT_LOOP": "trio"},
    )
    _, err = await asyncio.wait_for(proc.communicate(), timeout=30)
    assert proc.returncode == 1
    text = err.decode()
    assert text.startswith("error [CONFIG_INVALID]: unknown event loop 'trio'")
    assert "Traceback" not in text
