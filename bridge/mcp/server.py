"""The MCP server core: the registry's tools for one token, called through the pipeline.

One module because listing, calling and the confirmation round-trip share the per-
session state the SDK hands in.
Details: docs/modules.md, ``bridge.mcp.server``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from bridge import __version__
from bridge.auth.approvals import ApprovalStatus
from bridge.auth.canonical import canonical_json
from bridge.auth.permissions import PermissionChecker
from bridge.auth.tokens import AgentToken
from bridge.auth.visibility import visible_schema
from bridge.errors import (
    BridgeError,
    ComponentUnavailableError,
    ConfirmationRequiredError,
    ToolNotFoundError,
    UnauthenticatedError,
    running,
)
from bridge.events import EventBus
from bridge.invocation.invoker import confirmation_for
from bridge.invocation.messages import ToolRequest, ToolResponse
from bridge.invocation.pipeline import Pipeline
from bridge.matter import STATE_TOOL, CompactProfile
from bridge.mcp.tool_names import key_in, mcp_name, tool_key
from bridge.tools.definition import Category, ToolDefinition, ToolIntent
from bridge.tools.registry import RegisteredTool, ToolRegistry

_LOG = logging.getLogger(__name__)

TOKEN_STATE_KEY = "atmosphere.agent_token"  # noqa: S105 - a dict key, not a secret
SERVER_NAME = "atmosphere-bridge"
APPROVE_COMMAND = "atmosphere-bridge approvals approve {id}"
_READ_ONLY_CATEGORIES = frozenset({Category.SENSING, Category.QUERYING})
_MAX_LEGACY_SESSIONS = 1024
_COALESCE_S = 0.05


def annotations_for(defn: ToolDefinition) -> types.ToolAnnotations:
    """Return the MCP annotations of a tool (rules in the module docstring)."""
    guarded = defn.dangerous or defn.confirmation is not None
    read_only = not guarded and (
        defn.category in _READ_ONLY_CATEGORIES
        or (defn.intent is ToolIntent.COMPUTE and defn.category in (None, Category.COMPUTING))
    )
    return types.ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=None if read_only else guarded,
        idempotent_hint=defn.execution.idempotent,
    )


def output_schema_for(defn: ToolDefinition) -> tuple[dict[str, Any] | None, bool]:
    """Return the MCP output schema and whether results are wrapped as ``{"result": ...}``."""
    if defn.returns is None:
        return None, False
    returns = dict(defn.returns)
    if returns.get("type") == "object":
        return returns, False
    return {"type": "object", "properties": {"result": returns}, "required": ["result"]}, True


def mcp_tool(defn: ToolDefinition, input_schema: dict[str, Any]) -> types.Tool | None:
    """Return the MCP form of a tool, or ``None`` when its key has no MCP name."""
    name = mcp_name(defn.namespace, defn.name)
    if name is None:
        return None
    output, _wrapped = output_schema_for(defn)
    return types.Tool(
        name=name,
        description=defn.description,
        input_schema=input_schema,
        output_schema=output,
        annotations=annotations_for(defn),
    )


def error_result(error: Mapping[str, Any]) -> types.CallToolResult:
    """Return the MCP tool error carrying our ``{code, message, details, retryable}``."""
    body = {
        "code": str(error.get("code", "INTERNAL")),
        "message": str(error.get("message", "")),
        "details": dict(error.get("details") or {}),
        "retryable": bool(error.get("retryable", False)),
    }
    return types.CallToolResult(
        content=[types.TextContent(text=f"{body['code']}: {body['message']}")],
        structured_content={"error": body},
        is_error=True,
    )


def success_result(defn: ToolDefinition | None, result: Any) -> types.CallToolResult:
    """Return the MCP result of a successful call (structured when the tool has ``returns``)."""
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str)
    structured: Any = None
    if defn is not None:
        schema, wrapped = output_schema_for(defn)
        if schema is not None:
            structured = {"result": result} if wrapped else result
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured, is_error=False
    )


def response_result(defn: ToolDefinition | None, response: ToolResponse) -> types.CallToolResult:
    """Return the MCP result of a ``tool_response``."""
    if response.error is not None:
        return error_result(response.error)
    return success_result(defn, response.result)


def token_of(ctx: ServerRequestContext[Any, Any]) -> AgentToken:
    """Return the verified token the transport attached to this request."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    state = scope.get("state") if isinstance(scope, Mapping) else None
    token = state.get(TOKEN_STATE_KEY) if isinstance(state, Mapping) else None
    if not isinstance(token, AgentToken):
        raise UnauthenticatedError("a bearer token is required", {"reason": "missing"})
    return token


