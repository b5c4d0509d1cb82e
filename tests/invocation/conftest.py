from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.invocation.helpers import Env


@pytest.fixture(name="env")
async def env_fixture(tmp_path: Path) -> AsyncIterator[Env]:
    env = Env(tmp_path)
    await env.runtime.start()
    yield env
    await env.runtime.stop()
    env.db.close()
