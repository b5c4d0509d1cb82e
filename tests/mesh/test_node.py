"""Three in-process mesh nodes over real HTTP on loopback: gossip, routing, failover, refusals."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import parse_token
from bridge.invocation.messages import RequestRouting, ToolRequest
from bridge.mesh.announce import Announcement
from bridge.mesh.delegation import Grant, delegate
from bridge.mesh.envelope import seal
from bridge.mesh.gossip import Outcome
from bridge.tools.definition import ToolDefinition

from .harness import LoopNode, build_nodes, token, wait_for, whoami, whoami_definition

TOOL = "core:whoami_a@1.0.0"
CALL_TIMEOUT_MS = 30_000


@pytest.fixture
def issuer() -> NodeKey:
    return NodeKey.generate()


@pytest.fixture
async def trio(tmp_path: Path, issuer: NodeKey) -> AsyncIterator[list[LoopNode]]:
    nodes = build_nodes(["a", "b", "c"], tmp_path, issuer)
    nodes[0].registry.register(whoami_definition("whoami_a"), whoami)
    for node in nodes:
        await node.start()
    yield nodes
    for node in nodes:
        await node.stop()


async def test_tools_converge_with_origin_as_server_name(trio: list[LoopNode]) -> None:
    a, b, c = trio
    await wait_for(lambda: all(n.registry.get(TOOL) is not None for n in trio))
    for node in (b, c):
        entry = node.registry.get(TOOL)
        assert entry is not None
        assert entry.definition.server_name == a.node_id
        assert entry.handler is None
        assert entry.definition.parameters == whoami_definition("whoami_a").parameters
    assert a.registry.get(TOOL).definition.server_name == ""  # type: ignore[union-attr]
    tools = c.mesh.tools_json()
    assert [t["identity"] for t in tools] == [TOOL]
    assert [n["node_id"] for n in tools[0]["nodes"]] == [a.node_id]


async def test_call_at_c_runs_on_a(trio: list[LoopNode], issuer: NodeKey) -> None:
    a, _b, c = trio
    await wait_for(lambda: c.registry.get(TOOL) is not None)
    response = await c.call(TOOL, token(issuer))
    assert response.ok, response.error
    assert response.result == {
        "text": "hi",
        "node_id": a.node_id,
        "path": [c.node_id],
        "hop_budget": 2,
    }
    execution = response.execution
    assert execution is not None
    assert execution.node_id == a.node_id
    assert execution.hops == 1
    assert execution.path == (c.node_id, a.node_id)
    assert execution.attempts == (a.node_id,)
    assert execution.duration_ms > 0
    assert response.node_id == c.node_id


# Gossip rounds and re-announcements 600 s apart: within QUIET_S only a push can carry news.
QUIET_INTERVAL_S = 600.0
QUIET_S = 20.0


async def test_new_local_tool_is_pushed_quickly(tmp_path: Path, issuer: NodeKey) -> None:
    nodes = build_nodes(
        ["a", "b", "c"],
        tmp_path,
        issuer,
        gossip_interval_s=QUIET_INTERVAL_S,
        announce_interval_s=QUIET_INTERVAL_S,
        announcement_ttl_s=3 * QUIET_INTERVAL_S,
    )
    _a, b, c = nodes
    for node in nodes:
        await node.start()
    try:
        b.registry.register(whoami_definition("whoami_b"), whoami)
        await wait_for(lambda: c.registry.get("core:whoami_b@1.0.0") is not None, QUIET_S)
        assert c.registry.get("core:whoami_b@1.0.0").definition.server_name == b.node_id  # type: ignore[union-attr]
        b.registry.unregister("core:whoami_b@1.0.0")
        await wait_for(lambda: c.registry.get("core:whoami_b@1.0.0") is None, QUIET_S)
    finally:
        for node in nodes:
            await node.stop()


async def test_killed_node_fails_fast_then_leaves(trio: list[LoopNode], issuer: NodeKey) -> None:
    a, b, c = trio
    await wait_for(lambda: c.registry.get(TOOL) is not None and b.registry.get(TOOL) is not None)
    await a.stop()
    started = time.monotonic()
    response = await c.call(TOOL, token(issuer), timeout_ms=CALL_TIMEOUT_MS)
    elapsed = time.monotonic() - started
    assert not response.ok
    assert response.error is not None
    assert response.error["code"] == "NO_CAPABLE_NODE"
    # a directly, then b as a relay (b cannot reach a either).
    assert response.error["details"]["tried"] == [a.node_id, b.node_id]
    # Fast: the dead node's refused connection is not waited out (the call may take
    # CALL_TIMEOUT_MS); a third of it is CI headroom, not a benchmark.
    assert elapsed < CALL_TIMEOUT_MS / 1000 / 3
    # a's announcement expires (ttl 1.5 s) and its tool leaves every registry.
    await wait_for(lambda: c.registry.get(TOOL) is None and b.registry.get(TOOL) is None, 4.0)
    response = await c.call(TOOL, token(issuer))
    assert response.error is not None
    assert response.error["code"] == "TOOL_NOT_FOUND"


async def test_relay_when_the_origin_is_unreachable_from_here(
    trio: list[LoopNode], issuer: NodeKey
) -> None:
    a, b, c = trio
    await wait_for(lambda: c.registry.get(TOOL) is not None and b.registry.get(TOOL) is not None)
    c.mesh.router.mark_down(a.node_id)  # as after a failed connection from c to a
    response = await c.call(TOOL, token(issuer))
    assert response.ok, response.error
    assert response.result == {
        "text": "hi",
        "node_id": a.node_id,
        "path": [c.node_id, b.node_id],
        "hop_budget": 1,
    }
    execution = response.execution
    assert execution is not None
    assert execution.node_id == a.node_id
    assert execution.hops == 2
    assert execution.path == (c.node_id, b.node_id, a.node_id)
    assert execution.attempts == (b.node_id,)
    # One hop of budget is not enough to go through the relay: c falls back to a directly.
    c.mesh.router.mark_down(a.node_id)
    response = await c.call(TOOL, token(issuer), hop_budget=1)
    assert response.ok, response.error
    assert response.result["path"] == [c.node_id]  # type: ignore[index]
    assert response.execution is not None
    assert response.execution.attempts == (b.node_id, a.node_id)


async def test_failover_to_the_next_node(tmp_path: Path, issuer: NodeKey) -> None:
    nodes = build_nodes(["a", "b", "c"], tmp_path, issuer)
    a, b, c = nodes
    # The same tool on a and b; c prefers a, a dies, c fails over to b.
    a.registry.register(whoami_definition("shared"), whoami)
    b.registry.register(whoami_definition("shared"), whoami)
    for node in nodes:
        await node.start()
    try:
        ident = "core:shared@1.0.0"
        await wait_for(lambda: len(c.mesh.offers(ident)) == 2)
        response = await c.call(ident, token(issuer), prefer_nodes=[a.node_id])
        assert response.result["node_id"] == a.node_id  # type: ignore[index]
        await a.stop()
        response = await c.call(ident, token(issuer), prefer_nodes=[a.node_id])
        assert response.ok, response.error
        assert response.result["node_id"] == b.node_id  # type: ignore[index]
        assert response.execution is not None
        assert response.execution.attempts == (a.node_id, b.node_id)
        assert response.execution.node_id == b.node_id
        response = await c.call(ident, token(issuer), exclude_nodes=[b.node_id])
        assert response.error is not None
        assert response.error["code"] == "NO_CAPABLE_NODE"
    finally:
        for node in (b, c):
            await node.stop()


def pinned_definition(name: str, affinity: list[str]) -> ToolDefinition:
    """Return a whoami tool pinned to ``affinity`` that may travel one hop (like Matter tools)."""
    doc = whoami_definition(name).to_json()
    doc["tool"]["routing"] = {"node_affinity": affinity, "hop_limit": 1}
    return ToolDefinition.from_json(doc)


async def test_filters_ruling_out_every_offering_node_answer_no_capable_node(
    tmp_path: Path, issuer: NodeKey, caplog: pytest.LogCaptureFixture
) -> None:
    nodes = build_nodes(["a", "b", "c"], tmp_path, issuer)
    a, b, c = nodes
    # Pinned to b, which does not offer it; by a's name instead of its id; to a itself.
    a.registry.register(pinned_definition("to_b", [b.node_id]), whoami)
    a.registry.register(pinned_definition("by_name", ["a"]), whoami)
    a.registry.register(pinned_definition("to_a", [a.node_id]), whoami)
    for node in nodes:
        await node.start()
    try:
        names = ("to_b", "by_name", "to_a")
        await wait_for(
            lambda: (
                all(c.registry.get(f"core:{n}@1.0.0") is not None for n in names)
                and len(c.mesh.gossip.entries()) == 3
            )
        )
        to_b = "core:to_b@1.0.0"
        # b is a relay c could try, but it could only forward to a, which the affinity
        # rules out (before: b refused for lack of hops, 508 HOP_LIMIT_EXCEEDED).
        assert [o.node_id for o in c.mesh.offers(to_b)] == [a.node_id, b.node_id]
        response = await c.call(to_b, token(issuer))
        assert response.error == {
            "code": "NO_CAPABLE_NODE",
            "message": f"no mesh node may run '{to_b}': the tool's routing.node_affinity "
            f"['{b.node_id}'] rules out {a.node_id}",
            "details": {
                "tool": to_b,
                "offered_by": [a.node_id],
                "excluded": {a.node_id: "node_affinity"},
                "node_affinity": [b.node_id],
                "exclude_nodes": [],
                "tried": [],
            },
            "retryable": True,
        }
        by_name = "core:by_name@1.0.0"
        response = await c.call(by_name, token(issuer))
        assert response.error is not None
        assert response.error["code"] == "NO_CAPABLE_NODE"
        assert response.error["message"] == (
            f"no mesh node may run '{by_name}': the tool's routing.node_affinity ['a'] rules "
            f"out {a.node_id} (node_affinity holds mesh node ids, not node names: "
            f"'a' is {a.node_id})"
        )
        assert response.error["details"]["affinity_names"] == {"a": [a.node_id]}
        # The origin says so too, once per tool, in its log.
        warnings = [r.getMessage() for r in caplog.records if "node_affinity lists" in r.message]
        assert warnings == [
            f"tool {by_name}: routing.node_affinity lists ['a'], which is not a mesh node id "
            "(node_affinity holds key-derived node ids, not names): peers will refuse to "
            f"route calls to it; this node ('a') is {a.node_id}"
        ]
        # exclude_nodes ruling out the only offering node: the same answer, no relay tried.
        to_a = "core:to_a@1.0.0"
        response = await c.call(to_a, token(issuer), exclude_nodes=[a.node_id])
        assert response.error is not None
        assert response.error["code"] == "NO_CAPABLE_NODE"
        assert response.error["message"] == (
            f"no mesh node may run '{to_a}': exclude_nodes ['{a.node_id}'] rules out {a.node_id}"
        )
        assert response.error["details"] == {
            "tool": to_a,
            "offered_by": [a.node_id],
            "excluded": {a.node_id: "exclude_nodes"},
            "node_affinity": [a.node_id],
            "exclude_nodes": [a.node_id],
            "tried": [],
        }
        # The affinity naming a by its id routes as before.
        response = await c.call(to_a, token(issuer))
        assert response.ok, response.error
        assert response.result["node_id"] == a.node_id  # type: ignore[index]
    finally:
        for node in nodes:
            await node.stop()


async def test_token_constraints_are_respected(trio: list[LoopNode], issuer: NodeKey) -> None:
    a, _b, c = trio
    await wait_for(lambda: c.registry.get(TOOL) is not None)
    response = await c.call(TOOL, token(issuer), hop_budget=0)
    assert response.error is not None
    assert response.error["code"] == "HOP_LIMIT_EXCEEDED"
    assert response.error["message"] == "no hop left to forward the request"
    response = await c.call(TOOL, token(issuer, max_hops=0))
    assert response.error is not None
    assert response.error["code"] == "HOP_LIMIT_EXCEEDED"
    response = await c.call(TOOL, token(issuer, allowed_nodes=(c.node_id,)))
    assert response.error is not None
    assert response.error["code"] == "NO_CAPABLE_NODE"
    response = await c.call(TOOL, token(issuer, allowed_nodes=(c.node_id, a.node_id), max_hops=1))
    assert response.ok, response.error


async def post(url: str, doc: object) -> tuple[int, dict]:  # type: ignore[type-arg]
    """POST to a mesh route; return the status and the answer (a signed one's body)."""
    async with aiohttp.ClientSession() as session, session.post(url, json=doc) as resp:
        answer = await resp.json()
        if answer.get("type") != "mesh_answer":  # the envelope did not verify
            assert set(answer) == {"error"}, answer
            return resp.status, answer
        assert answer["status"] == resp.status
        return resp.status, answer["body"]


def delegated(sender: LoopNode, request: ToolRequest, to: LoopNode, issuer: NodeKey) -> dict:  # type: ignore[type-arg]
    """Return the envelope ``sender`` forwards ``request`` in, with its delegation to ``to``."""
    caller, _ = parse_token(token(issuer))
    grant = Grant.of_token(caller, ("mesh:test:*",))
    body = {
        "request": request.to_json(),
        "delegation": delegate(sender.mesh.identity, grant, request, to=to.node_id),
    }
    return seal(sender.mesh.identity, to=to.node_id, kind="tool_invoke", body=body)


async def test_routing_loop_is_refused(trio: list[LoopNode], issuer: NodeKey) -> None:
    _a, b, c = trio
    await wait_for(lambda: b.registry.get(TOOL) is not None)
    # c forwards to b a request whose path already holds b: a loop.
    looped = ToolRequest(
        tool=TOOL,
        params={"text": "hi"},
        routing=RequestRouting(hop_budget=2, path=(b.node_id, c.node_id)),
    ).signed(c.key)
    env = delegated(c, looped, b, issuer)
    status, body = await post(f"{b.url}/v1/mesh/invoke", env)
    assert status == 508
    assert body["error"]["code"] == "HOP_LIMIT_EXCEEDED"
    assert "loop" in body["error"]["message"]
    # A request with no hop budget left cannot be forwarded by b either.
    spent = ToolRequest(
        tool=TOOL,
        params={"text": "hi"},
        routing=RequestRouting(hop_budget=0, path=(c.node_id,)),
    ).signed(c.key)
    env = delegated(c, spent, b, issuer)
    status, body = await post(f"{b.url}/v1/mesh/invoke", env)
    assert status == 200
    assert body["response"]["error"]["code"] == "HOP_LIMIT_EXCEEDED"


async def test_forwarded_request_must_be_signed_by_forwarder(
    trio: list[LoopNode], issuer: NodeKey
) -> None:
    a, b, c = trio
    request = ToolRequest(
        tool=TOOL,
        params={"text": "hi"},
        token=token(issuer),
        routing=RequestRouting(hop_budget=2, path=(c.node_id,)),
    ).signed(b.key)  # signed by b, sent by c
    env = seal(
        c.mesh.identity, to=a.node_id, kind="tool_invoke", body={"request": request.to_json()}
    )
    status, body = await post(f"{a.url}/v1/mesh/invoke", env)
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")


async def test_forged_replayed_untrusted_announcements_rejected(
    trio: list[LoopNode], tmp_path: Path
) -> None:
    a, b, c = trio
    await wait_for(lambda: b.mesh.gossip.get(a.node_id) is not None)
    entry = b.mesh.gossip.get(a.node_id)
    assert entry is not None
    current = entry.document
    # Tampered: a's announcement with a changed description, signature kept.
    tampered = dict(current, version=current["version"] + 10**9, node_name="evil")
    status, body = await post(
        f"{b.url}/v1/mesh/push",
        seal(c.mesh.identity, to=b.node_id, kind="gossip_push", body={"announcements": [tampered]}),
    )
    assert (status, body) == (200, {"outcomes": {"forged": 1}})
    # Replayed: an older, validly signed announcement of a.
    old = Announcement.from_json(current)
    await wait_for(lambda: b.mesh.gossip.get(a.node_id).announcement.version > old.version)  # type: ignore[union-attr]
    status, body = await post(
        f"{b.url}/v1/mesh/push",
        seal(c.mesh.identity, to=b.node_id, kind="gossip_push", body={"announcements": [current]}),
    )
    assert body == {"outcomes": {"stale": 1}}
    # Untrusted: a stranger's correctly signed announcement, relayed by trusted c.
    stranger = build_nodes(["mallory"], tmp_path / "m", NodeKey.generate())[0]
    stranger.registry.register(whoami_definition("whoami_a", idempotent=False), whoami)
    evil = stranger.mesh.build_announcement().to_json()
    status, body = await post(
        f"{b.url}/v1/mesh/push",
        seal(c.mesh.identity, to=b.node_id, kind="gossip_push", body={"announcements": [evil]}),
    )
    assert body == {"outcomes": {"untrusted": 1}}
    # ...and the stranger cannot even talk to b itself.
    status, body = await post(
        f"{b.url}/v1/mesh/push",
        seal(
            stranger.mesh.identity, to=b.node_id, kind="gossip_push", body={"announcements": [evil]}
        ),
    )
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")
    assert b.registry.get(TOOL).definition.server_name == a.node_id  # type: ignore[union-attr]
    assert b.mesh.rejections == {"forged": 1, "stale": 1, "untrusted": 1}


async def test_peers_and_tools_endpoints(trio: list[LoopNode]) -> None:
    a, b, c = trio
    await wait_for(lambda: len(c.mesh.gossip.entries()) == 3)
    async with aiohttp.ClientSession() as session:
        for view in ("peers", "tools"):  # no token, no view (the service adds the bearer check)
            async with session.get(f"{c.url}/v1/mesh/{view}") as resp:
                assert (resp.status, (await resp.json())["error"]["code"]) == (
                    401,
                    "UNAUTHENTICATED",
                )
    body = {"self": c.mesh.self_json(), "peers": c.mesh.peers_json()}
    tools = {"tools": c.mesh.tools_json(None, ("mesh:test:*",))}
    assert c.mesh.tools_json(None, ("other:*",)) == []  # only what the token may see
    assert body["self"]["node_id"] == c.node_id
    assert body["self"]["trust"] == "allowlist"
    assert [(p["name"], p["node_id"], p["trusted"]) for p in body["peers"]] == [
        ("a", a.node_id, True),
        ("b", b.node_id, True),
    ]
    assert body["peers"][0]["announcement"]["tools"] == 1
    assert [(t["identity"], t["capability"]) for t in tools["tools"]] == [(TOOL, "core")]
    assert [t["identity"] for t in c.mesh.tools_json("core")] == [TOOL]
    assert c.mesh.tools_json("matter") == []


async def test_tofu_mode_accepts_newcomers_and_pins_names(tmp_path: Path, issuer: NodeKey) -> None:
    nodes = build_nodes(["a", "b"], tmp_path, issuer, trusted=lambda _n, _all: (), trust="tofu")
    a, b = nodes
    a.registry.register(whoami_definition("whoami_a"), whoami)
    for node in nodes:
        await node.start()
    try:
        await wait_for(lambda: b.registry.get(TOOL) is not None)
        pins = json.loads((tmp_path / "b" / "mesh" / "pins.json").read_text())
        assert pins == {"a": a.key.public_key_b64}
        # Another key calling itself "a" is refused by b, even with a valid signature.
        impostor = build_nodes(["a"], tmp_path / "x", issuer, trusted=lambda _n, _all: ())[0]
        doc = impostor.mesh.build_announcement().to_json()
        status, body = await post(
            f"{b.url}/v1/mesh/push",
            seal(a.mesh.identity, to=b.node_id, kind="gossip_push", body={"announcements": [doc]}),
        )
        assert (status, body) == (200, {"outcomes": {"untrusted": 1}})
    finally:
        for node in nodes:
            await node.stop()


async def test_unknown_interface_is_a_config_error(tmp_path: Path) -> None:
    from bridge.config import MeshConfig
    from bridge.errors import ConfigInvalidError
    from bridge.mesh.node import MeshNode
    from bridge.tools.registry import ToolRegistry

    node = MeshNode(
        MeshConfig(enabled=True, interfaces=("nope0",)),
        key=NodeKey.generate(),
        registry=ToolRegistry(),
        state_dir=tmp_path,
        api_host="0.0.0.0",
        api_port=8765,
    )
    with pytest.raises(ConfigInvalidError, match="'nope0' is neither an interface nor an IP"):
        await node.start()


async def test_a_node_held_up_past_its_ttl_never_sends_its_expired_announcement(
    tmp_path: Path, issuer: NodeKey
) -> None:
    # Start-up as in `atmosphere-bridge run`: the mesh node announces, then building the
    # HTTP app blocks the event loop (importing the Matter SDK: ~1.6-2.4 s, more under load)
    # past the announcement TTL, before the gossip loop could re-announce.
    a, b = build_nodes(
        ["a", "b"],
        tmp_path,
        issuer,
        announcement_ttl_s=0.6,
        announce_interval_s=60.0,
        gossip_interval_s=60.0,
    )
    await a.start()
    try:
        first = a.mesh.gossip.get(a.node_id)
        assert first is not None
        time.sleep(0.7)  # the blocking start-up step being reproduced
        # b pulls everything from a (digest {}), then asks for a's document by push/want.
        env = seal(b.mesh.identity, to=a.node_id, kind="gossip_digest", body={"digest": {}})
        status, reply = await post(f"{a.url}/v1/mesh/gossip", env)
        assert status == 200, reply
        assert b.mesh.gossip.accept_many(reply["announcements"]) == {Outcome.ACCEPTED: 1}
        renewed = b.mesh.gossip.get(a.node_id)
        assert renewed is not None
        assert renewed.announcement.version > first.announcement.version
        env = seal(
            b.mesh.identity,
            to=a.node_id,
            kind="gossip_push",
            body={"announcements": [], "want": [a.node_id]},
        )
        status, answer = await post(f"{a.url}/v1/mesh/push", env)
        assert status == 200, answer
        assert [d["version"] for d in answer["announcements"]] == [renewed.announcement.version]
        assert b.mesh.rejections == {}
    finally:
        await a.stop()
