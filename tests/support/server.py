"""Fixtures for the bridge's own HTTP server: a started service and its API on loopback.

- ``bridge_config`` — a ``BridgeConfig`` with a fresh temporary state directory,
  Matter off, API on 127.0.0.1 port 0.
- ``bridge_service`` — a started ``BridgeService`` on that config (stopped after).
- ``bridge_server`` — the service plus its real aiohttp API bound to a free loopback
  port: ``.service``, ``.url`` (``http://127.0.0.1:PORT``) and an ``aiohttp``
  ``.client`` session. Register tools on ``.service.registry`` before or after.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import aiohttp
import pytest

from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.service import BridgeService


@dataclass(slots=True)
class BridgeServer:
    """A running bridge reachable over HTTP on loopback."""

    service: BridgeService
    url: str
    client: aiohttp.ClientSession


@pytest.fixture
def bridge_config(tmp_path: Path) -> BridgeConfig:
    """Return a configuration with a private state dir, no Matter, API on a free port."""
    return BridgeConfig(
        state_dir=tmp_path / "state",
        api=ApiConfig(host="127.0.0.1", port=0),
        matter=replace(MatterConfig(), enabled=False),
    )


@pytest.fixture
async def bridge_service(bridge_config: BridgeConfig) -> AsyncIterator[BridgeService]:
    """Yield a started service; stop it afterwards."""
    service = BridgeService(bridge_config, enable_matter=False)
    await service.start()
    try:
        yield service
    finally:
        await service.stop()


@pytest.fixture
async def bridge_server(bridge_service: BridgeService) -> AsyncIterator[BridgeServer]:
    """Yield the service with its HTTP API on 127.0.0.1 and a client session."""
    port = await bridge_service.start_api("127.0.0.1", 0)
    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(timeout=timeout) as client:
        yield BridgeServer(service=bridge_service, url=f"http://127.0.0.1:{port}", client=client)
    await bridge_service.stop_api()
