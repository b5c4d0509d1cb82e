"""Fixed loopback ports for tests that must know a port before the server binds it.

Mesh peers are configured with each other's URLs up front, so those tests cannot bind
port 0. A port the kernel hands out as "free" comes from the ephemeral range, where any
outgoing connection may take it before the server binds it (seen as EADDRINUSE in CI).
These ports come from below the ephemeral range instead, which the kernel never assigns
on its own, and are checked free on both loopback families before they are returned.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
from pathlib import Path

_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _first_ephemeral() -> int:
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_LOW = 20000
_HIGH = max(_LOW + 1000, _first_ephemeral())
# Different pytest processes (and helpers running at once) start at different offsets.
_NEXT = itertools.count(random.Random(os.getpid()).randrange(_LOW, _HIGH))


def _bindable(port: int) -> bool:
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "0.0.0.0")):
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


def free_port() -> int:
    """Return a currently free TCP port below the kernel's ephemeral range."""
    for _ in range(_HIGH - _LOW):
        port = _LOW + (next(_NEXT) - _LOW) % (_HIGH - _LOW)
        if _bindable(port):
            return port
    raise RuntimeError(f"no free TCP port in {_LOW}-{_HIGH}")
