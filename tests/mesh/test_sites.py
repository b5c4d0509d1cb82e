"""The site road: bridges at different sites joined through a real ``nats-server`` hub.

The hub runs on loopback with the configuration ``atmosphere-bridge sites hub-config``
generates (one nkey user per site, generated permissions). Each site is one in-process
mesh node (real keys, registry, invoker, token verifier) with no LAN peer: everything
between sites crosses the hub, carrying the mesh's own signed announcements, envelopes,
delegations and answers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import issue_token, parse_token
from bridge.invocation.messages import ToolRequest
from bridge.mesh.delegation import Grant, delegate
from bridge.mesh.envelope import seal
from bridge.mesh.router import Offer, rank
from bridge.mesh.sites import settle, site_url
from tests.mesh.harness import LoopNode, wait_for, whoami, whoami_definition
from tests.mesh.site_harness import site_nodes
from tests.support.hub import NATS_SERVER, Hub
from tests.support.ports import free_port

TOOL_C = "core:whoami_c@1.0.0"
SITES = ["a", "b", "c"]


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    assert Path(NATS_SERVER).exists(), "nats-server (Debian package) is missing: make install"
    base = tmp_path / "hub"
    base.mkdir()
    hub = Hub(base=base, sites=SITES, port=free_port())
    hub.configure()
    hub.start()
    yield hub
    hub.stop()


@pytest.fixture
async def sites(tmp_path: Path, hub: Hub) -> AsyncIterator[tuple[list[LoopNode], NodeKey]]:
    issuer = NodeKey.generate()
    nodes = site_nodes(tmp_path, hub, issuer)
    nodes[2].registry.register(whoami_definition("whoami_c", idempotent=False), whoami)
    for node in nodes:
        await node.start()
    yield nodes, issuer
    for node in nodes:
        await node.stop()


def bearer(issuer: NodeKey) -> str:
    return issue_token(issuer, agent_id="agent-a", permissions=["mesh:test:*"], ttl_s=300)


async def test_a_call_from_site_a_runs_at_site_c_through_the_hub(
    sites: tuple[list[LoopNode], NodeKey],
) -> None:
    (a, _b, c), issuer = sites
    await wait_for(lambda: a.registry.get(TOOL_C) is not None, 10)
    # a knows c only by the hub: the offer's one address is the site road.
    (offer,) = a.mesh.offers(TOOL_C)
    assert offer.urls == (site_url("c", c.node_id),)
    response = await a.call(TOOL_C, bearer(issuer))
    assert response.ok, response.error
    assert response.result == {
        "text": "hi",
        "node_id": c.node_id,
        "path": [a.node_id],
        "hop_budget": 2,
    }


async def test_a_site_that_goes_offline_fails_fast_and_comes_back(
    sites: tuple[list[LoopNode], NodeKey],
    tmp_path: Path,
) -> None:
    (a, _b, c), issuer = sites
    await wait_for(lambda: a.registry.get(TOOL_C) is not None, 10)
    assert c.mesh.road is not None
    await c.mesh.road.stop()  # c's uplink is gone; a still holds its announcement
    started = time.monotonic()
    response = await a.call(TOOL_C, bearer(issuer))
    took = time.monotonic() - started
    assert response.error is not None
    assert (response.error["code"], response.error["retryable"]) == ("NO_CAPABLE_NODE", True)
    assert "site c unreachable" in response.error["details"]["unreachable"][c.node_id]
    # Fast: the hub answers "no responders" at once; the call's own timeout is 5 s.
    assert took < 2.0, took
    # Its announcement expires on a (ttl 1.5 s): the tool leaves a's registry.
    await wait_for(lambda: a.registry.get(TOOL_C) is None, 10)
    # c dials out again: its tool comes back and calls run there.
    await c.mesh.road.start(0.3)
    await wait_for(lambda: a.registry.get(TOOL_C) is not None, 10)
    a.mesh.router.mark_up(c.node_id)
    response = await a.call(TOOL_C, bearer(issuer))
    assert response.ok, response.error
    assert response.result["node_id"] == c.node_id  # type: ignore[index]


async def test_hub_restart_fails_fast_then_calls_resume(
    sites: tuple[list[LoopNode], NodeKey],
    hub: Hub,
) -> None:
    (a, _b, c), issuer = sites
    await wait_for(lambda: a.registry.get(TOOL_C) is not None, 10)
    assert (await a.call(TOOL_C, bearer(issuer))).ok
    hub.kill()
    await wait_for(lambda: a.mesh.road is not None and not a.mesh.road.connected, 10)
    started = time.monotonic()
    response = await a.call(TOOL_C, bearer(issuer))
    assert response.error is not None
    assert response.error["code"] == "NO_CAPABLE_NODE"
    assert "hub is not connected" in response.error["details"]["unreachable"][c.node_id]
    assert time.monotonic() - started < 2.0
    hub.start()
    await wait_for(
        lambda: all(n.mesh.road is not None and n.mesh.road.connected for n in (a, c)), 15
    )
    a.mesh.router.mark_up(c.node_id)

    async def ran() -> bool:
        return (await a.call(TOOL_C, bearer(issuer))).ok

    for _ in range(50):  # c's call subscription is re-sent on reconnect
        if await ran():
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("calls did not resume after the hub came back")


async def test_a_revocation_reaches_every_site(sites: tuple[list[LoopNode], NodeKey]) -> None:
    (a, b, c), _issuer = sites
    for node in (a, b, c):  # a's node key issues the tokens
        node.invoker.verifier.trusted_issuers = frozenset({a.key.public_key_b64})
    token = issue_token(a.key, agent_id="agent-a", permissions=["mesh:test:*"], ttl_s=300)
    await wait_for(lambda: b.registry.get(TOOL_C) is not None, 10)
    assert (await b.call(TOOL_C, token)).ok
    caller = parse_token(token)[0]
    a.invoker.verifier.revocations.revoke(a.key, caller.id, caller.expires_at)
    await wait_for(lambda: all(caller.id in n.invoker.verifier.revocations for n in (b, c)), 5)
    response = await b.call(TOOL_C, token)
    assert response.error is not None
    assert response.error["code"] == "UNAUTHENTICATED"


async def test_a_replayed_call_over_the_hub_is_refused(
    sites: tuple[list[LoopNode], NodeKey],
    hub: Hub,
) -> None:
    (a, _b, c), issuer = sites
    await wait_for(lambda: a.registry.get(TOOL_C) is not None, 10)
    caller = parse_token(bearer(issuer))[0]
    request = ToolRequest.from_json(
        {"tool": TOOL_C, "params": {"text": "once"}, "routing": {"path": [a.node_id]}}
    ).signed(a.key)
    body = {
        "request": request.to_json(),
        "delegation": delegate(
            a.mesh.identity, Grant.of_token(caller, ("mesh:test:*",)), request, to=c.node_id
        ),
    }
    envelope = seal(a.mesh.identity, to=c.node_id, kind="tool_invoke", body=body)
    road = a.mesh.road
    assert road is not None
    first = await road.request("c", c.node_id, envelope, 5)
    assert (first["type"], first["status"]) == ("mesh_answer", 200)
    assert first["body"]["response"]["result"]["text"] == "once"
    # The same envelope again (a reconnect resending, or the hub replaying it): refused.
    second = await road.request("c", c.node_id, envelope, 5)
    assert second["error"]["code"] == "UNAUTHENTICATED"
    assert "replay" in second["error"]["message"]


async def test_site_credentials_allow_only_the_site_s_own_subjects(hub: Hub) -> None:
    heard: list[str] = []
    errors: list[str] = []

    async def on_error(err: Exception) -> None:
        errors.append(str(err).lower())

    b = await nats.connect(hub.url, nkeys_seed=str(hub.seed_file("b")))
    a = await nats.connect(hub.url, nkeys_seed=str(hub.seed_file("a")), error_cb=on_error)
    try:

        async def took(msg: Any) -> None:
            heard.append(f"{msg.subject} {msg.data.decode()}")

        async def until(done: Callable[[], bool]) -> None:
            async with asyncio.timeout(10):  # the hub's answers arrive when they arrive
                while not done():
                    await asyncio.sleep(0.02)

        def refused(what: str) -> bool:
            return any(f"permissions violation for {what}" in e for e in errors)

        await b.subscribe("atmo.ann.*", cb=took)
        await settle(b, 10)
        await a.publish("atmo.ann.a", b"{}")  # its own subject: delivered
        await a.publish("atmo.ann.c", b"{}")  # another site's: dropped by the hub
        await a.publish("atmo.call.a.x", b"{}")  # calling itself through the hub: not allowed
        await a.publish("atmo.ann.a", b"last")  # after the others: any of theirs comes first
        await a.flush()
        await until(lambda: "atmo.ann.a last" in heard and refused('publish to "atmo.ann.c"'))
        assert heard == ["atmo.ann.a {}", "atmo.ann.a last"]
        await a.subscribe("atmo.call.b.*")  # another site's calls: refused
        await a.flush()
        await until(lambda: refused('subscription to "atmo.call.b.*"'))
    finally:
        await a.close()
        await b.close()
    with pytest.raises((nats.errors.NoServersError, nats.errors.Error, OSError)):
        await nats.connect(hub.url, allow_reconnect=False, connect_timeout=2)


def test_the_lan_way_scores_above_the_hub() -> None:
    lan = Offer(node_id="n" * 26, hops=1, urls=("http://10.0.0.2:8080",))
    far = Offer(node_id="m" * 26, hops=1, urls=(site_url("c", "m" * 26),))
    ranked = rank([far, lan], local_node_id="x" * 26)
    assert [c.node_id for c in ranked] == [lan.node_id, far.node_id]
    assert (ranked[0].score, ranked[1].score) == (0.95, 0.475)


async def test_a_hub_that_answers_for_a_site_cannot_forge_its_answer(
    sites: tuple[list[LoopNode], NodeKey],
    hub: Hub,
) -> None:
    """Whoever holds c's place on the hub (a compromised hub) sees the call, cannot answer it."""
    from bridge.mesh.envelope import seal_answer
    from bridge.mesh.node_id import NodeIdentity

    (a, _b, c), issuer = sites
    await wait_for(lambda: a.registry.get(TOOL_C) is not None, 10)
    assert c.mesh.road is not None
    mallory = NodeIdentity.from_key(NodeKey.generate(), "mallory")
    seen: list[str] = []
    impostor = await nats.connect(hub.url, nkeys_seed=str(hub.seed_file("c")))

    async def answer(msg: Any) -> None:
        import json

        envelope = json.loads(msg.data)
        seen.append(envelope["body"]["request"]["tool"])
        forged = seal_answer(
            mallory,
            to=a.node_id,
            nonce=envelope["nonce"],
            status=200,
            body={
                "response": {
                    "type": "tool_response",
                    "request_id": "x",
                    "status": "success",
                    "result": {"forged": 1},
                }
            },
        )
        forged["from"] = c.node_id  # claims to be c; signed by another key
        await msg.respond(json.dumps(forged).encode())

    await impostor.subscribe(f"atmo.call.c.{c.node_id}", cb=answer)
    await settle(impostor, 10)
    # Only now c leaves the hub: its last announcement (ttl 1.5 s) is still fresh on a,
    # and the impostor is the one subscriber left (connecting it first took seconds
    # under load, long enough for a to drop c's tool and never send the call).
    await c.mesh.road.stop()
    try:
        response = await a.call(TOOL_C, bearer(issuer))
    finally:
        await impostor.close()
    assert seen == [TOOL_C]
    assert response.error is not None
    assert response.error["code"] == "NO_CAPABLE_NODE"
    assert response.error["details"]["reason"] == "unsigned_answer"


