"""The import contracts in pyproject.toml hold: the layers, Matter's front door and its floors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_layer_contracts_hold() -> None:
    # In a child process: import-linter reconfigures logging, which would leak into the
    # tests that run after this one in the same interpreter.
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command;"
            " sys.exit(lint_imports_command())",
            "--config",
            os.fspath(ROOT / "pyproject.toml"),
            "--no-cache",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert "Contracts: 5 kept, 0 broken." in report, report


def test_no_face_reaches_into_the_matter_components_tool_sync() -> None:
    # Import contracts see modules, not attributes: ``service.matter.bridge`` (the
    # component's MatterToolSync) imports nothing from inside Matter, yet it is reaching
    # past the front door. Outside bridge/matter nothing reads an attribute named
    # ``bridge``; the faces ask the front door (e.g. ``bridge.matter.compact_profile``).
    import ast

    reaching = []
    for path in sorted((ROOT / "bridge").rglob("*.py")):
        if (ROOT / "bridge" / "matter") in path.parents:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        reaching += [
            f"{path.relative_to(ROOT)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr == "bridge"
        ]
    assert reaching == []
