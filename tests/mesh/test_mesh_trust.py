"""Mesh trust on real loopback nodes and a hostile one: proofs, signed answers, delegations.

Nodes a, b, c are in-process mesh nodes (real keys, aiohttp on 127.0.0.1). The attacker
is a real aiohttp server on 127.0.0.2 with its own key: it answers challenges with its
own key while claiming a trusted node's id, or relays them to the real node (a
transparent proxy), captures what it is sent and answers forwarded calls with forged
results. mDNS is replaced in-process by a stand-in that lists what a spoofed
advertisement would (the real zeroconf spoof is ``test_lan_attacker.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bridge.auth.audit import AuditLog
from bridge.auth.keys import NodeKey
from bridge.auth.tokens import issue_token, parse_token
from bridge.invocation.messages import ToolRequest
from bridge.mesh.announce import canonical_bytes
from bridge.mesh.delegation import Grant, delegate
from bridge.mesh.discovery import DiscoveredPeer
from bridge.mesh.envelope import seal
from bridge.mesh.node_id import NodeIdentity
from bridge.storage import Database
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from tests.support.ports import free_port

from .harness import WHOAMI_PARAMS, LoopNode, build_nodes, token, wait_for, whoami

FORGED = "forged by the LAN attacker"


def definition(
    name: str,
    *,
    namespace: str = "core",
    version: str = "1.0.0",
    idempotent: bool = False,
    **extra: Any,
) -> ToolDefinition:
    return ToolDefinition.from_json(
        {
            "tool": {
                "name": name,
                "namespace": namespace,
                "version": version,
                "description": f"{namespace}:{name} for the trust tests",
                "category": "computing",
                "parameters": WHOAMI_PARAMS,
                "requires": {"permissions": ["mesh:test:*"]},
                "execution": {"timeout_ms": 5000, "idempotent": idempotent},
                **extra,
            }
        }
    )


@dataclass
class Attacker:
    """A hostile node on 127.0.0.2: its own key, a real HTTP server, everything captured."""

    ident: NodeIdentity
    port: int
    relay_to: str = ""  # relay challenges to this real node (a proxy), or answer as itself
    claim: str = ""  # the node id it claims when answering as itself
    captured: list[tuple[str, Any]] = field(default_factory=list)
    runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.2:{self.port}"

    async def hello(self, request: web.Request) -> web.Response:
        doc = await request.json()
        self.captured.append(("hello", doc))
        if self.relay_to:
            async with (
                aiohttp.ClientSession() as http,
                http.post(f"{self.relay_to}/v1/mesh/hello", json=doc) as resp,
            ):
                return web.json_response(await resp.json())
        proof = {
            "type": "mesh_proof",
            "node_id": self.claim,
            "node_name": "a",
            "public_key": self.ident.public_key_b64,
            "challenger": doc["from"],
            "nonce": doc["nonce"],
            "url": doc["url"],
            "timestamp": time.time(),
        }
        proof["signature"] = self.ident.sign(canonical_bytes(proof))
        return web.json_response(proof)

    async def capture(self, request: web.Request) -> web.Response:
        doc = await request.json()
        self.captured.append((request.path, doc))
        if self.relay_to and request.path == "/v1/mesh/invoke":
            # Deliver the call (it runs), then answer with a forged result, signed by
            # the attacker's own key in place of the node's.
            async with (
                aiohttp.ClientSession() as http,
                http.post(f"{self.relay_to}{request.path}", json=doc) as resp,
            ):
                answer = await resp.json()
            answer["body"]["response"]["result"] = {"text": FORGED}
            answer["signature"] = self.ident.sign(
                canonical_bytes({k: v for k, v in answer.items() if k != "signature"})
            )
            return web.json_response(answer)
        return web.json_response({"response": {"status": "success", "result": FORGED}})

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/mesh/hello", self.hello)
        for route in ("invoke", "gossip", "push"):
            app.router.add_post(f"/v1/mesh/{route}", self.capture)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.2", self.port).start()

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def text(self) -> str:
        return json.dumps(self.captured)


class StandInDiscovery:
    """Stand-in for the mDNS browser in-process: the peers a spoofed advertisement lists."""

    def __init__(self, peers: list[DiscoveredPeer]) -> None:
        self._peers = peers

    def peers(self) -> list[DiscoveredPeer]:
        return list(self._peers)

    async def stop(self) -> None:
        return None


def spoof(node: LoopNode, of: LoopNode, attacker: Attacker) -> None:
    """Make ``node`` see ``of``'s id and fingerprint advertised at the attacker's address."""
    advert = DiscoveredPeer(
        instance="a-spoof",
        node_id=of.node_id,
        fingerprint=of.mesh.identity.fingerprint,
        addresses=("127.0.0.2",),
        port=attacker.port,
        protocol=1,
    )
    node.mesh.discovery = StandInDiscovery([advert])  # type: ignore[assignment]


@pytest.fixture
def issuer() -> NodeKey:
    return NodeKey.generate()


@pytest.fixture
async def line(tmp_path: Path, issuer: NodeKey) -> AsyncIterator[tuple[list[LoopNode], Attacker]]:
    """a - b - c in a line: c knows only b's address; a's tool reaches c by gossip via b."""
    nodes = build_nodes(["a", "b", "c"], tmp_path, issuer)
    a, b, c = nodes
    c.mesh.config = c.mesh.gossip_loop.config = replace(c.mesh.config, peers=(b.url,))
    c.mesh.remote.configured = (b.url,)
    a.registry.register(definition("whoami_a"), whoami)
    attacker = Attacker(
        ident=NodeIdentity.from_key(NodeKey.generate(), "mallory"),
        port=free_port(),
        claim=a.node_id,
    )
    await attacker.start()
    for node in nodes:
        node.mesh.use_audit(AuditLog(Database(tmp_path / node.name / "bridge.db")))
        await node.start()
    yield nodes, attacker
    for node in nodes:
        await node.stop()
    await attacker.stop()


TOOL = "core:whoami_a@1.0.0"


async def refusals(node: LoopNode, at_least: int = 1) -> list[Any]:
    """Return ``node``'s ``mesh_refused`` audit entries once there are ``at_least``."""
    audit = node.mesh.audit
    assert audit is not None
    for _ in range(100):
        rows = audit.query_sync(decision="mesh_refused")
        if len(rows) >= at_least:
            return rows
        await asyncio.sleep(0.05)
    raise AssertionError(f"{node.name} audited {len(rows)} refusals, expected {at_least}")


