"""MatterToolSync: the long-lived component that keeps Matter tools in the registry in sync.

Put together from its parts: ``state`` (devices, tools, the event path), ``resync``,
``renames`` (names, rooms, aliases) and ``calls`` (device calls and read-backs).
Details: docs/modules.md, ``bridge.matter.sync.registry``.
"""

from __future__ import annotations

from bridge.matter.sync.calls import READ_BACK_TIMEOUT_S, TEST_NODE_START, DeviceCalls
from bridge.matter.sync.floors import Flooring
from bridge.matter.sync.renames import Renaming
from bridge.matter.sync.resync import RESYNC_SLICE_S, Resyncing
from bridge.matter.sync.state import SEEN_EVENTS

__all__ = [
    "READ_BACK_TIMEOUT_S",
    "RESYNC_SLICE_S",
    "SEEN_EVENTS",
    "TEST_NODE_START",
    "MatterToolSync",
]


class MatterToolSync(DeviceCalls, Renaming, Flooring, Resyncing):
    """Devices of one controller as tools in a registry, kept in sync with the controller."""
