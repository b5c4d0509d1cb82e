"""Listing a tool whose permission has several templates (``device:{access}:{device_id}``).

The tool is listed for a token when some combination of the values its schema (enums)
or its grants name would be allowed by the same checker that admits calls: a reader of
one device sees it, a token with no device permission does not.
"""

from __future__ import annotations

import pytest

from bridge.auth.visibility import may_see
from bridge.tools.definition import Requires, ToolDefinition

GENERIC = ToolDefinition(
    name="control_matter_device",
    namespace="matter",
    version="1.0.0",
    description="Command or read any Matter device.",
    parameters={
        "type": "object",
        "properties": {
            "device_id": {"type": "string", "pattern": "^[0-9]+-[0-9]+$"},
            "access": {"type": "string", "enum": ["control", "read"], "default": "control"},
        },
        "required": ["device_id"],
    },
    requires=Requires(permissions=("device:{access}:{device_id}",)),
)


@pytest.mark.parametrize(
    ("granted", "seen"),
    [
        (("device:read:1-1",), True),
        (("device:control:1-1",), True),
        (("device:*",), True),
        (("*",), True),
        (("device:read:*",), True),
        (("core:*",), False),  # ends with '*' but names no device permission
        (("device:write:1-1",), False),  # an access the schema does not offer
        (("mesh:read:1-1",), False),
        ((), False),
    ],
)
def test_a_two_template_permission_is_listed_only_when_some_call_would_pass(
    granted: tuple[str, ...], seen: bool
) -> None:
    assert may_see(granted, GENERIC) is seen
