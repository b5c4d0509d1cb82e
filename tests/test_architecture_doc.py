"""Every name docs/architecture.md cites exists: modules, functions, methods and files.

The walks of one invoke and one spoken command name the functions a call passes
through; a rename that forgets the page fails here. Checked: backticked dotted names
under ``bridge.`` (imported, then looked up attribute by attribute), ``Class.attr``
where ``Class`` is a class of the bridge (looked up on that class), and ``bridge/…``
paths. Names of other libraries (aiohttp's, hassil's) are not the bridge's to check.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
SPAN = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"bridge(\.\w+)+")
ON_CLASS = re.compile(r"(_?[A-Z]\w*)((\.\w+)+)")
PATH = re.compile(r"bridge/[\w/.-]*\w")


def _prose(text: str) -> str:
    """Return ``text`` without its fenced code blocks (graphs, tables of output)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _classes() -> dict[str, list[str]]:
    """Return class name → the bridge modules that define a class of that name."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "bridge").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found[node.name].append(".".join(parts))
    return found


def _resolve(dotted: str) -> Any:
    """Import the longest module prefix of ``dotted``, then look up the rest."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            value = getattr(value, name)
        return value
    raise ModuleNotFoundError(dotted)


def _cited() -> list[str]:
    return [m.group(1).split("(")[0].strip() for m in SPAN.finditer(_prose(DOC.read_text()))]


def test_every_cited_name_exists() -> None:
    classes = _classes()
    missing: list[str] = []
    checked = 0
    for name in _cited():
        if PATH.fullmatch(name):
            checked += 1
            if not (ROOT / name).exists():
                missing.append(name)
        elif name == "bridge.__main__":  # importing it runs the CLI
            checked += 1
            if not (ROOT / "bridge" / "__main__.py").exists():
                missing.append(name)
        elif DOTTED.fullmatch(name):
            checked += 1
            try:
                _resolve(name)
            except (ImportError, AttributeError):
                missing.append(name)
        elif (match := ON_CLASS.fullmatch(name)) and match.group(1) in classes:
            checked += 1
            attrs = match.group(2).lstrip(".").split(".")

            def has(module: str, cls: str = match.group(1), attrs: list[str] = attrs) -> bool:
                value: Any = getattr(importlib.import_module(module), cls, None)
                for attr in attrs:
                    value = getattr(value, attr, None)
                return value is not None

            if not any(has(module) for module in classes[match.group(1)]):
                missing.append(name)
    assert missing == []
    assert checked >= 80  # the page cites this many at least: the check is not idle


def test_the_check_catches_a_name_that_is_gone() -> None:
    assert DOTTED.fullmatch("bridge.matter.sync.calls.DeviceCalls.call")
    _resolve("bridge.matter.sync.calls.DeviceCalls.call")
    for gone in (
        "bridge.matter.registry_sync.MatterToolSync",
        "bridge.matter.sync.calls.DeviceCalls.no_such_method",
    ):
        try:
            _resolve(gone)
        except (ImportError, AttributeError):
            continue
        raise AssertionError(f"{gone} resolved")


def test_a_long_matter_module_says_why() -> None:
    # Issue 28: no module of the Matter package over 500 lines without a one-line reason
    # at its top ("One module because …" in its docstring).
    unexplained = []
    for path in sorted((ROOT / "bridge" / "matter").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 500:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if "One module because" not in doc:
                unexplained.append(str(path.relative_to(ROOT)))
    assert unexplained == []
