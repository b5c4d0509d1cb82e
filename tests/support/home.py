"""A real bridge service on a real controller holding recorded devices as test nodes.

``start_home(controller_url, state_dir, dumps)`` starts a ``BridgeService`` (SQLite state,
HTTP API on 127.0.0.1) against the real python-matter-server, imports each dump (by
file stem) as a test node and waits for its device; ``Home`` issues signed tokens and
talks to the API over HTTP. ``controller, home = home_fixtures(name, dumps)`` gives a
test module its own controller and a fresh home per test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.config import ApiConfig, BridgeConfig, MatterConfig, VoiceConfig
from bridge.service import BridgeService
from tests.matter.dumps import DUMP_FILES
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.matter import import_test_nodes

# python-matter-server numbers the nodes it imports from dumps from here on.
TEST_NODE_START = 900_000


class Home:
    """A started service, its API URL, its node key and the device id of each dump."""

    def __init__(self, service: BridgeService, url: str, key: NodeKey, ids: dict[str, str]):
        self.service = service
        self.url = url
        self.key = key
        self.ids = ids  # dump stem -> device id

    def token(self, *permissions: str, agent_id: str = "home-tests") -> str:
        return issue_token(self.key, agent_id=agent_id, permissions=list(permissions), ttl_s=600)

    async def request(
        self, method: str, path: str, token: str, body: Any = None
    ) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            aiohttp.ClientSession() as session,
            session.request(method, f"{self.url}{path}", json=body, headers=headers) as resp,
        ):
            return resp.status, await resp.json()

    async def invoke(self, tool: str, params: dict[str, Any], token: str) -> tuple[int, Any]:
        return await self.request("POST", "/v1/invoke", token, {"tool": tool, "params": params})

    async def patch_device(self, stem: str, body: dict[str, Any]) -> dict[str, Any]:
        status, answer = await self.request(
            "PATCH", f"/v1/devices/{self.ids[stem]}", self.token("device:manage:*"), body
        )
        assert status == 200, answer
        return dict(answer)


@contextlib.asynccontextmanager
async def start_home(
    controller_url: str,
    state_dir: Path,
    dumps: Sequence[str],
    key_file: str | None = None,
    voice: VoiceConfig | None = None,
) -> AsyncIterator[Home]:
    config = BridgeConfig(
        state_dir=state_dir,
        api=ApiConfig(host="127.0.0.1", port=0),
        matter=MatterConfig(controller_url=controller_url, controller_key_file=key_file),
        voice=voice or VoiceConfig(),
    )
    service = BridgeService(config)
    await service.start()
    try:
        port = await service.start_api("127.0.0.1", 0)
        assert service.matter is not None
        bridge = service.matter.bridge
        if dumps:
            # A home of recorded devices is only its own: the test nodes an earlier home
            # imported into this controller go (commissioned devices stay).
            await _remove_test_nodes(service)
        known = {n.node_id for n in bridge.adapter.nodes()}
        docs = {p.stem: json.loads(p.read_text()) for p in DUMP_FILES}
        ids: dict[str, str] = {}
        for stem in dumps:
            await import_test_nodes(bridge.adapter, [docs[stem]])
            async with asyncio.timeout(10):
                while not {d.node_id for d in bridge.devices()} - known:
                    await asyncio.sleep(0.05)
            (node_id,) = {d.node_id for d in bridge.devices()} - known
            known.add(node_id)
            ids[stem] = next(d.id for d in bridge.devices() if d.node_id == node_id)
        key = NodeKey.load_or_create(config.state_dir / KEY_FILE_NAME)
        yield Home(service, f"http://127.0.0.1:{port}", key, ids)
    finally:
        await service.stop()


async def _remove_test_nodes(service: BridgeService) -> None:
    """Remove the controller's imported test nodes and wait until the bridge has none."""
    assert service.matter is not None
    bridge = service.matter.bridge
    old = [n.node_id for n in bridge.adapter.nodes() if n.node_id >= TEST_NODE_START]
    for node_id in old:
        await bridge.adapter.send_command("remove_node", timeout_s=30, node_id=node_id)
    async with asyncio.timeout(10):
        while {d.node_id for d in bridge.devices()} & set(old):
            await asyncio.sleep(0.05)


def home_fixtures(name: str, dumps: Sequence[str]) -> tuple[Any, Any]:
    """Return a module's ``controller`` (its own, named ``name``) and ``home`` fixtures."""

    @pytest.fixture(scope="module")
    def controller(fabric: Fabric) -> Iterator[ThreadedController]:
        with running_controller(fabric, name) as ctl:
            yield ctl

    @pytest.fixture
    async def home(controller: ThreadedController, tmp_path: Path) -> AsyncIterator[Home]:
        async with start_home(
            controller.url, tmp_path / "state", dumps, controller.key_file
        ) as running:
            yield running

    return controller, home
