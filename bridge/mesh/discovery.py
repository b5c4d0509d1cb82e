"""Zeroconf discovery of mesh peers: advertise ``_atmosphere._tcp.local.`` and browse it.

This node registers one service instance (``<name>-<node id prefix>``) on the
configured interfaces (interface names or IP addresses; all interfaces when none are
configured; IPv4) with a TXT record carrying its node id (``id``), key fingerprint (``fp``),
API port (``port``) and mesh protocol version (``pv``). It browses the same type and
keeps the set of peers that are currently advertised; callers get a callback when a
peer appears, changes or goes away. TXT data is only a hint: nothing learned here is
trusted until the peer proves its key in a signed exchange (``envelope.py``), and a
peer whose id does not match its fingerprint is ignored.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ifaddr
from zeroconf import IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from bridge.mesh.node_id import NODE_ID_RE, PROTOCOL_VERSION, NodeIdentity, node_id_for_fingerprint

_LOGGER = logging.getLogger(__name__)

SERVICE_TYPE = "_atmosphere._tcp.local."


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveredPeer:
    """A peer seen on mDNS: its claimed id and fingerprint and where its API listens."""

    instance: str
    node_id: str
    fingerprint: str
    addresses: tuple[str, ...]
    port: int
    protocol: int

    def urls(self) -> list[str]:
        """Return the peer's API base URLs, IPv4 first."""
        urls = []
        for addr in sorted(self.addresses, key=lambda a: ":" in a):
            host = f"[{addr}]" if ":" in addr else addr
            urls.append(f"http://{host}:{self.port}")
        return urls

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "instance": self.instance,
            "node_id": self.node_id,
            "fingerprint": self.fingerprint,
            "addresses": list(self.addresses),
            "port": self.port,
            "protocol": self.protocol,
        }


def interface_addresses(interfaces: tuple[str, ...]) -> list[str]:
    """Return the IP addresses of the given interface names or literal addresses.

    An empty tuple means every non-loopback address. Raises ``ValueError`` for a name
    that is neither an interface nor an address.
    """
    adapters = ifaddr.get_adapters()
    by_name: dict[str, list[str]] = {}
    for adapter in adapters:
        for ip in adapter.ips:
            # IPv4 only for now: link-local IPv6 needs scope ids end to end.
            if isinstance(ip.ip, str):
                by_name.setdefault(adapter.nice_name, []).append(ip.ip)
    if not interfaces:
        return [
            a
            for addrs in by_name.values()
            for a in addrs
            if not ipaddress.ip_address(a).is_loopback
        ]
    result: list[str] = []
    for entry in interfaces:
        if entry in by_name:
            result.extend(by_name[entry])
            continue
        try:
            ipaddress.ip_address(entry)
        except ValueError as err:
            raise ValueError(f"mesh interface {entry!r} is neither an interface nor an IP") from err
        result.append(entry)
    return result


