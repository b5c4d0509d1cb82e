"""Every file the bridge writes is 0600 and every directory 0700, whatever the umask.

The service is started in this process under umask 022 (as a library user or a test
would, without ``atmosphere-bridge run`` setting 077 first); the managed controller's
files are checked by tests/matter/test_controller_guard.py.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bridge.config import ApiConfig, BridgeConfig, MatterConfig
from bridge.service import BridgeService
from tests.support.auth import service_token


@pytest.fixture
def loose_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


async def test_state_files_are_private_under_a_loose_umask(
    tmp_path: Path, loose_umask: None
) -> None:
    state = tmp_path / "fresh" / "state"
    config = BridgeConfig(
        state_dir=state,
        api=ApiConfig(host="127.0.0.1", port=0),
        matter=replace(MatterConfig(), enabled=False),
    )
    service = BridgeService(config, enable_matter=False)
    await service.start()
    try:
        await service.start_api("127.0.0.1", 0)
        assert service.invocation is not None
        token = service_token(service, "writer", ["*"])
        assert token
        found = {}
        for dirpath, dirnames, filenames in os.walk(state):
            for name in (*dirnames, *filenames):
                path = os.path.join(dirpath, name)
                found[os.path.relpath(path, state)] = oct(stat.S_IMODE(os.lstat(path).st_mode))
        found["."] = oct(stat.S_IMODE(state.stat().st_mode))
    finally:
        await service.stop()
    assert {"api.json", "bridge.db", "node.key"} <= set(found), found
    assert {p: m for p, m in found.items() if m not in ("0o600", "0o700")} == {}
