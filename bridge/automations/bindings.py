"""Matter bindings offered beside rules: who may bind a switch to a light, approvals, audit.

A binding (a switch endpoint sending OnOff to a light endpoint by itself, Matter Core
§ 9.6) is the native form of the simplest rule "this switch toggles that light": it
works with the bridge down. It lives on the devices (their Binding attribute and the
light's access control list, written through the controller by the Matter source);
this module decides who may make or remove one:

- ``automations:create`` (or ``automations:manage``), as for a rule, and
  ``device:control`` on both devices;
- a binding to a lock, door, garage door or gate (its switching tool is dangerous,
  needs confirmation, or its name or tags say so) waits for a person's approval as a
  lock rule does, and is written only once approved;
- every change (and refusal after approval) is an audit row (``tool`` ``binding:create``
  / ``binding:delete``) and an ``automation.binding`` event.

Listing shows the bindings whose two devices the caller may read, with those waiting
for approval. A pending binding is kept in memory: after a restart its approval still
resolves but nothing is written (make it again).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from bridge.auth.approvals import ApprovalStatus
from bridge.auth.audit import AuditEntry
from bridge.auth.permissions import covers
from bridge.auth.tokens import AgentToken
from bridge.auth.visibility import may_read_device
from bridge.errors import BridgeError, ConflictError, InvalidParamsError, PermissionDeniedError
from bridge.events import EventBus
from bridge.invocation.pipeline import Pipeline
from bridge.tools.definition import ToolDefinition
from bridge.tools.device_permissions import DEVICE_CONTROL, device_permission

CREATE = "automations:create"
MANAGE = "automations:manage"
APPROVAL_TIMEOUT_S = 24 * 3600.0
# Words in a tool's tags or name that make acting through it need approval (as rules).
GUARDED = ("lock", "door", "garage", "gate")


class BindingBackend(Protocol):
    """What the Matter source offers (``bridge.matter.MatterBindings`` + its tool lookup)."""

    def bindings(self) -> list[Any]:
        """Return the bindings the devices hold (each with ``switch``, ``light``)."""
        ...

    def check(self, switch: str, light: str) -> None:
        """Refuse a pair that cannot be bound."""
        ...

    async def bind(self, switch: str, light: str) -> Any:
        """Write the binding on the devices and read it back."""
        ...

    async def unbind(self, switch: str, light: str) -> Any:
        """Remove the binding from the devices."""
        ...


ToolFor = Callable[[str, str], ToolDefinition | None]
Spawn = Callable[[Coroutine[Any, Any, None]], "asyncio.Task[None]"]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Pending:
    switch: str
    light: str
    approval_id: str
    creator: str


def parse_pair(doc: Any) -> tuple[str, str]:
    """Return ``(switch, light)`` of ``{"switch": id, "light": id}``; else INVALID_PARAMS."""
    if (
        not isinstance(doc, dict)
        or set(doc) != {"switch", "light"}
        or not all(isinstance(doc[k], str) and 0 < len(doc[k]) <= 64 for k in doc)
    ):
        raise InvalidParamsError('a binding is {"switch": "<node-endpoint>", "light": "..."}')
    return doc["switch"], doc["light"]


def guarded(defn: ToolDefinition | None) -> bool:
    """Return whether switching through ``defn`` acts on a lock, door, garage door or gate."""
    if defn is None:
        return False
    tags = [str(t).lower() for t in defn.metadata.get("tags", ())]
    words = " ".join([defn.name.lower(), *tags])
    return defn.dangerous or defn.confirmation is not None or any(w in words for w in GUARDED)


class SwitchBindings:
    """Create, list and remove switch → light bindings with the caller's authority."""

    def __init__(
        self,
        *,
        pipeline: Pipeline,
        events: EventBus,
        backend: BindingBackend,
        tool_for: ToolFor,
        spawn: Spawn,
    ) -> None:
        self.pipeline = pipeline
        self.events = events
        self.backend = backend
        self.tool_for = tool_for
        self._spawn = spawn
        self._pending: dict[tuple[str, str], _Pending] = {}
        self._lock = asyncio.Lock()  # one read-edit-write of the devices' lists at a time

    def list(self, token: AgentToken) -> list[dict[str, Any]]:
        """Return the bindings (held and awaiting approval) whose devices ``token`` may read."""
        held = [
            {**b.to_json(), "status": "active"}
            for b in self.backend.bindings()
            if self._sees(token, b.switch, b.light)
        ]
        waiting = [
            {
                "switch": p.switch,
                "light": p.light,
                "cluster": "on_off",
                "status": "awaiting_approval",
                "approval_id": p.approval_id,
            }
            for p in self._pending.values()
            if self._sees(token, p.switch, p.light)
        ]
        return held + waiting

    async def create(self, token: AgentToken, switch: str, light: str) -> dict[str, Any]:
        """Bind ``switch`` to ``light`` (or ask a person first when the light is guarded).

        Raise ``PermissionDeniedError`` without ``automations:create`` or
        ``device:control`` on both, ``InvalidParamsError`` / ``NotFoundError`` for a pair
        that cannot be bound, ``ConflictError`` when bound or awaiting approval already,
        and the device's error when the write fails.
        """
        self._authorize(token, switch, light)
        self.backend.check(switch, light)
        if (switch, light) in self._pending:
            raise ConflictError(
                f"{switch} -> {light} is awaiting approval", {"switch": switch, "light": light}
            )
        toggle = self.tool_for("toggle", light) or self.tool_for("on", light)
        if guarded(toggle):
            approval = await self.pipeline.approvals.request(
                call_id=f"binding-{uuid.uuid4().hex[:12]}",
                tool="binding:create",
                agent_id=token.agent_id,
                params={"switch": switch, "light": light},
                message=(
                    f"Allow {token.agent_id} to bind switch {switch} directly to {light} "
                    f"({toggle.name if toggle else light}): the switch will operate it "
                    "without the bridge?"
                ),
                required=1,
                timeout_s=APPROVAL_TIMEOUT_S,
                token=token,
            )
            pending = _Pending(
                switch=switch, light=light, approval_id=approval.id, creator=token.agent_id
            )
            self._pending[(switch, light)] = pending
            self._audit(token, "binding:create", switch, light, "awaiting_approval", "completed")
            self._spawn(self._after_approval(token, pending))
            return {
                "switch": switch,
                "light": light,
                "cluster": "on_off",
                "status": "awaiting_approval",
                "approval_id": approval.id,
            }
        return await self._bind(token, switch, light)

    async def delete(self, token: AgentToken, switch: str, light: str) -> dict[str, Any]:
        """Remove a binding (and the light's grant to the switch); raise as ``create``."""
        self._authorize(token, switch, light)
        try:
            async with self._lock:
                await self.backend.unbind(switch, light)
        except BridgeError as err:
            self._audit(token, "binding:delete", switch, light, "allowed", "error", err.code)
            raise
        self._audit(token, "binding:delete", switch, light, "allowed", "completed")
        self._publish(switch, light, "deleted", token.agent_id)
        return {"switch": switch, "light": light, "deleted": True}

    async def _bind(self, token: AgentToken, switch: str, light: str) -> dict[str, Any]:
        try:
            async with self._lock:
                await self.backend.bind(switch, light)
        except BridgeError as err:
            self._audit(token, "binding:create", switch, light, "allowed", "error", err.code)
            raise
        self._audit(token, "binding:create", switch, light, "allowed", "completed")
        self._publish(switch, light, "created", token.agent_id)
        return {"switch": switch, "light": light, "cluster": "on_off", "status": "active"}

    async def _after_approval(self, token: AgentToken, pending: _Pending) -> None:
        try:
            final = await self.pipeline.approvals.wait(pending.approval_id)
        except BridgeError:
            final = None
        finally:
            self._pending.pop((pending.switch, pending.light), None)
        if final is None or final.status is not ApprovalStatus.APPROVED:
            status = final.status.value if final is not None else "lost"
            self._audit(
                token,
                "binding:create",
                pending.switch,
                pending.light,
                f"approval_{status}",
                "error",
            )
            self._publish(pending.switch, pending.light, "refused", pending.creator)
            return
        # Authority is checked where it is used: the token that asked must still stand.
        state = self.pipeline.verifier.state(token.id, token.expires_at)
        if state != "valid":
            self._audit(
                token, "binding:create", pending.switch, pending.light, f"token_{state}", "error"
            )
            self._publish(pending.switch, pending.light, "refused", pending.creator)
            return
        with contextlib.suppress(BridgeError):  # audited by _bind
            await self._bind(token, pending.switch, pending.light)

    def _authorize(self, token: AgentToken, switch: str, light: str) -> None:
        if not (_holds(token, CREATE) or _holds(token, MANAGE)):
            raise PermissionDeniedError(
                f"binding a switch needs the permission '{CREATE}'", {"required": CREATE}
            )
        for device in (switch, light):
            wanted = device_permission(DEVICE_CONTROL, device)
            if not _holds(token, wanted):
                raise PermissionDeniedError(
                    f"binding needs control of both devices: '{wanted}'", {"required": wanted}
                )

    @staticmethod
    def _sees(token: AgentToken, switch: str, light: str) -> bool:
        return may_read_device(token.permissions, switch) and may_read_device(
            token.permissions, light
        )

    def _audit(
        self,
        token: AgentToken,
        tool: str,
        switch: str,
        light: str,
        decision: str,
        outcome: str,
        error_code: str | None = None,
    ) -> None:
        self.pipeline.audit.record(
            AuditEntry(
                call_id=f"binding-{uuid.uuid4().hex[:12]}",
                agent_id=token.agent_id,
                token_id=token.id,
                tool=tool,
                decision=decision,
                outcome=outcome,
                error_code=error_code,
                params={"switch": switch, "light": light},
                details={"switch": switch, "light": light},
            )
        )

    def _publish(self, switch: str, light: str, change: str, creator: str) -> None:
        self.events.publish(
            "automation.binding",
            {"switch": switch, "light": light, "change": change, "creator": creator},
        )


def _holds(token: AgentToken, permission: str) -> bool:
    return any(covers(g, permission) for g in token.permissions)
