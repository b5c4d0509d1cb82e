"""HTTP routes for Matter devices: list, commission (with progress events), remove.

Details: docs/modules.md, ``bridge.api.devices_routes``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from aiohttp import web

from bridge.api.bearer import require, token_of
from bridge.api.http import json_response, read_json, service_of
from bridge.api.openapi import add_route, path_param, query_param
from bridge.auth.permissions import covers
from bridge.errors import (
    BridgeError,
    InvalidParamsError,
    InvalidRequestError,
    NotFoundError,
    running,
)

if TYPE_CHECKING:  # the Matter layer (and the SDK's cluster classes) load only when used
    from bridge.matter import MatterComponent

LOGGER = logging.getLogger(__name__)
_TASKS: web.AppKey[set[asyncio.Task[None]]] = web.AppKey("commission_tasks")


def _runtime(request: web.Request) -> MatterComponent:
    return running(service_of(request).matter, "matter")


async def list_devices(request: web.Request) -> web.Response:
    """Return every device and the controller's state."""
    require(request, "device:read:devices")
    runtime = _runtime(request)
    devices = runtime.devices()
    return json_response(
        {"devices": devices, "count": len(devices), "controller": runtime.status()}
    )


async def commission(request: web.Request) -> web.Response:
    """Commission a device; wait for its tools unless ``wait=false``."""
    require(request, "device:manage:commission")
    wait = request.query.get("wait", "true").lower()
    if wait not in ("true", "false"):
        raise InvalidRequestError("wait must be 'true' or 'false'")
    from bridge.matter import CommissionRequest

    body = CommissionRequest.from_json(await read_json(request))
    runtime = _runtime(request)
    commission_id = uuid.uuid4().hex[:12]
    if wait == "true":
        result = await runtime.commission(body, commission_id=commission_id)
        return json_response(result.to_json(), status=201)

    async def run() -> None:
        try:
            await runtime.commission(body, commission_id=commission_id)
        except BridgeError as err:  # already published as a "failed" progress event
            LOGGER.info("commissioning %s failed: %s", commission_id, err.message)

    tasks = request.app[_TASKS]
    task = asyncio.create_task(run(), name=f"commission-{commission_id}")
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return json_response({"commission_id": commission_id, "status": "started"}, status=202)


async def rename_device(request: web.Request) -> web.Response:
    """Rename a device and/or set its room; its tools follow at once."""
    runtime = _runtime(request)
    device = runtime.find_device(request.match_info["device"])
    require(request, f"device:manage:{device.id}")
    from bridge.matter import DeviceRename

    change = DeviceRename.from_json(await read_json(request))
    return json_response(await runtime.rename(device.id, change))


async def remove_device(request: web.Request) -> web.Response:
    """Remove a device's node and its tools."""
    runtime = _runtime(request)
    device = runtime.find_device(request.match_info["device"])
    require(request, f"device:manage:{device.id}")
    return json_response(await runtime.remove(device.id))


async def share_device(request: web.Request) -> web.Response:
    """Open a commissioning window on a device so another ecosystem can add it."""
    runtime = _runtime(request)
    device = runtime.find_device(request.match_info["device"])
    require(request, f"device:manage:{device.id}")
    window_s = 300
    if request.can_read_body:
        # Checked by the route's declared schema (an object with window_s 180-900 only).
        body = await read_json(request)
        window_s = body.get("window_s", window_s)
    return json_response(await runtime.share(device.id, window_s=window_s))


async def list_rooms(request: web.Request) -> web.Response:
    """Return every room with its aliases, devices and room tools."""
    require(request, "device:read:devices")
    rooms = _runtime(request).rooms()
    return json_response({"rooms": rooms, "count": len(rooms)})


async def change_room(request: web.Request) -> web.Response:
    """Replace a room's aliases and/or put it on a floor (``null``: on none)."""
    runtime = _runtime(request)
    ref = request.match_info["room"]
    try:
        room = runtime.find_room(ref)
    except NotFoundError:
        # The answer lists the rooms there are: only for a token that may see them.
        if any(covers(p, "device:read:devices") for p in token_of(request).permissions):
            raise
        raise NotFoundError(f"no room '{ref}'", {"room": ref}) from None
    for device in room.devices:
        require(request, f"device:manage:{device.id}")
    body = await read_json(request)
    if not isinstance(body, dict) or not body or not set(body) <= {"aliases", "floor"}:
        raise InvalidParamsError(
            'the body must be {"aliases": [...]} and/or {"floor": "<floor>" or null}',
            {"fields": ["aliases", "floor"]},
        )
    from bridge.matter import clean_aliases

    aliases = clean_aliases(body["aliases"], owner="room") if "aliases" in body else None
    floor: str | None = None
    if "floor" in body:
        ref = body["floor"]
        if ref is not None and (not isinstance(ref, str) or not ref.strip()):
            raise InvalidParamsError("'floor' must be a floor's name or null", {"field": "floor"})
        # Checked before anything changes: an unknown floor leaves the aliases as they were.
        try:
            floor = runtime.find_floor(ref).slug if ref is not None else None
        except NotFoundError:
            if any(covers(p, "device:read:devices") for p in token_of(request).permissions):
                raise
            raise NotFoundError(f"no floor '{ref}'", {"floor": ref}) from None
    doc: dict[str, Any] = {}
    if aliases is not None:
        doc = await runtime.set_room_aliases(room.slug, aliases)
    if "floor" in body:
        doc = await runtime.set_room_floor(room.slug, floor)
    return json_response(doc)


