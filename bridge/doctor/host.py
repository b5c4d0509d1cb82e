"""Host checks: the LAN interface, IPv6 kernel settings, addresses, routes, storage, clock.

Everything is read through ``Host``, which maps absolute paths (``/proc/sys/...``,
``/sys/class/net/...``, ``/etc/passwd``) under a root directory, so the same checks run
on the live system (root ``/``) and on prepared trees in tests. Nothing here writes to
the host except the write probe in a controller storage directory the doctor owns.

One module because its checks are small independent functions over the same ``Host``
view, read one after another.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import ipaddress
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bridge.doctor.models import CheckResult, Status, worst

IFF_UP = 0x1
IFF_MULTICAST = 0x1000
RTF_GATEWAY = 0x0002
RTF_ROUTEINFO = 0x00800000
IFA_F_TENTATIVE = 0x40
IFA_F_DADFAILED = 0x08
SCOPE_LINK = 0x20
SCOPE_HOST = 0x10
# A Pi has no battery-backed clock: before NTP it may read its last shutdown time or 1970.
EARLIEST_PLAUSIBLE = datetime(2025, 1, 1, tzinfo=UTC)
TIME_ERROR = 5
MAX_SECRET_FILES = 2000


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Host:
    """A view of the machine under ``root``; ``now`` is injectable for tests."""

    root: Path = Path("/")
    now: Callable[[], datetime] = field(default=_utcnow)

    @property
    def is_live(self) -> bool:
        """Return True when the view is the running system itself."""
        return self.root.resolve() == Path("/")

    def path(self, absolute: str | Path) -> Path:
        """Return where an absolute path of the viewed machine lives under the root."""
        return self.root / str(absolute).lstrip("/")

    def read(self, absolute: str | Path) -> str | None:
        """Return a file's stripped text, or None when it cannot be read."""
        try:
            return self.path(absolute).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None

    def lines(self, absolute: str) -> list[str]:
        """Return a file's non-empty lines (empty when unreadable)."""
        text = self.read(absolute)
        return [line for line in (text or "").splitlines() if line.strip()]

    def user_id(self, name: str) -> int | None:
        """Return the uid of ``name`` from the viewed machine's /etc/passwd."""
        for line in self.lines("/etc/passwd"):
            parts = line.split(":")
            if len(parts) >= 3 and parts[0] == name and parts[2].isdigit():
                return int(parts[2])
        return None


# --- interface discovery ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """One IPv6 route from /proc/net/ipv6_route."""

    destination: str
    prefix_len: int
    next_hop: str
    flags: int
    interface: str

    @property
    def is_default(self) -> bool:
        """Return True for a default route through a router."""
        return self.prefix_len == 0 and bool(self.flags & RTF_GATEWAY)

    @property
    def is_route_info(self) -> bool:
        """Return True for a route learned from an RA Route Information Option."""
        return bool(self.flags & RTF_ROUTEINFO)


@dataclass(frozen=True, slots=True, kw_only=True)
class Address:
    """One IPv6 address from /proc/net/if_inet6."""

    address: str
    prefix_len: int
    scope: int
    flags: int
    interface: str

    @property
    def kind(self) -> str:
        """Return ``link-local``, ``ula``, ``global`` or ``host``."""
        if self.scope == SCOPE_HOST:
            return "host"
        if self.scope == SCOPE_LINK:
            return "link-local"
        return "ula" if self.address.lower().startswith(("fc", "fd")) else "global"


def _hex_to_ipv6(text: str) -> str:
    groups = [text[i : i + 4] for i in range(0, 32, 4)]
    return str(ipaddress.IPv6Address(":".join(groups)))


def ipv6_routes(host: Host) -> list[Route]:
    """Return the IPv6 routing table of the viewed machine."""
    routes = []
    for line in host.lines("/proc/net/ipv6_route"):
        parts = line.split()
        if len(parts) != 10:
            continue
        try:
            routes.append(
                Route(
                    destination=_hex_to_ipv6(parts[0]),
                    prefix_len=int(parts[1], 16),
                    next_hop=_hex_to_ipv6(parts[4]),
                    flags=int(parts[8], 16),
                    interface=parts[9],
                )
            )
        except ValueError:
            continue
    return routes


