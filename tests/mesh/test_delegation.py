"""Delegations: what each check of ``check_delegation`` refuses, with real keys."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import issue_token, parse_token
from bridge.errors import UnauthenticatedError
from bridge.invocation.messages import RequestRouting, ToolRequest
from bridge.mesh.delegation import Grant, check_delegation, delegate
from bridge.mesh.node_id import NodeIdentity
from bridge.mesh.trust import TrustPolicy

from .conftest import make_identity

TOOL = "core:t@1.0.0"


@pytest.fixture
def nodes() -> tuple[NodeIdentity, NodeIdentity, NodeIdentity]:
    return make_identity("c"), make_identity("b"), make_identity("a")


def grant_of(perms: tuple[str, ...] = ("t:run:x",)) -> Grant:
    raw = issue_token(NodeKey.generate(), agent_id="agent", permissions=["t:*"], ttl_s=600)
    return Grant.of_token(parse_token(raw)[0], perms)


def call(path: tuple[str, ...], params: dict[str, str] | None = None) -> ToolRequest:
    return ToolRequest(
        id="r1",
        tool=TOOL,
        params=params or {"text": "hi"},
        routing=RequestRouting(hop_budget=3 - len(path), path=path),
    )


def trust_of(receiver: NodeIdentity, *trusted: NodeIdentity) -> TrustPolicy:
    return TrustPolicy("allowlist", tuple(t.node_id for t in trusted), receiver.public_key_b64)


def test_one_hop_delegation_gives_the_grant_back(nodes: tuple[NodeIdentity, ...]) -> None:
    c, _b, a = nodes
    grant = grant_of()
    request = call((c.node_id,))
    got = check_delegation(
        delegate(c, grant, request, to=a.node_id),
        request=request,
        sender_id=c.node_id,
        own_id=a.node_id,
        trust=trust_of(a, c),
    )
    assert (got.token_id, got.agent_id, got.permissions) == (grant.token_id, "agent", ("t:run:x",))
    token = got.as_token()
    assert (token.id, token.raw, token.permissions) == (grant.token_id, "", ("t:run:x",))
    assert token.expires_at == grant.token_expires_at
    assert got.expires_at <= time.time() + 30 + 1  # when it stops being accepted


def test_each_binding_is_checked(nodes: tuple[NodeIdentity, ...]) -> None:
    c, b, a = nodes
    grant = grant_of()
    request = call((c.node_id,))
    doc = delegate(c, grant, request, to=a.node_id)
    trust = trust_of(a, c)

    def refused(match: str, **kwargs: object) -> None:
        args: dict[str, object] = {
            "request": request,
            "sender_id": c.node_id,
            "own_id": a.node_id,
            "trust": trust,
            **kwargs,
        }
        with pytest.raises(UnauthenticatedError, match=match):
            check_delegation(args.pop("doc", doc), **args)  # type: ignore[arg-type]

    refused("another node", own_id=b.node_id)  # made for a, shown to b
    refused("other parameters", request=replace(request, params={"text": "bye"}))
    refused("another call", request=replace(request, id="r2"))
    refused("another call", request=replace(request, tool="core:u@1.0.0"))
    refused("not trusted", trust=trust_of(a, b))
    refused("expired", now=time.time() + 120)
    tampered = dict(doc, permissions=["*"])
    refused("signature", doc=tampered)
    refused("not a mesh_delegation", doc={"type": "mesh_delegation"})
    refused("path must end", sender_id=b.node_id)


def test_a_relay_passes_on_and_may_not_widen(nodes: tuple[NodeIdentity, ...]) -> None:
    c, b, a = nodes
    grant = grant_of()
    first = call((c.node_id,))
    at_b = check_delegation(
        delegate(c, grant, first, to=b.node_id),
        request=first,
        sender_id=c.node_id,
        own_id=b.node_id,
        trust=trust_of(b, c),
    )
    second = call((c.node_id, b.node_id))
    doc = delegate(b, at_b, second, to=a.node_id)
    got = check_delegation(
        doc, request=second, sender_id=b.node_id, own_id=a.node_id, trust=trust_of(a, b, c)
    )
    assert got.permissions == ("t:run:x",)
    assert got.document is not None
    assert got.document["chain"] == [c.node_id, b.node_id]
    # c untrusted at a: a chain through it is refused.
    with pytest.raises(UnauthenticatedError, match="not trusted"):
        check_delegation(
            doc, request=second, sender_id=b.node_id, own_id=a.node_id, trust=trust_of(a, b)
        )
    # b widening what it received.
    wider = delegate(b, replace(at_b, permissions=("t:run:x", "t:admin:x")), second, to=a.node_id)
    with pytest.raises(UnauthenticatedError, match="widened"):
        check_delegation(
            wider, request=second, sender_id=b.node_id, own_id=a.node_id, trust=trust_of(a, b, c)
        )
    # b claiming another caller than the one c delegated.
    other = delegate(b, replace(at_b, agent_id="admin"), second, to=a.node_id)
    with pytest.raises(UnauthenticatedError, match="changed the call or the caller"):
        check_delegation(
            other, request=second, sender_id=b.node_id, own_id=a.node_id, trust=trust_of(a, b, c)
        )
    # b starting a chain of its own for a call c forwarded: no prior, refused.
    orphan = delegate(b, replace(at_b, document=None), second, to=a.node_id)
    with pytest.raises(UnauthenticatedError, match="not a mesh_delegation"):
        check_delegation(
            orphan, request=second, sender_id=b.node_id, own_id=a.node_id, trust=trust_of(a, b, c)
        )
