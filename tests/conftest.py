"""Fixtures and hooks shared by every test layer.

- the real Matter fabric (see tests/support/fabric.py);
- the bridge itself: ``bridge_config``, ``bridge_service``, ``bridge_server`` (a real
  aiohttp API on loopback with a temporary state dir; see tests/support/server.py);
- the real-part switch (see tests/support/real.py): with ``ATMOSPHERE_REQUIRE_REAL=1`` a
  skip is a failure, and every run ends by printing how many real end-to-end tests passed.
"""

from tests.support.fabric import fabric, matter_controller, virtual_devices
from tests.support.real import (
    pytest_collectreport,
    pytest_configure,
    pytest_runtest_makereport,
    pytest_terminal_summary,
)
from tests.support.server import bridge_config, bridge_server, bridge_service

__all__ = [
    "bridge_config",
    "bridge_server",
    "bridge_service",
    "fabric",
    "matter_controller",
    "pytest_collectreport",
    "pytest_configure",
    "pytest_runtest_makereport",
    "pytest_terminal_summary",
    "virtual_devices",
]