def ipv6_addresses(host: Host) -> list[Address]:
    """Return the IPv6 addresses of the viewed machine."""
    addresses = []
    for line in host.lines("/proc/net/if_inet6"):
        parts = line.split()
        if len(parts) != 6:
            continue
        try:
            addresses.append(
                Address(
                    address=_hex_to_ipv6(parts[0]),
                    prefix_len=int(parts[2], 16),
                    scope=int(parts[3], 16),
                    flags=int(parts[4], 16),
                    interface=parts[5],
                )
            )
        except ValueError:
            continue
    return addresses


def _ipv4_default_interface(host: Host) -> str | None:
    for line in host.lines("/proc/net/route")[1:]:
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "00000000" and int(parts[3], 16) & RTF_GATEWAY:
            return parts[0]
    return None


def primary_interface(host: Host, configured: str | None) -> tuple[str | None, str]:
    """Return the LAN interface and how it was chosen (configured, IPv6 or IPv4 route)."""
    if configured:
        return configured, "configured"
    for route in ipv6_routes(host):
        if route.is_default and route.interface != "lo":
            return route.interface, "IPv6 default route"
    v4 = _ipv4_default_interface(host)
    if v4:
        return v4, "IPv4 default route"
    return None, "no default route"


def _no_interface(name: str, title: str, how: str) -> CheckResult:
    return CheckResult(
        name=name,
        title=title,
        status=Status.FAIL,
        found=f"no LAN interface found ({how})",
        fix="connect the Pi to the LAN, or set doctor.interface in the configuration",
    )


# --- checks ---------------------------------------------------------------------------------


def check_interface(host: Host, interface: str | None, how: str) -> CheckResult:
    """Check the LAN interface exists, is up and carries multicast."""
    title = "LAN interface up with multicast"
    if interface is None:
        return _no_interface("interface", title, how)
    base = f"/sys/class/net/{interface}"
    flags_text = host.read(f"{base}/flags")
    if flags_text is None:
        return CheckResult(
            name="interface",
            title=title,
            status=Status.FAIL,
            found=f"interface {interface} ({how}) does not exist",
            fix="set doctor.interface to the LAN interface (see `ip link`)",
        )
    flags = int(flags_text, 16)
    operstate = host.read(f"{base}/operstate") or "unknown"
    wireless = host.path(f"{base}/wireless").exists()
    found = (
        f"{interface} ({how}{', Wi-Fi' if wireless else ''}): operstate {operstate}, "
        f"flags {flags_text}"
    )
    if not flags & IFF_UP or operstate == "down":
        return CheckResult(
            name="interface",
            title=title,
            status=Status.FAIL,
            found=found,
            fix=f"bring it up: ip link set {interface} up (and check the cable / Wi-Fi)",
        )
    if not flags & IFF_MULTICAST:
        return CheckResult(
            name="interface",
            title=title,
            status=Status.FAIL,
            found=found,
            fix=f"enable multicast, needed by mDNS and IPv6 neighbour discovery: "
            f"ip link set {interface} multicast on",
        )
    if operstate != "up":
        return CheckResult(
            name="interface",
            title=title,
            status=Status.WARN,
            found=found,
            fix="the driver does not report a link state; make sure the link is connected",
        )
    return CheckResult(name="interface", title=title, status=Status.OK, found=found)


