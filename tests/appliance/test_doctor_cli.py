"""``atmosphere-bridge doctor`` through the real CLI entry point, over a prepared tree."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from bridge.cli.main import main
from tests.appliance.otbr_standin import (
    BorderRouterState,
    border_router_standin,
    free_loopback_port,
)
from tests.appliance.trees import HostTree, healthy_pi


@pytest.fixture
def prepared(tmp_path: Path) -> tuple[Path, Path]:
    """A healthy Pi tree whose controller is down; returns (tree root, config file)."""
    tree = HostTree(tmp_path / "root")
    healthy_pi(tree)
    for path, uid in (
        ("var/lib/atmosphere-bridge", 999),
        ("var/lib/atmosphere-matter-controller", 998),
    ):
        (tree.root / path).mkdir(parents=True)
        (tree.root / path).chmod(0o700)
        os.chown(tree.root / path, uid, uid)
    config = tmp_path / "config.yaml"
    config.write_text(
        "state_dir: /var/lib/atmosphere-bridge\n"
        f"matter:\n  controller_url: ws://127.0.0.1:{free_loopback_port()}/ws\n"
        "doctor:\n  controller_storage: /var/lib/atmosphere-matter-controller\n"
        "  free_disk_warn_mb: 0\n  free_disk_fail_mb: 0\n  timeout_s: 2\n"
    )
    return tree.root, config


def test_doctor_json_reports_every_check(
    prepared: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, config = prepared
    code = main(["--config", str(config), "doctor", "--json", "--root", str(root)])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["status"] == "fail"
    assert report["counts"] == {"ok": 8, "warn": 1, "fail": 1}
    assert [(c["name"], c["status"]) for c in report["checks"]] == [
        ("controller", "fail"),
        ("border_router", "warn"),
        ("interface", "ok"),
        ("ipv6_sysctl", "ok"),
        ("ipv6_address", "ok"),
        ("ipv6_route", "ok"),
        ("controller_storage", "ok"),
        ("clock", "ok"),
        ("free_disk", "ok"),
        ("secrets", "ok"),
    ]
    for check in report["checks"]:
        assert set(check) == {"name", "title", "status", "found", "fix", "details"}
        assert (check["fix"] == "") == (check["status"] == "ok")


async def test_doctor_text_with_border_router(
    prepared: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, config = prepared
    async with border_router_standin(BorderRouterState(role="detached", dataset=None)) as url:
        config.write_text(config.read_text() + f"thread:\n  otbr_url: {url}\n")
        # The CLI runs its own event loop; run it in a thread beside the stand-in's.
        code = await asyncio.to_thread(
            main, ["doctor", "--config", str(config), "--root", str(root)]
        )
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    assert "[FAIL] Thread network up" in lines
    assert "       border router role: detached" in lines
    assert "[FAIL] Active Thread dataset present" in lines
    assert "[warn] Thread dataset handed to the controller" in lines
    assert "[ ok ] IPv6 kernel settings for Thread routes" in lines
    assert lines[-1] == "9 ok, 1 warnings, 3 failed"


def test_invalid_configuration_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("doctor:\n  free_disk_warn_mb: lots\n")
    code = main(["doctor", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 1
    assert err == (
        f"error [CONFIG_INVALID]: {config}: doctor.free_disk_warn_mb: "
        "'lots' is not of type 'integer'\n"
    )
