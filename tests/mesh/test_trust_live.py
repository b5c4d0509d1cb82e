"""Trusting and untrusting a peer at run time, through ``/v1/mesh/trust`` on real services.

Two services on loopback (static peers, no mDNS). B trusts A from its configuration; A
starts trusting nobody, so B's tool is not A's. A person with ``mesh:manage`` trusts B
on A over HTTP: B's tool arrives and a call on A runs on B. Untrusting B removes the
tool at once and the call is refused; the choice survives A's restart. The configured
entry cannot be removed from here, garbage is a 400, and a token without
``mesh:manage`` gets 403.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import issue_token
from bridge.invocation.messages import ToolRequest
from bridge.mesh.node_id import fingerprint_for, node_id_for
from bridge.service import BridgeService
from tests.support.mesh_pair import ECHO, register_echo_where, two_node_configs


async def _until(check: Any, timeout_s: float = 6.0) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not reached in time")


def _has(service: BridgeService, identity: str) -> bool:
    return any(entry.identity == identity for entry in service.registry.list())


async def test_trust_a_peer_live_then_untrust_it(tmp_path: Path) -> None:
    issuer = NodeKey.generate()
    admin = issue_token(issuer, agent_id="person", permissions=["*"], ttl_s=300)
    plain = issue_token(issuer, agent_id="agent", permissions=["test:*"], ttl_s=300)
    config_a, config_b = two_node_configs(tmp_path, issuer=issuer, mutual=False)
    a, b = BridgeService(config_a), BridgeService(config_b)
    register_echo_where(b)
    for service in (b, a):
        await service.start()
        await service.start_api()
    base = f"http://127.0.0.1:{config_a.api.port}/v1/mesh/trust"
    as_admin = {"Authorization": f"Bearer {admin}"}
    try:
        assert b.mesh is not None
        b_id = b.mesh.identity.node_id
        await asyncio.sleep(0.6)  # a few gossip rounds: A must still not take B's tool
        assert not _has(a, ECHO)
        async with aiohttp.ClientSession() as http:
            async with http.get(base, headers={"Authorization": f"Bearer {plain}"}) as resp:
                assert resp.status == 403
                assert (await resp.json())["error"]["code"] == "PERMISSION_DENIED"
            for garbage in ("not-a-node", "x" * 300, "%00", quote("../../etc", safe="")):
                async with http.put(f"{base}/{garbage}", headers=as_admin) as resp:
                    body = await resp.json()
                    assert resp.status in (400, 404), (garbage, resp.status, body)
                    assert "error" in body

            async with http.put(f"{base}/{b_id}", headers=as_admin) as resp:
                assert resp.status == 200, await resp.text()
                listing = await resp.json()
            assert {"entry": b_id, "source": "added"} in listing["entries"]
            await _until(lambda: _has(a, ECHO))
            assert a.invocation is not None
            ran = await a.invocation.invoker.invoke(
                ToolRequest(tool=ECHO, params={"text": "hi"}, token=admin)
            )
            assert (ran.error, ran.result) == (None, {"text": "hi", "ran_on": b_id})

            async with http.delete(f"{base}/{b_id}", headers=as_admin) as resp:
                assert resp.status == 200, await resp.text()
            assert not _has(a, ECHO)  # at once, not at the announcement's expiry
            refused = await a.invocation.invoker.invoke(
                ToolRequest(tool=ECHO, params={"text": "hi"}, token=admin)
            )
            assert refused.error is not None
            async with http.delete(f"{base}/{b_id}", headers=as_admin) as resp:
                assert resp.status == 404

            # B trusts A from its configuration: not removable from here.
            b_base = f"http://127.0.0.1:{config_b.api.port}/v1/mesh/trust"
            a_id = node_id_for(NodeKey.load(tmp_path / "a" / "node.key").public_key_b64)
            async with http.delete(f"{b_base}/{a_id}", headers=as_admin) as resp:
                assert resp.status == 409
                assert (await resp.json())["error"]["details"]["source"] == "config"

            # Trusted by fingerprint, the choice is kept across a restart.
            fingerprint = fingerprint_for(b.mesh.identity.public_key_b64)
            async with http.put(f"{base}/{fingerprint}", headers=as_admin) as resp:
                assert resp.status == 200
        await a.stop()
        trusted_file = tmp_path / "a" / "mesh" / "trusted.json"
        assert trusted_file.stat().st_mode & 0o077 == 0
        await a.start()
        await a.start_api()
        await _until(lambda: _has(a, ECHO))
    finally:
        await a.stop()
        await b.stop()
