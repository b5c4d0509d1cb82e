"""The Matter SDK as the controller uses it, for tests that check the bridge's data against it.

The bridge itself never imports ``chip`` or ``matter_server``; these tests do, to prove
that its catalogue and its command payloads are what the SDK declares and parses.
"""

from __future__ import annotations

from typing import Any

from chip.clusters import Objects as Clusters
from matter_server.common.helpers.util import dataclass_from_dict

from bridge.matter.spec.catalogue import cluster_info
from bridge.matter.spec.commands import WireCommand


def sdk_command(wire: WireCommand) -> Any:
    """Parse a checked command's payload as the controller's ``device_command`` does."""
    info = cluster_info(wire.cluster_id)
    assert info is not None, wire
    cls = getattr(getattr(Clusters, info.name).Commands, wire.command_name)
    return dataclass_from_dict(cls, wire.payload, allow_sdk_types=True)
