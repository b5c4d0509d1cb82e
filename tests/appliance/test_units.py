"""The systemd units: ``systemd-analyze verify`` and the hardening they promise.

The units are installed by scripts/install.sh into a temporary root; systemd-analyze
runs with ``--root`` on it, so ``ExecStart`` binaries are resolved there. The offline
install leaves the venvs without their console scripts (pip is not run), so the test
puts executables at exactly the paths the units name; the unit files themselves are
verified byte-for-byte as shipped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.appliance.conftest import REPO, Installer

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
UNITS = ("atmosphere-matter-controller.service", "atmosphere-bridge.service")
EXECUTABLES = (
    "opt/atmosphere-bridge/venv/bin/atmosphere-bridge",
    "opt/atmosphere-bridge/controller-venv/bin/python",
    "usr/sbin/otbr-agent",
)
# A stand-in for the OpenThread Border Router's own unit (it ships with ot-br-posix, not
# with Debian): just enough to verify our drop-in against.
OTBR_STANDIN = """[Unit]
Description=OpenThread Border Router Agent (test stand-in)
[Service]
EnvironmentFile=-/etc/default/otbr-agent
ExecStart=/usr/sbin/otbr-agent $OTBR_AGENT_OPTS
[Install]
WantedBy=multi-user.target
"""


def _analyze(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert SYSTEMD_ANALYZE is not None, "systemd-analyze is missing: `make install` adds it"
    return subprocess.run(
        [SYSTEMD_ANALYZE, f"--root={root}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def unit_root(tmp_path: Path, run_install: Installer) -> Path:
    root = tmp_path / "root"
    system = next(
        p for p in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")) if p.is_dir()
    )
    shutil.copytree(system, root / "usr/lib/systemd/system", symlinks=True)
    (root / "usr/lib/systemd/system/otbr-agent.service").write_text(OTBR_STANDIN)
    run_install(root, "--interface", "eth0")
    for rel in EXECUTABLES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():  # a venv's interpreter: never write through it
            path.unlink()
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return root


def test_units_verify_cleanly(unit_root: Path) -> None:
    dropin = unit_root / "etc/systemd/system/otbr-agent.service.d/10-atmosphere.conf"
    assert dropin.is_file()
    result = _analyze(unit_root, "verify", *UNITS, "otbr-agent.service")
    assert result.returncode == 0, result.stderr
    # Unknown keys, bad values and missing binaries are all reported on stderr.
    assert result.stderr == ""
    assert result.stdout == ""


def test_verify_catches_a_missing_executable(unit_root: Path) -> None:
    (unit_root / EXECUTABLES[1]).unlink()
    result = _analyze(unit_root, "verify", UNITS[0])
    assert result.returncode != 0
    assert (
        "Command /opt/atmosphere-bridge/controller-venv/bin/python is not executable"
    ) in result.stderr


def test_verify_catches_a_misspelt_directive(unit_root: Path) -> None:
    unit = unit_root / "etc/systemd/system" / UNITS[1]
    unit.write_text(unit.read_text().replace("ProtectSystem=strict", "ProtectSytem=strict"))
    result = _analyze(unit_root, "verify", UNITS[1])
    assert "Unknown key 'ProtectSytem' in section [Service], ignoring." in result.stderr


@pytest.mark.parametrize("unit", UNITS)
def test_exposure_score_is_low(unit_root: Path, unit: str) -> None:
    result = _analyze(unit_root, "security", "--offline=yes", unit)
    assert result.returncode == 0, result.stderr
    match = re.search(
        rf"Overall exposure level for {re.escape(unit)}: (\d+\.\d+) (\w+)", result.stdout
    )
    assert match is not None, result.stdout
    assert float(match.group(1)) <= 2.0
    assert match.group(2) == "OK"


def _settings(unit: str) -> dict[str, list[str]]:
    text = (REPO / "systemd" / unit).read_text().replace("\\\n", " ")
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(" ".join(value.split()))
    return out


HARDENING = {
    "NoNewPrivileges": ["yes"],
    "ProtectSystem": ["strict"],
    "ProtectHome": ["yes"],
    "PrivateTmp": ["yes"],
    "PrivateDevices": ["yes"],
    "CapabilityBoundingSet": [""],
    "AmbientCapabilities": [""],
    "UMask": ["0077"],
    "StateDirectoryMode": ["0700"],
    "Restart": ["on-failure"],
    "LimitNOFILE": ["65536"],
}


def test_controller_unit_contract() -> None:
    s = _settings("atmosphere-matter-controller.service")
    for key, value in HARDENING.items():
        assert s[key] == value, key
    assert s["User"] == ["atmosphere-matter"]
    assert s["StateDirectory"] == ["atmosphere-matter-controller"]
    assert s["BindPaths"] == ["%S/atmosphere-matter-controller:/data"]
    # The server runs behind the project's launcher, which demands the bridge's key.
    assert s["ExecStart"] == [
        "/opt/atmosphere-bridge/controller-venv/bin/python -I "
        "/opt/atmosphere-bridge/libexec/controller_guard.py --storage-path /data "
        "--paa-root-cert-dir /data/credentials --listen-address 127.0.0.1 --port 5580 "
        "$CONTROLLER_ARGS"
    ]
    assert s["LoadCredential"] == ["controller.key:/etc/atmosphere-bridge/controller.key"]
    assert s["Environment"] == ["ATMOSPHERE_CONTROLLER_KEY_FILE=%d/controller.key"]


def test_bridge_unit_contract() -> None:
    s = _settings("atmosphere-bridge.service")
    for key, value in HARDENING.items():
        assert s[key] == value, key
    assert s["User"] == ["atmosphere-bridge"]
    assert s["StateDirectory"] == ["atmosphere-bridge"]
    assert s["Requires"] == ["atmosphere-matter-controller.service"]
    assert "atmosphere-matter-controller.service" in s["After"][0].split()
    assert s["ExecStart"] == [
        "/opt/atmosphere-bridge/venv/bin/atmosphere-bridge --config "
        "/etc/atmosphere-bridge/config.yaml run"
    ]
    assert s["LoadCredential"] == ["controller.key:/etc/atmosphere-bridge/controller.key"]
    assert "ATMOSPHERE_MATTER_CONTROLLER_KEY_FILE=%d/controller.key" in s["Environment"]
