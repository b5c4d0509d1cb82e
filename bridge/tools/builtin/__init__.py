"""Tools that ship with the bridge and run on this node, by ``builtin:NAME``.

``BUILTINS`` maps a builtin source name to a factory ``(config, env) -> [ToolSpec]``;
the manifest's ``source: builtin:NAME`` and the service use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from bridge.tools.builtin.store import store_tools
from bridge.tools.decorator import ToolSpec
from bridge.tools.env import ToolEnv

BuiltinFactory = Callable[[Mapping[str, Any], ToolEnv], Iterable[ToolSpec]]

BUILTINS: dict[str, BuiltinFactory] = {
    "store": store_tools,
    "store_data": lambda config, env: [
        s for s in store_tools(config, env) if s.definition.name == "store_data"
    ],
    "get_data": lambda config, env: [
        s for s in store_tools(config, env) if s.definition.name == "get_data"
    ],
}
