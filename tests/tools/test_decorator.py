"""@tool/param: schemas built from signatures, handlers registered and callable."""

from __future__ import annotations

import enum
from typing import Any, Literal

import pytest

from bridge.errors import InvalidDefinitionError
from bridge.tools.context import CallContext
from bridge.tools.decorator import param, register_tools, spec_of, tool
from bridge.tools.definition import Category
from bridge.tools.registry import ToolRegistry
from bridge.tools.validation import validate_call


class Mode(enum.Enum):
    HEAT = "heat"
    COOL = "cool"


@tool(
    namespace="core",
    requires=["notification"],
    permissions=["notify:send"],
    category="communicating",
    tags=["alert"],
)
async def notify(
    recipient: str = param(description="Email, phone, @handle, or channel ID"),
    message: str = param(description="Notification content", max_length=4096),
    urgency: Literal["low", "medium", "high", "critical"] = param(default="medium"),
    channels: list[str] | None = None,
) -> dict[str, Any]:
    """Send notification to a person, device, or channel.

    Longer text that is not part of the description.
    """
    return {"delivered": True, "recipient": recipient, "urgency": urgency, "channels": channels}


@tool(name="thermostat_set", namespace="matter", version="1.2.0")
async def set_temperature(
    celsius: float = param(min=5, max=35),
    mode: Mode = Mode.HEAT.value,  # type: ignore[assignment]
    hold: bool = False,
    steps: int = param(1, minimum=1, maximum=10),
    label: str = param("", pattern="^[a-z]*$", min_length=0),
    extra: dict[str, int] | None = None,
    *,
    ctx: CallContext,
) -> dict[str, Any]:
    """Set the thermostat."""
    return {"celsius": celsius, "mode": mode, "agent": ctx.agent_id, "steps": steps}


def test_notify_schema_matches_seed_shape() -> None:
    spec = spec_of(notify)
    assert spec is not None
    d = spec.definition
    assert d.identity == "core:notify@1.0.0"
    assert d.description == "Send notification to a person, device, or channel."
    assert d.category is Category.COMMUNICATING
    assert d.requires.capabilities == ("notification",)
    assert d.requires.permissions == ("notify:send",)
    assert d.tags == ("alert",)
    assert d.parameters == {
        "type": "object",
        "properties": {
            "recipient": {"type": "string", "description": "Email, phone, @handle, or channel ID"},
            "message": {
                "type": "string",
                "description": "Notification content",
                "maxLength": 4096,
            },
            "urgency": {
                "type": "string",
                "enum": ["low", "medium", "high", "critical"],
                "default": "medium",
            },
            "channels": {"type": ["array", "null"], "items": {"type": "string"}},
        },
        "required": ["recipient", "message"],
        "additionalProperties": False,
    }


def test_numbers_enums_bools_dicts_and_context() -> None:
    spec = spec_of(set_temperature)
    assert spec is not None
    props = spec.definition.parameters["properties"]
    assert spec.definition.identity == "matter:thermostat_set@1.2.0"
    assert props == {
        "celsius": {"type": "number", "minimum": 5, "maximum": 35},
        "mode": {"type": "string", "enum": ["heat", "cool"], "default": "heat"},
        "hold": {"type": "boolean", "default": False},
        "steps": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
        "label": {"type": "string", "pattern": "^[a-z]*$", "minLength": 0, "default": ""},
        "extra": {
            "type": ["object", "null"],
            "additionalProperties": {"type": "integer"},
        },
    }
    assert spec.definition.parameters["required"] == ["celsius"]
    assert "ctx" not in props


async def test_registered_handler_gets_params_and_context() -> None:
    registry = ToolRegistry()
    [n, t] = register_tools(registry, notify, set_temperature)
    assert n.identity == "core:notify@1.0.0"
    params = validate_call(t.definition, {"celsius": 21.5})
    assert t.handler is not None
    result = await t.handler(params, CallContext(agent_id="kitchen-agent"))
    assert result == {"celsius": 21.5, "mode": "heat", "agent": "kitchen-agent", "steps": 1}
    assert n.handler is not None
    out = await n.handler(
        validate_call(n.definition, {"recipient": "rob", "message": "hi"}), CallContext()
    )
    assert out == {"delivered": True, "recipient": "rob", "urgency": "medium", "channels": None}
    # the decorated function is still a normal coroutine function
    assert (await notify("a", "b"))["recipient"] == "a"


def test_registry_argument_registers_immediately() -> None:
    registry = ToolRegistry()

    @tool(registry=registry, description="Ping the node")
    async def ping() -> str:
        return "pong"

    assert registry.resolve("ping").definition.parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_rejections() -> None:
    with pytest.raises(InvalidDefinitionError, match="must be defined with 'async def'"):

        @tool()
        def sync_tool() -> None:  # type: ignore[type-var]
            """Do nothing."""

    with pytest.raises(InvalidDefinitionError, match="needs a description or a docstring"):

        @tool()
        async def undocumented() -> None:
            pass

    with pytest.raises(InvalidDefinitionError, match="unsupported annotation"):

        @tool()
        async def weird(x: complex) -> None:
            """Take a complex number."""

    with pytest.raises(InvalidDefinitionError, match=r"\*args/\*\*kwargs"):

        @tool()
        async def variadic(*args: int) -> None:
            """Take anything."""

    with pytest.raises(InvalidDefinitionError, match="is not a @tool function"):
        register_tools(ToolRegistry(), len)
