"""Run python-matter-server so that only the bridge can command it.

python-matter-server 8.1.2 serves its WebSocket API without any authentication: a web
page in a browser on the same host (any ``Origin``) or another local user could list
and remove devices, bypassing every token and approval of the bridge. This launcher
runs the unchanged server with one aiohttp middleware in front of every route:

- a request carrying an ``Origin`` header (every browser WebSocket and fetch does) is
  refused, whatever else it carries;
- a request without the secret header ``X-Atmosphere-Controller-Key`` equal to the
  secret read from the file named by ``$ATMOSPHERE_CONTROLLER_KEY_FILE`` is refused
  (a browser cannot set that header on a WebSocket; another local user cannot read the
  file: it must be mode 0600, else the launcher refuses to start).

It also sets the umask to 077 so every file the server and the CHIP SDK write is
private to the service user, and adds one WebSocket command, ``RESUBSCRIBE_COMMAND``
(see ``install_resubscribe``): the server has none that re-establishes a node now.
It is run by the controller's own interpreter
(``<controller venv>/bin/python -I guard.py <matter-server arguments>``) and
imports nothing from the bridge: the bridge's virtualenv is not on its path.
Details: docs/architecture.md, "Only the bridge commands the controller".
"""

from __future__ import annotations

import asyncio
import hmac
import importlib
import os
import stat
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

KEY_FILE_ENV = "ATMOSPHERE_CONTROLLER_KEY_FILE"
KEY_HEADER = "X-Atmosphere-Controller-Key"
# Sets a node up afresh now (CASE session, new subscription): see install_resubscribe.
RESUBSCRIBE_COMMAND = "atmosphere_resubscribe_node"
# What install_resubscribe uses of python-matter-server 8.1.2's device controller.
_CONTROLLER_PARTS = ("get_node", "get_node_logger", "_setup_node_try_once")


class GuardError(Exception):
    """The launcher cannot start the server safely (the key file is missing or open)."""


def read_key(path: Path) -> bytes:
    """Return the secret in ``path``; raise ``GuardError`` unless it is a private file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as err:
        raise GuardError(f"cannot open the controller key file {path}: {err.strerror}") from err
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode) or mode & 0o077:
            raise GuardError(f"the controller key file {path} must be a regular 0600 file")
        key = fh.read(4096).strip()
    if len(key) < 32:
        raise GuardError(f"the controller key file {path} holds no key (32 bytes at least)")
    return key


def guard_middleware(key: bytes) -> Callable[[Any, Any], Awaitable[Any]]:
    """Return the aiohttp middleware that admits only requests with ``key`` and no Origin."""

    @web.middleware
    async def guard(request: Any, handler: Any) -> Any:
        if "Origin" in request.headers:
            return web.json_response(
                {"error": "the controller API does not answer web pages (Origin present)"},
                status=403,
            )
        given = request.headers.get(KEY_HEADER, "").encode("utf-8", "replace")
        if not hmac.compare_digest(given, key):
            return web.json_response(
                {"error": "the controller API answers only the bridge (missing or wrong key)"},
                status=403,
            )
        return await handler(request)

    return guard


def install_guard(key: bytes) -> None:
    """Make every ``MatterServer`` created from now on put the guard before its routes."""
    server_module = importlib.import_module("matter_server.server.server")
    server_class = server_module.MatterServer
    original_init = server_class.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.app.middlewares.append(guard_middleware(key))

    server_class.__init__ = init


def install_resubscribe() -> bool:
    """Add ``RESUBSCRIBE_COMMAND`` (args ``node_id``) to every ``MatterDeviceController``.

    python-matter-server 8.1.2 marks a node available again only when the CHIP SDK's
    subscription comes back, which waits for the SDK's resubscription back-off (up to
    10 s, 20, 30, 50, 80 s ... compiled into the SDK: no setting, argument or variable
    shortens it) or for the server's own 60-second setup retry. Its operational mDNS
    handler cuts that wait only when the record is new to its cache and a
    resubscription is scheduled at that very moment. The command does for one node what
    the server does when it discovers a node on mDNS: its node setup (a CASE session,
    the one at hand if it is alive; then a fresh subscription, which marks the node
    available and tells every listener ``node_updated``). It answers ``true`` once the
    node is available, the server's error when the device does not answer (nothing
    changed then), and leaves an available node alone.

    The server's own setup tries and this command's are run one at a time per node, and
    a try finding the node available and subscribed does nothing, so two never set up
    one node side by side (the later would leave the earlier's subscription running in
    the SDK). Returns ``False`` (nothing is added; the bridge then restarts the
    controller instead) when this server version lacks what it uses.
    """
    module = importlib.import_module("matter_server.server.device_controller")
    controller_class = module.MatterDeviceController
    if not all(hasattr(controller_class, part) for part in _CONTROLLER_PARTS):
        print(
            f"controller_guard: {RESUBSCRIBE_COMMAND} not added: this python-matter-server "
            "lacks what it uses",
            file=sys.stderr,
        )
        return False
    api_command = importlib.import_module("matter_server.common.helpers.api").api_command
    setup_once = controller_class._setup_node_try_once
    locks: dict[tuple[int, int], asyncio.Lock] = {}

    async def setup_node_try_once(self: Any, node_logger: Any, node_id: int) -> None:
        async with locks.setdefault((id(self), node_id), asyncio.Lock()):
            node = self._nodes.get(node_id)
            if (
                node is not None
                and node.available
                and self._chip_device_controller.node_has_subscription(node_id)
            ):
                return  # set up meanwhile: a second subscription would only leak the first
            await setup_once(self, node_logger, node_id)

    async def resubscribe_node(self: Any, node_id: int) -> bool:
        if self.get_node(node_id).available:  # NodeNotExists for an unknown node
            return True
        await self._setup_node_try_once(self.get_node_logger(module.LOGGER, node_id), node_id)
        await asyncio.sleep(0)  # the node_updated signalled on the way goes out first
        return bool(self.get_node(node_id).available)

    controller_class._setup_node_try_once = setup_node_try_once
    controller_class.atmosphere_resubscribe_node = api_command(RESUBSCRIBE_COMMAND)(
        resubscribe_node
    )
    return True


def main(argv: list[str]) -> int:
    """Read the key, install the guard and run ``matter-server`` with ``argv``."""
    os.umask(0o077)
    key_file = os.environ.pop(KEY_FILE_ENV, "")
    if not key_file:
        print(f"controller_guard: ${KEY_FILE_ENV} is not set", file=sys.stderr)
        return 2
    try:
        key = read_key(Path(key_file))
    except GuardError as err:
        print(f"controller_guard: {err}", file=sys.stderr)
        return 2
    install_guard(key)
    install_resubscribe()
    server_main = importlib.import_module("matter_server.server.__main__")
    sys.argv = ["matter-server", *argv]
    server_main.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
