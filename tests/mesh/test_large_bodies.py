"""A routed call carries a parameter far larger than one socket buffer, whole."""

from __future__ import annotations

from pathlib import Path

from bridge.auth.keys import NodeKey
from bridge.invocation.messages import ToolRequest

from .harness import build_nodes, token, wait_for, whoami, whoami_definition

TOOL = "core:whoami_a@1.0.0"


async def test_routed_call_with_a_150_kb_parameter(tmp_path: Path) -> None:
    issuer = NodeKey.generate()
    a, b = build_nodes(["a", "b"], tmp_path, issuer)
    a.registry.register(whoami_definition("whoami_a"), whoami)
    for node in (a, b):
        await node.start()
    try:
        await wait_for(lambda: b.registry.get(TOOL) is not None)
        text = "".join(chr(0x41 + i % 26) for i in range(150_000)) + "\u00e9\u4e2d"
        response = await b.invoker.invoke(
            ToolRequest.from_json(
                {"tool": TOOL, "params": {"text": text}, "auth": {"token": token(issuer)}}
            )
        )
        assert response.ok, response.error
        assert response.result["text"] == text
        assert response.result["node_id"] == a.node_id
    finally:
        for node in (a, b):
            await node.stop()


async def test_hostile_envelopes_get_400_json(tmp_path: Path) -> None:
    import aiohttp

    (a,) = build_nodes(["a"], tmp_path, NodeKey.generate())
    await a.start()
    envelope = (
        '{"type":"mesh_envelope","kind":"push","from":"x","to":"","nonce":"n",'
        '"timestamp":%s,"node_name":"n","public_key":"AAAA","body":{},"signature":"A"}'
    )
    cases = {
        envelope % "NaN": "not_finite",
        envelope % "1e999": "not_finite",
        envelope.replace('"nonce":"n"', '"nonce":"\\udead"') % "1": "lone_surrogate",
        "[" * 100_000 + "]" * 100_000: "too_deep",
    }
    try:
        async with aiohttp.ClientSession() as session:
            for route in ("push", "gossip", "invoke"):
                for body, reason in cases.items():
                    async with session.post(
                        f"{a.url}/v1/mesh/{route}",
                        data=body,
                        headers={"Content-Type": "application/json"},
                    ) as resp:
                        answer = await resp.json()
                    assert (resp.status, answer["error"]["code"]) == (400, "INVALID_REQUEST")
                    assert answer["error"]["details"]["reason"] == reason
    finally:
        await a.stop()
