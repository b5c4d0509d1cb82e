"""Gossip messages tests build by hand (the nodes themselves send hashed rounds)."""

from __future__ import annotations

from typing import Any

from bridge.mesh.gossip import GossipState


def digest_message(state: GossipState) -> dict[str, Any]:
    """Return step 1 of a full round: ``state``'s whole digest."""
    return {"type": "gossip_digest", "digest": state.digest()}