def check_ipv6_sysctl(host: Host, interface: str | None, how: str) -> CheckResult:
    """Check the interface accepts router advertisements with Thread /64 routes."""
    title = "IPv6 kernel settings for Thread routes"
    if interface is None:
        return _no_interface("ipv6_sysctl", title, how)
    if not host.path("/proc/sys/net/ipv6").is_dir():
        return CheckResult(
            name="ipv6_sysctl",
            title=title,
            status=Status.FAIL,
            found="IPv6 is disabled in the kernel (/proc/sys/net/ipv6 is missing)",
            fix="remove ipv6.disable=1 from /boot/firmware/cmdline.txt and reboot",
        )
    conf = f"/proc/sys/net/ipv6/conf/{interface}"
    names = (
        "disable_ipv6",
        "accept_ra",
        "accept_ra_rtr_pref",
        "accept_ra_rt_info_max_plen",
        "forwarding",
    )
    values: dict[str, int | None] = {}
    for key in names:
        text = host.read(f"{conf}/{key}")
        values[key] = int(text) if text is not None and text.lstrip("-").isdigit() else None
    found = " ".join(f"{k}={'missing' if v is None else v}" for k, v in values.items())
    problems: list[tuple[Status, str]] = []
    persist = "; persist it in /etc/sysctl.d/60-atmosphere-bridge.conf (scripts/install.sh)"
    if values["disable_ipv6"] == 1:
        problems.append((Status.FAIL, f"sysctl -w net.ipv6.conf.{interface}.disable_ipv6=0"))
    forwarding = values["forwarding"] == 1
    accept_ra = values["accept_ra"] or 0
    if accept_ra == 0:
        problems.append((Status.FAIL, f"sysctl -w net.ipv6.conf.{interface}.accept_ra=1"))
    elif forwarding and accept_ra == 1:
        problems.append(
            (
                Status.FAIL,
                f"forwarding is on, so the kernel ignores router advertisements: "
                f"sysctl -w net.ipv6.conf.{interface}.forwarding=0",
            )
        )
    elif forwarding:
        problems.append(
            (
                Status.WARN,
                f"IPv6 forwarding is on for {interface} (accept_ra=2 keeps RAs working): "
                f"expected when otbr-agent runs on this machine; otherwise "
                f"sysctl -w net.ipv6.conf.{interface}.forwarding=0",
            )
        )
    if values["accept_ra_rt_info_max_plen"] is None:
        problems.append(
            (
                Status.FAIL,
                "the kernel lacks CONFIG_IPV6_ROUTE_INFO, so Thread routes in RAs are ignored; "
                "use the Raspberry Pi OS kernel",
            )
        )
    elif values["accept_ra_rt_info_max_plen"] < 64:
        problems.append(
            (
                Status.FAIL,
                f"sysctl -w net.ipv6.conf.{interface}.accept_ra_rt_info_max_plen=64",
            )
        )
    if values["accept_ra_rtr_pref"] == 0:
        problems.append(
            (
                Status.FAIL,
                f"route information is only read with router preferences: "
                f"sysctl -w net.ipv6.conf.{interface}.accept_ra_rtr_pref=1",
            )
        )
    if not problems:
        return CheckResult(name="ipv6_sysctl", title=title, status=Status.OK, found=found)
    status = worst([s for s, _ in problems])
    fix = "; ".join(text for _, text in problems) + persist
    return CheckResult(
        name="ipv6_sysctl",
        title=title,
        status=status,
        found=found,
        fix=fix,
        details={"values": values},
    )


def check_ipv6_address(host: Host, interface: str | None, how: str) -> CheckResult:
    """Check the interface has a usable IPv6 address beyond link-local."""
    title = "IPv6 address on the LAN interface"
    if interface is None:
        return _no_interface("ipv6_address", title, how)
    mine = [a for a in ipv6_addresses(host) if a.interface == interface]
    usable = [a for a in mine if not a.flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED)]
    listing = ", ".join(f"{a.address}/{a.prefix_len} ({a.kind})" for a in mine) or "none"
    found = f"{interface}: {listing}"
    if not any(a.kind == "link-local" for a in usable):
        return CheckResult(
            name="ipv6_address",
            title=title,
            status=Status.FAIL,
            found=found,
            fix=f"IPv6 is off or the link-local address failed duplicate address detection: "
            f"sysctl -w net.ipv6.conf.{interface}.disable_ipv6=0, then "
            f"ip link set {interface} down && ip link set {interface} up",
        )
    if not any(a.kind in ("ula", "global") for a in usable):
        return CheckResult(
            name="ipv6_address",
            title=title,
            status=Status.WARN,
            found=found,
            fix="only link-local: no router advertises a prefix on this LAN. A Thread border "
            "router normally advertises a ULA prefix; check that otbr-agent runs with "
            "-B <this interface> and that accept_ra is on",
        )
    return CheckResult(name="ipv6_address", title=title, status=Status.OK, found=found)