class Discovery:
    """Advertise this node and track ``_atmosphere._tcp`` peers on the LAN."""

    def __init__(
        self,
        identity: NodeIdentity,
        api_port: int,
        *,
        interfaces: tuple[str, ...] = (),
        on_change: Callable[[str, DiscoveredPeer], None] | None = None,
    ) -> None:
        self.identity = identity
        self.api_port = api_port
        self.interfaces = interfaces
        self._on_change = on_change
        self._aiozc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._info: AsyncServiceInfo | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._by_instance: dict[str, DiscoveredPeer] = {}
        self.addresses: list[str] = []

    @property
    def instance_name(self) -> str:
        """Return this node's service instance name."""
        label = "".join(c if c.isalnum() or c in "-_" else "-" for c in self.identity.name)
        return f"{label[:40]}-{self.identity.node_id[:8]}.{SERVICE_TYPE}"

    def peers(self) -> list[DiscoveredPeer]:
        """Return the peers currently advertised (this node excluded)."""
        return list(self._by_instance.values())

    async def start(self) -> None:
        """Register this node's service and start browsing."""
        self.addresses = interface_addresses(self.interfaces)
        if not self.addresses:
            raise ValueError("no usable address for mesh discovery on the configured interfaces")
        v4 = [a for a in self.addresses if ":" not in a]
        ip_version = IPVersion.V4Only if len(v4) == len(self.addresses) else IPVersion.All
        self._aiozc = AsyncZeroconf(interfaces=self.addresses, ip_version=ip_version)
        self._info = AsyncServiceInfo(
            SERVICE_TYPE,
            self.instance_name,
            port=self.api_port,
            parsed_addresses=self.addresses,
            properties={
                "id": self.identity.node_id,
                "fp": self.identity.fingerprint,
                "port": str(self.api_port),
                "pv": str(PROTOCOL_VERSION),
                "name": self.identity.name[:63],
            },
        )
        await self._aiozc.async_register_service(self._info, allow_name_change=True)
        self._browser = AsyncServiceBrowser(
            self._aiozc.zeroconf, SERVICE_TYPE, handlers=[self._on_service_state_change]
        )
        _LOGGER.info("mesh discovery on %s as %s", ", ".join(self.addresses), self.instance_name)

    async def stop(self) -> None:
        """Withdraw the service (goodbye packets) and stop browsing."""
        for task in tuple(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._browser is not None:
            await self._browser.async_cancel()
            self._browser = None
        if self._aiozc is not None:
            if self._info is not None:
                await self._aiozc.async_unregister_service(self._info)
            await self._aiozc.async_close()
            self._aiozc = None

    def _on_service_state_change(
        self, zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:
        if self._info is not None and name == self._info.name:
            return
        if state_change is ServiceStateChange.Removed:
            peer = self._by_instance.pop(name, None)
            if peer is not None:
                self._emit("removed", peer)
            return
        task = asyncio.get_running_loop().create_task(self._resolve(name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _resolve(self, name: str) -> None:
        if self._aiozc is None:
            return
        info = AsyncServiceInfo(SERVICE_TYPE, name)
        if not await info.async_request(self._aiozc.zeroconf, 3000):
            _LOGGER.debug("mesh peer %s did not answer its service info", name)
            return
        peer = _peer_from_info(name, info)
        if peer is None or peer.node_id == self.identity.node_id:
            return
        previous = self._by_instance.get(name)
        self._by_instance[name] = peer
        if previous != peer:
            self._emit("added" if previous is None else "updated", peer)

    def _emit(self, action: str, peer: DiscoveredPeer) -> None:
        _LOGGER.info("mesh peer %s %s at %s", peer.node_id, action, ", ".join(peer.urls()))
        if self._on_change is not None:
            try:
                self._on_change(action, peer)
            except Exception:
                _LOGGER.exception("mesh discovery callback failed")


def _peer_from_info(name: str, info: AsyncServiceInfo) -> DiscoveredPeer | None:
    props: dict[str, str] = {}
    for key, value in (info.properties or {}).items():
        if isinstance(key, bytes) and isinstance(value, bytes):
            props[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    node_id = props.get("id", "")
    fingerprint = props.get("fp", "")
    try:
        port = int(props.get("port") or info.port or 0)
        protocol = int(props.get("pv", "0"))
    except ValueError:
        return None
    if not NODE_ID_RE.match(node_id) or len(fingerprint) != 64 or not 0 < port < 65536:
        _LOGGER.debug("ignoring malformed mesh advertisement %s", name)
        return None
    if node_id != node_id_for_fingerprint(fingerprint):
        _LOGGER.info("ignoring mesh advertisement %s: id does not match fingerprint", name)
        return None
    if protocol != PROTOCOL_VERSION:
        _LOGGER.info("ignoring mesh peer %s speaking protocol %s", node_id, protocol)
        return None
    addresses = tuple(info.parsed_scoped_addresses())
    if not addresses:
        return None
    return DiscoveredPeer(
        instance=name,
        node_id=node_id,
        fingerprint=fingerprint,
        addresses=addresses,
        port=port,
        protocol=protocol,
    )