async def _cancel_tasks(app: web.Application) -> None:
    current = app[_TASKS]
    tasks = list(current)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _aliases_schema(owner: str) -> dict[str, Any]:
    return {
        "type": "array",
        "maxItems": 16,
        "items": {"type": "string", "minLength": 1, "maxLength": 64},
        "description": f"other names for the {owner} (replaces the list)",
    }


def setup(app: web.Application) -> None:
    """Add the device routes."""
    app[_TASKS] = set()
    app.on_shutdown.append(_cancel_tasks)
    add_route(
        app,
        "GET",
        "/v1/devices",
        list_devices,
        permission="device:read:devices",
        operation_id="listDevices",
        summary="List Matter devices and the controller state",
        tags=["devices"],
    )
    add_route(
        app,
        "POST",
        "/v1/devices/commission",
        commission,
        permission="device:manage:commission",
        operation_id="commissionDevice",
        summary="Commission a Matter device (QR/manual code or passcode + discriminator)",
        tags=["devices"],
        parameters=[query_param("wait", "wait for the tools (default true)", {"type": "boolean"})],
        body_error=InvalidParamsError,
        request_body={
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "passcode": {"type": "integer"},
                "discriminator": {"type": "integer"},
                "network": {"enum": ["on_network", "wifi", "thread"]},
                "wifi_ssid": {"type": "string"},
                "wifi_password": {"type": "string"},
                "thread_dataset": {"type": "string"},
                "name": {"type": "string"},
                "room": {"type": "string"},
            },
            "additionalProperties": False,
        },
    )
    add_route(
        app,
        "PATCH",
        "/v1/devices/{device}",
        rename_device,
        permission="device:manage:{device}",
        operation_id="renameDevice",
        summary="Rename a device, set its room and/or aliases; its tools follow at once "
        "(needs device:manage:<device id>)",
        tags=["devices"],
        parameters=[path_param("device", "device id, slug or name")],
        body_error=InvalidParamsError,
        request_body={
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 64},
                "room": {
                    "type": ["string", "null"],
                    "maxLength": 64,
                    "description": "null or empty removes the room",
                },
                "aliases": _aliases_schema("device"),
            },
            "minProperties": 1,
            "additionalProperties": False,
        },
        responses={
            "200": "the renamed device with added_tools and removed_tools",
            "403": "PERMISSION_DENIED: needs device:manage:<device id>",
        },
    )
    add_route(
        app,
        "DELETE",
        "/v1/devices/{device}",
        remove_device,
        permission="device:manage:{device}",
        operation_id="removeDevice",
        summary="Remove a device from the fabric and its tools",
        tags=["devices"],
        parameters=[path_param("device", "device id, slug or name")],
    )
    add_route(
        app,
        "POST",
        "/v1/devices/{device}/share",
        share_device,
        operation_id="shareDevice",
        summary="Open a commissioning window so another ecosystem can add the device "
        "(Matter multi-admin; needs device:manage:<device id>)",
        tags=["devices"],
        parameters=[path_param("device", "device id, slug or name")],
        request_body={
            "type": "object",
            "properties": {"window_s": {"type": "integer", "minimum": 180, "maximum": 900}},
            "additionalProperties": False,
        },
        body_error=InvalidParamsError,
        responses={
            "200": "manual_code, qr_code and window_s of the open window",
            "403": "PERMISSION_DENIED: needs device:manage:<device id>",
            "503": "the device or controller cannot be reached",
        },
    )
    add_route(
        app,
        "GET",
        "/v1/rooms",
        list_rooms,
        permission="device:read:devices",
        operation_id="listRooms",
        summary="Rooms with their aliases, devices and room tools",
        tags=["devices"],
    )
    add_route(
        app,
        "PATCH",
        "/v1/rooms/{room}",
        change_room,
        permission="device:manage:{device}",
        operation_id="changeRoom",
        summary="Replace a room's aliases and/or put it on a floor; its room tools and spoken "
        "commands follow at once (needs device:manage:<id> for every device in the room)",
        tags=["devices"],
        parameters=[path_param("room", "room name, slug or alias")],
        body_error=InvalidParamsError,
        request_body={
            "type": "object",
            "properties": {
                "aliases": _aliases_schema("room"),
                "floor": {
                    "type": ["string", "null"],
                    "minLength": 1,
                    "maxLength": 64,
                    "description": "the floor's name, slug or alias; null: on no floor",
                },
            },
            "minProperties": 1,
            "additionalProperties": False,
        },
        responses={
            "200": "the room",
            "404": "no such room or floor",
            "409": "CONFLICT: the alias names another room",
            "403": "PERMISSION_DENIED: needs device:manage:<id> for every device",
        },
    )
