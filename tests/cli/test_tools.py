"""``atmosphere-bridge tools ...`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bridge.cli.main import main

SEED = Path(__file__).parents[1] / "tools" / "seed"


def test_validate_good_files(capsys: pytest.CaptureFixture[str]) -> None:
    paths = [str(SEED / "notify.json"), str(SEED / "store_data.json")]
    assert main(["tools", "validate", *paths]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{paths[0]}: ok (core:notify@1.0.0)",
        f"{paths[1]}: ok (core:store_data@1.0.0)",
    ]


def test_validate_reports_each_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("tool:\n  name: x y\n  execution: {retries: -1}\n")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"tool": ')
    paths = [
        str(SEED / "notify.json"),
        str(broken),
        str(bad_json),
        str(SEED / "invalid" / "analyze_image.json"),
        str(tmp_path / "missing.json"),
    ]
    assert main(["tools", "validate", *paths]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [f"{paths[0]}: ok (core:notify@1.0.0)"]
    assert captured.err.splitlines() == [
        f"{broken}: $.tool: 'description' is a required property",
        f"{broken}: $.tool.execution.retries: -1 is less than the minimum of 0",
        f"{broken}: $.tool.name: 'x y' does not match '^[A-Za-z][A-Za-z0-9_.-]{{0,127}}$'",
        f"{bad_json}: tool definition is not valid JSON: Expecting value at line 1 column 10",
        f"{paths[3]}: tool 'core:analyze_image': returns is not a valid JSON Schema: at "
        "tool.returns.properties.result.type: 'any' is not valid under any of the given schemas",
        f"{tmp_path / 'missing.json'}: cannot read: No such file or directory",
    ]


RULE_TOOLS = [
    f"automations:{name}@1.0.0"
    for name in ("create_rule", "delete_rule", "list_rules", "set_rule_enabled", "test_rule")
]


def test_list_show_discover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(tmp_path / "state")
    assert main(["tools", "--state-dir", state, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    # The automations runner's rule tools, then core's.
    assert [t["identity"] for t in listed] == [
        *RULE_TOOLS,
        "core:get_data@1.0.0",
        "core:store_data@1.0.0",
    ]
    assert main(["tools", "--state-dir", state, "show", "store_data"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["tool"]["requires"]["permissions"] == ["storage:write"]
    assert main(["tools", "--state-dir", state, "discover", "recall", "a", "stored", "value"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "core:get_data@1.0.0" in first
    assert main(["tools", "--state-dir", state, "show", "nothing"]) == 1
    assert capsys.readouterr().err.strip() == "error [TOOL_NOT_FOUND]: no tool named 'nothing'"


def test_list_with_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "extra.py").write_text(
        "from bridge.tools.decorator import tool\n\n"
        "@tool(namespace='custom', description='Say hello')\n"
        "async def hello(name: str) -> str:\n    return 'hi ' + name\n"
    )
    (tmp_path / "tools.yaml").write_text("tools:\n  - source: file:extra.py\n    entry: hello\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        f"state_dir: {tmp_path / 'state'}\ntools_manifest: {tmp_path / 'tools.yaml'}\n"
    )
    assert main(["--config", str(config), "tools", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [
        *RULE_TOOLS,
        "core:get_data@1.0.0",
        "core:store_data@1.0.0",
        "custom:hello@1.0.0",
    ]
