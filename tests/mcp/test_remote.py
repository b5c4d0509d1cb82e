"""A remote agent: the MCP SDK's client reaches ``/mcp`` from another network namespace.

The bridge's API listens on the host end of a veth pair (``bridge.netns``: the
host has ``10.213.N.1``, the namespace ``10.213.N.2``), as it would on a LAN address; a
Python process inside the namespace — another machine, as far as the network goes —
connects with the SDK's client and a scoped signed token, lists the tools and calls
one, and is refused what the token does not grant.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator

import pytest

from bridge import netns
from bridge.service import BridgeService
from bridge.tools.definition import Category, Execution, Requires, ToolDefinition
from tests.mcp.test_server import DEVICE_PARAMS, Recorder
from tests.support.auth import service_token
from tests.support.real import require

pytestmark = pytest.mark.namespaces

# Runs inside the namespace: list, call an allowed and a refused tool, print the outcome.
AGENT = """
import asyncio, json, sys
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

async def main(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http, Client(
            streamable_http_client(url, http_client=http), cache=None) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        ok = await client.call_tool("test__dim", {"device_id": "lamp-1", "level": 40})
        refused = await client.call_tool("test__dim", {"device_id": "lamp-2", "level": 40})
        print(json.dumps({"tools": names, "ok": ok.structured_content or ok.content[0].text,
                          "ok_error": ok.is_error, "refused": refused.structured_content,
                          "version": client.protocol_version}))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@pytest.fixture
def namespace() -> Iterator[netns.NetworkNamespace]:
    require(netns.unsupported_reason())
    ns = netns.create_namespace(f"atm-remote-{os.getpid()}")
    try:
        yield ns
    finally:
        netns.delete_namespace(ns.name)


async def test_remote_agent_reaches_mcp_with_a_scoped_token(
    bridge_service: BridgeService, namespace: netns.NetworkNamespace
) -> None:
    recorder = Recorder()
    bridge_service.registry.register(
        ToolDefinition(
            name="dim",
            namespace="test",
            description="Dim a lamp.",
            category=Category.ACTING,
            parameters=DEVICE_PARAMS,
            requires=Requires(permissions=("device:control:{device_id}",)),
            execution=Execution(idempotent=True),
        ),
        recorder,
    )
    port = await bridge_service.start_api(namespace.host_address, 0)
    try:
        token = service_token(bridge_service, "remote-agent", ["device:control:lamp-1"])
        url = f"http://{namespace.host_address}:{port}/mcp"
        proc = await asyncio.create_subprocess_exec(
            *namespace.exec_prefix(),
            sys.executable,
            "-c",
            AGENT,
            url,
            token,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()[-2000:]
        doc = json.loads(out.decode().strip().splitlines()[-1])
    finally:
        await bridge_service.stop_api()
    assert doc["tools"] == ["test__dim"]
    assert doc["ok_error"] is False, doc
    assert doc["version"] == "2026-07-28"
    assert recorder.calls == [({"device_id": "lamp-1", "level": 40}, "remote-agent")]
    error = doc["refused"]["error"]
    assert (error["code"], error["details"]["required"]) == (
        "PERMISSION_DENIED",
        "device:control:lamp-2",
    )
