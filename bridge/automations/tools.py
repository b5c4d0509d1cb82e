"""The rule tools: create, list, enable/disable, test and delete rules as pipeline tools.

Beside them, with a Matter source, the binding tools: bind a switch to a light on the
devices, list and remove bindings (``SwitchBindings`` decides who may).

Registered by the runner while it runs, so MCP, ``/v1/invoke``, the ToolManager and the
console call them like any tool (authenticated, permission-checked, audited). Each
needs ``automations:create``; what the caller may see or change of a rule is the
runner's rule (its creator, ``automations:manage``). A rule's own token holds no
``automations:*`` permission, so a rule cannot make rules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from bridge.auth.tokens import AgentToken
from bridge.tools.context import CallContext
from bridge.tools.definition import Category, Requires, ToolDefinition, ToolIntent


class RuleManager(Protocol):
    """What the tools use of the runner."""

    def verify(self, raw: str) -> AgentToken:
        """Return the verified caller's token."""

    async def create(self, token: AgentToken, doc: Any) -> dict[str, Any]:
        """Create a rule."""

    def rules(self, token: AgentToken) -> list[dict[str, Any]]:
        """List visible rules."""

    def set_enabled(self, token: AgentToken, rule_id: str, enabled: bool) -> dict[str, Any]:
        """Enable or disable a rule."""

    async def test(self, token: AgentToken, rule_id: str) -> dict[str, Any]:
        """Say whether a rule would act now."""

    def delete(self, token: AgentToken, rule_id: str) -> dict[str, Any]:
        """Delete a rule."""


class BindingManager(Protocol):
    """What the binding tools use of ``SwitchBindings``."""

    def list(self, token: AgentToken) -> list[dict[str, Any]]:
        """List visible bindings."""

    async def create(self, token: AgentToken, switch: str, light: str) -> dict[str, Any]:
        """Bind a switch to a light."""

    async def delete(self, token: AgentToken, switch: str, light: str) -> dict[str, Any]:
        """Remove a binding."""


NAMESPACE = "automations"
PERMISSION = "automations:create"
_RULE_ID = {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"}
_DEVICE_ID = {"type": "string", "pattern": "^[0-9]{1,20}-[0-9]{1,5}$"}

Handler = Callable[[dict[str, Any], CallContext], Awaitable[Any]]


def _definition(
    name: str, description: str, properties: dict[str, Any], required: list[str], category: Category
) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        namespace=NAMESPACE,
        description=description,
        category=category,
        parameters={
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        requires=Requires(permissions=(PERMISSION,)),
        intent=ToolIntent.ACTION if category is Category.MANAGING else ToolIntent.COMPUTE,
        metadata={"tags": ["automations", "rules"]},
    )


def rule_tools(runner: RuleManager) -> list[tuple[ToolDefinition, Handler]]:
    """Return the rule tools bound to ``runner``."""
    verify = runner.verify

    async def create_rule(params: dict[str, Any], ctx: CallContext) -> Any:
        return await runner.create(verify(ctx.token or ""), params["rule"])

    async def list_rules(params: dict[str, Any], ctx: CallContext) -> Any:
        return {"rules": runner.rules(verify(ctx.token or ""))}

    async def set_rule_enabled(params: dict[str, Any], ctx: CallContext) -> Any:
        return runner.set_enabled(verify(ctx.token or ""), params["id"], params["enabled"])

    async def test_rule(params: dict[str, Any], ctx: CallContext) -> Any:
        return await runner.test(verify(ctx.token or ""), params["id"])

    async def delete_rule(params: dict[str, Any], ctx: CallContext) -> Any:
        return runner.delete(verify(ctx.token or ""), params["id"])

    return [
        (
            _definition(
                "create_rule",
                "Create an automation rule (trigger, conditions, actions; "
                "the schema is GET /v1/automations/schema). It runs with its own token, "
                "a subset of yours; a rule acting on locks or doors waits for a "
                "person's approval.",
                {"rule": {"type": "object"}},
                ["rule"],
                Category.MANAGING,
            ),
            create_rule,
        ),
        (
            _definition(
                "list_rules",
                "List the automation rules you may see, with status and the devices each touches.",
                {},
                [],
                Category.QUERYING,
            ),
            list_rules,
        ),
        (
            _definition(
                "set_rule_enabled",
                "Enable or disable an automation rule.",
                {"id": _RULE_ID, "enabled": {"type": "boolean"}},
                ["id", "enabled"],
                Category.MANAGING,
            ),
            set_rule_enabled,
        ),
        (
            _definition(
                "test_rule",
                "Say whether a rule would act now (its conditions and "
                "status); nothing is acted on.",
                {"id": _RULE_ID},
                ["id"],
                Category.QUERYING,
            ),
            test_rule,
        ),
        (
            _definition(
                "delete_rule",
                "Delete an automation rule and revoke its token.",
                {"id": _RULE_ID},
                ["id"],
                Category.MANAGING,
            ),
            delete_rule,
        ),
    ]


def binding_tools(
    bindings: BindingManager, verify: Callable[[str], AgentToken]
) -> list[tuple[ToolDefinition, Handler]]:
    """Return the Matter binding tools bound to ``bindings``."""

    async def bind_switch(params: dict[str, Any], ctx: CallContext) -> Any:
        return await bindings.create(verify(ctx.token or ""), params["switch"], params["light"])

    async def list_bindings(params: dict[str, Any], ctx: CallContext) -> Any:
        return {"bindings": bindings.list(verify(ctx.token or ""))}

    async def unbind_switch(params: dict[str, Any], ctx: CallContext) -> Any:
        return await bindings.delete(verify(ctx.token or ""), params["switch"], params["light"])

    pair = {"switch": _DEVICE_ID, "light": _DEVICE_ID}
    return [
        (
            _definition(
                "bind_switch",
                "Bind a Matter switch to a light on the devices themselves (the native "
                "form of 'this switch toggles that light': it works without the bridge). "
                "Needs control of both devices; a lock or door waits for a person's approval.",
                pair,
                ["switch", "light"],
                Category.MANAGING,
            ),
            bind_switch,
        ),
        (
            _definition(
                "list_bindings",
                "List the Matter switch -> light bindings you may see.",
                {},
                [],
                Category.QUERYING,
            ),
            list_bindings,
        ),
        (
            _definition(
                "unbind_switch",
                "Remove a Matter switch -> light binding from the devices.",
                pair,
                ["switch", "light"],
                Category.MANAGING,
            ),
            unbind_switch,
        ),
    ]
