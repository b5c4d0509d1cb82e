"""Matter bindings written through the controller: a switch endpoint bound to a light's.

A binding is two writes on the devices themselves, never state of the bridge:

- the light's Access Control list (``0/31/0``) gains an entry letting the switch's node
  Operate its OnOff cluster on that endpoint (CASE, subject the switch's node id);
- the switch endpoint's Binding attribute (``<ep>/30/0``) gains a target
  ``{node, endpoint, cluster: OnOff}``.

Then the switch sends OnOff commands to the light itself (Matter Core § 9.6), with no
controller or bridge in the path. Both attributes are fabric-scoped lists: a write
replaces this fabric's entries only, so each change reads the list from the device,
edits it and writes it whole. An ACL is never written without this fabric's
Administer entry (the controller's own access). ``bindings`` lists what the devices
hold (the controller's copy, refreshed by the read back after each write).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bridge.errors import (
    ConflictError,
    DeviceUnavailableError,
    InvalidParamsError,
    NotFoundError,
    ToolFailedError,
)
from bridge.matter.controller.gateway import ControllerCommandError
from bridge.matter.spec.models import NodeData

ONOFF_CLUSTER = 0x0006
DESCRIPTOR_CLIENT_LIST = 2  # Descriptor (0x001D) attribute: the endpoint's client clusters
ACL_PATH = "0/31/0"
# AccessControlEntryStruct / Binding TargetStruct field tags (Matter Core § 9.10.4, § 9.6.5).
_PRIVILEGE, _AUTH_MODE, _SUBJECTS, _TARGETS, _FABRIC = "1", "2", "3", "4", "254"
_NODE, _GROUP, _ENDPOINT, _CLUSTER = "1", "2", "3", "4"
PRIVILEGE_OPERATE = 3
PRIVILEGE_ADMINISTER = 5
AUTH_CASE = 2
WRITE_TIMEOUT_S = 20.0
_NOT_REACHABLE = frozenset({3, 4, 5})  # NodeNotReady, NodeNotResolving, NodeNotExists


class _Controller(Protocol):
    def nodes(self) -> list[NodeData]: ...
    def node(self, node_id: int) -> NodeData | None: ...
    async def read(self, node_id: int, paths: list[str], timeout_s: float) -> dict[str, Any]: ...
    async def send_command(self, command: str, *, timeout_s: float, **args: Any) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Binding:
    """One OnOff binding: a switch endpoint (device id) → a light endpoint (device id)."""

    switch: str
    light: str

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {"switch": self.switch, "light": self.light, "cluster": "on_off"}


def _split(device_id: str) -> tuple[int, int]:
    node, _, endpoint = device_id.partition("-")
    if not (node.isdigit() and endpoint.isdigit()):
        raise InvalidParamsError(
            f"'{device_id[:64]}' is not a device id (node-endpoint)", {"device": device_id[:64]}
        )
    return int(node), int(endpoint)


def _binding_path(endpoint: int) -> str:
    return f"{endpoint}/30/0"


class MatterBindings:
    """Create, list and remove switch → light OnOff bindings on the devices."""

    def __init__(self, controller: Callable[[], _Controller]) -> None:
        self._controller = controller

    def bindings(self) -> list[Binding]:
        """Return every OnOff binding the devices hold to a node endpoint (sorted)."""
        out: set[Binding] = set()
        ctl = self._controller()
        for node in ctl.nodes():
            node_id = node.node_id
            for path, value in node.attributes.items():
                ep, _, rest = path.partition("/")
                if rest != "30/0" or not isinstance(value, list):
                    continue
                for entry in value:
                    target = _onoff_target(entry)
                    if target is not None:
                        out.add(Binding(switch=f"{node_id}-{ep}", light=target))
        return sorted(out, key=lambda b: (b.switch, b.light))

    def check(self, switch: str, light: str) -> None:
        """Refuse a pair that cannot be bound (``InvalidParamsError``, ``NotFoundError``)."""
        ctl = self._controller()
        s_node, s_ep = _split(switch)
        l_node, l_ep = _split(light)
        if s_node == l_node:
            raise InvalidParamsError(
                "a switch and a light on the same node need no binding through the controller",
                {"switch": switch, "light": light},
            )
        s_data, l_data = ctl.node(s_node), ctl.node(l_node)
        if s_data is None or l_data is None:
            missing = switch if s_data is None else light
            raise NotFoundError(f"no Matter device '{missing}'", {"device": missing})
        clients = s_data.attributes.get(f"{s_ep}/29/{DESCRIPTOR_CLIENT_LIST}")
        if _binding_path(s_ep) not in s_data.attributes or not (
            isinstance(clients, list) and ONOFF_CLUSTER in clients
        ):
            raise InvalidParamsError(
                f"device {switch} cannot be bound: it has no Binding cluster and OnOff client",
                {"switch": switch},
            )
        if f"{l_ep}/6/0" not in l_data.attributes:
            raise InvalidParamsError(
                f"device {light} has no OnOff cluster to be switched", {"light": light}
            )

    async def bind(self, switch: str, light: str) -> Binding:
        """Let the switch operate the light's OnOff, then bind it; return the binding read back.

        Raise ``ConflictError`` when the switch is already bound to the light,
        ``DeviceUnavailableError`` / ``ToolFailedError`` when a device does not take the
        write, ``ToolFailedError`` when the device does not hold it when read back.
        """
        self.check(switch, light)
        s_node, s_ep = _split(switch)
        l_node, l_ep = _split(light)
        ctl = self._controller()
        targets = await self._read_list(ctl, s_node, _binding_path(s_ep))
        if any(_onoff_target(t) == light for t in targets):
            raise ConflictError(
                f"{switch} is already bound to {light}", {"switch": switch, "light": light}
            )
        acl = await self._read_list(ctl, l_node, ACL_PATH)
        fabric = _admin_fabric(acl, l_node)
        if not any(_is_grant(e, s_node, l_ep) for e in acl):
            grant = {
                "privilege": PRIVILEGE_OPERATE,
                "authMode": AUTH_CASE,
                "subjects": [s_node],
                "targets": [{"cluster": ONOFF_CLUSTER, "endpoint": l_ep, "deviceType": None}],
                "fabricIndex": fabric,
            }
            await self._write_acl(ctl, l_node, [*map(_acl_arg, acl), grant])
        new = {"node": l_node, "endpoint": l_ep, "cluster": ONOFF_CLUSTER, "fabricIndex": fabric}
        await self._write_bindings(ctl, s_node, s_ep, [*map(_binding_arg, targets), new])
        held = await self._read_list(ctl, s_node, _binding_path(s_ep))
        acl_held = await self._read_list(ctl, l_node, ACL_PATH)
        if not any(_onoff_target(t) == light for t in held) or not any(
            _is_grant(e, s_node, l_ep) for e in acl_held
        ):
            raise ToolFailedError(
                f"the devices do not hold the binding {switch} -> {light} after the write",
                {"switch": switch, "light": light},
            )
        return Binding(switch=switch, light=light)

    async def unbind(self, switch: str, light: str) -> Binding:
        """Remove the binding, then the light's grant when no binding of that node needs it.

        Raise ``NotFoundError`` when the switch is not bound to the light.
        """
        s_node, s_ep = _split(switch)
        l_node, l_ep = _split(light)
        ctl = self._controller()
        if ctl.node(s_node) is None:
            raise NotFoundError(f"no Matter device '{switch}'", {"device": switch})
        targets = await self._read_list(ctl, s_node, _binding_path(s_ep))
        kept = [t for t in targets if _onoff_target(t) != light]
        if len(kept) == len(targets):
            raise NotFoundError(
                f"{switch} is not bound to {light}", {"switch": switch, "light": light}
            )
        await self._write_bindings(ctl, s_node, s_ep, [_binding_arg(t) for t in kept])
        held = await self._read_list(ctl, s_node, _binding_path(s_ep))
        if any(_onoff_target(t) == light for t in held):
            raise ToolFailedError(
                f"{switch} still holds its binding to {light} after the write",
                {"switch": switch, "light": light},
            )
        still = any(
            b.light == light and _split(b.switch)[0] == s_node and b.switch != switch
            for b in self.bindings()
        )
        if ctl.node(l_node) is not None and not still:
            acl = await self._read_list(ctl, l_node, ACL_PATH)
            left = [e for e in acl if not _is_grant(e, s_node, l_ep)]
            if len(left) != len(acl):
                _admin_fabric(left, l_node)
                await self._write_acl(ctl, l_node, [_acl_arg(e) for e in left])
        return Binding(switch=switch, light=light)

    @staticmethod
    async def _read_list(ctl: _Controller, node_id: int, path: str) -> list[dict[str, Any]]:
        value = (await ctl.read(node_id, [path], WRITE_TIMEOUT_S)).get(path)
        if not isinstance(value, list):
            raise ToolFailedError(
                f"node {node_id} did not answer {path} with a list", {"node_id": node_id}
            )
        # What the device holds now is what ``bindings`` lists at once, not only after
        # the device's report reaches the mirror (slow on a loaded machine: a removed
        # binding stayed listed for over a minute in CI).
        node = ctl.node(node_id)
        if node is not None:
            node.attributes[path] = value
        return [e for e in value if isinstance(e, dict)]

    @staticmethod
    async def _write_acl(ctl: _Controller, node_id: int, entries: list[dict[str, Any]]) -> None:
        result = await _send(ctl, node_id, "set_acl_entry", node_id=node_id, entry=entries)
        _check_write(result, node_id, "its access control list")

    @staticmethod
    async def _write_bindings(
        ctl: _Controller, node_id: int, endpoint: int, targets: list[dict[str, Any]]
    ) -> None:
        result = await _send(
            ctl,
            node_id,
            "set_node_binding",
            node_id=node_id,
            endpoint=endpoint,
            bindings=targets,
        )
        _check_write(result, node_id, f"the binding of endpoint {endpoint}")


async def _send(ctl: _Controller, node: int, command: str, **args: Any) -> Any:
    """Send one write command; a controller error becomes the bridge's error."""
    try:
        return await ctl.send_command(command, timeout_s=WRITE_TIMEOUT_S, **args)
    except TimeoutError as err:
        raise DeviceUnavailableError(
            f"node {node} did not answer {command} within {WRITE_TIMEOUT_S:g} s",
            {"node_id": node},
        ) from err
    except ControllerCommandError as err:
        if err.error_code in _NOT_REACHABLE:
            raise DeviceUnavailableError(
                f"node {node} is not reachable: {err.details}", {"node_id": node}
            ) from err
        raise ToolFailedError(f"{command} on node {node} failed: {err.details}") from err