def check_ipv6_route(host: Host, interface: str | None, how: str) -> CheckResult:
    """Check for an IPv6 default route and report routes learned from border routers."""
    title = "IPv6 default route and Thread routes"
    if interface is None:
        return _no_interface("ipv6_route", title, how)
    routes = [r for r in ipv6_routes(host) if r.interface == interface]
    default = [r for r in routes if r.is_default]
    learned = [r for r in routes if r.is_route_info]
    learned_text = ", ".join(f"{r.destination}/{r.prefix_len} via {r.next_hop}" for r in learned)
    found = (
        f"default route: {'via ' + default[0].next_hop if default else 'none'}; "
        f"routes from router advertisements: {learned_text or 'none'}"
    )
    details = {
        "default": [r.next_hop for r in default],
        "route_info": [f"{r.destination}/{r.prefix_len}" for r in learned],
    }
    if default:
        return CheckResult(
            name="ipv6_route", title=title, status=Status.OK, found=found, details=details
        )
    return CheckResult(
        name="ipv6_route",
        title=title,
        status=Status.WARN,
        found=found,
        details=details,
        fix="no IPv6 default route: devices on the LAN still work, but check that the router "
        "sends RAs and that accept_ra is on; Thread devices need the routes above, "
        "announced by a border router",
    )


def _mount_for(host: Host, target: str) -> tuple[str, str, str] | None:
    best: tuple[str, str, str] | None = None
    for line in host.lines("/proc/self/mounts"):
        parts = line.split()
        if len(parts) < 4:
            continue
        point = parts[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) > len(best[0])):
            best = (point, parts[2], parts[3])
    return best


def check_controller_storage(host: Host, storage: Path, controller_user: str) -> CheckResult:
    """Check the controller's storage exists, persists across reboots and is writable."""
    title = "Matter controller storage writable and persistent"
    where = host.path(storage)
    if not where.is_dir():
        return CheckResult(
            name="controller_storage",
            title=title,
            status=Status.FAIL,
            found=f"{storage} does not exist",
            fix="start atmosphere-matter-controller.service once (its StateDirectory creates "
            "it) or set doctor.controller_storage to the controller's --storage-path",
        )
    mount = _mount_for(host, str(storage))
    if mount is not None and mount[1] in ("tmpfs", "ramfs"):
        return CheckResult(
            name="controller_storage",
            title=title,
            status=Status.FAIL,
            found=f"{storage} is on {mount[1]} ({mount[0]}): the fabric is lost at reboot",
            fix="keep the controller's storage on the SD card/SSD (the unit binds "
            "/var/lib/atmosphere-matter-controller to /data)",
        )
    if mount is not None and "ro" in mount[2].split(","):
        return CheckResult(
            name="controller_storage",
            title=title,
            status=Status.FAIL,
            found=f"{storage} is on a read-only file system ({mount[0]})",
            fix="remount it read-write; check the SD card for errors (dmesg)",
        )
    st = where.stat()
    mode = stat.S_IMODE(st.st_mode)
    uid = host.user_id(controller_user)
    if uid is not None:
        found = f"{storage}: owner uid {st.st_uid}, mode {mode:04o}; {controller_user} is uid {uid}"
        if (st.st_uid == uid and mode & 0o200) or mode & 0o002:
            return CheckResult(
                name="controller_storage", title=title, status=Status.OK, found=found
            )
        return CheckResult(
            name="controller_storage",
            title=title,
            status=Status.FAIL,
            found=found,
            fix=f"chown -R {controller_user}: {storage} && chmod 700 {storage}",
        )
    # No dedicated user (a developer machine): the controller runs as we do.
    try:
        with tempfile.NamedTemporaryFile(dir=where, prefix=".doctor-"):
            pass
    except OSError as err:
        return CheckResult(
            name="controller_storage",
            title=title,
            status=Status.FAIL,
            found=f"{storage}: cannot create a file: {err.strerror}",
            fix=f"make {storage} writable by the user that runs the controller",
        )
    return CheckResult(
        name="controller_storage",
        title=title,
        status=Status.OK,
        found=f"{storage}: writable (mode {mode:04o})",
    )