async def test_a_site_hears_and_calls_only_the_sites_the_list_gives_it(tmp_path: Path) -> None:
    hub = Hub(base=tmp_path, sites=SITES, port=free_port(), extra_sites={"c": {"hears": ["a"]}})
    hub.configure()
    hub.start()
    heard: list[str] = []
    errors: list[str] = []

    async def on_error(err: Exception) -> None:
        errors.append(str(err).lower())

    async def took(msg: Any) -> None:
        heard.append(f"{msg.subject} {msg.data.decode()}")

    try:
        c = await nats.connect(hub.url, nkeys_seed=str(hub.seed_file("c")), error_cb=on_error)
        a = await nats.connect(hub.url, nkeys_seed=str(hub.seed_file("a")))
        b = await nats.connect(hub.url, nkeys_seed=str(hub.seed_file("b")))
        await c.subscribe("atmo.ann.*", cb=took)
        await settle(c, 10)  # one flush() can come back before the hub has the SUB
        await a.publish("atmo.ann.a", b"{}")
        await b.publish("atmo.ann.b", b"{}")  # c may not hear b: the hub never delivers it
        await c.publish("atmo.call.b.x", b"{}")  # nor call b
        for client in (a, b, c):
            await settle(client, 10)
        # Everything the hub took from b went out before what it takes from a now: once
        # c has a's last message, a message of b's would have come before it.
        await a.publish("atmo.ann.a", b"last")
        await a.flush()
        async with asyncio.timeout(10):
            while "atmo.ann.a last" not in heard or not errors:
                await asyncio.sleep(0.02)
        assert heard == ["atmo.ann.a {}", "atmo.ann.a last"]
        assert any('permissions violation for publish to "atmo.call.b.x"' in e for e in errors)
        for client in (a, b, c):
            await client.close()
    finally:
        hub.stop()


