"""The mapping between our tool keys (``namespace:name``) and MCP tool names.

Agent clients accept only ``^[A-Za-z0-9_-]{1,64}$`` (the limit of the major LLM APIs),
so that is what every MCP name matches. A key ``namespace:name`` becomes
``namespace__name`` (two underscores), so ``matter:light_kitchen_on`` is
``matter__light_kitchen_on``; ``tool_key`` turns such a name back. A key whose plain
form would not be accepted (longer than 64 characters, or a ``.`` in it) gets a
shortened name ending in ``_<hash of the key>`` (``bridge.tools.naming``): stable,
distinct per key, and found back through the registry (``key_in``), not by parsing.
The namespace ends at the first ``__``, so a namespace that contains ``__`` or ends in
``_`` has no MCP name (no such namespace exists in the bridge; such tools are not
exposed rather than exposed ambiguously).
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
