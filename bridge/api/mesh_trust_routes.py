"""``/v1/mesh/trust``: which peers this node trusts, and trusting or untrusting one live.

- ``GET /v1/mesh/trust`` → ``{"mode", "entries": [{"entry", "source": "config"|"added"}]}``
- ``PUT /v1/mesh/trust/{entry}`` → trust a node by id, key fingerprint or public key
  (kept in the state directory); its announcements and tools arrive with the next round.
- ``DELETE /v1/mesh/trust/{entry}`` → untrust one trusted from here; its tools leave at
  once. An entry of ``mesh.trusted_nodes`` answers 409: the configuration owns it.

All need ``mesh:manage``.
"""

from __future__ import annotations

from aiohttp import web

from bridge.api.bearer import require
from bridge.api.http import json_response
from bridge.api.mesh_routes import mesh_node
from bridge.api.openapi import add_route, path_param

MANAGE_PERMISSION = "mesh:manage"
MAX_ENTRY = 128


def _entry(request: web.Request) -> str:
    return request.match_info["entry"][: MAX_ENTRY + 1]


def _listing(request: web.Request) -> dict[str, object]:
    node = mesh_node(request)
    return {"mode": node.trust.mode.value, "entries": node.trust.entries()}


async def list_trust(request: web.Request) -> web.Response:
    """List the trusted entries and where each comes from."""
    require(request, MANAGE_PERMISSION)
    return json_response(_listing(request))


async def trust(request: web.Request) -> web.Response:
    """Trust a peer from now on."""
    require(request, MANAGE_PERMISSION)
    added = mesh_node(request).trust_peer(_entry(request))
    return json_response({**_listing(request), "changed": added})


async def untrust(request: web.Request) -> web.Response:
    """Stop trusting a peer trusted from here."""
    require(request, MANAGE_PERMISSION)
    mesh_node(request).untrust_peer(_entry(request))
    return json_response({**_listing(request), "changed": True})


def setup(app: web.Application) -> None:
    """Add the trust routes."""
    errors = {
        "401": "missing or invalid token",
        "403": "no mesh:manage",
        "404": "the mesh is off, or the entry is not trusted",
    }
    entry = [path_param("entry", "node id, key fingerprint or base64 public key")]
    add_route(
        app,
        "GET",
        "/v1/mesh/trust",
        list_trust,
        operation_id="listMeshTrust",
        summary="Trusted peers: from the configuration and added here",
        tags=["mesh"],
        permission=MANAGE_PERMISSION,
        responses={"200": "mode and entries", **errors},
    )
    add_route(
        app,
        "PUT",
        "/v1/mesh/trust/{entry}",
        trust,
        operation_id="trustMeshPeer",
        summary="Trust a peer (kept across restarts)",
        tags=["mesh"],
        permission=MANAGE_PERMISSION,
        parameters=entry,
        responses={
            "200": "the entries after the change",
            **errors,
            "400": "not a node id, fingerprint or key",
        },
    )
    add_route(
        app,
        "DELETE",
        "/v1/mesh/trust/{entry}",
        untrust,
        operation_id="untrustMeshPeer",
        summary="Stop trusting a peer trusted here",
        tags=["mesh"],
        permission=MANAGE_PERMISSION,
        parameters=entry,
        responses={
            "200": "the entries after the change",
            **errors,
            "409": "the configuration trusts it",
        },
    )
