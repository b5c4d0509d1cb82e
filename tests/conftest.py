"""Fixtures shared by every test layer: the real Matter fabric (see tests/support/fabric.py)."""

from tests.support.fabric import fabric, matter_controller, virtual_devices

__all__ = ["fabric", "matter_controller", "virtual_devices"]
