"""Delegations: what a forwarded call carries instead of the caller's bearer token.

A bearer token never leaves the node that verified it. When a node forwards a call it
signs a ``mesh_delegation`` for that one call and that one receiver: the caller's token
id, agent and issuer, the permissions this call needs (the tool's requirements filled
with the parameters, which the token covered here), the token's node and hop
constraints, the exact tool identity, the SHA-256 of the canonical parameters, the
request id, when it was made and for how many seconds it holds, the hop count and the
chain of nodes so far; a relay's delegation carries the one it received (``prior``).
``check_delegation`` verifies all of it against the forwarded request and this node's
trust list, and returns the ``Grant`` the receiving node authorizes the call with.
Details and the checks, one by one: docs/mesh.md.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from typing import Any

from bridge.auth.canonical import canonical_json
from bridge.auth.tokens import AgentToken, Constraints
from bridge.errors import UnauthenticatedError
from bridge.invocation.messages import ToolRequest
from bridge.mesh.node_id import NODE_ID_RE, NodeIdentity, node_id_for, verify_signature
from bridge.mesh.trust import TrustPolicy

DELEGATION_TYPE = "mesh_delegation"
DELEGATION_TTL_S = 30
MAX_CHAIN = 8
_KEYS = frozenset(
    {
        "type",
        "request_id",
        "tool",
        "params_sha256",
        "token_id",
        "agent_id",
        "issuer",
        "token_issued_at",
        "token_expires_at",
        "permissions",
        "allowed_nodes",
        "max_hops",
        "issued_at",
        "expires_in_s",
        "hop",
        "chain",
        "to",
        "signer",
        "prior",
        "signature",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """The caller's authority for one call, as verified where its token was (or delegated)."""

    token_id: str
    agent_id: str
    issuer: str
    token_issued_at: float
    token_expires_at: float
    permissions: tuple[str, ...]
    allowed_nodes: tuple[str, ...] = ()
    max_hops: int | None = None
    expires_at: float = math.inf
    document: dict[str, Any] | None = None  # the delegation it came in (for a relay)

    @classmethod
    def of_token(cls, token: AgentToken, permissions: tuple[str, ...]) -> Grant:
        """Return the grant of a token verified on this node, narrowed to ``permissions``."""
        return cls(
            token_id=token.id,
            agent_id=token.agent_id,
            issuer=token.issuer,
            token_issued_at=token.issued_at,
            token_expires_at=token.expires_at,
            permissions=permissions,
            allowed_nodes=token.constraints.allowed_nodes,
            max_hops=token.constraints.max_hops,
        )

    def as_token(self) -> AgentToken:
        """Return the pseudo-token the receiving node authorizes with (no raw token in it)."""
        return AgentToken(
            agent_id=self.agent_id,
            issued_at=self.token_issued_at,
            # The delegation's own lifetime bounds when it is accepted (checked on
            # arrival); once accepted the call runs, like any, until the token expires
            # (an approval asked for here may take longer than a delegation lives).
            expires_at=self.token_expires_at,
            permissions=self.permissions,
            constraints=Constraints(max_hops=self.max_hops, allowed_nodes=self.allowed_nodes),
            issuer=self.issuer,
            signature=f"delegated:{self.token_id}",
            raw="",
            id=self.token_id,
        )


def params_sha256(params: dict[str, Any]) -> str:
    """Return the hex SHA-256 of the canonical JSON of a call's parameters."""
    return hashlib.sha256(canonical_json(params)).hexdigest()


def delegate(
    identity: NodeIdentity,
    grant: Grant,
    request: ToolRequest,
    *,
    to: str,
    now: float | None = None,
) -> dict[str, Any]:
    """Return this node's signed delegation of ``grant`` for the forwarded ``request`` to ``to``.

    ``request`` is the call as forwarded (exact tool identity, this node last on its path).
    """
    issued = time.time() if now is None else now
    doc: dict[str, Any] = {
        "type": DELEGATION_TYPE,
        "request_id": request.id,
        "tool": request.tool,
        "params_sha256": params_sha256(request.params),
        "token_id": grant.token_id,
        "agent_id": grant.agent_id,
        "issuer": grant.issuer,
        "token_issued_at": grant.token_issued_at,
        "token_expires_at": grant.token_expires_at,
        "permissions": list(grant.permissions),
        "allowed_nodes": list(grant.allowed_nodes),
        "max_hops": grant.max_hops,
        "issued_at": round(issued, 3),
        "expires_in_s": DELEGATION_TTL_S,
        "hop": len(request.routing.path),
        "chain": list(request.routing.path),
        "to": to,
        "signer": identity.public_key_b64,
        "prior": grant.document,
    }
    doc["signature"] = identity.sign(canonical_json(doc))
    return doc


def _refuse(message: str, **details: Any) -> UnauthenticatedError:
    return UnauthenticatedError(
        f"delegation refused: {message}", {"reason": "delegation", **details}
    )


