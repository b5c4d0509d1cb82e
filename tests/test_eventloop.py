"""The long-running commands' event loop: uvloop by default, asyncio on request."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from bridge import eventloop
from bridge.errors import ErrorCode
from bridge.matter.controller.managed import with_umask

HAS_UVLOOP = importlib.util.find_spec("uvloop") is not None


async def _loop_name() -> str:
    loop = asyncio.get_running_loop()
    return f"{type(loop).__module__}.{type(loop).__qualname__}"


def test_auto_takes_uvloop_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(eventloop.LOOP_ENV, raising=False)
    assert eventloop.resolve() == ("uvloop" if HAS_UVLOOP else "asyncio")
    assert eventloop.resolve("AUTO ") == eventloop.resolve()


@pytest.mark.skipif(not HAS_UVLOOP, reason="uvloop has no wheel here")
def test_run_uses_the_loop_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(eventloop.LOOP_ENV, raising=False)
    assert eventloop.run(_loop_name()) == "uvloop.Loop"
    assert eventloop.run(_loop_name(), "uvloop") == "uvloop.Loop"
    assert eventloop.run(_loop_name(), "asyncio").startswith("asyncio.")
    monkeypatch.setenv(eventloop.LOOP_ENV, "asyncio")
    assert eventloop.run(_loop_name()).startswith("asyncio.")
    # The command line's choice wins over the environment's.
    assert eventloop.run(_loop_name(), "uvloop") == "uvloop.Loop"


@pytest.mark.parametrize("name", ["tokio", "", " ", "uvloop;rm -rf /", "x" * 5000, "\udcff"])
def test_an_unknown_loop_is_a_config_error(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(eventloop.LOOP_ENV, "asyncio")
    if not name.strip():
        # Empty means "not set": the default applies.
        assert eventloop.resolve(name) == "asyncio"
        return
    with pytest.raises(eventloop.EventLoopError) as caught:
        eventloop.resolve(name)
    assert caught.value.code is ErrorCode.CONFIG_INVALID
    assert len(caught.value.message) < 200  # a huge value is not echoed whole


def test_uvloop_asked_for_but_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "uvloop" else real(name, *a)
    )
    assert eventloop.resolve("auto") == "asyncio"
    with pytest.raises(eventloop.EventLoopError, match="not installed"):
        eventloop.resolve("uvloop")


def test_a_refused_loop_does_not_leave_the_coroutine_unawaited() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would fail here
        with pytest.raises(eventloop.EventLoopError):
            eventloop.run(_loop_name(), "nope")


def test_with_umask_runs_the_command_under_that_mask_with_its_argv_intact(
    tmp_path: Path,
) -> None:
    odd = ["a b", "$HOME", "'q'", '"dq"', "-c", "`id`", "*", ""]
    script = tmp_path / "show.py"
    script.write_text(
        "import json, os, sys\n"
        "mask = os.umask(0)\n"
        "print(json.dumps({'umask': mask, 'argv': sys.argv[1:]}))\n"
    )
    old = os.umask(0o077)  # as `atmosphere-bridge run` sets it
    try:
        out = subprocess.run(
            with_umask(0o022, [sys.executable, str(script), *odd]),
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
    finally:
        os.umask(old)
    doc = json.loads(out)
    assert doc == {"umask": 0o022, "argv": odd}


@pytest.mark.skipif(not HAS_UVLOOP, reason="uvloop has no wheel here")
async def test_with_umask_starts_under_uvloop_subprocess_exec(tmp_path: Path) -> None:
    """uvloop's subprocess_exec takes no ``umask``: the managed controller's argv sets it."""
    import uvloop

    def child() -> str:
        async def go() -> str:
            proc = await asyncio.create_subprocess_exec(
                *with_umask(0o022, ["/bin/sh", "-c", "umask"]),
                stdout=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            out, _ = await proc.communicate()
            return out.decode().strip()

        return uvloop.run(go())

    old = os.umask(0o077)
    try:
        assert await asyncio.to_thread(child) == "0022"
    finally:
        os.umask(old)
