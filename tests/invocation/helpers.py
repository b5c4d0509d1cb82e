"""Shared builders for invocation tests: a real runtime on a temporary SQLite file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bridge.auth.keys import NodeKey
from bridge.auth.tokens import Constraints, issue_token
from bridge.config import AuthConfig, BridgeConfig
from bridge.events import EventBus
from bridge.invocation.messages import RequestRouting, ToolRequest
from bridge.invocation.pipeline import Pipeline
from bridge.storage import Database
from bridge.tools.registry import ToolRegistry

NODE_ID = "node-a"


class Env:
    """A runtime plus the pieces tests poke at."""

    def __init__(
        self, state: Path, key: NodeKey | None = None, trusted: Sequence[str] = ()
    ) -> None:
        self.state = state
        self.key = key or NodeKey.load_or_create(state / "node.key")
        self.db = Database(state / "bridge.db")
        self.events = EventBus()
        self.registry = ToolRegistry(self.events)
        config = BridgeConfig(state_dir=state, auth=AuthConfig(trusted_issuers=tuple(trusted)))
        self.runtime = Pipeline.build(
            config=config,
            db=self.db,
            registry=self.registry,
            events=self.events,
            key=self.key,
            node_id=NODE_ID,
        )
        self.invoker = self.runtime.invoker
        # The token a request carries unless it names another: one client, one token
        # (stored outcomes, jobs and call events belong to a token, not to an agent name).
        self.default_token = self.token()

    def token(self, agent: str = "agent-1", perms: Sequence[str] = ("*",), **cons: Any) -> str:
        return issue_token(
            self.key,
            agent_id=agent,
            permissions=perms,
            ttl_s=3600,
            constraints=Constraints(**cons) if cons else None,
        )

    def request(
        self,
        tool: str,
        params: dict[str, Any] | None = None,
        *,
        token: str | None = None,
        **kw: Any,
    ) -> ToolRequest:
        routing = kw.pop("routing", None) or RequestRouting()
        return ToolRequest(
            tool=tool, params=params or {}, token=token or self.default_token, routing=routing, **kw
        )