async def test_a_spoofed_address_gets_nothing_but_a_challenge(
    line: tuple[list[LoopNode], Attacker], issuer: NodeKey, tmp_path: Path
) -> None:
    (a, b, c), attacker = line
    await wait_for(lambda: c.registry.get(TOOL) is not None)
    spoof(c, a, attacker)  # "a" is at 127.0.0.2, says the LAN
    response = await c.call(TOOL, token(issuer))
    # The attacker's address could not prove a's key: the call went through b to a.
    assert response.ok, response.error
    assert response.result == {
        "text": "hi",
        "node_id": a.node_id,
        "path": [c.node_id, b.node_id],
        "hop_budget": 1,
    }
    assert response.execution is not None
    assert response.execution.attempts == (a.node_id, b.node_id)
    await c.mesh.gossip_loop.round(a.node_id, (attacker.url,))  # gossip to the spoof: refused too
    assert {kind for kind, _ in attacker.captured} == {"hello"}
    assert token(issuer).split(".")[1] not in attacker.text()
    # c's audit names the refusal: the address proved the attacker's key, not a's.
    rows = await refusals(c)
    assert {r.details["where"] for r in rows} == {attacker.url}
    assert rows[0].error_code == "UNAUTHENTICATED"
    assert "not its key's" in rows[0].details["message"]


