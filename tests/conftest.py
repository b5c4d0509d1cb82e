"""Fixtures shared by every test layer.

- the real Matter fabric (see tests/support/fabric.py);
- the bridge itself: ``bridge_config``, ``bridge_service``, ``bridge_server`` (a real
  aiohttp API on loopback with a temporary state dir; see tests/support/server.py).
"""

from tests.support.fabric import fabric, matter_controller, virtual_devices
from tests.support.server import bridge_config, bridge_server, bridge_service

__all__ = [
    "bridge_config",
    "bridge_server",
    "bridge_service",
    "fabric",
    "matter_controller",
    "virtual_devices",
]