def _onoff_target(entry: Any) -> str | None:
    """Return ``node-endpoint`` of an OnOff (or any-cluster) node binding entry, else None."""
    if not isinstance(entry, dict):
        return None
    node, endpoint, cluster = entry.get(_NODE), entry.get(_ENDPOINT), entry.get(_CLUSTER)
    if not isinstance(node, int) or not isinstance(endpoint, int):
        return None
    if cluster not in (None, ONOFF_CLUSTER):
        return None
    return f"{node}-{endpoint}"


def _is_grant(entry: dict[str, Any], subject: int, endpoint: int) -> bool:
    """Return whether ``entry`` is exactly the grant a binding writes."""
    targets = entry.get(_TARGETS)
    return (
        entry.get(_PRIVILEGE) == PRIVILEGE_OPERATE
        and entry.get(_AUTH_MODE) == AUTH_CASE
        and entry.get(_SUBJECTS) == [subject]
        and isinstance(targets, list)
        and len(targets) == 1
        and isinstance(targets[0], dict)
        and targets[0].get("0") == ONOFF_CLUSTER
        and targets[0].get("1") == endpoint
        and targets[0].get("2") is None
    )


def _admin_fabric(acl: list[dict[str, Any]], node_id: int) -> int:
    """Return this fabric's index from its Administer CASE entry; refuse an ACL without one.

    Writing an ACL without it would lock the controller out of the node.
    """
    for entry in acl:
        if entry.get(_PRIVILEGE) == PRIVILEGE_ADMINISTER and entry.get(_AUTH_MODE) == AUTH_CASE:
            fabric = entry.get(_FABRIC)
            if isinstance(fabric, int):
                return fabric
    raise ToolFailedError(
        f"node {node_id}'s access control list has no Administer entry for this fabric: "
        "not written",
        {"node_id": node_id},
    )