async def test_a_proxy_cannot_forge_an_answer_nor_reuse_what_it_saw(
    line: tuple[list[LoopNode], Attacker], issuer: NodeKey
) -> None:
    (a, b, c), attacker = line
    await wait_for(lambda: c.registry.get(TOOL) is not None)
    attacker.relay_to = a.url  # a transparent proxy: the challenge is a's to answer
    spoof(c, a, attacker)
    bearer = token(issuer)
    response = await c.call(TOOL, bearer)
    # The proxy delivered the call and answered with a forged result: never a result.
    assert response.result is None
    assert response.error is not None
    assert response.error["code"] == "NO_CAPABLE_NODE"
    assert response.error["details"]["reason"] == "unsigned_answer"
    assert FORGED not in json.dumps(response.to_json())
    invokes = [doc for kind, doc in attacker.captured if kind == "/v1/mesh/invoke"]
    assert len(invokes) == 1
    captured = invokes[0]
    # No bearer token travelled: only a delegation for this one call.
    assert bearer not in attacker.text()
    assert bearer.split(".")[1] not in attacker.text()  # not even its signature
    delegation = captured["body"]["delegation"]
    assert delegation["tool"] == TOOL
    assert delegation["token_id"] == parse_token(bearer)[0].id
    assert delegation["permissions"] == ["mesh:test:*"]
    assert (delegation["chain"], delegation["to"]) == ([c.node_id], a.node_id)

    async def send(url: str, doc: Any) -> tuple[int, Any]:
        """Return the status and the answer (a signed one's body: the envelope verified)."""
        async with aiohttp.ClientSession() as http, http.post(url, json=doc) as resp:
            answer = await resp.json()
            return resp.status, answer.get("body", answer)

    # Replayed to a (it already ran it): refused.
    status, body = await send(f"{a.url}/v1/mesh/invoke", captured)
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
    assert "replay" in body["error"]["message"]
    # Sent to b: addressed to a, refused.
    status, body = await send(f"{b.url}/v1/mesh/invoke", captured)
    assert (status, body["error"]["message"]) == (401, "envelope is addressed to another node")
    # Re-wrapped by the attacker (its own envelope): its key is not trusted.
    status, body = await send(
        f"{a.url}/v1/mesh/invoke",
        seal(attacker.ident, to=a.node_id, kind="tool_invoke", body=captured["body"]),
    )
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
    # Sent again by c itself (trusted, the right chain) in a fresh envelope: the
    # delegation holds for that one request id, tool and parameters only.
    sent = ToolRequest.from_json(captured["body"]["request"])
    for changed, why in (
        ({"params": {"text": "other"}}, "other parameters"),
        ({"id": "another-request-id"}, "another call"),
        ({"tool": "core:whoami_b@1.0.0"}, "another call"),
        ({}, "replay"),
    ):
        moved = replace(sent, **changed).signed(c.key)
        status, body = await send(
            f"{a.url}/v1/mesh/invoke",
            seal(
                c.mesh.identity,
                to=a.node_id,
                kind="tool_invoke",
                body={"request": moved.to_json(), "delegation": delegation},
            ),
        )
        assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED"), changed
        assert why in body["error"]["message"], body
    # What a and b refused: in their audit logs, one entry per refusal.
    rows = await refusals(a, 6)
    assert sorted(r.details["message"].split(":")[-1].strip() for r in rows) == sorted(
        [
            "envelope was already received (replay)",
            "node key is not on this node's mesh allowlist",
            "the delegation was made for other parameters",
            "the delegation was made for another call",
            "the delegation was made for another call",
            "this request id was already delegated here (replay)",
        ]
    )
    assert {r.error_code for r in rows} == {"UNAUTHENTICATED"}
    assert [r.details["message"] for r in await refusals(b)] == [
        "envelope is addressed to another node"
    ]
    # And c audited the forged answer it refused.
    assert any("answer signature is invalid" in r.details["message"] for r in await refusals(c))


async def test_local_names_are_the_nodes_own(tmp_path: Path, issuer: NodeKey) -> None:
    a, c = build_nodes(["a", "c"], tmp_path, issuer)
    # c's own echo; a announces a higher version of it and the same bare name elsewhere.
    c.registry.register(definition("echo"), whoami)
    a.registry.register(definition("echo", version="9.0.0", dangerous=False), whoami)
    a.registry.register(definition("echo", namespace="evil"), whoami)
    for node in (a, c):
        await node.start()
    try:
        await wait_for(lambda: c.registry.get("evil:echo@1.0.0") is not None)
        assert c.registry.get("core:echo@9.0.0") is None  # never registered at c
        for ref in ("echo", "core:echo", "core:echo@>=1.0.0"):
            response = await c.call(ref, token(issuer))
            assert response.ok, (ref, response.error)
            assert response.result["node_id"] == c.node_id, ref  # type: ignore[index]
        # The peer tool by its exact identity still routes to a.
        response = await c.call("evil:echo@1.0.0", token(issuer))
        assert response.result["node_id"] == a.node_id  # type: ignore[index]
        response = await c.call("core:echo@9.0.0", token(issuer))
        assert response.error is not None
        assert response.error["code"] == "TOOL_NOT_FOUND"
        # A local tool registered after the peer's took the name back at once.
        a.registry.register(definition("late", version="5.0.0"), whoami)
        await wait_for(lambda: c.registry.get("core:late@5.0.0") is not None)
        c.registry.register(definition("late"), whoami)
        assert c.registry.get("core:late@5.0.0") is None
        assert (await c.call("late", token(issuer))).result["node_id"] == c.node_id  # type: ignore[index]
    finally:
        for node in (a, c):
            await node.stop()


