"""What mcp, hassil(+intents) and wyoming cost a `run --no-matter` bridge: RSS and disk.

Starts the service and its HTTP API in this process (Matter off, mesh off, loopback,
port 0) once as is and once with the MCP route plugin left out, then prints the
resident set size after start-up, which of the optional packages were imported, and
the installed size of each group's distributions that no core dependency also needs.
Run: `.venv/bin/python bench/extras_footprint.py [--without-mcp]` (one process per case,
so the two runs do not share imports); with no argument it runs both in subprocesses.
"""

from __future__ import annotations

import asyncio
import gc
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

GROUPS = {"mcp": ["mcp"], "voice": ["hassil", "home-assistant-intents"], "wyoming": ["wyoming"]}
CORE = ["aiohttp", "zeroconf", "ifaddr", "jsonschema", "pynacl", "pyyaml", "python-otbr-api"]
WATCH = ("mcp", "pydantic", "httpx", "starlette", "hassil", "home_assistant_intents", "wyoming")


def rss_kib() -> int:
    """Return this process's resident set size in KiB."""
    text = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", text).group(1))  # type: ignore[union-attr]


async def start_once(without_mcp: bool) -> None:
    """Start the bridge, print RSS and loaded optional packages, stop."""
    from bridge.config import load_config
    from bridge.service import BridgeService

    with tempfile.TemporaryDirectory() as state:
        config = load_config(None, state_dir=Path(state))
        service = BridgeService(config, enable_matter=False)
        if without_mcp:
            service.route_plugins = lambda: ()  # type: ignore[method-assign]
        await service.start()
        await service.start_api(host="127.0.0.1", port=0)
        gc.collect()
        loaded = sorted(n for n in WATCH if n in sys.modules)
        case = "without" if without_mcp else "with   "
        print(
            f"{case} MCP route: RSS {rss_kib() / 1024:.1f} MiB, "
            f"optional packages imported: {', '.join(loaded) or 'none'}"
        )
        await service.stop()


def closure(names: list[str]) -> set[str]:
    """Return the distributions ``names`` need, themselves included (extras ignored)."""
    seen: set[str] = set()
    todo = [n.lower().replace("_", "-") for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            todo.append(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0].lower().replace("_", "-"))
    return seen


def size_mib(dists: set[str]) -> float:
    """Return the installed size of ``dists`` in MiB."""
    total = 0
    for name in dists:
        for file in metadata.distribution(name).files or []:
            path = Path(str(file.locate()))
            if path.is_file():
                total += path.stat().st_size
    return total / 2**20


def main() -> int:
    """Run both cases in fresh interpreters, then print the disk sizes."""
    if "--without-mcp" in sys.argv or "--with-mcp" in sys.argv:
        asyncio.run(start_once("--without-mcp" in sys.argv))
        return 0
    for flag in ("--with-mcp", "--without-mcp"):
        subprocess.run([sys.executable, __file__, flag], check=True)
    core = closure(CORE)
    for group, names in GROUPS.items():
        only = (
            closure(names)
            - core
            - closure([n for g, ns in GROUPS.items() if g != group for n in ns])
        )
        print(
            f"{group}: {size_mib(only):.1f} MiB installed only for it ({', '.join(sorted(only))})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
