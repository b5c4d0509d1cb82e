"""core:store_data / core:get_data on a real SQLite file: TTL, if_not_exists, persistence."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bridge.storage import Database
from bridge.tools.builtin.store import DataStore, store_tools
from bridge.tools.context import CallContext
from bridge.tools.definition import ToolDefinition
from bridge.tools.env import ToolEnv
from bridge.tools.validation import validate_call

SEED = Path(__file__).parent / "seed"


class Clock:
    """A settable wall clock so TTL expiry is tested without sleeping."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def db(tmp_path: Path) -> Any:
    database = Database(tmp_path / "bridge.db")
    yield database
    database.close()


@pytest.fixture
def clock() -> Clock:
    return Clock(1_760_000_000.0)


@pytest.fixture
def tools(db: Database, clock: Clock, tmp_path: Path) -> dict[str, Any]:
    env = ToolEnv(db=db, state_dir=tmp_path, clock=clock)
    return {s.definition.name: s for s in store_tools({}, env)}


async def call(tools: dict[str, Any], name: str, params: dict[str, Any]) -> Any:
    spec = tools[name]
    return await spec.handler(validate_call(spec.definition, params), CallContext())


def test_store_data_definition_is_the_seeds() -> None:
    from bridge.tools.builtin.store import load_definition

    shipped = load_definition("store_data")
    seed = ToolDefinition.from_json(json.loads((SEED / "store_data.json").read_text()))
    assert shipped.parameters == seed.parameters
    assert shipped.returns == seed.returns
    assert shipped.requires == seed.requires
    assert shipped.identity == "core:store_data@1.0.0"
    assert load_definition("get_data").requires.permissions == ("storage:read",)


async def test_store_and_get_round_trip(tools: dict[str, Any]) -> None:
    value = {"a": [1, 2.5, None, "x"], "nested": {"ok": True}}
    assert await call(tools, "store_data", {"key": "cfg/one", "value": value}) == {
        "success": True,
        "key": "cfg/one",
        "created": True,
    }
    assert await call(tools, "get_data", {"key": "cfg/one"}) == {"value": value, "exists": True}
    assert await call(tools, "store_data", {"key": "cfg/one", "value": 2}) == {
        "success": True,
        "key": "cfg/one",
        "created": False,
    }
    assert await call(tools, "get_data", {"key": "cfg/one"}) == {"value": 2, "exists": True}
    assert await call(tools, "get_data", {"key": "missing"}) == {"value": None, "exists": False}


async def test_ttl_expiry(tools: dict[str, Any], clock: Clock, db: Database) -> None:
    stored = await call(tools, "store_data", {"key": "k", "value": "v", "ttl_seconds": 60})
    assert stored == {
        "success": True,
        "key": "k",
        "created": True,
        "expires_at": "2025-10-09T08:54:20Z",
    }
    clock.now += 59
    assert await call(tools, "get_data", {"key": "k"}) == {
        "value": "v",
        "exists": True,
        "expires_at": "2025-10-09T08:54:20Z",
    }
    clock.now += 1
    assert await call(tools, "get_data", {"key": "k"}) == {"value": None, "exists": False}
    assert await db.fetchone("SELECT key FROM core_data WHERE key = 'k'") is None
    # ttl 0 never expires
    await call(tools, "store_data", {"key": "forever", "value": 1, "ttl_seconds": 0})
    clock.now += 10**9
    assert (await call(tools, "get_data", {"key": "forever"}))["exists"] is True


async def test_if_not_exists(tools: dict[str, Any], clock: Clock) -> None:
    first = {"key": "lock", "value": "a", "ttl_seconds": 10, "if_not_exists": True}
    assert (await call(tools, "store_data", first))["created"] is True
    second = {"key": "lock", "value": "b", "if_not_exists": True}
    assert await call(tools, "store_data", second) == {
        "success": False,
        "key": "lock",
        "created": False,
        "expires_at": "2025-10-09T08:53:30Z",
    }
    assert (await call(tools, "get_data", {"key": "lock"}))["value"] == "a"
    clock.now += 10  # expired: the key is free again
    assert (await call(tools, "store_data", second))["created"] is True
    assert (await call(tools, "get_data", {"key": "lock"}))["value"] == "b"


async def test_purge_and_persistence(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "persist.db"
    db = Database(path)
    store = DataStore(db, clock)
    await store.put("a", 1, ttl_seconds=5)
    await store.put("b", 2)
    clock.now += 6
    assert await store.purge_expired() == 1
    db.close()
    db2 = Database(path)
    try:
        assert await DataStore(db2, clock).get("b") == {"value": 2, "exists": True}
    finally:
        db2.close()


async def test_real_clock_expiry(tmp_path: Path) -> None:
    db = Database(tmp_path / "real.db")
    try:
        env = ToolEnv(db=db, state_dir=tmp_path)
        tools = {s.definition.name: s for s in store_tools({}, env)}
        await call(tools, "store_data", {"key": "short", "value": True, "ttl_seconds": 1})
        assert (await call(tools, "get_data", {"key": "short"}))["exists"] is True
        await asyncio.sleep(1.05)
        assert await call(tools, "get_data", {"key": "short"}) == {"value": None, "exists": False}
    finally:
        db.close()