class ToolServer(Server[Any]):
    """The SDK's low-level server, announcing tool list-changed notifications by default."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """Return the handshake-era options; tools announce ``listChanged``."""
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


class ChangeNotifier:
    """Tell MCP clients that the tool list changed, coalescing bursts of changes."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._legacy: OrderedDict[str, Any] = OrderedDict()
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.sent = 0

    def remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Keep a handshake-era connection's session so it gets list-changed notifications."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        headers = getattr(ctx.request, "headers", None)
        key = "stdio"
        if headers is not None:
            key = str(headers.get("mcp-session-id") or "http")
        self._legacy[key] = ctx.session
        self._legacy.move_to_end(key)
        while len(self._legacy) > _MAX_LEGACY_SESSIONS:
            self._legacy.popitem(last=False)

    def touch(self) -> None:
        """Schedule one notification for this burst of changes."""
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop, hence no connected client to tell
        self._timer = loop.call_later(_COALESCE_S, self._fire)

    def _fire(self) -> None:
        self._timer = None
        task = asyncio.get_running_loop().create_task(self.flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def flush(self) -> None:
        """Send the notification to every listener and handshake-era connection now."""
        self.sent += 1
        await self.bus.publish(ToolsListChanged())
        for key, session in list(self._legacy.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # a gone connection: forget it
                self._legacy.pop(key, None)

    async def close(self) -> None:
        """Stop pending notifications and end the listen streams."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.listen.close()
        self._legacy.clear()


@dataclass(slots=True, kw_only=True)
class PendingCall:
    """A call waiting for its approval (or ended and not yet collected)."""

    task: asyncio.Task[ToolResponse]
    approval: dict[str, Any]
    definition: ToolDefinition
    ended_at: float | None = None
    keys: tuple[str, ...] = field(default_factory=tuple)


class BridgeMcpServer:
    """The bridge's tools as an MCP server (see the module docstring)."""

    def __init__(
        self,
        registry: ToolRegistry,
        runtime: Callable[[], Pipeline | None],
        events: EventBus,
        *,
        approval_wait_s: float = 5.0,
        pending_ttl_s: float = 600.0,
        compact: CompactProfile | None = None,
    ) -> None:
        self.registry = registry
        # With a compact profile this server lists and answers only its capability tools.
        self.compact = compact
        self._runtime = runtime
        self.events = events
        self.approval_wait_s = approval_wait_s
        self.pending_ttl_s = pending_ttl_s
        self.checker = PermissionChecker()
        self.notifier = ChangeNotifier()
        self._pending: dict[tuple[str, str, bytes], PendingCall] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self.server: Server[Any] = ToolServer(
            SERVER_NAME,
            version=__version__,
            title="Atmosphere Matter Bridge",
            instructions=(
                "Tools of the devices this bridge controls. A call that needs approval "
                "answers CONFIRMATION_REQUIRED with an approval id; call the tool again "
                "with the same arguments to get its result once it was decided."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self.notifier.listen,
            # 2026-07-28 tools/call checks Mcp-Param-* headers against the tool's input
            # schema; without this lookup the SDK runs the whole tools/list per call.
            get_tool_input_schema=self.input_schema,
        )
        self.server.middleware = []  # no tracing spans per message

    def start(self) -> None:
        """Follow the registry (idempotent)."""
        if self._unsubscribe is None:
            self._unsubscribe = self.registry.subscribe(self._changed)
        if self.compact is not None:
            self.compact.start()

    def _changed(self, _action: str, _tool: RegisteredTool) -> None:
        self.notifier.touch()

    async def stop(self) -> None:
        """Stop following the registry and drop calls still waiting for approval."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.compact is not None:
            self.compact.stop()
        await self.notifier.close()
        pending = [p.task for p in self._pending.values()]
        self._pending.clear()
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- tools/list --------------------------------------------------------------------

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """Return the input schema of the tool MCP calls ``name`` (None when unknown).

        Used only to check a call's ``Mcp-Param-*`` headers; it is the tool's whole
        schema, as the header annotations are the same in every token's narrowed view.
        """
        if self.compact is not None:
            for defn in self.compact.tools_for(lambda _d: True):
                if mcp_name(defn.namespace, defn.name) == name:
                    return dict(defn.parameters)
            return None
        key = self.key_of(name)
        if key is None:
            return None
        try:
            entry = self.registry.resolve(key)
        except BridgeError:
            return None
        return dict(entry.definition.parameters) if entry.definition.parameters else None

    def allows_for(self, granted: tuple[str, ...]) -> Callable[[ToolDefinition], bool]:
        """Return whether ``granted`` meets a (concrete) tool's required permissions."""

        def allows(defn: ToolDefinition) -> bool:
            return self.checker.allows(granted, defn.requires.permissions, {})

        return allows

    def key_of(self, name: str) -> str | None:
        """Return the registry key the MCP name ``name`` stands for (``None``: no tool)."""
        key = tool_key(name)
        if key is not None:
            try:
                self.registry.resolve(key)
            except BridgeError:
                pass
            else:
                return key
        # A shortened name (or none): look for the key it stands for.
        return key_in(name, {e.definition.key for e in self.registry.list()}) or key

    def tools_for(self, token: AgentToken) -> list[types.Tool]:
        """Return the MCP tools ``token`` may call, sorted by name."""
        granted = tuple(token.permissions)
        tools: list[types.Tool] = []
        if self.compact is not None:
            for defn in self.compact.tools_for(self.allows_for(granted)):
                tool = mcp_tool(defn, dict(defn.parameters))
                if tool is not None:
                    tools.append(tool)
            return sorted(tools, key=lambda t: t.name)
        seen: set[str] = set()
        for entry in self.registry.list():
            key = entry.definition.key
            if key in seen:
                continue
            seen.add(key)
            try:
                newest = self.registry.resolve(key)
            except BridgeError:
                continue
            schema = visible_schema(self.checker, granted, newest.definition)
            if schema is None:
                continue
            tool = mcp_tool(newest.definition, schema)
            if tool is not None:
                tools.append(tool)
        return sorted(tools, key=lambda t: t.name)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        token = token_of(ctx)
        self.notifier.remember(ctx)
        return types.ListToolsResult(tools=self.tools_for(token), ttl_ms=0, cache_scope="private")

    # -- tools/call --------------------------------------------------------------------

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        token = token_of(ctx)
        self.notifier.remember(ctx)
        return await self.call(token, params.name, dict(params.arguments or {}))

    async def call(
        self, token: AgentToken, name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        """Run one MCP tool call for ``token`` and return its MCP result."""
        try:
            runtime = running(self._runtime(), "invocation")
        except ComponentUnavailableError as err:
            return error_result(err.to_json())
        key = tool_key(name) if self.compact is not None else self.key_of(name)
        if key is None:
            return error_result(
                ToolNotFoundError(f"no tool is called '{name}'", {"tool": name}).to_json()
            )
        try:
            if self.compact is not None:
                namespace, _, short = key.partition(":")
                if namespace != "home":
                    raise ToolNotFoundError(f"no tool is called '{name}'", {"tool": name})
                if short == STATE_TOOL:
                    area = self.compact.state_args(arguments)
                    allows = self.allows_for(tuple(token.permissions))
                    return success_result(None, await self.compact.home_state(allows, area))
                resolved = self.compact.resolve(
                    short, arguments, self.allows_for(tuple(token.permissions))
                )
                arguments = resolved.params
                request = replace(
                    ToolRequest.from_json({"tool": resolved.key, "params": arguments}),
                    via=resolved.via,
                )
                entry = self.registry.resolve(resolved.key)
            else:
                request = ToolRequest.from_json({"tool": key, "params": arguments})
                entry = self.registry.resolve(key)
        except BridgeError as err:
            return error_result(err.to_json())
        if confirmation_for(entry.definition) is None:
            response = await runtime.invoker.invoke(request, token=token)
            return response_result(entry.definition, response)
        return await self._confirmed_call(runtime, token, entry, request, arguments)

    async def _confirmed_call(
        self,
        runtime: Pipeline,
        token: AgentToken,
        entry: RegisteredTool,
        request: ToolRequest,
        arguments: dict[str, Any],
    ) -> types.CallToolResult:
        defn = entry.definition
        slot = (token.id, defn.identity, canonical_json(arguments))
        self._expire()
        pending = self._pending.get(slot)
        if pending is not None:
            if not pending.task.done() and await self._decided(runtime, pending):
                # Approved or denied: the call is finishing (its audit record is being
                # committed); its result is moments away, not another approval.
                await asyncio.wait({pending.task}, timeout=self.approval_wait_s)
            if not pending.task.done():
                return self._pending_answer(pending)
            del self._pending[slot]
            return response_result(defn, pending.task.result())
        claimed = {p.approval.get("id") for p in self._pending.values()}
        sub = self.events.subscribe("approval.pending")
        task = asyncio.get_running_loop().create_task(runtime.invoker.invoke(request, token=token))
        try:
            approval = await self._await_approval(sub, task, token, defn, claimed)
        finally:
            self.events.unsubscribe(sub)
        if approval is None:
            if task.done():
                return response_result(defn, task.result())
            # No approval showed up in time: let the call finish in the caller's time.
            return response_result(defn, await task)
        pending = PendingCall(task=task, approval=approval, definition=defn)
        self._pending[slot] = pending
        task.add_done_callback(lambda _t: self._ended(pending))
        return self._pending_answer(pending)

    async def _await_approval(
        self,
        sub: Any,
        task: asyncio.Task[ToolResponse],
        token: AgentToken,
        defn: ToolDefinition,
        claimed: set[Any],
    ) -> dict[str, Any] | None:
        deadline = time.monotonic() + self.approval_wait_s
        while not task.done():
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            getter = asyncio.ensure_future(sub.get())
            done, _ = await asyncio.wait(
                {getter, task}, timeout=left, return_when=asyncio.FIRST_COMPLETED
            )
            if getter not in done:
                getter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await getter
                continue
            data = getter.result().data
            if (data.get("tool"), data.get("token_id")) == (defn.identity, token.id) and (
                data.get("id") not in claimed
            ):
                return dict(data)
        return None

    def _ended(self, pending: PendingCall) -> None:
        pending.ended_at = time.monotonic()

    def _expire(self) -> None:
        now = time.monotonic()
        for slot, pending in list(self._pending.items()):
            if pending.ended_at is not None and now - pending.ended_at > self.pending_ttl_s:
                del self._pending[slot]

    @staticmethod
    async def _decided(runtime: Pipeline, pending: PendingCall) -> bool:
        """Return whether the pending call's approval is no longer waiting for a decision."""
        try:
            approval = await runtime.approvals.get(str(pending.approval.get("id")))
        except BridgeError:
            return False
        return approval.status is not ApprovalStatus.PENDING

    def _pending_answer(self, pending: PendingCall) -> types.CallToolResult:
        approval = pending.approval
        approval_id = str(approval.get("id"))
        message = str(approval.get("message", ""))
        command = APPROVE_COMMAND.format(id=approval_id)
        err = ConfirmationRequiredError(
            f"{message} — this call waits for approval {approval_id}: an approver with "
            f"'admin:approve' runs '{command}' (or POST /v1/approvals/{approval_id} with "
            '{"decision": "approve"}). Call this tool again with the same arguments to get '
            "its result once it was decided.",
            {
                "approval_id": approval_id,
                "message": message,
                "tool": pending.definition.identity,
                "required": approval.get("required", 1),
                "expires_at": approval.get("expires_at"),
                "approve": {
                    "method": "POST",
                    "path": f"/v1/approvals/{approval_id}",
                    "body": {"decision": "approve"},
                    "permission": "admin:approve",
                },
                "command": command,
            },
        )
        return error_result(err.to_json())
