"""Signed node-to-node envelopes: forged, misaddressed, stale, replayed, untrusted."""

from __future__ import annotations

import copy

import aiohttp
import pytest
from aiohttp import web

from bridge.errors import InvalidRequestError, PayloadTooLargeError, UnauthenticatedError
from bridge.mesh.announce import canonical_bytes
from bridge.mesh.envelope import MAX_ANSWER_BYTES, EnvelopeVerifier, read_answer, seal
from bridge.mesh.node_id import NodeIdentity
from bridge.mesh.trust import TrustPolicy

from .conftest import make_identity


def verifier(me: NodeIdentity, *trusted: NodeIdentity) -> EnvelopeVerifier:
    policy = TrustPolicy("allowlist", tuple(t.node_id for t in trusted), me.public_key_b64)
    return EnvelopeVerifier(me.node_id, policy, max_skew_s=5)


def test_open_returns_sender_and_body(alice: NodeIdentity, bob: NodeIdentity) -> None:
    env = seal(bob, to=alice.node_id, kind="tool_invoke", body={"x": 1})
    sender, body = verifier(alice, bob).open(env, "tool_invoke")
    assert (sender.node_id, sender.node_name, body) == (bob.node_id, "bob", {"x": 1})


def test_replayed_envelope_is_refused(alice: NodeIdentity, bob: NodeIdentity) -> None:
    v = verifier(alice, bob)
    env = seal(bob, to=alice.node_id, kind="gossip_digest", body={})
    v.open(env, "gossip_digest")
    with pytest.raises(UnauthenticatedError, match="replay"):
        v.open(copy.deepcopy(env), "gossip_digest")


def test_tampered_misaddressed_stale_untrusted(alice: NodeIdentity, bob: NodeIdentity) -> None:
    v = verifier(alice, bob)
    env = seal(bob, to=alice.node_id, kind="tool_invoke", body={"hop_budget": 1})
    env["body"]["hop_budget"] = 9
    with pytest.raises(UnauthenticatedError, match="signature"):
        v.open(env, "tool_invoke")
    carol = make_identity("carol")
    with pytest.raises(UnauthenticatedError, match="another node"):
        v.open(seal(bob, to=carol.node_id, kind="tool_invoke", body={}), "tool_invoke")
    with pytest.raises(UnauthenticatedError, match="another node"):
        v.open(seal(bob, to="", kind="tool_invoke", body={}), "tool_invoke")
    # Gossip too: a peer's id is learned from its proof before anything is sent to it.
    with pytest.raises(UnauthenticatedError, match="another node"):
        v.open(seal(bob, to="", kind="gossip_digest", body={}), "gossip_digest")
    old = seal(bob, to=alice.node_id, kind="gossip_push", body={})
    old["timestamp"] -= 60
    old["signature"] = bob.sign(canonical_bytes({k: x for k, x in old.items() if k != "signature"}))
    with pytest.raises(UnauthenticatedError, match="freshness"):
        v.open(old, "gossip_push")
    with pytest.raises(UnauthenticatedError, match="allowlist"):
        v.open(seal(carol, to=alice.node_id, kind="gossip_push", body={}), "gossip_push")
    with pytest.raises(InvalidRequestError, match="expected a tool_invoke"):
        v.open(seal(bob, to=alice.node_id, kind="gossip_push", body={}), "tool_invoke")


async def test_a_peers_answer_is_read_bounded_and_with_the_json_limits() -> None:
    async def streamed(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()  # chunked: no Content-Length to refuse up front
        await resp.prepare(request)
        chunk = b" " * 1_048_576
        for _ in range(MAX_ANSWER_BYTES // len(chunk) + 2):
            await resp.write(chunk)
        return resp

    bodies = {
        "/ok": b'{"response": {"a": 1}}',
        "/nan": b'{"x": NaN}',
        "/deep": b"[" * 100 + b"]" * 100,
        "/big": b" " * (MAX_ANSWER_BYTES + 1),
    }
    app = web.Application()

    def answer(body: bytes) -> web.Handler:
        async def handler(_request: web.Request) -> web.Response:
            return web.Response(body=body)

        return handler

    for path, body in bodies.items():
        app.router.add_get(path, answer(body))
    app.router.add_get("/streamed", streamed)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as http:

            async def read(path: str) -> object:
                async with http.get(f"http://127.0.0.1:{port}{path}") as resp:
                    return await read_answer(resp)

            assert await read("/ok") == {"response": {"a": 1}}
            for path, reason in (("/nan", "not_finite"), ("/deep", "too_deep")):
                with pytest.raises(InvalidRequestError) as refused:
                    await read(path)
                assert refused.value.details["reason"] == reason
            for path in ("/big", "/streamed"):
                with pytest.raises(PayloadTooLargeError):
                    await read(path)
    finally:
        await runner.cleanup()