def _link(
    doc: Any, *, to: str, chain: tuple[str, ...], trust: TrustPolicy, now: float, skew_s: float
) -> dict[str, Any]:
    """Verify one delegation link signed by ``chain[-1]`` for ``to``; return it."""
    if not isinstance(doc, dict) or set(doc) != _KEYS or doc.get("type") != DELEGATION_TYPE:
        raise _refuse("not a mesh_delegation")
    signer, signature = doc["signer"], doc["signature"]
    if not isinstance(signer, str) or not isinstance(signature, str):
        raise _refuse("malformed signer")
    try:
        signer_id = node_id_for(signer)
    except ValueError as err:
        raise _refuse("the signer's key is invalid") from err
    if not chain or signer_id != chain[-1] or doc["chain"] != list(chain):
        raise _refuse("the chain does not end with the signing node", chain=list(chain))
    if not all(isinstance(n, str) and NODE_ID_RE.match(n) for n in chain):
        raise _refuse("the chain holds something that is not a node id")
    if doc["to"] != to or doc["hop"] != len(chain):
        raise _refuse("the delegation was made for another node or hop", to=str(doc["to"])[:32])
    if not trust.is_trusted(signer):
        raise _refuse("a node on the chain is not trusted here", node_id=signer_id)
    unsigned = {k: v for k, v in doc.items() if k != "signature"}
    if not verify_signature(signer, canonical_json(unsigned), signature):
        raise _refuse("the signature is invalid", node_id=signer_id)
    issued, ttl = doc["issued_at"], doc["expires_in_s"]
    if not _number(issued) or not _number(ttl) or not 0 < ttl <= DELEGATION_TTL_S:
        raise _refuse("malformed time")
    if issued > now + skew_s or now > issued + ttl + skew_s:
        raise _refuse("the delegation has expired or is not valid yet")
    return doc


_SAME = (
    "request_id",
    "tool",
    "params_sha256",
    "token_id",
    "agent_id",
    "issuer",
    "token_issued_at",
    "token_expires_at",
    "allowed_nodes",
    "max_hops",
)


def check_delegation(
    doc: Any,
    *,
    request: ToolRequest,
    sender_id: str,
    own_id: str,
    trust: TrustPolicy,
    skew_s: float = 5.0,
    now: float | None = None,
) -> Grant:
    """Verify a forwarded call's delegation (and its priors); return the grant it carries.

    Raises ``UnauthenticatedError`` when any link is malformed, unsigned, signed by a node
    not trusted here, expired, made for another receiver, hop, call, tool or parameters,
    or when a relay widened what it received.
    """
    moment = time.time() if now is None else now
    path = request.routing.path
    if not path or path[-1] != sender_id or len(path) > MAX_CHAIN:
        raise _refuse("the request's path must end with the forwarding node")
    top = _link(doc, to=own_id, chain=path, trust=trust, now=moment, skew_s=skew_s)
    if (top["request_id"], top["tool"]) != (request.id, request.tool):
        raise _refuse("the delegation was made for another call")
    if top["params_sha256"] != params_sha256(request.params):
        raise _refuse("the delegation was made for other parameters")
    link, chain = top, path
    while len(chain) > 1:
        prior = _link(
            link["prior"], to=chain[-1], chain=chain[:-1], trust=trust, now=moment, skew_s=skew_s
        )
        if any(prior[k] != link[k] for k in _SAME):
            raise _refuse("a relay changed the call or the caller it was delegated")
        if not set(link["permissions"]) <= set(prior["permissions"]):
            raise _refuse("a relay widened the permissions it was delegated")
        link, chain = prior, chain[:-1]
    if link["prior"] is not None:
        raise _refuse("the first link carries a prior")
    perms = top["permissions"]
    nodes = top["allowed_nodes"]
    max_hops = top["max_hops"]
    if not isinstance(perms, list) or not all(isinstance(p, str) for p in perms):
        raise _refuse("malformed permissions")
    if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
        raise _refuse("malformed allowed_nodes")
    if max_hops is not None and (isinstance(max_hops, bool) or not isinstance(max_hops, int)):
        raise _refuse("malformed max_hops")
    text = ("token_id", "agent_id", "issuer")
    if not all(isinstance(top[k], str) and 0 < len(top[k]) <= 256 for k in text):
        raise _refuse("malformed caller")
    if not _number(top["token_issued_at"]) or not _number(top["token_expires_at"]):
        raise _refuse("malformed token times")
    return Grant(
        token_id=top["token_id"],
        agent_id=top["agent_id"],
        issuer=top["issuer"],
        token_issued_at=float(top["token_issued_at"]),
        token_expires_at=float(top["token_expires_at"]),
        permissions=tuple(perms),
        allowed_nodes=tuple(nodes),
        max_hops=max_hops,
        expires_at=float(top["issued_at"]) + float(top["expires_in_s"]),
        document=top,
    )


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
