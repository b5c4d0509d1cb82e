"""The permissions of a device's tools, spelled once: read its state, control it.

``DEVICE_READ`` / ``DEVICE_CONTROL`` are the templates a device tool requires
(``device:read:{device_id}``, ``device:control:{device_id}``); ``device_permission``
fills one in for a device. The Matter generator and rooms write tools with them;
``bridge.auth.visibility`` answers which devices a token may know of with them.
"""

from __future__ import annotations

DEVICE_READ = "device:read:{device_id}"
DEVICE_CONTROL = "device:control:{device_id}"


def device_permission(template: str, device_id: str) -> str:
    """Return ``DEVICE_READ`` or ``DEVICE_CONTROL`` filled in for ``device_id``."""
    return template.replace("{device_id}", device_id)
