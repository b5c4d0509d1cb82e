"""The Matter layer's plain data: actions sent to the controller, node dumps, events.

``MatterAction`` is one exact request (command, write, read), ``NodeData`` a node's raw
attributes, ``AdapterEvent`` what the adapter reports. No SDK import: the generator's
output and the registry sync can be read and tested without ``chip``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bridge.errors import (
    InvalidParamsError,
)
from bridge.matter.spec.commands import WireCommand

# Payload fields that are secrets (compared in lower case): shown as REDACTED in results,
# errors and diagnostics.
SECRET_FIELDS = frozenset({"pincode"})
REDACTED = "<redacted>"


class ActionKind(StrEnum):
    """What a ``MatterAction`` does on the controller."""

    COMMAND = "command"
    WRITE = "write"
    READ = "read"


@dataclass(frozen=True, slots=True, kw_only=True)
class MatterAction:
    """One exact request to the controller: a command, an attribute write or a read."""

    kind: ActionKind
    node_id: int
    endpoint_id: int
    cluster: str
    cluster_id: int
    name: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    value: Any = None
    attribute_ids: tuple[int, ...] = ()
    timed: bool = False
    # The checked controller form of a command, when whoever made the action already
    # built it (the generic tool checks the payload so): the adapter sends it as it is.
    wire: WireCommand | None = field(default=None, compare=False, repr=False)

    @property
    def paths(self) -> list[str]:
        """Return the attribute paths a write or read touches."""
        return [f"{self.endpoint_id}/{self.cluster_id}/{a}" for a in self.attribute_ids]

    def to_json(self) -> dict[str, Any]:
        """Return the wire form shown in tool results and diagnostics (secrets redacted)."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "node_id": self.node_id,
            "endpoint_id": self.endpoint_id,
            "cluster": self.cluster,
        }
        if self.kind is ActionKind.COMMAND:
            out["command"] = self.name
            out["payload"] = {
                k: REDACTED if k.lower() in SECRET_FIELDS else v for k, v in self.payload.items()
            }
            if self.timed:
                out["timed"] = True
        elif self.kind is ActionKind.WRITE:
            out["attribute"] = self.name
            out["value"] = self.value
        else:
            out["attributes"] = self.name.split(",")
        return out


@dataclass(slots=True, kw_only=True)
class NodeData:
    """A node's raw attributes (``"endpoint/cluster/attribute"`` → value) and status."""

    node_id: int
    available: bool
    is_bridge: bool = False
    attributes: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, doc: Any) -> NodeData:
        """Read a node dump (``get_node`` form); raise ``InvalidParamsError`` if malformed."""
        if not isinstance(doc, dict):
            raise InvalidParamsError("a node dump must be a JSON object")
        node_id = doc.get("node_id")
        attributes = doc.get("attributes")
        if not isinstance(node_id, int) or isinstance(node_id, bool) or node_id < 0:
            raise InvalidParamsError("a node dump needs a non-negative integer 'node_id'")
        if not isinstance(attributes, dict):
            raise InvalidParamsError(f"node {node_id}: 'attributes' must be an object")
        clean: dict[str, Any] = {}
        for path, value in attributes.items():
            parts = str(path).split("/")
            if len(parts) == 3 and all(p.isdigit() for p in parts):
                clean[str(path)] = value
        return cls(
            node_id=node_id,
            available=bool(doc.get("available", False)),
            is_bridge=bool(doc.get("is_bridge", False)),
            attributes=clean,
        )


class AdapterEventKind(StrEnum):
    """Events the adapter reports to the bridge."""

    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    NODE_ADDED = "node_added"
    NODE_UPDATED = "node_updated"
    NODE_REMOVED = "node_removed"
    ATTRIBUTE_UPDATED = "attribute_updated"
    SERVER_SHUTDOWN = "server_shutdown"
    # A device reported a Matter event: ``path`` is "endpoint/cluster/event", ``value``
    # the controller's event document (event_number, timestamp, data by field name).
    NODE_EVENT = "node_event"


@dataclass(frozen=True, slots=True, kw_only=True)
class AdapterEvent:
    """One event from the controller, already turned into the bridge's terms."""

    kind: AdapterEventKind
    node_id: int | None = None
    path: str | None = None
    value: Any = None


Listener = Callable[[AdapterEvent], None]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for an allocation burst.

    Building a home's device model or its tools allocates hundreds of thousands of
    objects that all stay alive; the collector ran ~20 times over them for nothing
    (a fifth of a 1,000-device generation). Reference counting still frees everything
    at once; collections resume afterwards. Nested use keeps it paused to the end.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