def test_sites_hub_config_writes_a_config_the_hub_accepts_and_keeps_seeds(tmp_path: Path) -> None:
    import subprocess
    import sys

    cli = Path(sys.executable).parent / "atmosphere-bridge"
    (tmp_path / "sites.yaml").write_text(
        "hub: {listen: '127.0.0.1:4222'}\nsites: [{name: home}, {name: flat, hears: [home]}]\n"
    )
    out = tmp_path / "hub"

    def generate() -> str:
        done = subprocess.run(
            [
                str(cli),
                "sites",
                "hub-config",
                "--sites",
                str(tmp_path / "sites.yaml"),
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = generate()
    seeds = {p.name: p.read_text() for p in out.glob("*.nk")}
    assert sorted(seeds) == ["flat.nk", "home.nk"]
    assert all(s.startswith("SU") for s in seeds.values())
    assert {oct(p.stat().st_mode & 0o777) for p in out.iterdir()} == {"0o600"}
    # nats-server itself checks the generated file.
    check = subprocess.run(
        [NATS_SERVER, "-t", "-c", str(out / "hub.conf")], capture_output=True, text=True, timeout=30
    )
    assert check.returncode == 0, check.stdout + check.stderr
    # Again (a site added later, say): the seeds are kept, so are the public keys.
    assert generate() == first
    assert {p.name: p.read_text() for p in out.glob("*.nk")} == seeds
    # A site makes its own seed; it is never overwritten.
    own = tmp_path / "own.nk"
    made = subprocess.run(
        [str(cli), "sites", "credentials", "--out", str(own)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("U")
    assert len(made.stdout.strip()) == 56
    again = subprocess.run(
        [str(cli), "sites", "credentials", "--out", str(own)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 1
    assert "keeps its seed" in again.stderr


async def test_settle_sends_its_last_ping_after_what_the_client_still_had_buffered() -> None:
    """The bytes nats-py writes, read by a recording loopback listener (not a hub).

    A real hub cannot show the order: it answers whichever PING it reads, and the SUB
    normally follows a microsecond later. This listener speaks just enough of the
    protocol (INFO, PONG) to record the commands in the order they reach the socket, and
    answers each PING only with what it has read so far: ``settle`` must return only
    after a PONG that was sent once the SUB and the PUB had been read.
    """
    import json

    read: list[str] = []
    pongs_after: list[list[str]] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        info = {"server_id": "recorder", "version": "2.9.10", "proto": 1, "max_payload": 4096}
        writer.write(f"INFO {json.dumps(info)}\r\n".encode())
        await writer.drain()
        while line := await reader.readline():
            verb = line.split(b" ", 1)[0].strip().decode()
            read.append(verb)
            if verb == "PUB":
                await reader.readline()  # the payload line
            if verb == "PING":
                pongs_after.append(list(read))
                writer.write(b"PONG\r\n")
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    nc = await nats.connect(f"nats://127.0.0.1:{port}", allow_reconnect=False)
    try:
        for _ in range(20):  # the order is the client's, not luck: it holds every time
            read.clear()
            pongs_after.clear()
            sub = await nc.subscribe("atmo.ann.*")
            await nc.publish("atmo.ann.a", b"{}")
            await settle(nc, 5)
            assert pongs_after, read
            assert {"SUB", "PUB"} <= set(pongs_after[-1]), pongs_after
            await sub.unsubscribe()
            await settle(nc, 5)
            assert "UNSUB" in pongs_after[-1], pongs_after
    finally:
        await nc.close()
        server.close()
        await server.wait_closed()
