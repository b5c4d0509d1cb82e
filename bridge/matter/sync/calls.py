"""Device calls: a Matter tool's call planned, sent, checked and read back.

The call path, the read-back that confirms it, and a room's fan-out to its members.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from bridge.errors import (
    BridgeError,
    ControllerUnavailableError,
    DeviceUnavailableError,
    ToolFailedError,
)
from bridge.matter.home.rooms import MemberCall, RoomPlan
from bridge.matter.spec.models import (
    ActionKind,
    MatterAction,
)
from bridge.matter.sync.state import SyncState
from bridge.matter.tools.generator import (
    ToolKind,
    state_paths,
)
from bridge.tools.context import CallContext, Handler

LOGGER = logging.getLogger(__name__)
# Interaction-model statuses a refused attribute write most often carries.
_WRITE_STATUS = {
    0x7E: "unsupported access",
    0x86: "unsupported attribute",
    0x87: "constraint error",
    0x88: "unsupported write",
    0x8D: "invalid in state",
    0xC6: "needs a timed interaction",
}


# How long a read-back waits for the device, at most (it answered the call just before):
# a device that is slower is left to its reports.
READ_BACK_TIMEOUT_S = 2.0
# The controller numbers imported test nodes (recorded dumps) from here up. Reading one
# answers from its recording, which no command or write changes: a read-back would undo
# what the bridge just learned, so test nodes keep the accepted value until they report
# (and a state tool's read of one does not go into the cache either).
TEST_NODE_START = 900_000


class DeviceCalls(SyncState):
    """Execute calls of Matter tools and read back what they changed."""

    def _handler(self, identity: str) -> Handler:
        async def handle(params: dict[str, Any], ctx: CallContext) -> Any:
            return await self.call(identity, params, ctx)

        return handle

    async def call(
        self, identity: str, params: dict[str, Any], ctx: CallContext | None = None
    ) -> Any:
        """Run one call of a Matter tool: check availability, plan, send, report.

        ``ctx`` is the caller's context: every request to the device ends by its
        deadline (``ToolTimeoutError`` then), a room's members' calls too.
        Raises ``DeviceUnavailableError`` at once for an unavailable device,
        ``ControllerUnavailableError`` without a controller connection, and whatever the
        plan or the controller raise (``INVALID_PARAMS``, ``TOOL_FAILED``).
        """
        tool = self.tool(identity)
        if not self.adapter.connected:
            raise ControllerUnavailableError("the Matter controller is not connected")
        if tool.room is not None:
            return await self._call_room(tool.room, params, ctx)
        device_id = tool.device_id or (str(params["device_id"]) if "device_id" in params else None)
        device = self._devices.get(device_id) if device_id else None
        if device is not None and not device.available:
            raise DeviceUnavailableError(
                f"{device.name} is not reachable right now", {"device_id": device.id}
            )
        actions = tool.plan(params)
        before = self._unconfirmed.get(tool.device_id or "")
        results = []
        for action in actions:
            result = await self.adapter.execute(
                action, deadline=ctx.deadline if ctx is not None else None
            )
            results.append(result)
            if action.kind is ActionKind.WRITE:
                self._written(action, result)
        if tool.kind is ToolKind.GENERIC and actions[0].kind is ActionKind.READ:
            return tool.read_result(actions[0], results[0])  # a read changes nothing
        if tool.kind in (ToolKind.STATE, ToolKind.SENSOR):
            values: dict[str, Any] = {}
            for action, result in zip(actions, results, strict=True):
                if isinstance(result, dict):
                    values.update(result)
                    if action.node_id < TEST_NODE_START:
                        self._learn(action.node_id, result)
            if tool.kind is ToolKind.STATE and tool.device_id is not None:
                # It read every state attribute from the device after ``before``'s change.
                self._confirmed(tool.device_id, before)
            return tool.state_from(values, self.generator.unit, params)
        if device is not None and self.read_back and device.node_id < TEST_NODE_START:
            self._unconfirmed[device.id] = next(self._changes)
            if self.events is not None and self.events.wanted("device.state"):
                await self.confirm((device.id,))  # someone watches: before answering
        return {
            "ok": True,
            "device_id": device.id if device is not None else device_id,
            "sent": [action.to_json() for action in actions],
            "results": results,
        }

    async def confirm(self, device_ids: Iterable[str] | None = None) -> None:
        """Read back the state of every device a call changed since it was last read.

        Readers call it before answering from the cache (``home_state``, the console):
        each device a command or write changed is read from the device itself, all at
        once, one ``read_attribute`` per device, and what it holds goes into the cache
        (published as ``device.state``). A device nobody asks about is never read: its
        report updates the cache a moment later. Restricted to ``device_ids`` when
        given; a read already under way that covers the latest change is joined.
        """
        wanted = set(device_ids) if device_ids is not None else None
        tasks: list[asyncio.Task[None]] = []
        for device_id, change in tuple(self._unconfirmed.items()):
            if wanted is not None and device_id not in wanted:
                continue
            reading = self._reading.get(device_id)
            if reading is None or reading[0] < change:
                task = asyncio.get_running_loop().create_task(self._confirm_one(device_id, change))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                reading = self._reading[device_id] = (change, task)
            tasks.append(reading[1])
        if tasks:
            # Not cancelled with a caller that gives up: another reader may share them.
            await asyncio.wait(tasks)

    async def _confirm_one(self, device_id: str, change: int) -> None:
        try:
            await self._read_back(device_id)
        finally:
            if self._reading.get(device_id, (0,))[0] == change:
                del self._reading[device_id]
            # Read (or unreadable: left to its reports) up to this change.
            self._confirmed(device_id, change)

    def _confirmed(self, device_id: str, change: int | None) -> None:
        """Forget ``device_id``'s unread change ``change`` (not a later one)."""
        if change is not None and self._unconfirmed.get(device_id) == change:
            del self._unconfirmed[device_id]

    async def _read_back(self, device_id: str) -> None:
        """Read the device's state attributes from the device itself into the cache.

        What it holds now (a level its trim cut, a colour command a light that is off
        ignored) is taken in as its own report would be, and what changed is published
        as ``device.state``. A device that does not answer in time is left to its
        reports.
        """
        device = self._devices.get(device_id)
        if device is None or not device.available:
            return
        paths = state_paths(device, self.generator.state_parts(device))
        if not paths:
            return
        try:
            values = await self.adapter.read(device.node_id, paths, READ_BACK_TIMEOUT_S)
        except BridgeError as err:
            LOGGER.debug("no read-back of %s after a call: %s", device_id, err.message)
            return
        self._learn(device.node_id, values)

    def _learn(self, node_id: int, values: Mapping[str, Any]) -> None:
        """Take in values read from the device itself, as its own report would be."""
        node = self.adapter.node(node_id)
        if node is None:
            return
        for path, value in values.items():
            if isinstance(value, dict) and "TLVValue" in value:
                continue  # the controller could not decode it: not a value to keep
            node.attributes[path] = value
            self.refresh_node(node_id, path, value)

    async def _call_room(
        self, plan: RoomPlan, params: dict[str, Any], ctx: CallContext | None
    ) -> dict[str, Any]:
        """Send every member's call at once; one member failing is part of the answer."""
        calls = plan.calls(params)

        async def one(call: MemberCall) -> dict[str, Any]:
            entry: dict[str, Any] = {
                "device_id": call.member.device_id,
                "name": call.member.name,
                "tool": call.identity,
            }
            if call.note is not None:
                entry["note"] = call.note
            if call.identity is None:
                entry["ok"] = call.note is not None
                entry["skipped"] = True
                return entry
            try:
                entry["result"] = await self.call(call.identity, dict(call.params), ctx)
            except BridgeError as err:
                entry["ok"] = False
                entry["error"] = {"code": str(err.code), "message": err.message}
            else:
                entry["ok"] = True
            return entry

        results = await asyncio.gather(*(one(c) for c in calls))
        failed = sum(1 for r in results if not r["ok"])
        return {
            "ok": failed == 0,
            "room": plan.room,
            "action": plan.action,
            "succeeded": len(results) - failed,
            "failed": failed,
            "devices": list(results),
        }

    def _written(self, action: MatterAction, result: Any) -> None:
        """Raise for a refused write; else put the written value in the cache now."""
        statuses = (
            [r.get("Status") for r in result if isinstance(r, dict)]
            if isinstance(result, list)
            else []
        )
        refused = next((s for s in statuses if isinstance(s, int) and s != 0), None)
        if refused is not None:
            reason = _WRITE_STATUS.get(refused, "refused")
            raise ToolFailedError(
                f"node {action.node_id} refused {action.cluster}.{action.name} = "
                f"{action.value!r}: {reason} (status 0x{refused:02X})",
                {"action": action.to_json(), "status": refused},
            )
        # Accepted: the device holds the value now (the read-back that follows corrects it
        # if the device stored another, and so does its report).
        self._learn(action.node_id, {path: action.value for path in action.paths})