def _kernel_clock_synchronised() -> bool | None:
    """Ask the kernel (adjtimex) whether NTP disciplines the clock; None if unknown."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        buf = ctypes.create_string_buffer(512)  # struct timex, modes=0: read only
        state = int(libc.adjtimex(buf))
    except (OSError, AttributeError):
        return None
    if state < 0:
        return None
    return state != TIME_ERROR


def check_clock(host: Host) -> CheckResult:
    """Check the clock is plausible and synchronised (tokens and certificates need it)."""
    title = "Clock synchronised"
    now = host.now()
    found = f"clock reads {now.strftime('%Y-%m-%d %H:%M:%S')} UTC"
    if now < EARLIEST_PLAUSIBLE:
        return CheckResult(
            name="clock",
            title=title,
            status=Status.FAIL,
            found=found + " (implausibly early)",
            fix="the Pi has no real-time clock: enable NTP (timedatectl set-ntp true) and make "
            "sure the network allows it; tokens and Matter certificates fail until then",
        )
    marker = host.path("/run/systemd/timesync/synchronized").exists()
    kernel = _kernel_clock_synchronised() if host.is_live else None
    if marker or kernel:
        source = "systemd-timesyncd" if marker else "kernel NTP state"
        return CheckResult(
            name="clock", title=title, status=Status.OK, found=f"{found}; synchronised ({source})"
        )
    return CheckResult(
        name="clock",
        title=title,
        status=Status.WARN,
        found=f"{found}; not known to be synchronised",
        fix="enable time synchronisation: timedatectl set-ntp true (check: timedatectl status)",
    )


def check_free_disk(host: Host, path: Path, warn_mb: int, fail_mb: int) -> CheckResult:
    """Check free space on the file system that holds ``path``."""
    title = "Free disk space"
    target = host.path(path)
    while not target.exists() and target != target.parent:
        target = target.parent
    usage = shutil.disk_usage(target)
    free_mb = usage.free // (1024 * 1024)
    found = f"{free_mb} MB free of {usage.total // (1024 * 1024)} MB at {path}"
    details = {"free_mb": free_mb}
    if free_mb < fail_mb:
        status = Status.FAIL
    elif free_mb < warn_mb:
        status = Status.WARN
    else:
        return CheckResult(
            name="free_disk", title=title, status=Status.OK, found=found, details=details
        )
    return CheckResult(
        name="free_disk",
        title=title,
        status=status,
        found=found,
        details=details,
        fix="free space: journalctl --vacuum-size=100M, apt-get clean, remove old files; "
        "SQLite and the controller fail to save state on a full disk",
    )


def check_secret_files(host: Host, directories: list[Path]) -> CheckResult:
    """Check that keys, tokens and fabric credentials are not readable by other users."""
    title = "Key and token files private"
    exposed: list[str] = []
    group: list[str] = []
    seen = 0
    missing = []
    for directory in directories:
        base = host.path(directory)
        if not base.is_dir():
            missing.append(str(directory))
            continue
        for current, dirs, files in os.walk(base):
            dirs.sort()
            for entry in [current, *(os.path.join(current, f) for f in sorted(files))]:
                seen += 1
                if seen > MAX_SECRET_FILES:
                    break
                try:
                    st = os.lstat(entry)
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    continue
                rel = str(Path(entry).relative_to(host.root))
                shown = "/" + ("" if rel == "." else rel)
                mode = stat.S_IMODE(st.st_mode)
                readable = 0o005 if stat.S_ISDIR(st.st_mode) else 0o004
                if mode & (readable | 0o002):
                    exposed.append(f"{shown} ({mode:04o})")
                elif mode & 0o040:
                    group.append(f"{shown} ({mode:04o})")
    checked = ", ".join(str(d) for d in directories if str(d) not in missing)
    found = f"checked {checked or 'nothing'}"
    if missing:
        found += f"; not present yet: {', '.join(missing)}"
    details = {"exposed": exposed, "group_readable": group}
    if exposed:
        return CheckResult(
            name="secrets",
            title=title,
            status=Status.FAIL,
            found=f"{found}; readable by others: {', '.join(exposed[:10])}",
            details=details,
            fix="chmod -R go-rwx "
            + " ".join(str(d) for d in directories)
            + " (the units set UMask=0077 and StateDirectoryMode=0700)",
        )
    if group:
        return CheckResult(
            name="secrets",
            title=title,
            status=Status.WARN,
            found=f"{found}; readable by the group: {', '.join(group[:10])}",
            details=details,
            fix="chmod -R g-rwx " + " ".join(str(d) for d in directories),
        )
    if missing and not checked:
        return CheckResult(
            name="secrets",
            title=title,
            status=Status.WARN,
            found=found,
            details=details,
            fix="nothing to check yet: start the bridge and the controller once",
        )
    return CheckResult(name="secrets", title=title, status=Status.OK, found=found, details=details)
