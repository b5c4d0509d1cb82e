"""HTTP routes for the home's floors: list them with their rooms, create, change, delete.

A room is put on a floor with ``PATCH /v1/rooms/{room}`` (``bridge.api.devices_routes``).
Reading follows the visibility rule: a token sees the rooms it may know of (a device in
them it may read or control) and only the floors that hold one of them; a token with
``device:read:devices`` sees all. Creating, changing and deleting a floor needs
``device:manage:floors``; deleting one also every device's ``device:manage:<id>`` on it,
as moving those rooms would.

Details: docs/modules.md, ``bridge.api.floors_routes``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from bridge.api.bearer import require, token_of
from bridge.api.http import json_response, read_json, service_of
from bridge.api.openapi import add_route, path_param
from bridge.auth.permissions import covers
from bridge.auth.visibility import may_see_device
from bridge.errors import InvalidParamsError, NotFoundError, running

if TYPE_CHECKING:  # the Matter layer loads only when used
    from bridge.matter import Floor, MatterComponent

MANAGE_FLOORS = "device:manage:floors"
READ_ALL = "device:read:devices"


def _runtime(request: web.Request) -> MatterComponent:
    return running(service_of(request).matter, "matter")


def _sees_all(request: web.Request) -> bool:
    return any(covers(p, READ_ALL) for p in token_of(request).permissions)


def _find(request: web.Request, runtime: MatterComponent) -> Floor:
    ref = request.match_info["floor"]
    try:
        return runtime.find_floor(ref)
    except NotFoundError:
        # The full answer names the floors there are: only for a token that sees them all.
        if _sees_all(request):
            raise
        raise NotFoundError(f"no floor '{ref}'", {"floor": ref}) from None


async def list_floors(request: web.Request) -> web.Response:
    """Return the floors with the rooms the token may know of, and the rooms on no floor."""
    runtime = _runtime(request)
    if _sees_all(request):
        return json_response(runtime.floors())
    granted = token_of(request).permissions
    return json_response(
        runtime.floors(lambda room: any(may_see_device(granted, d.id) for d in room.devices))
    )


async def create_floor(request: web.Request) -> web.Response:
    """Add a floor."""
    require(request, MANAGE_FLOORS)
    from bridge.matter import FloorChange

    change = FloorChange.from_json(await read_json(request), creating=True)
    return json_response(await _runtime(request).create_floor(change), status=201)


async def change_floor(request: web.Request) -> web.Response:
    """Rename, re-level or re-alias a floor."""
    require(request, MANAGE_FLOORS)
    runtime = _runtime(request)
    floor = _find(request, runtime)
    from bridge.matter import FloorChange

    change = FloorChange.from_json(await read_json(request))
    return json_response(await runtime.change_floor(floor.slug, change))


async def delete_floor(request: web.Request) -> web.Response:
    """Delete a floor; its rooms are then on no floor."""
    require(request, MANAGE_FLOORS)
    runtime = _runtime(request)
    floor = _find(request, runtime)
    for room in runtime.floor_rooms(floor):
        for device in room.devices:
            require(request, f"device:manage:{device.id}")
    return json_response(await runtime.delete_floor(floor.slug))


def _floor_schema(*, creating: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 64},
            "level": {
                "type": "integer",
                "minimum": -5,
                "maximum": 50,
                "description": "0 the ground floor, 1 the one above, -1 a basement",
            },
            "aliases": {
                "type": "array",
                "maxItems": 16,
                "items": {"type": "string", "minLength": 1, "maxLength": 64},
                "description": "other words for the floor, in any language (replaces the list)",
            },
        },
        "minProperties": 1,
        "additionalProperties": False,
    }
    if creating:
        schema["required"] = ["name"]
    return schema


def setup(app: web.Application) -> None:
    """Add the floor routes."""
    add_route(
        app,
        "GET",
        "/v1/floors",
        list_floors,
        operation_id="listFloors",
        summary="Floors with their rooms (those the token may know of) and the rooms on no floor",
        tags=["devices"],
    )
    add_route(
        app,
        "POST",
        "/v1/floors",
        create_floor,
        permission=MANAGE_FLOORS,
        operation_id="createFloor",
        summary="Add a floor (at most 16); spoken commands know it at once",
        tags=["devices"],
        body_error=InvalidParamsError,
        request_body=_floor_schema(creating=True),
        responses={
            "201": "the floor",
            "409": "CONFLICT: the name or an alias names another floor, or 16 floors already",
        },
    )
    add_route(
        app,
        "PATCH",
        "/v1/floors/{floor}",
        change_floor,
        permission=MANAGE_FLOORS,
        operation_id="changeFloor",
        summary="Rename a floor, change its level or replace its aliases",
        tags=["devices"],
        parameters=[path_param("floor", "floor name, slug or alias")],
        body_error=InvalidParamsError,
        request_body=_floor_schema(creating=False),
        responses={
            "200": "the floor",
            "404": "no such floor",
            "409": "CONFLICT: the name or an alias names another floor",
        },
    )
    add_route(
        app,
        "DELETE",
        "/v1/floors/{floor}",
        delete_floor,
        permission=MANAGE_FLOORS,
        operation_id="deleteFloor",
        summary="Delete a floor; its rooms are then on no floor (needs device:manage:floors "
        "and device:manage:<id> for every device on it)",
        tags=["devices"],
        parameters=[path_param("floor", "floor name, slug or alias")],
        responses={"200": "the deleted floor", "404": "no such floor"},
    )
