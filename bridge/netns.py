"""Private network namespaces for the local Matter fabric (demo and end-to-end tests).

Details: docs/modules.md, ``bridge.netns``.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from bridge.errors import BridgeError

NS_MDNS_A = "mdns0"
NS_MDNS_B = "mdns1"
NS_UPLINK = "uplink0"
_SUBNET_PREFIX = "10.213"
_LOCK_PATH = Path("/run/atmosphere-netns.lock")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,30}$")


class NamespaceError(BridgeError):
    """A network namespace could not be created, found or removed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkNamespace:
    """A fabric namespace and the addresses of its host link."""

    name: str
    host_interface: str
    host_address: str
    ns_address: str

    def exec_prefix(self) -> list[str]:
        """Return the argv prefix that runs a command inside the namespace."""
        return ["ip", "netns", "exec", self.name]


def unsupported_reason() -> str | None:
    """Return why namespaces cannot be created here, or None when they can."""
    if os.name != "posix" or not os.path.exists("/proc/self/ns/net"):
        return "network namespaces need Linux"
    if shutil.which("ip") is None:
        return "the 'ip' command (Debian package iproute2) is not installed"
    if os.geteuid() != 0:
        return "creating a network namespace needs root (CAP_NET_ADMIN); run as root"
    probe = f"atm-probe-{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except NamespaceError as err:
        return f"'ip netns add' fails here: {err.message}"
    _ip("netns", "del", probe, check=False)
    return None


def _ip(*args: str, check: bool = True) -> str:
    try:
        proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
            ["ip", *args],  # noqa: S607 - iproute2 from PATH
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise NamespaceError(f"ip {' '.join(args)} could not run: {err}") from err
    if check and proc.returncode != 0:
        raise NamespaceError(
            f"ip {' '.join(args)} failed: {proc.stderr.strip() or proc.returncode}",
            {"args": list(args)},
        )
    return proc.stdout


def _host_interface(name: str) -> str:
    # Interface names are at most 15 bytes; derive a stable one from the namespace name.
    return f"atm{zlib.crc32(name.encode()) & 0xFFFFFF:06x}"


def _used_subnets() -> set[int]:
    used: set[int] = set()
    for match in re.finditer(rf"inet {_SUBNET_PREFIX}\.(\d+)\.", _ip("-4", "-o", "addr", "show")):
        used.add(int(match.group(1)))
    return used


def _wait_dad(name: str, timeout_s: float) -> None:
    # Until duplicate address detection finishes, link-local IPv6 addresses are
    # "tentative": mDNS and Matter cannot bind to them yet.
    deadline = time.monotonic() + timeout_s
    while "inet6" in _ip("-n", name, "-6", "addr", "show", "tentative"):
        if time.monotonic() > deadline:
            raise NamespaceError(f"IPv6 addresses in namespace {name} stayed tentative")
        time.sleep(0.05)


def find_namespace(name: str) -> NetworkNamespace | None:
    """Return the fabric namespace called ``name`` with its host link, or None."""
    if name not in _list_names():
        return None
    out = _ip("-n", name, "-4", "-o", "addr", "show", "dev", NS_UPLINK, check=False)
    match = re.search(rf"inet ({re.escape(_SUBNET_PREFIX)}\.(\d+)\.2)/30", out)
    if match is None:
        return None
    return NetworkNamespace(
        name=name,
        host_interface=_host_interface(name),
        host_address=f"{_SUBNET_PREFIX}.{match.group(2)}.1",
        ns_address=match.group(1),
    )


def _list_names() -> set[str]:
    return {line.split()[0] for line in _ip("netns", "list").splitlines() if line.strip()}


def create_namespace(name: str, *, dad_timeout_s: float = 10.0) -> NetworkNamespace:
    """Create (replacing a stale one) the fabric namespace ``name`` and return it."""
    if not _NAME_RE.match(name):
        raise NamespaceError(f"invalid namespace name {name!r}")
    # Several processes (tests, the demo) may create namespaces at once: pick the subnet
    # and claim it under one machine-wide lock.
    with _LOCK_PATH.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _create_locked(name, dad_timeout_s)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _create_locked(name: str, dad_timeout_s: float) -> NetworkNamespace:
    if name in _list_names():
        delete_namespace(name)
    host_if = _host_interface(name)
    _ip("link", "del", host_if, check=False)
    used = _used_subnets()
    free = next((n for n in range(1, 255) if n not in used), None)
    if free is None:
        raise NamespaceError(f"no free {_SUBNET_PREFIX}.N.0/30 subnet for namespace {name}")
    host_addr, ns_addr = f"{_SUBNET_PREFIX}.{free}.1", f"{_SUBNET_PREFIX}.{free}.2"
    _ip("netns", "add", name)
    try:
        _ip("-n", name, "link", "set", "lo", "up")
        _ip("-n", name, "link", "add", NS_MDNS_A, "type", "veth", "peer", "name", NS_MDNS_B)
        _ip("-n", name, "link", "set", NS_MDNS_A, "up")
        _ip("-n", name, "link", "set", NS_MDNS_B, "up")
        _ip("link", "add", host_if, "type", "veth", "peer", "name", NS_UPLINK, "netns", name)
        _ip("addr", "add", f"{host_addr}/30", "dev", host_if)
        _ip("link", "set", host_if, "up")
        _ip("-n", name, "addr", "add", f"{ns_addr}/30", "dev", NS_UPLINK)
        _ip("-n", name, "link", "set", NS_UPLINK, "up")
        _wait_dad(name, dad_timeout_s)
    except NamespaceError:
        delete_namespace(name)
        raise
    return NetworkNamespace(
        name=name, host_interface=host_if, host_address=host_addr, ns_address=ns_addr
    )


def delete_namespace(name: str) -> None:
    """Delete the namespace ``name`` and its host link (idempotent)."""
    _ip("link", "del", _host_interface(name), check=False)
    _ip("netns", "del", name, check=False)
