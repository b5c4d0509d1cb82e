"""Host checks of the doctor over prepared /proc, /sys and /etc trees."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bridge.doctor import host as h
from bridge.doctor.models import Status
from tests.appliance.trees import BR_LL, ROUTER_LL, HostTree, healthy_pi

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def tree(tmp_path: Path) -> HostTree:
    t = HostTree(tmp_path / "root")
    healthy_pi(t)
    return t


@pytest.fixture
def host(tree: HostTree) -> h.Host:
    return h.Host(root=tree.root, now=lambda: NOW)


# --- interface discovery ----------------------------------------------------------------


def test_primary_interface_comes_from_ipv6_default_route(host: h.Host) -> None:
    assert h.primary_interface(host, None) == ("eth0", "IPv6 default route")


def test_primary_interface_configured_wins(host: h.Host) -> None:
    assert h.primary_interface(host, "wlan0") == ("wlan0", "configured")


def test_primary_interface_falls_back_to_ipv4(tree: HostTree, host: h.Host) -> None:
    tree.routes()
    assert h.primary_interface(host, None) == ("eth0", "IPv4 default route")


def test_primary_interface_none_without_routes(tree: HostTree, host: h.Host) -> None:
    tree.routes()
    tree.write("/proc/net/route", "Iface\tDestination\tGateway \tFlags\n")
    assert h.primary_interface(host, None) == (None, "no default route")
    result = h.check_interface(host, None, "no default route")
    assert result.status is Status.FAIL
    assert result.found == "no LAN interface found (no default route)"


# --- interface --------------------------------------------------------------------------


def test_interface_ok(host: h.Host) -> None:
    result = h.check_interface(host, "eth0", "IPv6 default route")
    assert result.status is Status.OK
    assert result.found == "eth0 (IPv6 default route): operstate up, flags 0x1003"
    assert result.fix == ""


def test_interface_wifi_is_named(tree: HostTree, host: h.Host) -> None:
    tree.link("wlan0")
    (tree.root / "sys/class/net/wlan0/wireless").mkdir()
    result = h.check_interface(host, "wlan0", "configured")
    assert result.status is Status.OK
    assert result.found == "wlan0 (configured, Wi-Fi): operstate up, flags 0x1003"


def test_interface_unknown_operstate_warns(tree: HostTree, host: h.Host) -> None:
    tree.link("eth0", operstate="unknown")
    result = h.check_interface(host, "eth0", "configured")
    assert result.status is Status.WARN


def test_interface_down_fails(tree: HostTree, host: h.Host) -> None:
    tree.link("eth0", flags=0x1002, operstate="down")
    result = h.check_interface(host, "eth0", "configured")
    assert result.status is Status.FAIL
    assert "ip link set eth0 up" in result.fix


def test_interface_without_multicast_fails(tree: HostTree, host: h.Host) -> None:
    tree.link("eth0", flags=0x0003)
    result = h.check_interface(host, "eth0", "configured")
    assert result.status is Status.FAIL
    assert result.fix.endswith("ip link set eth0 multicast on")


def test_interface_missing_fails(host: h.Host) -> None:
    result = h.check_interface(host, "eth1", "configured")
    assert result.status is Status.FAIL
    assert result.found == "interface eth1 (configured) does not exist"


# --- IPv6 sysctl ------------------------------------------------------------------------


def test_sysctl_ok(host: h.Host) -> None:
    result = h.check_ipv6_sysctl(host, "eth0", "configured")
    assert result.status is Status.OK
    assert result.found == (
        "disable_ipv6=0 accept_ra=1 accept_ra_rtr_pref=1 accept_ra_rt_info_max_plen=64 forwarding=0"
    )


@pytest.mark.parametrize(
    ("values", "status", "fix_part"),
    [
        ({"accept_ra": 0}, Status.FAIL, "sysctl -w net.ipv6.conf.eth0.accept_ra=1"),
        (
            {"accept_ra_rt_info_max_plen": 0},
            Status.FAIL,
            "sysctl -w net.ipv6.conf.eth0.accept_ra_rt_info_max_plen=64",
        ),
        (
            {"accept_ra_rt_info_max_plen": 48},
            Status.FAIL,
            "sysctl -w net.ipv6.conf.eth0.accept_ra_rt_info_max_plen=64",
        ),
        (
            {"forwarding": 1},
            Status.FAIL,
            "forwarding is on, so the kernel ignores router advertisements: "
            "sysctl -w net.ipv6.conf.eth0.forwarding=0",
        ),
        (
            {"forwarding": 1, "accept_ra": 2},
            Status.WARN,
            "IPv6 forwarding is on for eth0 (accept_ra=2 keeps RAs working)",
        ),
        (
            {"accept_ra_rtr_pref": 0},
            Status.FAIL,
            "sysctl -w net.ipv6.conf.eth0.accept_ra_rtr_pref=1",
        ),
        ({"disable_ipv6": 1}, Status.FAIL, "sysctl -w net.ipv6.conf.eth0.disable_ipv6=0"),
    ],
)
def test_sysctl_problems(
    tree: HostTree, host: h.Host, values: dict[str, int], status: Status, fix_part: str
) -> None:
    tree.sysctl("eth0", **values)
    result = h.check_ipv6_sysctl(host, "eth0", "configured")
    assert result.status is status
    assert fix_part in result.fix
    assert result.fix.endswith("/etc/sysctl.d/60-atmosphere-bridge.conf (scripts/install.sh)")
    for key, value in values.items():
        assert f"{key}={value}" in result.found


def test_sysctl_kernel_without_route_info_fails(tree: HostTree, host: h.Host) -> None:
    (tree.root / "proc/sys/net/ipv6/conf/eth0/accept_ra_rt_info_max_plen").unlink()
    result = h.check_ipv6_sysctl(host, "eth0", "configured")
    assert result.status is Status.FAIL
    assert "accept_ra_rt_info_max_plen=missing" in result.found
    assert "CONFIG_IPV6_ROUTE_INFO" in result.fix


def test_sysctl_ipv6_disabled_in_kernel_fails(tree: HostTree, host: h.Host) -> None:
    shutil.rmtree(tree.root / "proc/sys/net/ipv6")
    result = h.check_ipv6_sysctl(host, "eth0", "configured")
    assert result.status is Status.FAIL
    assert result.found == "IPv6 is disabled in the kernel (/proc/sys/net/ipv6 is missing)"


# --- IPv6 address -----------------------------------------------------------------------


def test_address_ok(host: h.Host) -> None:
    result = h.check_ipv6_address(host, "eth0", "configured")
    assert result.status is Status.OK
    assert result.found == (
        "eth0: fe80::ba27:ebff:fe12:3456/64 (link-local), "
        "fd4e:7a1c:2b3d:1:ba27:ebff:fe12:3456/64 (ula)"
    )


def test_address_link_local_only_warns(tree: HostTree, host: h.Host) -> None:
    tree.addresses(("fe80::ba27:ebff:fe12:3456", 64, 0x20, 0x80, "eth0"))
    result = h.check_ipv6_address(host, "eth0", "configured")
    assert result.status is Status.WARN
    assert result.found == "eth0: fe80::ba27:ebff:fe12:3456/64 (link-local)"


def test_address_none_fails(tree: HostTree, host: h.Host) -> None:
    tree.addresses(("::1", 128, 0x10, 0x80, "lo"))
    result = h.check_ipv6_address(host, "eth0", "configured")
    assert result.status is Status.FAIL
    assert result.found == "eth0: none"


def test_address_dad_failed_fails(tree: HostTree, host: h.Host) -> None:
    tree.addresses(
        ("fe80::ba27:ebff:fe12:3456", 64, 0x20, 0x08, "eth0"),
        ("2001:db8::5", 64, 0x00, 0x40, "eth0"),
    )
    result = h.check_ipv6_address(host, "eth0", "configured")
    assert result.status is Status.FAIL
    assert "(global)" in result.found


# --- IPv6 routes ------------------------------------------------------------------------


def test_route_ok_lists_thread_routes(host: h.Host) -> None:
    result = h.check_ipv6_route(host, "eth0", "configured")
    assert result.status is Status.OK
    assert result.found == (
        f"default route: via {ROUTER_LL}; routes from router "
        f"advertisements: fd12:3456:789a:1::/64 via {BR_LL}"
    )
    assert result.details == {"default": [ROUTER_LL], "route_info": ["fd12:3456:789a:1::/64"]}


def test_route_without_default_warns(tree: HostTree, host: h.Host) -> None:
    tree.routes(("fd4e:7a1c:2b3d:1::", 64, "::", 0x1, "eth0"))
    result = h.check_ipv6_route(host, "eth0", "configured")
    assert result.status is Status.WARN
    assert result.found == "default route: none; routes from router advertisements: none"


# --- controller storage -----------------------------------------------------------------


def _storage(tree: HostTree, uid: int, mode: int) -> Path:
    path = tree.root / "var/lib/atmosphere-matter-controller"
    path.mkdir(parents=True)
    os.chown(path, uid, uid)
    path.chmod(mode)
    return Path("/var/lib/atmosphere-matter-controller")


def test_storage_owned_by_controller_user_ok(tree: HostTree, host: h.Host) -> None:
    storage = _storage(tree, 998, 0o700)
    result = h.check_controller_storage(host, storage, "atmosphere-matter")
    assert result.status is Status.OK
    assert result.found == (f"{storage}: owner uid 998, mode 0700; atmosphere-matter is uid 998")


def test_storage_owned_by_root_fails(tree: HostTree, host: h.Host) -> None:
    storage = _storage(tree, 0, 0o755)
    result = h.check_controller_storage(host, storage, "atmosphere-matter")
    assert result.status is Status.FAIL
    assert result.fix == f"chown -R atmosphere-matter: {storage} && chmod 700 {storage}"


def test_storage_missing_fails(host: h.Host) -> None:
    result = h.check_controller_storage(host, Path("/data"), "atmosphere-matter")
    assert result.status is Status.FAIL
    assert result.found == "/data does not exist"


def test_storage_on_tmpfs_fails(tree: HostTree, host: h.Host) -> None:
    (tree.root / "data").mkdir()
    tree.mounts(("/", "ext4", "rw"), ("/data", "tmpfs", "rw,nosuid"))
    result = h.check_controller_storage(host, Path("/data"), "atmosphere-matter")
    assert result.status is Status.FAIL
    assert result.found == "/data is on tmpfs (/data): the fabric is lost at reboot"


def test_storage_read_only_fails(tree: HostTree, host: h.Host) -> None:
    storage = _storage(tree, 998, 0o700)
    tree.mounts(("/", "ext4", "ro,noatime"))
    result = h.check_controller_storage(host, storage, "atmosphere-matter")
    assert result.status is Status.FAIL
    assert result.found == f"{storage} is on a read-only file system (/)"


def test_storage_without_dedicated_user_is_write_tested(tree: HostTree, host: h.Host) -> None:
    (tree.root / "data").mkdir(mode=0o700)
    result = h.check_controller_storage(host, Path("/data"), "nobody-here")
    assert result.status is Status.OK
    assert result.found == "/data: writable (mode 0700)"
    assert list((tree.root / "data").iterdir()) == []


# --- clock --------------------------------------------------------------------------------


def test_clock_synchronised_ok(host: h.Host) -> None:
    result = h.check_clock(host)
    assert result.status is Status.OK
    assert result.found == "clock reads 2026-06-01 12:00:00 UTC; synchronised (systemd-timesyncd)"


def test_clock_unsynchronised_warns(tree: HostTree, host: h.Host) -> None:
    (tree.root / "run/systemd/timesync/synchronized").unlink()
    result = h.check_clock(host)
    assert result.status is Status.WARN
    assert result.found == "clock reads 2026-06-01 12:00:00 UTC; not known to be synchronised"


def test_clock_before_boot_of_time_fails(tree: HostTree) -> None:
    host = h.Host(root=tree.root, now=lambda: datetime(1970, 1, 1, 0, 0, 42, tzinfo=UTC))
    result = h.check_clock(host)
    assert result.status is Status.FAIL
    assert result.found == "clock reads 1970-01-01 00:00:42 UTC (implausibly early)"


# --- free disk ----------------------------------------------------------------------------


def test_free_disk_thresholds(tree: HostTree, host: h.Host) -> None:
    state = Path("/var/lib/atmosphere-bridge")
    free_mb = shutil.disk_usage(tree.root).free // (1024 * 1024)
    ok = h.check_free_disk(host, state, warn_mb=0, fail_mb=0)
    assert ok.status is Status.OK
    assert ok.found.endswith(f"at {state}")
    assert abs(ok.details["free_mb"] - free_mb) < 64
    warn = h.check_free_disk(host, state, warn_mb=free_mb + 10_000, fail_mb=0)
    assert warn.status is Status.WARN
    fail = h.check_free_disk(host, state, warn_mb=free_mb + 10_000, fail_mb=free_mb + 5_000)
    assert fail.status is Status.FAIL
    assert "journalctl --vacuum-size" in fail.fix


# --- secrets ------------------------------------------------------------------------------


def _state(tree: HostTree, key_mode: int, dir_mode: int = 0o700) -> Path:
    state = tree.root / "var/lib/atmosphere-bridge"
    state.mkdir(parents=True)
    (state / "node.key").write_text("secret")
    (state / "node.key").chmod(key_mode)
    (state / "bridge.db").write_text("")
    (state / "bridge.db").chmod(0o600)
    state.chmod(dir_mode)
    return Path("/var/lib/atmosphere-bridge")


def test_secrets_private_ok(tree: HostTree, host: h.Host) -> None:
    state = _state(tree, 0o600)
    result = h.check_secret_files(host, [state, Path("/data")])
    assert result.status is Status.OK
    assert result.found == f"checked {state}; not present yet: /data"


def test_secrets_world_readable_key_fails(tree: HostTree, host: h.Host) -> None:
    state = _state(tree, 0o644)
    result = h.check_secret_files(host, [state])
    assert result.status is Status.FAIL
    assert result.details["exposed"] == [f"{state}/node.key (0644)"]
    assert result.fix.startswith(f"chmod -R go-rwx {state}")


def test_secrets_world_listable_dir_fails(tree: HostTree, host: h.Host) -> None:
    state = _state(tree, 0o600, dir_mode=0o755)
    result = h.check_secret_files(host, [state])
    assert result.status is Status.FAIL
    assert result.details["exposed"] == [f"{state} (0755)"]


def test_secrets_group_readable_warns(tree: HostTree, host: h.Host) -> None:
    state = _state(tree, 0o640)
    result = h.check_secret_files(host, [state])
    assert result.status is Status.WARN
    assert result.details["group_readable"] == [f"{state}/node.key (0640)"]


def test_secrets_nothing_yet_warns(host: h.Host) -> None:
    result = h.check_secret_files(host, [Path("/var/lib/atmosphere-bridge")])
    assert result.status is Status.WARN
    assert result.found == "checked nothing; not present yet: /var/lib/atmosphere-bridge"
