"""The mapping between our tool keys (``namespace:name``) and MCP tool names.

Details: docs/modules.md, ``bridge.mcp.tool_names``.
"""

from __future__ import annotations

from collections.abc import Iterable

from bridge.tools.identity import NAME_RE, NAMESPACE_RE
from bridge.tools.naming import CLIENT_NAME_MAX, CLIENT_NAME_RE, client_name

SEPARATOR = "__"
MAX_LENGTH = CLIENT_NAME_MAX


def mcp_name(namespace: str, name: str) -> str | None:
    """Return the MCP name of ``namespace:name``, or ``None`` if it has none."""
    if SEPARATOR in namespace or namespace.endswith("_"):
        return None
    text = f"{namespace}{SEPARATOR}{name}"
    if CLIENT_NAME_RE.fullmatch(text):
        return text
    return client_name(text, identity=f"{namespace}:{name}")


def tool_key(mcp_tool_name: str) -> str | None:
    """Return the ``namespace:name`` key a plain MCP name stands for, or ``None``.

    Only parses: a shortened name (with a hash) may parse as a key nobody registered;
    ``key_in`` finds the key it stands for.
    """
    namespace, sep, name = mcp_tool_name.partition(SEPARATOR)
    if not sep or not NAMESPACE_RE.fullmatch(namespace) or not NAME_RE.fullmatch(name):
        return None
    if mcp_name(namespace, name) != mcp_tool_name:
        return None
    return f"{namespace}:{name}"


def key_in(mcp_tool_name: str, keys: Iterable[str]) -> str | None:
    """Return the key among ``keys`` whose MCP name is ``mcp_tool_name`` (or ``None``)."""
    for key in keys:
        namespace, _, name = key.partition(":")
        if mcp_name(namespace, name) == mcp_tool_name:
            return key
    return None
