"""ToolRegistry: registration, resolution, listing, notifications and discovery."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bridge.errors import AmbiguousToolError, ConflictError, ToolNotFoundError
from bridge.events import EventBus
from bridge.tools.context import CallContext
from bridge.tools.definition import Category, ToolDefinition
from bridge.tools.registry import RegisteredTool, ToolRegistry
from tests.tools.catalog import catalog

SEED = Path(__file__).parent / "seed"


async def echo(params: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    return {"params": params, "agent": ctx.agent_id}


def defn(name: str, namespace: str = "core", version: str = "1.0.0", **kw: Any) -> ToolDefinition:
    return ToolDefinition(
        name=name, namespace=namespace, version=version, description=f"{name} tool", **kw
    )


@pytest.fixture
def seeded() -> ToolRegistry:
    registry = ToolRegistry()
    for path in sorted(SEED.glob("*.json")):
        if path.stem == "notify_schema_example":
            continue
        registry.register(ToolDefinition.from_json(json.loads(path.read_text())), echo)
    return registry


def test_register_get_and_conflict(seeded: ToolRegistry) -> None:
    entry = seeded.get("core:notify@1.0.0")
    assert entry is not None
    assert entry.identity == "core:notify@1.0.0"
    assert entry.handler is echo
    assert entry.available is True
    assert seeded.get("core:notify") is None  # get() is exact identity only
    with pytest.raises(ConflictError, match="already registered"):
        seeded.register(entry.definition, echo)
    assert len(seeded) == 12


async def test_handler_is_callable_through_registry(seeded: ToolRegistry) -> None:
    entry = seeded.resolve("search_web")
    assert entry.handler is not None
    result = await entry.handler({"query": "x"}, CallContext(agent_id="agent-7"))
    assert result == {"params": {"query": "x"}, "agent": "agent-7"}


def test_resolve_versions_and_namespaces() -> None:
    registry = ToolRegistry()
    for version in ("1.0.0", "1.2.0", "1.10.1", "2.0.0", "3.0.0-beta.1"):
        registry.register(defn("notify", version=version), echo)
    registry.register(defn("lamp_on", namespace="matter"), echo)
    assert registry.resolve("notify").identity == "core:notify@2.0.0"
    assert registry.resolve("core:notify").identity == "core:notify@2.0.0"
    assert registry.resolve("notify@^1.0").identity == "core:notify@1.10.1"
    assert registry.resolve("notify", ">=1.0.0,<1.10").identity == "core:notify@1.2.0"
    assert registry.resolve("notify@^1", "~1.2").identity == "core:notify@1.2.0"
    assert registry.resolve("notify@3.0.0-beta.1").identity == "core:notify@3.0.0-beta.1"
    assert registry.resolve("core:notify@1.2.0").identity == "core:notify@1.2.0"
    assert registry.resolve("lamp_on").identity == "matter:lamp_on@1.0.0"
    with pytest.raises(ToolNotFoundError) as info:
        registry.resolve("notify@^4")
    assert info.value.details["versions"] == ["1.0.0", "1.2.0", "1.10.1", "2.0.0", "3.0.0-beta.1"]
    with pytest.raises(ToolNotFoundError, match="no tool named 'nothing'"):
        registry.resolve("nothing")
    with pytest.raises(ToolNotFoundError):
        registry.resolve("other:notify")


def test_resolved_references_follow_every_registration_change() -> None:
    """Resolutions are remembered between calls, never past a change of the registry."""
    registry = ToolRegistry()
    registry.register(defn("notify", version="1.0.0"), echo)
    for _ in range(2):
        assert registry.resolve("notify").identity == "core:notify@1.0.0"
        assert registry.resolve("notify@^1").identity == "core:notify@1.0.0"
    registry.register(defn("notify", version="1.5.0"), echo)
    assert registry.resolve("notify").identity == "core:notify@1.5.0"
    assert registry.resolve("notify@^1").identity == "core:notify@1.5.0"
    assert registry.resolve("notify", "<1.5").identity == "core:notify@1.0.0"
    assert registry.set_available("core:notify@1.5.0", False).available is False
    assert registry.resolve("notify").available is False  # the current entry, not a copy
    registry.register(defn("notify", namespace="other"), echo)
    with pytest.raises(AmbiguousToolError):
        registry.resolve("notify")
    assert registry.unregister("other:notify@1.0.0")
    assert registry.unregister("core:notify@1.5.0")
    assert registry.resolve("notify").identity == "core:notify@1.0.0"
    assert registry.unregister("core:notify@1.0.0")
    with pytest.raises(ToolNotFoundError):
        registry.resolve("notify")


def test_ambiguous_name_lists_candidates() -> None:
    registry = ToolRegistry()
    registry.register(defn("notify"), echo)
    registry.register(defn("notify", namespace="mcp_slack"), echo)
    registry.register(defn("notify", namespace="mcp_slack", version="2.0.0"), echo)
    with pytest.raises(AmbiguousToolError) as info:
        registry.resolve("notify")
    assert info.value.details["candidates"] == ["core:notify", "mcp_slack:notify"]
    assert "core:notify, mcp_slack:notify" in info.value.message
    assert registry.resolve("mcp_slack:notify").identity == "mcp_slack:notify@2.0.0"
    registry.unregister("mcp_slack:notify@1.0.0")
    registry.unregister("mcp_slack:notify@2.0.0")
    assert registry.resolve("notify").identity == "core:notify@1.0.0"


def test_replace_unregister_and_availability_notify() -> None:
    bus = EventBus()
    sub = bus.subscribe("registry.")
    registry = ToolRegistry(bus)
    seen: list[tuple[str, str, bool]] = []

    def record(action: str, entry: RegisteredTool) -> None:
        seen.append((action, entry.identity, entry.available))

    unsubscribe = registry.subscribe(record)
    registry.register(defn("a"), echo)
    registry.replace(defn("a"), None, available=False)
    registry.set_available("core:a@1.0.0", True)
    registry.set_available("core:a@1.0.0", True)  # unchanged: no event
    registry.replace(defn("b"), echo)
    assert registry.unregister("core:a@1.0.0") is True
    assert registry.unregister("core:a@1.0.0") is False
    unsubscribe()
    registry.unregister("core:b@1.0.0")
    assert seen == [
        ("added", "core:a@1.0.0", True),
        ("updated", "core:a@1.0.0", False),
        ("updated", "core:a@1.0.0", True),
        ("added", "core:b@1.0.0", True),
        ("removed", "core:a@1.0.0", True),
    ]
    events = [sub.queue.get_nowait().data for _ in range(sub.queue.qsize())]
    assert [e["action"] for e in events] == [
        "added",
        "updated",
        "updated",
        "added",
        "removed",
        "removed",
    ]
    assert events[1] == {"action": "updated", "identity": "core:a@1.0.0", "available": False}
    with pytest.raises(ToolNotFoundError):
        registry.set_available("core:a@1.0.0", False)
    with pytest.raises(ToolNotFoundError):
        registry.resolve("a")


def test_broken_subscriber_does_not_break_registration() -> None:
    registry = ToolRegistry()

    def broken(action: str, entry: RegisteredTool) -> None:
        raise RuntimeError("boom")

    registry.subscribe(broken)
    registry.register(defn("a"), echo)
    assert registry.get("core:a@1.0.0") is not None


def test_list_filters(seeded: ToolRegistry) -> None:
    seeded.register(defn("remote_tool", namespace="core", server_name="peer-1"), None)
    seeded.set_available("core:remote_tool@1.0.0", False)

    def ids(entries: list[RegisteredTool]) -> list[str]:
        return [e.identity for e in entries]

    assert ids(seeded.list(namespace="matter")) == [
        "matter:control_matter_device@1.0.0",
        "matter:matter_command@1.0.0",
    ]
    assert ids(seeded.list(capability="storage")) == ["core:store_data@1.0.0"]
    assert ids(seeded.list(category=Category.QUERYING)) == [
        "core:rag_search@1.0.0",
        "core:search_web@1.0.0",
    ]
    assert ids(seeded.list(category="communicating")) == [
        "core:notify@1.0.0",
        "core:send_email@1.0.0",
    ]
    assert ids(seeded.list(server_name="peer-1")) == ["core:remote_tool@1.0.0"]
    assert ids(seeded.list(available=False)) == ["core:remote_tool@1.0.0"]
    assert ids(seeded.list(namespace="core", capability="llm")) == ["core:llm_complete@1.0.0"]
    tagged = ToolRegistry()
    tagged.register(
        ToolDefinition.from_json(json.loads((SEED / "notify_schema_example.json").read_text())),
        echo,
    )
    assert ids(tagged.list(tag="alert")) == ["core:notify@1.0.0"]
    assert ids(tagged.list(tag="nope")) == []


@pytest.fixture
def big_registry(seeded: ToolRegistry) -> ToolRegistry:
    for d in catalog():
        seeded.register(d, echo)
    assert len(seeded) == 342
    return seeded


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("switch off the hallway lamp", "matter:light_hallway_off@1.0.0"),
        ("turn on the kitchen light", "matter:light_kitchen_on@1.0.0"),
        ("dim the bedroom lights", "matter:light_bedroom_brightness@1.0.0"),
        ("make the office warmer", "matter:thermostat_office_set_temperature@1.0.0"),
        ("close the patio blinds", "matter:blinds_patio_close@1.0.0"),
        ("switch off the garage plug", "matter:plug_garage_off@1.0.0"),
        ("send an alert to the user", "core:notify@1.0.0"),
        ("remember this value for later", "core:store_data@1.0.0"),
        ("search the web for information", "core:search_web@1.0.0"),
        ("transcribe audio to text", "core:transcribe_audio@1.0.0"),
    ],
)
def test_discover_ranks_the_right_tool_first(
    big_registry: ToolRegistry, query: str, expected: str
) -> None:
    ranked = big_registry.discover(query, limit=5)
    assert ranked[0][0].identity == expected
    assert ranked[0][1] > ranked[1][1]


def test_discover_hallway_lamp_beats_near_misses(big_registry: ToolRegistry) -> None:
    ranked = [e.identity for e, _ in big_registry.discover("switch off the hallway lamp", 4)]
    assert ranked[0] == "matter:light_hallway_off@1.0.0"
    # the other hallway light tools and the hallway plug's off come next, not other rooms
    assert set(ranked[1:]) <= {
        "matter:light_hallway_on@1.0.0",
        "matter:light_hallway_toggle@1.0.0",
        "matter:plug_hallway_off@1.0.0",
        "matter:light_hallway_brightness@1.0.0",
        "matter:light_hallway_color@1.0.0",
    }


def test_discover_edge_cases(big_registry: ToolRegistry) -> None:
    assert big_registry.discover("the of to", 5) == []
    assert big_registry.discover("zzzz unknownword", 5) == []
    assert len(big_registry.discover("light", 7)) == 7
    big_registry.unregister("matter:light_hallway_off@1.0.0")
    top = big_registry.discover("switch off the hallway lamp", 1)[0][0].identity
    assert top != "matter:light_hallway_off@1.0.0"
    assert ToolRegistry().discover("anything", 3) == []