def _acl_arg(entry: dict[str, Any]) -> dict[str, Any]:
    """Return an ACL entry read back (field tags) as the controller's write takes it."""
    targets = entry.get(_TARGETS)
    return {
        "privilege": entry.get(_PRIVILEGE),
        "authMode": entry.get(_AUTH_MODE),
        "subjects": entry.get(_SUBJECTS),
        "targets": None
        if targets is None
        else [
            {"cluster": t.get("0"), "endpoint": t.get("1"), "deviceType": t.get("2")}
            for t in targets
            if isinstance(t, dict)
        ],
        "fabricIndex": entry.get(_FABRIC),
    }


def _binding_arg(entry: dict[str, Any]) -> dict[str, Any]:
    """Return a binding target read back (field tags) as the controller's write takes it."""
    return {
        "node": entry.get(_NODE),
        "group": entry.get(_GROUP),
        "endpoint": entry.get(_ENDPOINT),
        "cluster": entry.get(_CLUSTER),
        "fabricIndex": entry.get(_FABRIC),
    }


def _check_write(result: Any, node_id: int, what: str) -> None:
    """Raise ``ToolFailedError`` when the controller says a write was refused."""
    for row in result if isinstance(result, list) else []:
        status = row.get("Status") if isinstance(row, dict) else None
        if isinstance(status, int) and status != 0:
            raise ToolFailedError(
                f"node {node_id} refused the write of {what} (status {status:#x})",
                {"node_id": node_id, "status": status},
            )
