"""A meshed bridge's Matter tools name the node by its mesh id, on every start.

A real ``BridgeService`` with the mesh on (no discovery, no peers: nothing leaves the
process) and the Matter layer on the real python-matter-server in the fabric namespace,
holding a test node imported from a recorded dump. Peers route a Matter tool only to
the nodes in its ``routing.node_affinity``, and their routers compare node ids: the
affinity must be the key-derived mesh id (not the node's name), also after a restart.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.config import ApiConfig, BridgeConfig, MatterConfig, MeshConfig
from bridge.mesh.node_id import node_id_for
from bridge.service import BridgeService
from tests.matter.dumps import DUMP_FILES
from tests.support.fabric import Fabric, ThreadedController, running_controller
from tests.support.matter import import_test_nodes
from tests.support.ports import free_port

pytestmark = pytest.mark.controller


@pytest.fixture(scope="module")
def controller(fabric: Fabric) -> Iterator[ThreadedController]:
    with running_controller(fabric, "mesh-affinity") as ctl:
        yield ctl


async def test_matter_tools_carry_the_mesh_node_id_across_restarts(
    controller: ThreadedController, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    mesh_id = node_id_for(NodeKey.load_or_create(state / KEY_FILE_NAME).public_key_b64)
    config = BridgeConfig(
        state_dir=state,
        api=ApiConfig(host="127.0.0.1", port=free_port()),
        matter=MatterConfig(controller_url=controller.url, controller_key_file=controller.key_file),
        mesh=MeshConfig(enabled=True, node_name="garage", discovery=False),
    )
    service = BridgeService(config)
    dump = next(json.loads(p.read_text()) for p in DUMP_FILES if p.stem == "node-1-onoff")
    imported: set[int] = set()
    for start in ("first", "restart"):
        await service.start()
        try:
            assert service.matter is not None
            if not imported:
                adapter = service.matter.bridge.adapter
                known = {n.node_id for n in adapter.nodes()}
                await import_test_nodes(adapter, [dump])
                async with asyncio.timeout(10):
                    while not imported:
                        imported = {d.node_id for d in service.matter.bridge.devices()} - known
                        await asyncio.sleep(0.05)
            (node,) = imported
            async with asyncio.timeout(10):
                while not [
                    t
                    for t in service.registry.list(namespace="matter")
                    if (t.definition.metadata.get("matter") or {}).get("node_id") == node
                ]:
                    await asyncio.sleep(0.05)
            tools = service.registry.list(namespace="matter")
            assert service.node_id == mesh_id, start
            assert {t.definition.routing.node_affinity for t in tools} == {(mesh_id,)}, start
            assert all(t.definition.routing.hop_limit == 1 for t in tools), start
        finally:
            await service.stop()
