"""Every recorded node dump under tests/fixtures/nodes, loaded for parametrized tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

NODES_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "nodes"
DUMP_FILES = sorted(NODES_DIR.glob("*/*.json"))
DUMP_IDS = [f"{p.parent.name}/{p.stem}" for p in DUMP_FILES]


def load_dump(name: str) -> dict[str, Any]:
    """Return one dump by its ``dir/stem`` id."""
    folder, stem = name.split("/")
    doc: dict[str, Any] = json.loads((NODES_DIR / folder / f"{stem}.json").read_text())
    return doc
