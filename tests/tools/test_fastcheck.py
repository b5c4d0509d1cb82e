"""The compiled yes-check is never looser than jsonschema (Draft 2020-12).

Whenever ``compile_check`` says an instance is valid, ``jsonschema`` must find no error
in it — on generated schemas of the keywords it implements and generated instances, and
on the parameters of every tool the Matter generator makes from the recorded dumps in
tests/fixtures/nodes (the test fails when there are none).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from bridge.errors import InvalidParamsError
from bridge.tools.fastcheck import compile_check
from bridge.tools.validation import _FORMAT_CHECKER, _FORMATS, validate_params

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(-5, 5, allow_nan=False),
    st.sampled_from([1.0, 0.0, -0.0, 2.5]),
    st.text(max_size=6),
    st.sampled_from(["2026-11-24T10:00:00Z", "a@b.cd", "http://x", "not a uri", "", "é"]),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "level", "on"]), inner, max_size=3)
    ),
    max_leaves=8,
)
TYPES = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "null"])


def _leaf() -> st.SearchStrategy[dict[str, Any]]:
    options: list[st.SearchStrategy[dict[str, Any]]] = [
        st.builds(lambda t: {"type": t}, TYPES | st.lists(TYPES, min_size=1, max_size=3)),
        st.builds(lambda e: {"enum": e}, st.lists(SCALARS, min_size=1, max_size=4)),
        st.builds(lambda c: {"const": c}, SCALARS),
        st.builds(
            lambda lo, hi: {"minimum": lo, "maximum": hi}, st.integers(-3, 3), st.integers(-3, 3)
        ),
        st.builds(
            lambda lo: {"exclusiveMinimum": lo, "exclusiveMaximum": lo + 2.5},
            st.floats(-3, 3, allow_nan=False),
        ),
        st.builds(
            lambda a, b: {"type": "string", "minLength": a, "maxLength": b},
            st.integers(0, 3),
            st.integers(0, 5),
        ),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(["^a", "b$", "[0-9]", "^$"])),
        st.builds(
            lambda f: {"format": f}, st.sampled_from(["date-time", "email", "idn-email", "uri"])
        ),
        st.just({}),
        st.just({"description": "x", "default": 1, "x-unit": "%"}),
    ]
    return st.one_of(options)


SCHEMAS = st.recursive(
    _leaf(),
    lambda inner: st.one_of(
        st.builds(
            lambda props, req, extra: {
                "type": "object",
                "properties": props,
                "required": [k for k in req if k in props],
                **extra,
            },
            st.dictionaries(st.sampled_from(["a", "b", "c", "level", "on"]), inner, max_size=3),
            st.lists(st.sampled_from(["a", "b", "c", "level", "on"]), max_size=2),
            st.sampled_from(
                [{}, {"additionalProperties": False}, {"additionalProperties": {"type": "integer"}}]
            ),
        ),
        st.builds(
            lambda items, lo: {"type": "array", "items": items, "minItems": lo, "maxItems": lo + 2},
            inner,
            st.integers(0, 2),
        ),
    ),
    max_leaves=6,
)


@settings(max_examples=1500, deadline=None)
@given(schema=SCHEMAS, instance=JSON)
def test_a_proven_instance_is_valid_for_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    check = compile_check(schema, _FORMATS)
    assert check is not None, schema  # every generated keyword is implemented
    if check(instance):
        errors = list(
            Draft202012Validator(schema, format_checker=_FORMAT_CHECKER).iter_errors(instance)
        )
        assert errors == [], (schema, instance, [e.message for e in errors])


@settings(max_examples=300, deadline=None)
@given(schema=SCHEMAS, instance=JSON)
def test_the_check_agrees_on_most_valid_instances(schema: dict[str, Any], instance: Any) -> None:
    """Not looser, and not useless: jsonschema-valid instances are proven too."""
    check = compile_check(schema, _FORMATS)
    assert check is not None
    valid = not list(
        Draft202012Validator(schema, format_checker=_FORMAT_CHECKER).iter_errors(instance)
    )
    assert check(instance) == valid, (schema, instance)


def test_unsupported_keywords_are_left_to_jsonschema() -> None:
    for schema in (
        {"anyOf": [{"type": "string"}, {"oneOf": []}]},
        {"anyOf": []},
        {"$ref": "#/$defs/x"},
        {"type": "object", "properties": {"a": {"oneOf": []}}},
        {"type": "array", "uniqueItems": "yes"},
        {"format": "ipv4"},
        {"type": "number", "multipleOf": 0.5},
    ):
        assert compile_check(schema, _FORMATS) is None, schema


def test_generated_matter_tools_keep_their_errors_and_defaults() -> None:
    """Every tool generated from the repository's recorded dumps (tests/fixtures/nodes):
    valid params pass the fast path, invalid ones keep jsonschema's worded errors."""
    from bridge.matter import MatterToolGenerator, NodeData, build_devices, load_cluster_maps
    from tests.matter.dumps import DUMP_FILES, NODES_DIR

    assert DUMP_FILES, f"no recorded node dumps under {NODES_DIR}: nothing would be checked"
    nodes = [NodeData.from_json(json.loads(path.read_text())) for path in DUMP_FILES]
    tools = MatterToolGenerator(load_cluster_maps()).generate(build_devices(nodes))
    assert tools, "the recorded dumps generated no tool"
    accepted = refused = 0
    for tool in tools:
        schema = tool.definition.parameters
        check = compile_check(schema, _FORMATS)
        assert check is not None, f"{tool.definition.name}: generated schema has no fast path"
        example = {
            k: v.get("default", v.get("minimum", 0))
            for k, v in schema.get("properties", {}).items()
            if isinstance(v, dict)
        }
        for instance in (example, {}, {"nonsense": 1}, {k: "x" for k in example}):
            ok = not list(
                Draft202012Validator(schema, format_checker=_FORMAT_CHECKER).iter_errors(instance)
            )
            if check(instance):
                assert ok, (tool.definition.name, instance)
                accepted += 1
            if not ok:
                with pytest.raises(InvalidParamsError, match="invalid parameters"):
                    validate_params(schema, instance)
                refused += 1
    # Generated schemas forbid unknown keys, so {"nonsense": 1} is refused for every tool.
    assert refused >= len(tools), (refused, len(tools))
    assert accepted >= len(tools), (accepted, len(tools))