async def test_a_peer_tool_is_guarded_on_the_calling_node_as_announced(
    tmp_path: Path, issuer: NodeKey
) -> None:
    a, c = build_nodes(["a", "c"], tmp_path, issuer)
    ran: list[str] = []

    async def unlock(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        ran.append(ctx.node_id)
        return {"unlocked": True}

    a.registry.register(definition("front_door_unlock", dangerous=True), unlock)
    for node in (a, c):
        await node.start()
    try:
        await wait_for(lambda: c.registry.get("core:front_door_unlock@1.0.0") is not None)
        assert c.registry.get("core:front_door_unlock@1.0.0").definition.dangerous  # type: ignore[union-attr]
        response = await c.call("core:front_door_unlock@1.0.0", token(issuer))
        assert response.error is not None
        assert response.error["code"] == "CONFIRMATION_REQUIRED"
        assert ran == []  # c asked for a confirmation it cannot get: nothing was sent
    finally:
        for node in (a, c):
            await node.stop()


async def test_revoked_ids_are_refused_and_dangerous_tools_fail_closed(tmp_path: Path) -> None:
    nodes = build_nodes(["a", "b", "c"], tmp_path, NodeKey.generate())
    a, b, c = nodes
    for node in nodes:  # a's node key issues the tokens: a is the issuer's node
        node.invoker.verifier.trusted_issuers = frozenset({a.key.public_key_b64})
    when = {"type": "object", "properties": {"text": {"const": "confirm me"}}, "required": ["text"]}
    confirm = {"mode": "when", "when": when}
    b.registry.register(definition("valve_open", dangerous=True, confirmation=confirm), whoami)
    b.registry.register(definition("lamp"), whoami)
    for node in nodes:
        await node.start()
    try:
        valve, lamp = "core:valve_open@1.0.0", "core:lamp@1.0.0"
        await wait_for(lambda: None not in (c.registry.get(valve), c.registry.get(lamp)))
        bearer = issue_token(a.key, agent_id="agent", permissions=["mesh:test:*"], ttl_s=300)
        await wait_for(lambda: a.node_id in b.mesh.gossip_loop.heard)
        assert (await c.call(valve, bearer)).result["node_id"] == b.node_id  # type: ignore[index]
        # a revokes the token by id; b hears of it by gossip and refuses a delegation for it
        # (sent here by hand from c, as a c that had not heard would send it).
        caller = parse_token(bearer)[0]
        a.invoker.verifier.revocations.revoke(a.key, caller.id, caller.expires_at)
        await wait_for(lambda: caller.id in b.invoker.verifier.revocations)
        request = ToolRequest.from_json(
            {"tool": lamp, "params": {"text": "hi"}, "routing": {"path": [c.node_id]}}
        ).signed(c.key)
        grant = Grant.of_token(caller, ("mesh:test:*",))
        env = seal(
            c.mesh.identity,
            to=b.node_id,
            kind="tool_invoke",
            body={
                "request": request.to_json(),
                "delegation": delegate(c.mesh.identity, grant, request, to=b.node_id),
            },
        )
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{b.url}/v1/mesh/invoke", json=env) as resp,
        ):
            body = (await resp.json())["body"]
        assert (resp.status, body["error"]["details"]["reason"]) == (401, "revoked")
        # A fresh token; then a (the issuer's node) goes silent: b fails closed for the
        # dangerous tool once it has not heard from a within its window, not for the lamp.
        bearer = issue_token(a.key, agent_id="agent", permissions=["mesh:test:*"], ttl_s=300)
        await a.stop()
        await asyncio.sleep(b.mesh.remote.fresh_s + 0.3)
        response = await c.call(valve, bearer)
        assert response.error is not None
        assert response.error["details"]["refused"] == {b.node_id: "UNAUTHENTICATED"}
        assert (await c.call(lamp, bearer)).result["node_id"] == b.node_id  # type: ignore[index]
    finally:
        for node in (b, c):
            await node.stop()


async def test_announced_endpoints_count_only_where_the_peer_proved_its_key(
    tmp_path: Path, issuer: NodeKey
) -> None:
    a, c = build_nodes(["a", "c"], tmp_path, issuer)
    a.registry.register(definition("whoami_a"), whoami)
    # a announces, besides its own address, c's API and a host it never proved on.
    a.mesh._own_endpoints = lambda: (
        a.url,
        c.url.replace("127.0.0.1", "127.0.0.9"),  # type: ignore[method-assign]
        f"http://127.0.0.2:{c.port}",
    )
    for node in (a, c):
        await node.start()
    try:
        await wait_for(lambda: c.registry.get(TOOL) is not None)
        await wait_for(lambda: bool(c.mesh.proofs.urls_of(a.node_id)))
        entry = c.mesh.gossip.get(a.node_id)
        assert entry is not None
        assert len(entry.announcement.endpoints) == 3
        (offer,) = c.mesh.offers(TOOL)
        # Only a's own address, where it proved its key: the other hosts are not a's.
        assert offer.urls == (a.url,)
        assert c.mesh.gossip_loop.targets() == [(a.node_id, (a.url,))]
    finally:
        for node in (a, c):
            await node.stop()
