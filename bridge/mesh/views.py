"""What the mesh looks like from this node: itself, its peers and the tools they offer.

``MeshViews`` reads the node's identity, trust, gossip state, discovery and router and
answers the JSON of ``GET /v1/mesh/peers`` and ``GET /v1/mesh/tools``; it changes
nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bridge.auth.visibility import may_see
from bridge.errors import BridgeError
from bridge.mesh.node_id import fingerprint_for
from bridge.tools.definition import ToolDefinition

if TYPE_CHECKING:
    from bridge.mesh.announce import Announcement, ToolSummary
    from bridge.mesh.discovery import Discovery
    from bridge.mesh.gossip import GossipState
    from bridge.mesh.node_id import NodeIdentity
    from bridge.mesh.router import Router
    from bridge.mesh.trust import TrustPolicy


class MeshViews:
    """The read-only views of one mesh node."""

    def __init__(
        self,
        *,
        identity: NodeIdentity,
        trust: TrustPolicy,
        gossip: GossipState,
        router: Router,
        discovery: Callable[[], Discovery | None],
        endpoints: Callable[[], tuple[str, ...]],
        rejections: dict[str, int],
    ) -> None:
        self.identity = identity
        self.trust = trust
        self.gossip = gossip
        self.router = router
        self._discovery = discovery
        self._endpoints = endpoints
        self.rejections = rejections

    @property
    def discovery(self) -> Discovery | None:
        """Return the running discovery, if any."""
        return self._discovery()

    def peers_json(self) -> list[dict[str, Any]]:
        """Return every known peer: discovered and/or announcing, trusted or not."""
        peers: dict[str, dict[str, Any]] = {}
        down = self.router.down()
        if self.discovery is not None:
            for peer in self.discovery.peers():
                peers[peer.node_id] = {
                    "node_id": peer.node_id,
                    "name": None,
                    "fingerprint": peer.fingerprint,
                    "urls": peer.urls(),
                    "discovered": True,
                    "trusted": None,
                    "announcement": None,
                }
        now = time.time()
        for entry in self.gossip.entries():
            ann = entry.announcement
            if ann.node_id == self.identity.node_id:
                continue
            view = peers.setdefault(
                ann.node_id,
                {
                    "node_id": ann.node_id,
                    "fingerprint": None,
                    "urls": list(ann.endpoints),
                    "discovered": False,
                },
            )
            view["name"] = ann.node_name
            view["fingerprint"] = _fingerprint(ann.public_key)
            view["trusted"] = True
            view["announcement"] = {
                "version": ann.version,
                "tools": len(ann.tools()),
                "devices": len(ann.devices),
                "expires_in_s": round(entry.expires_at - now, 1),
            }
        for origin, (name, public_key) in self.gossip.untrusted.items():
            if origin not in peers:  # announced to us (a static peer), signed, not trusted
                peers[origin] = {
                    "node_id": origin,
                    "name": name or None,
                    "fingerprint": _fingerprint(public_key),
                    "urls": [],
                    "discovered": False,
                    "trusted": False,
                    "announcement": None,
                }
        for view in peers.values():
            if view["trusted"] is None:
                view["trusted"] = self.trust.may_trust(view["node_id"], view["fingerprint"])
            view["reachable"] = view["node_id"] not in down
        return sorted(peers.values(), key=lambda v: (str(v.get("name")), v["node_id"]))

    def tools_json(
        self, capability: str | None = None, granted: tuple[str, ...] | None = None
    ) -> list[dict[str, Any]]:
        """Return the tools offered in the mesh with the nodes offering them.

        With ``capability``, only tools in that capability group (namespace) or whose
        definition requires that capability; with ``granted`` (a token's permissions),
        only the tools that token may see (``bridge.auth.visibility``).
        """
        tools: dict[str, dict[str, Any]] = {}
        for entry in self.gossip.entries():
            ann = entry.announcement
            for cap in ann.capabilities:
                for summary in cap.tools:
                    if (
                        capability is None
                        or capability == cap.name
                        or capability in _required(summary.definition)
                    ) and (granted is None or _visible(granted, summary.definition)):
                        self._add_tool_view(tools, ann, cap.name, summary)
        return sorted(tools.values(), key=lambda v: str(v["identity"]))

    def _add_tool_view(
        self,
        tools: dict[str, dict[str, Any]],
        ann: Announcement,
        capability: str,
        summary: ToolSummary,
    ) -> None:
        view = tools.setdefault(
            summary.identity,
            {
                "identity": summary.identity,
                "description": summary.description,
                "capability": capability,
                "nodes": [],
            },
        )
        view["nodes"].append(
            {
                "node_id": ann.node_id,
                "name": ann.node_name,
                "local": ann.node_id == self.identity.node_id,
                "available": summary.available,
                "parameters_hash": summary.parameters_hash,
            }
        )

    def self_json(self) -> dict[str, Any]:
        """Return this node's identity and settings for display."""
        return {
            "node_id": self.identity.node_id,
            "name": self.identity.name,
            "fingerprint": self.identity.fingerprint,
            "public_key": self.identity.public_key_b64,
            "trust": self.trust.mode.value,
            "endpoints": list(self._endpoints()),
            "rejections": dict(self.rejections),
        }


def _required(definition: dict[str, Any]) -> tuple[str, ...]:
    """Return the capabilities an announced definition document requires."""
    tool = definition.get("tool", definition)
    requires = tool.get("requires") if isinstance(tool, dict) else None
    caps = requires.get("capabilities") if isinstance(requires, dict) else None
    return tuple(c for c in caps if isinstance(c, str)) if isinstance(caps, list) else ()


def _visible(granted: tuple[str, ...], definition: dict[str, Any]) -> bool:
    """Return whether a token with ``granted`` may see an announced definition."""
    try:
        return may_see(granted, ToolDefinition.from_json(definition))
    except BridgeError:
        return False


def _fingerprint(public_key: str) -> str:
    try:
        return fingerprint_for(public_key)
    except ValueError:
        return ""
