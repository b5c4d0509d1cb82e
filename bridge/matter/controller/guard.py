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
private to the service user. It is run by the controller's own interpreter
(``<controller venv>/bin/python -I guard.py <matter-server arguments>``) and
imports nothing from the bridge: the bridge's virtualenv is not on its path.
Details: docs/architecture.md, "Only the bridge commands the controller".
"""

from __future__ import annotations

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
    server_main = importlib.import_module("matter_server.server.__main__")
    sys.argv = ["matter-server", *argv]
    server_main.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
