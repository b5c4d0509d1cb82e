"""The reversible mapping between our tool keys (``namespace:name``) and MCP tool names.

MCP tool names may hold ``A-Z a-z 0-9 _ . -`` (1-128 characters) but not ``:``, and
many agent clients accept only ``A-Z a-z 0-9 _ -``. A key ``namespace:name`` becomes
``namespace__name`` (two underscores), so ``matter:light_kitchen_on`` is
``matter__light_kitchen_on``. The name part may contain anything, including ``__``;
the namespace ends at the first ``__``, so a namespace that contains ``__`` or ends in
``_`` has no MCP name (no such namespace exists in the bridge; such tools are not
exposed rather than exposed ambiguously), and neither has a key whose MCP name would
exceed 128 characters.
"""

from __future__ import annotations

import re

from bridge.tools.identity import NAME_RE, NAMESPACE_RE

SEPARATOR = "__"
MAX_LENGTH = 128
_MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def mcp_name(namespace: str, name: str) -> str | None:
    """Return the MCP name of ``namespace:name``, or ``None`` if it has none."""
    if SEPARATOR in namespace or namespace.endswith("_"):
        return None
    text = f"{namespace}{SEPARATOR}{name}"
    return text if len(text) <= MAX_LENGTH and _MCP_NAME.fullmatch(text) else None


def tool_key(mcp_tool_name: str) -> str | None:
    """Return the ``namespace:name`` key an MCP name stands for, or ``None`` if none."""
    namespace, sep, name = mcp_tool_name.partition(SEPARATOR)
    if not sep or not NAMESPACE_RE.fullmatch(namespace) or not NAME_RE.fullmatch(name):
        return None
    if mcp_name(namespace, name) != mcp_tool_name:
        return None
    return f"{namespace}:{name}"
