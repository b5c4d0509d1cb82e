"""tools.yaml: builtin/plugin/file sources, per-entry config, errors naming the entry."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bridge.storage import Database
from bridge.tools.env import ToolEnv
from bridge.tools.manifest import load_manifest, load_manifest_text
from bridge.tools.registry import ToolRegistry

MY_TOOLS = """
from bridge.tools.decorator import ToolSpec, param, tool
from bridge.tools.definition import ToolDefinition


@tool(namespace="custom", description="Analyze a text and count its words")
async def analyze(text: str = param(max_length=1000)) -> dict:
    return {"words": len(text.split())}


@tool(namespace="custom", description="Echo back")
async def echo(value: str) -> str:
    return value


def make_greeter(config, env):
    greeting = config["greeting"]

    async def handler(params, ctx):
        return f"{greeting}, {params['name']}"

    return [ToolSpec(
        definition=ToolDefinition(
            name="greet", namespace="custom", description="Greet someone",
            parameters={"type": "object", "required": ["name"],
                        "properties": {"name": {"type": "string"}}},
        ),
        handler=handler,
    )]
"""


@pytest.fixture
def env(tmp_path: Path) -> Iterator[ToolEnv]:
    db = Database(tmp_path / "bridge.db")
    yield ToolEnv(db=db, state_dir=tmp_path)
    db.close()


@pytest.fixture
def tool_dir(tmp_path: Path) -> Path:
    (tmp_path / "my_tools").mkdir()
    (tmp_path / "my_tools" / "analyzer.py").write_text(MY_TOOLS)
    (tmp_path / "my_tools" / "broken.py").write_text("def oops(:\n")
    return tmp_path


async def test_good_and_bad_entries(tool_dir: Path, env: ToolEnv) -> None:
    manifest = tool_dir / "tools.yaml"
    manifest.write_text(
        textwrap.dedent("""
        tools:
          - name: store_data
            source: builtin:store
          - name: custom_analyzer
            source: file:./my_tools/analyzer.py
            entry: analyze
          - source: file:./my_tools/analyzer.py
            entry: make_greeter
            config:
              greeting: Good morning
          - name: query_temperature
            source: plugin:sensors
            config:
              device: /dev/thermal0
          - source: builtin:vision
          - source: file:./my_tools/broken.py
          - source: file:./my_tools/missing.py
          - source: file:./my_tools/analyzer.py
            entry: nothing_here
          - name: get_data
            source: builtin:store
            extra_key: 1
          - source: ftp:somewhere
          - source: file:./my_tools/analyzer.py
            entry: echo
            config: {a: 1}
          - just a string
    """)
    )
    registry = ToolRegistry()
    result = load_manifest(manifest, registry, env)
    assert result.loaded == (
        "core:store_data@1.0.0",
        "custom:custom_analyzer@1.0.0",
        "custom:greet@1.0.0",
    )
    messages = {p.index: p.message for p in result.problems}
    assert messages == {
        3: "entry #3 (query_temperature, plugin:sensors): no entry point 'sensors' in group "
        "'atmosphere_bridge.tools' (is the plugin installed?)",
        4: "entry #4 (-, builtin:vision): unknown builtin 'vision' "
        "(known: get_data, store, store_data)",
        5: "entry #5 (-, file:./my_tools/broken.py): file '"
        + str(tool_dir / "my_tools" / "broken.py")
        + "' has a syntax error: invalid syntax (line 1)",
        6: "entry #6 (-, file:./my_tools/missing.py): file '"
        + str(tool_dir / "my_tools" / "missing.py")
        + "' does not exist",
        7: "entry #7 (-, file:./my_tools/analyzer.py): 'nothing_here' not found in "
        "atmosphere_bridge_tools_" + messages[7].split("atmosphere_bridge_tools_")[1],
        8: "entry #8 (get_data): unknown key(s) extra_key (allowed: config, entry, name, source)",
        9: "entry #9 (-): source 'ftp:somewhere' must be 'builtin:NAME', "
        "'plugin:ENTRY_POINT', 'file:PATH' or 'definition:PATH'",
        10: "entry #10 (-, file:./my_tools/analyzer.py): 'config' is given but the source "
        "is a single tool, not a factory",
        11: "entry #11 (-): must be a mapping",
    }
    greet = registry.resolve("custom:greet")
    assert greet.handler is not None
    from bridge.tools.context import CallContext

    assert await greet.handler({"name": "Ada"}, CallContext()) == "Good morning, Ada"
    analyze = registry.resolve("custom_analyzer")
    assert analyze.handler is not None
    assert await analyze.handler({"text": "one two three"}, CallContext()) == {"words": 3}


def test_name_selects_among_several(tool_dir: Path, env: ToolEnv) -> None:
    registry = ToolRegistry()
    result = load_manifest_text(
        "tools:\n  - name: echo\n    source: file:my_tools/analyzer.py\n"
        "  - name: nope\n    source: file:my_tools/analyzer.py\n",
        registry,
        env,
        base_dir=tool_dir,
    )
    assert result.loaded == ("custom:echo@1.0.0",)
    assert [p.message for p in result.problems] == [
        "entry #1 (nope, file:my_tools/analyzer.py): the source provides no tool named "
        "'nope' (it provides: analyze, echo)"
    ]


def test_whole_module_and_name_selection(tool_dir: Path, env: ToolEnv) -> None:
    registry = ToolRegistry()
    result = load_manifest_text(
        "tools:\n  - source: file:my_tools/analyzer.py\n  - name: get_data\n"
        "    source: builtin:store\n",
        registry,
        env,
        base_dir=tool_dir,
    )
    assert result.problems == ()
    assert result.loaded == ("custom:analyze@1.0.0", "custom:echo@1.0.0", "core:get_data@1.0.0")


def test_duplicate_registration_is_a_problem(env: ToolEnv, tmp_path: Path) -> None:
    registry = ToolRegistry()
    result = load_manifest_text(
        "tools:\n  - source: builtin:store\n  - source: builtin:store_data\n",
        registry,
        env,
        base_dir=tmp_path,
    )
    assert result.loaded == ("core:store_data@1.0.0", "core:get_data@1.0.0")
    assert [p.message for p in result.problems] == [
        "entry #1 (-, builtin:store_data): tool 'core:store_data@1.0.0' is already registered"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tools: {a: 1}", "the manifest must be a mapping with a 'tools' list"),
        ("- a\n- b", "the manifest must be a mapping with a 'tools' list"),
        ("tools: [unclosed", "invalid YAML"),
    ],
)
def test_bad_files(text: str, message: str, env: ToolEnv, tmp_path: Path) -> None:
    result = load_manifest_text(text, ToolRegistry(), env, base_dir=tmp_path)
    assert result.loaded == ()
    assert len(result.problems) == 1
    assert result.problems[0].index == -1
    assert message in result.problems[0].message


def test_unreadable_manifest(env: ToolEnv, tmp_path: Path) -> None:
    result = load_manifest(tmp_path / "nope.yaml", ToolRegistry(), env)
    assert result.problems[0].message == (
        f"cannot read {tmp_path / 'nope.yaml'}: No such file or directory"
    )
    assert result.problems[0].public_json() == {
        "entry": None,
        "name": None,
        "source": None,
        "code": "CONFIG_INVALID",
        "message": "cannot read the tool manifest: No such file or directory",
    }


def test_definition_entries_load_only_client_tools(tmp_path: Path) -> None:
    from bridge.storage import Database
    from bridge.tools.env import ToolEnv
    from bridge.tools.manifest import load_manifest_text
    from bridge.tools.registry import ToolRegistry

    (tmp_path / "ask.yaml").write_text(
        "tool: {name: ask, description: Ask the user., type: client}\n"
    )
    (tmp_path / "server.yaml").write_text("tool: {name: calc, description: Compute.}\n")
    (tmp_path / "broken.yaml").write_text("tool: {name: x, type: client}\n")
    made = []

    def client_handler(definition: Any) -> Any:
        made.append(definition.name)

        async def handle(params: Any, ctx: Any) -> Any:
            return "ran"

        return handle

    db = Database(tmp_path / "s.db")
    try:
        env = ToolEnv(db=db, state_dir=tmp_path, client_handler=client_handler)
        registry = ToolRegistry()
        text = (
            "tools:\n  - source: definition:ask.yaml\n  - source: definition:server.yaml\n"
            "  - source: definition:broken.yaml\n  - source: definition:missing.yaml\n"
        )
        result = load_manifest_text(text, registry, env, base_dir=tmp_path)
        assert result.loaded == ("core:ask@1.0.0",)
        assert made == ["ask"]
        messages = {p.index: p.message for p in result.problems}
        assert "a definition-only entry must be a client tool" in messages[1]
        assert "'description' is a required property" in messages[2]
        assert "cannot read" in messages[3]
        bare = ToolEnv(db=db, state_dir=tmp_path)
        result = load_manifest_text(
            "tools:\n  - source: definition:ask.yaml\n", ToolRegistry(), bare, base_dir=tmp_path
        )
        assert "client tools need the invocation layer" in result.problems[0].message
    finally:
        db.close()
