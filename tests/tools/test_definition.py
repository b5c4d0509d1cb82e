"""ToolDefinition: seed documents round-trip exactly; broken ones are rejected by name."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from bridge.errors import ErrorCode, InvalidDefinitionError
from bridge.tools.definition import (
    SCHEMA_URI,
    Category,
    Confirmation,
    Execution,
    Requires,
    Routing,
    ToolDefinition,
)

SEED = Path(__file__).parent / "seed"
SEED_FILES = sorted(SEED.glob("*.json"))


def load(name: str) -> dict:
    return json.loads((SEED / name).read_text())


def test_seed_set_is_complete() -> None:
    names = {p.stem for p in SEED_FILES}
    assert {
        "notify",
        "notify_schema_example",
        "search_web",
        "spawn_agent",
        "llm_complete",
        "store_data",
        "control_matter_device",
        "matter_command",
        "query_sensor",
        "get_camera_frame",
        "rag_search",
        "transcribe_audio",
        "send_email",
    } == names


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.stem)
def test_seed_round_trips_unchanged(path: Path) -> None:
    doc = json.loads(path.read_text())
    original = copy.deepcopy(doc)
    defn = ToolDefinition.from_json(doc)
    assert defn.to_json() == original
    assert doc == original  # loading does not mutate the input
    again = ToolDefinition.from_json(defn.to_json())
    assert again == defn


@pytest.mark.parametrize("path", SEED_FILES, ids=lambda p: p.stem)
def test_canonical_form_round_trips(path: Path) -> None:
    defn = ToolDefinition.from_json(json.loads(path.read_text()))
    canonical = defn.replace(source_keys=frozenset()).to_json()
    assert canonical["$schema"] == SCHEMA_URI
    assert set(canonical["tool"]) >= {"name", "namespace", "version", "requires", "execution"}
    assert ToolDefinition.from_json(canonical) == defn
    assert ToolDefinition.from_json(canonical).to_json() == canonical


def test_notify_fields_from_full_example() -> None:
    defn = ToolDefinition.from_json(load("notify_schema_example.json"))
    assert defn.identity == "core:notify@1.0.0"
    assert defn.key == "core:notify"
    assert defn.category is Category.COMMUNICATING  # read from metadata.category
    assert defn.requires == Requires(
        capabilities=("notification",), permissions=("notify:send",), network=True, gpu=False
    )
    assert defn.execution == Execution(
        timeout_ms=30000, retries=2, idempotent=False, async_allowed=True
    )
    assert defn.routing == Routing(prefer_local=False, node_affinity=(), hop_limit=3)
    assert defn.tags == ("notification", "messaging", "alert")
    assert "category" not in defn.metadata
    assert defn.to_json()["tool"]["metadata"]["category"] == "communicating"
    assert "category" not in defn.to_json()["tool"]


def test_defaults_and_extensions_of_sparse_documents() -> None:
    matter = ToolDefinition.from_json(load("matter_command.json"))
    assert matter.version == "1.0.0"
    assert matter.category is None
    assert matter.routing.node_affinity == ("matter-bridge-node",)
    assert matter.requires.permissions == ("device:control:{device_id}",)
    assert "version" not in matter.to_json()["tool"]
    llm = ToolDefinition.from_json(load("llm_complete.json"))
    assert llm.execution.timeout_ms == 120000
    assert llm.execution.extra == {"stream_supported": True}


def test_node_affinity_as_string_round_trips() -> None:
    doc = load("control_matter_device.json")
    doc["tool"]["routing"]["node_affinity"] = "matter-bridge"
    defn = ToolDefinition.from_json(doc)
    assert defn.routing.node_affinity == ("matter-bridge",)
    assert defn.to_json() == doc


def test_flat_view() -> None:
    defn = ToolDefinition.from_json(load("store_data.json"))
    flat = defn.flat()
    assert set(flat) == {
        "name",
        "description",
        "serverName",
        "inputSchemaJson",
        "outputSchemaJson",
        "permissions",
    }
    assert flat["name"] == "core:store_data"
    assert flat["serverName"] == ""
    assert flat["permissions"] == ["storage:write"]
    assert json.loads(flat["inputSchemaJson"]) == load("store_data.json")["tool"]["parameters"]
    assert json.loads(flat["outputSchemaJson"])["properties"]["created"] == {"type": "boolean"}


def test_yaml_and_json_text_give_the_same_definition() -> None:
    doc = load("search_web.json")
    import yaml

    assert ToolDefinition.from_yaml(yaml.safe_dump(doc)) == ToolDefinition.from_json(doc)
    assert ToolDefinition.from_text(json.dumps(doc)) == ToolDefinition.from_json(doc)


def test_code_built_definition_writes_full_form() -> None:
    defn = ToolDefinition(
        name="light_hall_off",
        namespace="matter",
        description="Turn off the hall light",
        category=Category.ACTING,
        dangerous=True,
        confirmation=Confirmation(mode="always", message="Turn off {name}?"),
        server_name="bridge-1",
    )
    doc = defn.to_json()
    assert doc["$schema"] == SCHEMA_URI
    assert doc["tool"]["confirmation"] == {
        "mode": "always",
        "message": "Turn off {name}?",
        "multi_party": 1,
        "timeout_s": 300.0,
    }
    assert doc["tool"]["server_name"] == "bridge-1"
    assert ToolDefinition.from_json(doc) == defn


def reject(doc: object) -> InvalidDefinitionError:
    with pytest.raises(InvalidDefinitionError) as info:
        ToolDefinition.from_json(doc)
    assert info.value.code is ErrorCode.INVALID_DEFINITION
    return info.value


def test_seed_analyze_image_is_rejected_for_type_any() -> None:
    err = reject(json.loads((SEED / "invalid" / "analyze_image.json").read_text()))
    assert err.details["path"] == "tool.returns.properties.result.type"
    assert "returns is not a valid JSON Schema" in err.message
    assert "'any'" in err.message


def test_missing_name_and_description_are_named() -> None:
    err = reject({"tool": {"parameters": {"type": "object"}}})
    paths = [e["path"] for e in err.details["errors"]]
    assert paths == ["$.tool", "$.tool"]
    assert "'name' is a required property" in err.message
    assert "'description' is a required property" in err.message


def test_unknown_tool_key_and_bad_types_are_listed() -> None:
    doc = load("notify.json")
    doc["tool"]["paramaters"] = {}
    doc["tool"]["execution"]["retries"] = "two"
    doc["tool"]["category"] = "dancing"
    err = reject(doc)
    by_path = {e["path"]: e["message"] for e in err.details["errors"]}
    assert by_path["$.tool"] == "unknown key(s) 'paramaters'"
    assert "'two' is not of type 'integer'" == by_path["$.tool.execution.retries"]
    assert "$.tool.category" in by_path
    assert err.message.startswith("tool 'notify' is invalid: ")


def test_bad_version_schema_uri_and_parameters_type() -> None:
    doc = load("notify.json")
    doc["tool"]["version"] = "1.0"
    assert "$.tool.version" in {e["path"] for e in reject(doc).details["errors"]}
    doc = load("notify.json")
    doc["$schema"] = "https://example.invalid/other"
    assert "$.$schema" in {e["path"] for e in reject(doc).details["errors"]}
    doc = load("notify.json")
    doc["tool"]["parameters"] = {"type": "array"}
    assert "$.tool.parameters.type" in {e["path"] for e in reject(doc).details["errors"]}


def test_invalid_parameters_schema_is_rejected() -> None:
    doc = load("notify.json")
    doc["tool"]["parameters"]["properties"]["urgency"]["enum"] = "low"
    err = reject(doc)
    assert err.details["path"] == "tool.parameters.properties.urgency.enum"


def test_conflicting_category_placements() -> None:
    doc = load("notify_schema_example.json")
    doc["tool"]["category"] = "acting"
    err = reject(doc)
    assert "disagree" in err.message


def test_constructor_checks() -> None:
    with pytest.raises(InvalidDefinitionError, match="tool name 'bad name'"):
        ToolDefinition(name="bad name", description="x")
    with pytest.raises(InvalidDefinitionError, match="not a semantic version"):
        ToolDefinition(name="ok", version="v1", description="x")
    with pytest.raises(InvalidDefinitionError, match="description is empty"):
        ToolDefinition(name="ok", description="  ")
    with pytest.raises(InvalidDefinitionError, match="needs a 'when' schema"):
        ToolDefinition(name="ok", description="x", confirmation=Confirmation(mode="when"))
    assert reject([1, 2]).message.startswith("tool definition must be a mapping")


def test_yaml_syntax_error() -> None:
    with pytest.raises(InvalidDefinitionError, match="not valid YAML"):
        ToolDefinition.from_yaml("tool: [unclosed")


def test_execution_type_and_intent_round_trip_and_are_checked() -> None:
    from bridge.errors import InvalidDefinitionError
    from bridge.tools.definition import ExecutionType, ToolDefinition, ToolIntent

    doc = {
        "tool": {
            "name": "ask_user",
            "description": "Ask the person a question.",
            "type": "client",
            "intent": "render",
        }
    }
    d = ToolDefinition.from_json(doc)
    assert (d.type, d.intent) == (ExecutionType.CLIENT, ToolIntent.RENDER)
    assert d.to_json() == doc
    plain = ToolDefinition(name="x", description="y")
    assert (plain.type, plain.intent) == (ExecutionType.SERVER, ToolIntent.COMPUTE)
    assert "type" not in plain.to_json()["tool"]
    assert ToolDefinition(name="x", description="y", type="mcp").type is ExecutionType.MCP  # type: ignore[arg-type]
    for key, value in (("type", "remote"), ("intent", "think")):
        with pytest.raises(InvalidDefinitionError) as err:
            ToolDefinition.from_json({"tool": {"name": "x", "description": "y", key: value}})
        assert f"$.tool.{key}" in err.value.message
        with pytest.raises(InvalidDefinitionError) as err:
            ToolDefinition(name="x", description="y", **{key: value})
        assert err.value.details == {"path": f"tool.{key}"}


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        (
            {"type": "object", "properties": {"x": {"type": "number", "minimum": float("nan")}}},
            "valid JSON Schema",
        ),
        ({"type": "object", "properties": {"x": {"maximum": float("inf")}}}, "valid JSON Schema"),
        ({"type": "object", "properties": {"x": {"type": "nonsense"}}}, "valid JSON Schema"),
        ({"type": "object", "properties": {"x": {"type": "string"}}, 3: {"a": {1, 2}}}, "not JSON"),
    ],
)
def test_schemas_that_are_not_json_schemas_are_refused(parameters: dict, problem: str) -> None:
    """NaN and infinities are no JSON numbers: a schema spelling them is refused."""
    with pytest.raises(InvalidDefinitionError, match=problem) as info:
        ToolDefinition(name="t", description="d", parameters=parameters)
    assert info.value.code is ErrorCode.INVALID_DEFINITION


def test_schema_with_mixed_key_types_is_not_json() -> None:
    """Keys JSON cannot order (an integer beside strings) are refused, not guessed."""
    with pytest.raises(InvalidDefinitionError, match="not JSON"):
        ToolDefinition(
            name="t",
            description="d",
            parameters={"type": "object", "properties": {"x": {"type": "integer"}}, 7: "seven"},
        )
