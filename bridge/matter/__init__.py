"""The Matter source's front door: the only module other packages import from Matter.

Inside, sub-packages by concern, each floor importing only the ones below it (the
``matter-floors`` import contract in pyproject.toml):

- ``component``  — ``MatterComponent``: the controller, the tool sync and commissioning as one
  part with small typed façades for the faces (devices, rooms, rename, share, health);
- ``sync``       — keeping the registry in step with the controller: event → registry sync,
  re-sync, renames and aliases, device calls; the compact profile;
- ``controller`` — talking to the controller: the WebSocket adapter and gateway, the managed
  process and its guard, commissioning, pairing codes, Thread datasets, node recovery;
- ``tools``      — making tools: cluster maps (rows in the top-level ``cluster_maps/``),
  converters, the generator;
- ``home``       — what the home is: devices, rooms, floors, user names;
- ``spec``       — what the Matter specification says: the cluster catalogue, wire
  commands, events, the plain data models.

Names load on first use (PEP 562), so importing this package stays cheap: a node with
Matter off never loads the adapter or the controller's machinery.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# exported name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "MatterComponent": ("bridge.matter.component", "MatterComponent"),
    "CONTROLLER_DIR": ("bridge.matter.component", "CONTROLLER_DIR"),
    "Binding": ("bridge.matter.controller.bindings", "Binding"),
    "MatterBindings": ("bridge.matter.controller.bindings", "MatterBindings"),
    "CommissionRequest": ("bridge.matter.controller.commissioning", "CommissionRequest"),
    "CLIENT_SCHEMA_VERSION": ("bridge.matter.controller.gateway", "CLIENT_SCHEMA_VERSION"),
    "ServerInfo": ("bridge.matter.controller.gateway", "ServerInfo"),
    "fetch_server_info": ("bridge.matter.controller.gateway", "fetch_server_info"),
    "KEY_HEADER": ("bridge.matter.controller.guard", "KEY_HEADER"),
    "RESUBSCRIBE_COMMAND": ("bridge.matter.controller.guard", "RESUBSCRIBE_COMMAND"),
    "GuardError": ("bridge.matter.controller.guard", "GuardError"),
    "read_key": ("bridge.matter.controller.guard", "read_key"),
    "parse_tlvs": ("bridge.matter.controller.thread", "parse_tlvs"),
    "Device": ("bridge.matter.home.devices", "Device"),
    "UserNames": ("bridge.matter.home.devices", "UserNames"),
    "build_devices": ("bridge.matter.home.devices", "build_devices"),
    "slugify": ("bridge.matter.home.devices", "slugify"),
    "DeviceNameStore": ("bridge.matter.home.naming", "DeviceNameStore"),
    "Floor": ("bridge.matter.home.floors", "Floor"),
    "FloorChange": ("bridge.matter.home.floors", "FloorChange"),
    "FloorSeed": ("bridge.matter.home.floors", "FloorSeed"),
    "DeviceRename": ("bridge.matter.home.naming", "DeviceRename"),
    "clean_aliases": ("bridge.matter.home.naming", "clean_aliases"),
    "Room": ("bridge.matter.home.rooms", "Room"),
    "rooms_of": ("bridge.matter.home.rooms", "rooms_of"),
    "catalogue_sdk_version": ("bridge.matter.spec.catalogue", "sdk_version"),
    "NodeData": ("bridge.matter.spec.models", "NodeData"),
    "CompactProfile": ("bridge.matter.sync.compact", "CompactProfile"),
    "PROFILES": ("bridge.matter.sync.compact", "PROFILES"),
    "STATE_TOOL": ("bridge.matter.sync.compact", "STATE_TOOL"),
    "load_cluster_maps": ("bridge.matter.tools.cluster_maps", "load_cluster_maps"),
    "GeneratedTool": ("bridge.matter.tools.generator", "GeneratedTool"),
    "describe": ("bridge.matter.tools.unknown", "describe"),
    "dump_problem": ("bridge.matter.tools.unknown", "dump_problem"),
    "MatterToolGenerator": ("bridge.matter.tools.generator", "MatterToolGenerator"),
}

__all__ = [
    "CLIENT_SCHEMA_VERSION",
    "CONTROLLER_DIR",
    "KEY_HEADER",
    "PROFILES",
    "RESUBSCRIBE_COMMAND",
    "STATE_TOOL",
    "Binding",
    "CommissionRequest",
    "CompactProfile",
    "Device",
    "DeviceNameStore",
    "DeviceRename",
    "Floor",
    "FloorChange",
    "FloorSeed",
    "GeneratedTool",
    "GuardError",
    "MatterBindings",
    "MatterComponent",
    "MatterToolGenerator",
    "NodeData",
    "Room",
    "ServerInfo",
    "UserNames",
    "build_devices",
    "catalogue_sdk_version",
    "clean_aliases",
    "compact_profile",
    "describe",
    "dump_problem",
    "fetch_server_info",
    "load_cluster_maps",
    "parse_tlvs",
    "read_key",
    "rooms_of",
    "slugify",
]

if TYPE_CHECKING:
    from bridge.matter.component import CONTROLLER_DIR, MatterComponent
    from bridge.matter.controller.bindings import Binding, MatterBindings
    from bridge.matter.controller.commissioning import CommissionRequest
    from bridge.matter.controller.gateway import (
        CLIENT_SCHEMA_VERSION,
        ServerInfo,
        fetch_server_info,
    )
    from bridge.matter.controller.guard import (
        KEY_HEADER,
        RESUBSCRIBE_COMMAND,
        GuardError,
        read_key,
    )
    from bridge.matter.controller.thread import parse_tlvs
    from bridge.matter.home.devices import Device, UserNames, build_devices, slugify
    from bridge.matter.home.floors import Floor, FloorChange, FloorSeed
    from bridge.matter.home.naming import DeviceNameStore, DeviceRename, clean_aliases
    from bridge.matter.home.rooms import Room, rooms_of
    from bridge.matter.spec.catalogue import sdk_version as catalogue_sdk_version
    from bridge.matter.spec.models import NodeData
    from bridge.matter.sync.compact import PROFILES, STATE_TOOL, CompactProfile
    from bridge.matter.sync.registry import MatterToolSync
    from bridge.matter.tools.cluster_maps import load_cluster_maps
    from bridge.matter.tools.generator import GeneratedTool, MatterToolGenerator
    from bridge.matter.tools.unknown import describe, dump_problem
    from bridge.tools.registry import ToolRegistry
else:

    def __getattr__(name: str) -> Any:
        """Import the module behind an exported name on first use and return the name."""
        try:
            module, attribute = _EXPORTS[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value


def compact_profile(
    registry: ToolRegistry, matter: Callable[[], MatterComponent | None]
) -> CompactProfile:
    """Return the compact profile of ``registry`` over the devices of ``matter()``.

    ``matter`` is asked on every rebuild of the profile's index, so a profile made before
    the component starts (or on a node without Matter, where it answers None) sees the
    devices once they are there. The faces build their profiles here: the component's
    tool sync stays inside this package.
    """
    from bridge.matter.sync.compact import CompactProfile

    def tool_sync() -> MatterToolSync | None:
        component = matter()
        return component.bridge if component is not None else None

    return CompactProfile(registry, tool_sync)


def __dir__() -> list[str]:
    """List the exported names beside the module's own."""
    return sorted({*globals(), *_EXPORTS})
