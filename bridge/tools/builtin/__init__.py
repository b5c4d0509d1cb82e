"""Tools that ship with the bridge and run on this node, by ``builtin:NAME``.

``BUILTINS`` maps a builtin source name to a factory ``(config, env) -> [ToolSpec]``;
the service hands it to the manifest's ``source: builtin:NAME`` (and the package
declares it in the entry-point group ``atmosphere_bridge.builtins``).
"""

from __future__ import annotations

from bridge.tools.builtin.store import store_tools
from bridge.tools.manifest import BuiltinFactory

BUILTINS: dict[str, BuiltinFactory] = {
    "store": store_tools,
    "store_data": lambda config, env: [
        s for s in store_tools(config, env) if s.definition.name == "store_data"
    ],
    "get_data": lambda config, env: [
        s for s in store_tools(config, env) if s.definition.name == "get_data"
    ],
}
