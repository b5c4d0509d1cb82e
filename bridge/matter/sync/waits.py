"""``core:wait_for_event``: a call that waits for the next event of one device.

An agent asks for a device (by id) and, optionally, which events (a stable type such as
``switch.long_press``, or a word: ``press``, ``long_press``, ``multi_press``,
``release``, ``alarm``, ``error``); the call answers with the first such ``device.event``
published after it started, or ``{"timed_out": true}`` after ``timeout_seconds``
(at most 60). The pipeline checks ``device:read:<device_id>`` before the wait starts, so
a device the token may not read answers exactly as one that does not exist (for the
token) would; the wait is a call like any other, counted against the token's calls in
flight, and a cancelled call (its socket closed, the bridge stopping) drops its
subscription at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from bridge.errors import NotFoundError
from bridge.events import EventBus
from bridge.matter.home.devices import Device
from bridge.matter.spec.events import UNKNOWN_EVENT, known_types
from bridge.tools.context import CallContext
from bridge.tools.definition import (
    Category,
    Execution,
    Requires,
    Routing,
    ToolDefinition,
    ToolIntent,
)
from bridge.tools.device_permissions import DEVICE_READ

WAIT_TOOL = "wait_for_event"
MAX_WAIT_S = 60.0
DEFAULT_WAIT_S = 30.0
# The answer must leave before the caller's deadline: the wait ends this much earlier.
_DEADLINE_MARGIN_S = 0.25
# Words an agent may use for a family of stable types.
EVENT_WORDS: dict[str, tuple[str, ...]] = {
    "press": ("switch.initial_press",),
    "long_press": ("switch.long_press",),
    "multi_press": ("switch.multi_press_complete",),
    "release": ("switch.short_release", "switch.long_release"),
    "alarm": (
        "door_lock.alarm",
        "smoke_co.smoke_alarm",
        "smoke_co.co_alarm",
        "smoke_co.interconnect_smoke_alarm",
        "smoke_co.interconnect_co_alarm",
        "sensor.alarms_changed",
    ),
    "error": ("operation.error", "door_lock.operation_error", "sensor.fault", "valve.fault"),
}


def event_choices() -> list[str]:
    """Return every value the ``events`` filter takes: the words, then the stable types."""
    return [*EVENT_WORDS, *known_types(), UNKNOWN_EVENT]


def wait_definition(capability: str, routing: Routing, server_name: str) -> ToolDefinition:
    """Return the definition of ``core:wait_for_event`` (it names no device of the home)."""
    return ToolDefinition(
        name=WAIT_TOOL,
        namespace="core",
        version="1.0.0",
        description=(
            "Wait for the next event of a Matter device (a button press, long press or "
            "multi-press, a lock or smoke alarm, an operational error ...) and return it, "
            f"or timed_out after timeout_seconds (default {DEFAULT_WAIT_S:g}, at most "
            f"{MAX_WAIT_S:g}). Only events that happen after the call starts count. "
            "A device's id ('<node>-<endpoint>') is in each of its tools "
            "(metadata.device.id)."
        ),
        category=Category.SENSING,
        parameters={
            "type": "object",
            "properties": {
                "device_id": {
                    "type": "string",
                    "pattern": "^[0-9]+-[0-9]+$",
                    "description": "The device to wait on ('<node>-<endpoint>').",
                },
                "events": {
                    "type": "array",
                    "items": {"type": "string", "enum": event_choices()},
                    "minItems": 1,
                    "maxItems": 16,
                    "uniqueItems": True,
                    "description": "Which events count (default: any): a word ("
                    + ", ".join(EVENT_WORDS)
                    + ") or a stable type such as 'switch.long_press'.",
                },
                "timeout_seconds": {
                    "type": "number",
                    "minimum": 0.1,
                    "maximum": MAX_WAIT_S,
                    "default": DEFAULT_WAIT_S,
                    "description": "How long to wait at most, in seconds.",
                },
            },
            "required": ["device_id"],
            "additionalProperties": False,
        },
        returns={
            "type": "object",
            "properties": {
                "timed_out": {"type": "boolean"},
                "device_id": {"type": "string"},
                "event": {"description": "The device.event: event, summary, fields, matter ids"},
                "waited_s": {"type": "number"},
            },
        },
        requires=Requires(capabilities=(capability,), permissions=(DEVICE_READ,)),
        # The wait's own bound plus room for the answer; the caller's deadline still ends it.
        execution=Execution(timeout_ms=int(MAX_WAIT_S * 1000) + 5_000, idempotent=True),
        routing=routing,
        metadata={"tags": ["matter", "events"]},
        server_name=server_name,
        intent=ToolIntent.COMPUTE,
    )


def wanted_types(params: Mapping[str, Any]) -> frozenset[str] | None:
    """Return the stable types a call waits for (``None``: any event)."""
    chosen = params.get("events")
    if not chosen:
        return None
    return frozenset(t for name in chosen for t in EVENT_WORDS.get(str(name), (str(name),)))


async def wait_for_event(
    bus: EventBus,
    device: Callable[[str], Device | None],
    params: Mapping[str, Any],
    ctx: CallContext | None,
) -> dict[str, Any]:
    """Return the first matching ``device.event`` of the device, or ``timed_out``.

    Raises ``NotFoundError`` for a device the bridge does not know (a token that may not
    read it never gets here: the pipeline refused the call as for any other device).
    """
    device_id = str(params["device_id"])
    if device(device_id) is None:
        raise NotFoundError(f"no Matter device '{device_id}'", {"device_id": device_id})
    types = wanted_types(params)
    started = time.monotonic()
    limit = min(float(params.get("timeout_seconds", DEFAULT_WAIT_S)), MAX_WAIT_S)
    if ctx is not None and ctx.deadline is not None:
        limit = min(limit, ctx.deadline - started - _DEADLINE_MARGIN_S)
    async with bus.subscription("device.event") as sub:
        try:
            async with asyncio.timeout(max(0.0, limit)):
                while True:
                    event = await sub.get()
                    data = event.data
                    if data.get("device_id") != device_id:
                        continue
                    if types is not None and data.get("event") not in types:
                        continue
                    return {
                        "timed_out": False,
                        "device_id": device_id,
                        "event": {**data, "ts": event.ts},
                        "waited_s": round(time.monotonic() - started, 3),
                    }
        except TimeoutError:
            return {
                "timed_out": True,
                "device_id": device_id,
                "waited_s": round(time.monotonic() - started, 3),
            }