def test_copies_made_per_call_keep_every_field() -> None:
    """``CallContext.with_deadline`` and ``ToolCall.but`` are ``replace`` without its cost."""
    from dataclasses import fields, replace

    from bridge.invocation.calls import ToolCall, ToolCallStatus
    from bridge.tools.context import CallContext

    ctx = CallContext(
        agent_id="a",
        token_id="i",
        session_id="s",
        trace_id="t",
        node_id="n",
        token="tok",
        permissions=("p",),
        hop_budget=2,
        path=("x",),
        deadline=1.0,
        idempotency_key="k",
        allowed_nodes=("n",),
        max_hops=3,
    )
    assert ctx.with_deadline(9.0) == replace(ctx, deadline=9.0)
    assert {f.name for f in fields(CallContext)} == {
        "call_id",
        "agent_id",
        "token_id",
        "session_id",
        "trace_id",
        "node_id",
        "token",
        "permissions",
        "hop_budget",
        "path",
        "deadline",
        "idempotency_key",
        "allowed_nodes",
        "max_hops",
    }, "a new CallContext field must be copied by with_deadline too"
    call = ToolCall(
        tool_call_id="c", tool="t", agent_id="a", token_id="i", result_json="{}", error={"x": "y"}
    )
    assert call.but(status=ToolCallStatus.RUNNING) == replace(call, status=ToolCallStatus.RUNNING)
    assert {f.name for f in fields(ToolCall)} == {
        "tool_call_id",
        "tool",
        "agent_id",
        "token_id",
        "status",
        "result_json",
        "error",
    }


def _route_schemas() -> list[tuple[str, dict[str, Any]]]:
    from bridge.api.invoke_routes import DECISION_BODY
    from bridge.invocation.messages import TOOL_INVOKE_SCHEMA, TOOL_RESPONSE_SCHEMA

    return [
        ("invoke", TOOL_INVOKE_SCHEMA),
        ("response", TOOL_RESPONSE_SCHEMA),
        ("decision", DECISION_BODY),
    ]


BODIES = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"tool": st.one_of(st.text(max_size=3), st.integers())},
        optional={
            "params": JSON,
            "version": st.one_of(st.none(), st.text(max_size=2)),
            "timestamp": st.one_of(st.none(), st.floats(allow_nan=False), st.text()),
            "routing": st.fixed_dictionaries(
                {}, optional={"hop_budget": st.integers(-2, 20), "path": st.lists(JSON, max_size=2)}
            ),
            "context": st.dictionaries(st.sampled_from(["agent_id", "x"]), JSON),
        },
    ),
    st.fixed_dictionaries({"decision": JSON}),
)


@settings(max_examples=600, deadline=None)
@given(body=BODIES)
def test_route_body_schemas_are_never_looser(body: Any) -> None:
    for name, schema in _route_schemas():
        check = compile_check(schema, {})
        assert check is not None, name
        valid = not list(Draft202012Validator(schema).iter_errors(body))
        assert check(body) == valid, (name, body)


# anyOf (a name or an id, as the generic Matter tool takes them) and uniqueItems (a
# robot's rooms): each instance is judged exactly as jsonschema judges it.
_ANY_UNIQUE_SCHEMAS = [
    {
        "anyOf": [
            {"type": "string", "pattern": "^[A-Z][A-Za-z0-9]*$", "maxLength": 64},
            {"type": "integer", "minimum": 0, "maximum": 4294967295},
        ]
    },
    {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"type": "string"}},
    {"type": "array", "uniqueItems": True},
    {"type": "array", "uniqueItems": False},
]
_ANY_UNIQUE_INSTANCES = [
    "OnOff",
    "onOff",
    "",
    "A" * 65,
    0,
    6,
    -1,
    4294967296,
    1.0,
    1.5,
    True,
    None,
    [],
    ["Kitchen"],
    ["Kitchen", "Kitchen"],
    ["Kitchen", "Hall"],
    [1, 1.0],
    [1, True],
    [True, True],
    [[1], [1]],
    [{"a": 1}, {"a": 1.0}],
    [{"a": 1}, {"a": 2}],
    [0, False],
    [None, None],
    ["1", 1],
    {"a": 1},
]


@pytest.mark.parametrize("schema", _ANY_UNIQUE_SCHEMAS)
def test_any_of_and_unique_items_agree_with_jsonschema(schema: dict[str, Any]) -> None:
    check = compile_check(schema, _FORMATS)
    assert check is not None, schema
    for instance in _ANY_UNIQUE_INSTANCES:
        valid = not list(Draft202012Validator(schema).iter_errors(instance))
        assert check(instance) == valid, (schema, instance)
