"""scripts/install.sh into a temporary root: what it installs, and that a rerun changes nothing."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from bridge.config import load_config
from tests.appliance.conftest import REPO, Installer

UNITS = ("atmosphere-matter-controller.service", "atmosphere-bridge.service")


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """Every path under root with type, mode, owner, size, mtime and content hash."""
    out: dict[str, tuple[object, ...]] = {}
    for current, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(current) / name
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", st.st_mode, st.st_uid, st.st_gid)
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[rel] = (
                    "file",
                    st.st_mode,
                    st.st_uid,
                    st.st_gid,
                    st.st_size,
                    st.st_mtime_ns,
                    digest,
                )
    return out


def _ids(root: Path, name: str) -> tuple[int, int]:
    for line in (root / "etc/passwd").read_text().splitlines():
        parts = line.split(":")
        if parts[0] == name:
            return int(parts[2]), int(parts[3])
    raise AssertionError(f"{name} not in passwd")


def test_install_then_rerun_changes_nothing(tmp_path: Path, run_install: Installer) -> None:
    root = tmp_path / "root"
    root.mkdir()
    first = run_install(root, "--interface", "eth0")
    assert first.stdout.rstrip().endswith("unchanged.")
    assert "Done: 0 changed" not in first.stdout
    assert " 0 unchanged." in first.stdout.splitlines()[-1]
    before = snapshot(root)

    second = run_install(root, "--interface", "eth0")
    after = snapshot(root)
    last = second.stdout.rstrip().splitlines()[-1]
    assert last.startswith("Done: 0 changed, ")
    assert "  changed " not in second.stdout
    assert after == before


def test_install_layout(tmp_path: Path, run_install: Installer) -> None:
    root = tmp_path / "root"
    root.mkdir()
    run_install(root, "--interface", "eth0")
    bridge_uid, bridge_gid = _ids(root, "atmosphere-bridge")
    matter_uid, _ = _ids(root, "atmosphere-matter")
    assert bridge_uid != matter_uid
    assert (root / "etc/passwd").read_text().count("/usr/sbin/nologin") == 2

    for unit in UNITS:
        installed = root / "etc/systemd/system" / unit
        assert installed.read_bytes() == (REPO / "systemd" / unit).read_bytes()
        assert stat.S_IMODE(installed.stat().st_mode) == 0o644
        link = root / "etc/systemd/system/multi-user.target.wants" / unit
        assert os.readlink(link) == f"/etc/systemd/system/{unit}"

    etc = root / "etc/atmosphere-bridge"
    assert (stat.S_IMODE(etc.stat().st_mode), etc.stat().st_uid, etc.stat().st_gid) == (
        0o750,
        0,
        bridge_gid,
    )
    cfg = etc / "config.yaml"
    assert (stat.S_IMODE(cfg.stat().st_mode), cfg.stat().st_uid, cfg.stat().st_gid) == (
        0o640,
        0,
        bridge_gid,
    )
    config = load_config(cfg)
    assert str(config.state_dir) == "/var/lib/atmosphere-bridge"
    assert config.matter.controller_url == "ws://127.0.0.1:5580/ws"
    assert config.thread.otbr_url == "http://127.0.0.1:8081"
    assert str(config.doctor.controller_storage) == "/var/lib/atmosphere-matter-controller"
    assert config.api.host == "127.0.0.1"
    assert (etc / "controller.env").read_text().splitlines()[-1] == "CONTROLLER_ARGS="
    # The controller's key: root's alone (the units get it as systemd credentials), long
    # enough for the launcher, and the launcher itself installed beside the venvs.
    key = etc / "controller.key"
    assert (stat.S_IMODE(key.stat().st_mode), key.stat().st_uid, key.stat().st_gid) == (0o600, 0, 0)
    assert len(key.read_text().strip()) >= 32
    guard = root / "opt/atmosphere-bridge/libexec/controller_guard.py"
    assert guard.read_bytes() == (REPO / "bridge/matter/controller/guard.py").read_bytes()

    sysctl = (root / "etc/sysctl.d/60-atmosphere-bridge.conf").read_text()
    settings = [line for line in sysctl.splitlines() if line and not line.startswith("#")]
    assert settings == [
        "net.ipv6.conf.eth0.disable_ipv6 = 0",
        "net.ipv6.conf.eth0.accept_ra_rtr_pref = 1",
        "net.ipv6.conf.eth0.accept_ra_rt_info_max_plen = 64",
        "net.ipv6.conf.eth0.accept_ra = 1",
        "net.ipv6.conf.eth0.forwarding = 0",
    ]
    prefix = root / "opt/atmosphere-bridge"
    for venv in ("venv", "controller-venv"):
        assert (prefix / venv / "bin/python").exists()
        assert (prefix / venv / "pyvenv.cfg").is_file()
    assert os.readlink(root / "usr/local/bin/atmosphere-bridge") == (
        "/opt/atmosphere-bridge/venv/bin/atmosphere-bridge"
    )
    assert (root / "data").is_dir()
    notes = sorted(p.name for p in (prefix / "share/doc/firmware_notes").iterdir())
    assert notes == sorted(p.name for p in (REPO / "firmware_notes").glob("*.md"))
    assert (prefix / "share/doc/configuration.md").read_bytes() == (
        REPO / "docs/configuration.md"
    ).read_bytes()
    # No otbr-agent.service in this root: no drop-in.
    assert not (root / "etc/systemd/system/otbr-agent.service.d").exists()


def test_rerun_keeps_the_users_configuration_and_repairs_units(
    tmp_path: Path, run_install: Installer
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    run_install(root, "--interface", "eth0")
    cfg = root / "etc/atmosphere-bridge/config.yaml"
    cfg.write_text("api:\n  port: 9000\n")
    unit = root / "etc/systemd/system/atmosphere-bridge.service"
    unit.write_text("[Service]\nExecStart=/bin/false\n")

    rerun = run_install(root, "--interface", "eth0")
    assert cfg.read_text() == "api:\n  port: 9000\n"
    assert "  unchanged  /etc/atmosphere-bridge/config.yaml (kept: yours to edit)" in (
        rerun.stdout.splitlines()
    )
    assert unit.read_bytes() == (REPO / "systemd/atmosphere-bridge.service").read_bytes()
    assert "  changed    /etc/systemd/system/atmosphere-bridge.service" in rerun.stdout.splitlines()
    assert rerun.stdout.rstrip().splitlines()[-1].startswith("Done: 1 changed, ")


def test_otbr_dropin_installed_beside_otbr_agent(tmp_path: Path, run_install: Installer) -> None:
    root = tmp_path / "root"
    (root / "usr/lib/systemd/system").mkdir(parents=True)
    (root / "usr/lib/systemd/system/otbr-agent.service").write_text(
        "[Service]\nExecStart=/usr/sbin/otbr-agent $OTBR_AGENT_OPTS\n"
    )
    run_install(root, "--interface", "eth0")
    dropin = root / "etc/systemd/system/otbr-agent.service.d/10-atmosphere.conf"
    assert (
        dropin.read_bytes()
        == (REPO / "systemd/otbr-agent.service.d/10-atmosphere.conf").read_bytes()
    )
    # The border router forwards here, so RAs need accept_ra=2 and forwarding is its own.
    sysctl = (root / "etc/sysctl.d/60-atmosphere-bridge.conf").read_text()
    settings = [line for line in sysctl.splitlines() if line and not line.startswith("#")]
    assert settings == [
        "net.ipv6.conf.eth0.disable_ipv6 = 0",
        "net.ipv6.conf.eth0.accept_ra_rtr_pref = 1",
        "net.ipv6.conf.eth0.accept_ra_rt_info_max_plen = 64",
        "net.ipv6.conf.eth0.accept_ra = 2",
    ]


def test_no_interface_skips_sysctl(tmp_path: Path, run_install: Installer) -> None:
    root = tmp_path / "root"
    root.mkdir()
    result = run_install(root)
    assert "  skipped    no --interface given and no default route found" in (
        result.stdout.splitlines()
    )
    assert not (root / "etc/sysctl.d").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--bogus",), "install.sh: unknown option --bogus"),
        (("--interface", "eth0;rm"), "install.sh: bad interface name: eth0;rm"),
        (("--prefix", "relative"), "install.sh: --prefix must be absolute"),
    ],
)
def test_bad_arguments_are_refused(
    tmp_path: Path, run_install: Installer, args: tuple[str, ...], message: str
) -> None:
    result = run_install(tmp_path, *args, check=False)
    assert result.returncode != 0
    assert result.stderr.splitlines()[0] == message
