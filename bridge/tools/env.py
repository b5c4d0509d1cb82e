"""What tool factories get from the node: the database, the state directory, the clock.

Builtin, plugin and file tools that need node resources receive a ``ToolEnv`` with
their per-tool ``config`` from the manifest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bridge.storage import Database

if TYPE_CHECKING:
    from bridge.tools.context import Handler
    from bridge.tools.definition import ToolDefinition


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEnv:
    """Node resources available to tool factories."""

    db: Database
    state_dir: Path
    node_id: str = ""
    clock: Callable[[], float] = field(default=time.time)
    # Runs tools of type "client" (the invocation layer's ClientToolBroker.handler).
    client_handler: Callable[[ToolDefinition], Handler] | None = None
