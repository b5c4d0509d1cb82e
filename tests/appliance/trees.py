"""Prepared machine trees for doctor tests: /proc/sys, /proc/net, /sys/class/net, /etc."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

ROUTER_LL = "fe80::1e:42ff:fe00:1"
BR_LL = "fe80::b0:2dff:fe11:2"
# Flags as the kernel prints them: RA default route (UP|GATEWAY|DEFAULT|ADDRCONF|EXPIRES)
# and a Route Information Option route (adds RTF_ROUTEINFO).
RA_DEFAULT_FLAGS = 0x00450003
RIO_FLAGS = 0x00C40003
ONLINK_FLAGS = 0x00000001


def _hex(address: str) -> str:
    return ipaddress.IPv6Address(address).exploded.replace(":", "")


@dataclass
class HostTree:
    """Writes the files the doctor reads under ``root``."""

    root: Path

    def write(self, absolute: str, text: str) -> Path:
        path = self.root / absolute.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def sysctl(self, interface: str, **values: int) -> None:
        for key, value in values.items():
            self.write(f"/proc/sys/net/ipv6/conf/{interface}/{key}", f"{value}\n")

    def link(self, interface: str, *, flags: int = 0x1003, operstate: str = "up") -> None:
        self.write(f"/sys/class/net/{interface}/flags", f"0x{flags:x}\n")
        self.write(f"/sys/class/net/{interface}/operstate", operstate + "\n")

    def addresses(self, *rows: tuple[str, int, int, int, str]) -> None:
        """Rows of (address, prefix_len, scope, flags, interface)."""
        lines = [
            f"{_hex(a)} {i + 2:02x} {plen:02x} {scope:02x} {flags:02x} {ifname:>8}"
            for i, (a, plen, scope, flags, ifname) in enumerate(rows)
        ]
        self.write("/proc/net/if_inet6", "\n".join(lines) + "\n")

    def routes(self, *rows: tuple[str, int, str, int, str]) -> None:
        """Rows of (destination, prefix_len, next_hop, flags, interface)."""
        zero = "0" * 32
        lines = [
            f"{_hex(dest)} {plen:02x} {zero} 00 {_hex(hop)} 00000400 00000001 00000000 "
            f"{flags:08x} {ifname:>8}"
            for dest, plen, hop, flags, ifname in rows
        ]
        # The kernel always lists the loopback's unreachable default route.
        lines.append(f"{zero} 00 {zero} 00 {zero} ffffffff 00000001 00000000 00200200       lo")
        self.write("/proc/net/ipv6_route", "\n".join(lines) + "\n")

    def ipv4_default(self, interface: str) -> None:
        self.write(
            "/proc/net/route",
            "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
            f"{interface}\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
            f"{interface}\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n",
        )

    def mounts(self, *rows: tuple[str, str, str]) -> None:
        """Rows of (mount point, fs type, options)."""
        lines = [
            f"/dev/root{i} {point} {fstype} {opts} 0 0"
            for i, (point, fstype, opts) in enumerate(rows)
        ]
        self.write("/proc/self/mounts", "\n".join(lines) + "\n")

    def passwd(self, **users: int) -> None:
        lines = ["root:x:0:0:root:/root:/bin/bash"] + [
            f"{name}:x:{uid}:{uid}::/var/lib/{name}:/usr/sbin/nologin"
            for name, uid in users.items()
        ]
        self.write("/etc/passwd", "\n".join(lines) + "\n")


def healthy_pi(tree: HostTree, interface: str = "eth0") -> None:
    """Write a Pi on a LAN with a Thread border router, set up as firmware_notes says."""
    tree.sysctl(
        interface,
        disable_ipv6=0,
        accept_ra=1,
        accept_ra_rtr_pref=1,
        accept_ra_rt_info_max_plen=64,
        forwarding=0,
    )
    tree.link(interface)
    tree.link("lo", flags=0x9, operstate="unknown")
    tree.addresses(
        ("::1", 128, 0x10, 0x80, "lo"),
        ("fe80::ba27:ebff:fe12:3456", 64, 0x20, 0x80, interface),
        ("fd4e:7a1c:2b3d:1:ba27:ebff:fe12:3456", 64, 0x00, 0x00, interface),
    )
    tree.routes(
        ("fd4e:7a1c:2b3d:1::", 64, "::", ONLINK_FLAGS, interface),
        ("fd12:3456:789a:1::", 64, BR_LL, RIO_FLAGS, interface),
        ("::", 0, ROUTER_LL, RA_DEFAULT_FLAGS, interface),
    )
    tree.ipv4_default(interface)
    tree.mounts(
        ("/", "ext4", "rw,noatime"),
        ("/tmp", "tmpfs", "rw,nosuid"),
        ("/boot/firmware", "vfat", "rw"),
    )
    tree.passwd(**{"atmosphere-bridge": 999, "atmosphere-matter": 998})
    tree.write("/run/systemd/timesync/synchronized", "")
