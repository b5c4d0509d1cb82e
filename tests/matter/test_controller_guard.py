"""Only the bridge commands the managed controller: web pages and other users are refused.

python-matter-server 8.1.2 has no authentication of its own; before the guard, a page
open in a browser on the same host (``Origin: http://evil.example``) listed the nodes and
removed a device. Each client here is a real aiohttp WebSocket client against the real
server started by ``ManagedController`` in the fabric namespace.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bridge.matter import KEY_HEADER
from tests.support.fabric import ThreadedController

pytestmark = pytest.mark.fabric

EVIL = "http://evil.example"


async def _command(url: str, headers: dict[str, str], command: str, **args: Any) -> Any:
    """Open a WebSocket with ``headers``, send ``command`` and return the answer."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url, headers=headers) as ws:
        await ws.receive_json(timeout=10)  # server_info greeting
        await ws.send_json({"message_id": "g1", "command": command, "args": args})
        async with asyncio.timeout(30):
            while True:
                msg = await ws.receive_json()
                if msg.get("message_id") == "g1":
                    return msg


async def _refused(url: str, headers: dict[str, str], command: str, **args: Any) -> int:
    """Return the HTTP status the controller refused the WebSocket with."""
    with pytest.raises(aiohttp.WSServerHandshakeError) as info:
        await _command(url, headers, command, **args)
    return info.value.status


@pytest.mark.parametrize(
    ("who", "headers"),
    [
        ("a web page", {"Origin": EVIL}),
        ("a web page on loopback", {"Origin": "http://127.0.0.1:8765"}),
        ("a page that somehow has the key", {"Origin": EVIL, KEY_HEADER: "<key>"}),
        ("a local client without the key", {}),
        ("a local client with a wrong key", {KEY_HEADER: "x" * 43}),
    ],
)
async def test_only_the_bridge_may_command_the_controller(
    matter_controller: ThreadedController, who: str, headers: dict[str, str]
) -> None:
    url = matter_controller.url
    real_key = matter_controller.headers[KEY_HEADER]
    sent = {k: (real_key if v == "<key>" else v) for k, v in headers.items()}
    assert await _refused(url, sent, "get_nodes") == 403, who
    assert await _refused(url, sent, "remove_node", node_id=1) == 403, who
    # Plain HTTP (the /info route, the dashboard) is refused the same way.
    async with aiohttp.ClientSession() as session:
        info_url = url.replace("ws://", "http://").removesuffix("/ws") + "/info"
        async with session.get(info_url, headers=sent) as resp:
            assert resp.status == 403, who
            body = await resp.json()
    assert "answers only the bridge" in body["error"] or "Origin present" in body["error"]
    # The bridge's own connection, with the key and no Origin, still works.
    answer = await _command(url, matter_controller.headers, "get_nodes")
    assert "error_code" not in answer
    assert isinstance(answer["result"], list)


async def test_the_key_and_the_controllers_files_are_private(
    matter_controller: ThreadedController,
) -> None:
    settings = matter_controller.controller.settings
    key_file = Path(matter_controller.key_file)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert key_file.read_text().strip() == matter_controller.headers[KEY_HEADER]
    # Another local user can read neither the key nor the fabric's credentials.
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is needed to act as another user"
    for secret in (key_file, settings.storage_dir / "chip.json"):
        other = subprocess.run(
            [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "cat", str(secret)],
            capture_output=True,
            check=False,
            timeout=10,
        )
        assert other.returncode != 0
        assert b"Permission denied" in other.stderr
    # Every file the server and the SDK wrote (chip.json and the node store included)
    # is 0600, every directory 0700: the launcher sets umask 077 whatever it inherits.
    found: dict[str, str] = {}
    for root in (
        settings.state_dir / "sdk-data",
        settings.state_dir / "sdk-tmp",
        settings.storage_dir,
    ):
        for dirpath, dirnames, filenames in os.walk(root):
            for name in (*dirnames, *filenames):
                path = os.path.join(dirpath, name)
                found[path] = oct(stat.S_IMODE(os.lstat(path).st_mode))
    assert any(p.endswith("chip.json") for p in found), sorted(found)
    loose = {p: m for p, m in found.items() if m not in ("0o600", "0o700")}
    assert loose == {}
