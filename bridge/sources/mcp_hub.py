"""McpHub: tools of other MCP servers as tools of this bridge.

Details: docs/modules.md, ``bridge.sources.mcp_hub``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from bridge.config import McpServerConfig
from bridge.errors import BridgeError, InvalidDefinitionError, ToolFailedError, ToolNotFoundError
from bridge.events import EventBus
from bridge.tools.context import CallContext, Handler
from bridge.tools.definition import (
    Category,
    Execution,
    ExecutionType,
    Requires,
    ToolDefinition,
    ToolIntent,
)
from bridge.tools.registry import ToolRegistry

_LOG = logging.getLogger(__name__)
NAMESPACE = "mcp"
VERSION = "1.0.0"
BACKOFF_MIN_S = 0.2
BACKOFF_MAX_S = 10.0
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.-]+")


def tool_name(server: str, mcp_name: str, taken: set[str]) -> str:
    """Return our name for an MCP tool: ``<server>_<tool>``, cleaned and unique."""
    base = f"{server}_{_NOT_ALLOWED.sub('_', mcp_name).strip('_') or 'tool'}"[:120]
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


@dataclass(slots=True)
class _Server:
    config: McpServerConfig
    client: Client | None = None
    tools: dict[str, str] = field(default_factory=dict)  # our identity -> MCP tool name
    skipped: dict[str, str] = field(default_factory=dict)  # MCP tool name -> why
    error: str | None = None
    task: asyncio.Task[None] | None = None


class McpHub:
    """Keep the tools of the configured MCP servers in the registry."""

    def __init__(
        self,
        servers: tuple[McpServerConfig, ...],
        registry: ToolRegistry,
        events: EventBus | None = None,
    ) -> None:
        self.registry = registry
        self.events = events
        self._servers = {s.name: _Server(config=s) for s in servers}

    async def start(self) -> None:
        """Connect every server in the background."""
        for name, server in self._servers.items():
            server.task = asyncio.get_running_loop().create_task(
                self._run(server), name=f"mcp-hub-{name}"
            )

    async def stop(self) -> None:
        """Disconnect and remove every server's tools."""
        for server in self._servers.values():
            if server.task is not None:
                server.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await server.task
                server.task = None
            self._drop(server)

    def status(self) -> dict[str, Any]:
        """Return each server's connection state, tool count and skipped tools."""
        return {
            name: {
                "connected": s.client is not None,
                "tools": len(s.tools),
                "skipped": dict(s.skipped),
                "error": s.error,
            }
            for name, s in self._servers.items()
        }

    # -- connection -------------------------------------------------------------------

    async def _run(self, server: _Server) -> None:
        delay = BACKOFF_MIN_S
        name = server.config.name
        while True:
            try:
                async with contextlib.AsyncExitStack() as stack:
                    client = await stack.enter_async_context(
                        await self._client(server.config, stack)
                    )
                    server.client = client
                    server.error = None
                    await self._sync(server)
                    _LOG.info("MCP server %s connected: %d tools", name, len(server.tools))
                    delay = BACKOFF_MIN_S
                    await self._watch(server)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # any transport or protocol failure: reconnect
                server.error = f"{type(err).__name__}: {_first_line(err)}"
                _LOG.warning("MCP server %s is unreachable: %s", name, server.error)
            finally:
                server.client = None
                self._drop(server)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX_S)

    async def _client(self, config: McpServerConfig, stack: contextlib.AsyncExitStack) -> Client:
        if config.command is not None:
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env={**os.environ, **config.env} if config.env else None,
            )
            return Client(params, cache=None, read_timeout_seconds=config.timeout_s)
        assert config.url is not None  # noqa: S101 - the schema requires command or url
        headers = {}
        if config.token_file is not None:
            headers["Authorization"] = f"Bearer {_read_token(config.token_file)}"
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        return Client(
            streamable_http_client(config.url, http_client=http),
            cache=None,
            read_timeout_seconds=config.timeout_s,
        )

    async def _watch(self, server: _Server) -> None:
        """Re-read the tool list every ``refresh_s`` and on list-changed; return on failure."""
        client = server.client
        assert client is not None  # noqa: S101
        changed = asyncio.Event()

        async def listen() -> None:
            with contextlib.suppress(Exception):  # servers without notifications: polling only
                async with client.listen(tools_list_changed=True) as sub:
                    async for _event in sub:
                        changed.set()

        listener = asyncio.get_running_loop().create_task(listen())
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), server.config.refresh_s)
                changed.clear()
                await asyncio.wait_for(self._sync(server), server.config.timeout_s)
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await listener

    # -- registry ---------------------------------------------------------------------

    async def _sync(self, server: _Server) -> None:
        client = server.client
        assert client is not None  # noqa: S101
        listed: list[Any] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        wanted: dict[str, tuple[ToolDefinition, str]] = {}
        skipped: dict[str, str] = {}
        taken: set[str] = set()
        for tool in listed:
            name = tool_name(server.config.name, tool.name, taken)
            try:
                definition = self._definition(server.config, tool, name)
            except InvalidDefinitionError as err:
                skipped[tool.name] = err.message
                continue
            taken.add(name)
            wanted[definition.identity] = (definition, tool.name)
        for identity in [i for i in server.tools if i not in wanted]:
            self.registry.unregister(identity)
            del server.tools[identity]
        for identity, (definition, mcp_name) in wanted.items():
            entry = self.registry.get(identity)
            if entry is None:
                self.registry.register(definition, self._handler(server, mcp_name))
            elif entry.definition != definition or server.tools.get(identity) != mcp_name:
                self.registry.replace(definition, self._handler(server, mcp_name))
            server.tools[identity] = mcp_name
        if skipped != server.skipped:
            for mcp_name, why in skipped.items():
                _LOG.warning(
                    "MCP server %s: tool %r skipped: %s", server.config.name, mcp_name, why
                )
        server.skipped = skipped

    def _definition(self, config: McpServerConfig, tool: Any, name: str) -> ToolDefinition:
        hints = tool.annotations
        read_only = bool(hints and hints.read_only_hint)
        description = tool.description or tool.title or tool.name
        return ToolDefinition(
            name=name,
            namespace=NAMESPACE,
            version=VERSION,
            description=f"{description} (MCP server {config.name}, tool {tool.name!r})"[:4096],
            category=Category.QUERYING if read_only else Category.ACTING,
            parameters=dict(tool.input_schema),
            returns=dict(tool.output_schema) if tool.output_schema else None,
            requires=Requires(permissions=(f"mcp:call:{config.name}", *config.permissions)),
            execution=Execution(
                timeout_ms=int(config.timeout_s * 1000),
                idempotent=bool(hints and (hints.idempotent_hint or read_only)),
            ),
            metadata={
                "tags": ["mcp", config.name],
                "mcp": {"server": config.name, "tool": tool.name},
            },
            dangerous=bool(hints and hints.destructive_hint),
            server_name=config.name,
            type=ExecutionType.MCP,
            intent=ToolIntent.COMPUTE if read_only else ToolIntent.ACTION,
        )

    def _handler(self, server: _Server, mcp_name: str) -> Handler:
        async def handle(params: dict[str, Any], ctx: CallContext) -> Any:
            client = server.client
            if client is None:
                raise ToolNotFoundError(
                    f"MCP server '{server.config.name}' is not connected",
                    {"server": server.config.name},
                )
            try:
                result = await client.call_tool(mcp_name, params)
            except BridgeError:
                raise
            except Exception as err:
                raise ToolFailedError(
                    f"MCP server '{server.config.name}' failed: {_first_line(err)}",
                    {"server": server.config.name, "tool": mcp_name},
                ) from err
            text = "\n".join(
                str(getattr(block, "text", ""))
                for block in result.content
                if getattr(block, "type", None) == "text"
            )
            if result.is_error:
                raise ToolFailedError(
                    f"MCP server '{server.config.name}' answered an error: {text or 'no text'}",
                    {"server": server.config.name, "tool": mcp_name},
                )
            if result.structured_content is not None:
                return result.structured_content
            return {"text": text}

        return handle

    def _drop(self, server: _Server) -> None:
        for identity in list(server.tools):
            self.registry.unregister(identity)
        server.tools.clear()


def _read_token(path: Any) -> str:
    try:
        mode = path.stat().st_mode
        text = str(path.read_text()).strip()
    except OSError as err:
        raise InvalidDefinitionError(f"cannot read the token file {path}: {err.strerror}") from err
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise InvalidDefinitionError(f"{path} must be readable by its owner only (chmod 600)")
    return text


def _first_line(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    if isinstance(err, BaseExceptionGroup) and err.exceptions:
        text = _first_line(err.exceptions[0])
    return json.dumps(text.splitlines()[0][:200])[1:-1]
