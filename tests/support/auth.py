"""Tokens for tests against a running bridge: signed by the service's own node key."""

from __future__ import annotations

from collections.abc import Sequence

from bridge.auth.approvals import Approval
from bridge.auth.canonical import canonical_json
from bridge.auth.keys import verify
from bridge.auth.tokens import Constraints, issue_token
from bridge.service import BridgeService


def service_token(
    service: BridgeService,
    agent: str = "test-agent",
    perms: Sequence[str] = ("*",),
    *,
    ttl_s: float = 3600,
    constraints: Constraints | None = None,
) -> str:
    """Return a token the started ``service`` trusts (issued by its node key)."""
    assert service.invocation is not None, "start the service first"
    return issue_token(
        service.invocation.key,
        agent_id=agent,
        permissions=perms,
        ttl_s=ttl_s,
        constraints=constraints,
    )


def votes_verify(approval: Approval, node_public_key: str) -> bool:
    """Return whether every vote of ``approval`` carries a valid signature by the node key."""
    return all(
        verify(
            node_public_key,
            canonical_json(v.signed_fields(approval.id, approval.call_id)),
            v.signature,
        )
        for v in approval.votes
    )


def bearer(token: str) -> dict[str, str]:
    """Return the Authorization header for ``token``."""
    return {"Authorization": f"Bearer {token}"}
