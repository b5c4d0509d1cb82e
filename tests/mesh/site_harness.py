"""In-process mesh nodes at different sites, joined only by a hub (tests and bench/sites.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bridge.auth.keys import NodeKey
from bridge.config import SitesConfig
from tests.mesh.harness import LoopNode, build_nodes
from tests.support.hub import Hub


def site_nodes(
    tmp_path: Path,
    hub: Hub,
    issuer: NodeKey,
    names: list[str] | None = None,
    announce_interval_s: float = 0.3,
    ttl_s: float = 1.5,
) -> list[LoopNode]:
    """Build one node per site name (default: the hub's sites), no LAN peer, the hub's seeds."""
    nodes = build_nodes(
        names or hub.sites,
        tmp_path,
        issuer,
        peers=(),
        announce_interval_s=announce_interval_s,
        announcement_ttl_s=ttl_s,
    )
    for node in nodes:
        sites = SitesConfig(
            site=node.name,
            hub_urls=(hub.url,),
            credentials_file=str(hub.seed_file(node.name)),
            request_timeout_s=5.0,
        )
        node.mesh.config = replace(node.mesh.config, sites=sites)
        node.mesh.remote.configured = ()
        rebuilt = type(node.mesh)(
            node.mesh.config,
            key=node.key,
            registry=node.registry,
            state_dir=tmp_path / f"{node.name}-site",
            api_host="127.0.0.1",
            api_port=node.port,
        )
        rebuilt.use_verifier(node.invoker.verifier)
        rebuilt.use_runner(node.invoker.invoke)
        node.invoker.set_remote_executor(rebuilt)
        node.mesh = rebuilt
    return nodes
