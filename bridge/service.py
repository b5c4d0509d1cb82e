"""The bridge service: builds every part from the configuration and starts/stops them in order.

``BridgeService(config)`` composes the layers: it owns the event bus, the database
(``bridge.db`` in the state directory) and the tool registry, loads the core and
manifest tools, and ``start()`` builds and starts the components bottom-up —
invocation, Matter, voice, the McpHub, mesh — each from a ``_build_*`` method that
returns a ``Component`` or ``None`` when that part is off. ``start_api()`` then serves
the HTTP API (faces last up); ``stop()`` takes the API and then the started parts down
in reverse, even after a failed start. A stopped service can start again: the database
and what is built on it are rebuilt, the mesh node is kept and re-wired.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web

from bridge import __version__
from bridge.config import BridgeConfig, local_url
from bridge.errors import BridgeError, ConfigInvalidError
from bridge.events import EventBus
from bridge.sources.client_tools import ClientToolBroker
from bridge.storage import Database, secure_tree
from bridge.tools.builtin import BUILTINS
from bridge.tools.builtin.store import store_tools
from bridge.tools.env import ToolEnv
from bridge.tools.manifest import ManifestResult, load_manifest
from bridge.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from bridge.automations import AutomationRunner
    from bridge.invocation.pipeline import Pipeline
    from bridge.matter import MatterComponent
    from bridge.mesh.node import MeshNode
    from bridge.sources.mcp_hub import McpHub
    from bridge.voice.intents import IntentEngine

_LOGGER = logging.getLogger(__name__)
DB_FILE_NAME = "bridge.db"
# ``{"url", "pid"}`` of the API while it serves, for CLI commands that reach it.
API_FILE_NAME = "api.json"


class Component(Protocol):
    """A long-lived part with an async lifecycle."""

    async def start(self) -> None:
        """Start the part."""

    async def stop(self) -> None:
        """Stop the part and release what it holds."""


class ServiceNotStartedError(RuntimeError):
    """A part that only exists after ``start()`` was used before it."""


class BridgeService:
    """The running bridge: configuration, events, database, registry and layers."""

    def __init__(self, config: BridgeConfig, *, enable_matter: bool | None = None) -> None:
        self.config = config
        self.enable_matter = config.matter.enabled if enable_matter is None else enable_matter
        self.node_id = config.mesh.node_name or socket.gethostname()
        self.version = __version__
        self.events = EventBus()
        self.registry = ToolRegistry(self.events)
        # Runs tools of type "client" through the caller's event sockets.
        self.client_tools = ClientToolBroker(self.events)
        self.manifest_result: ManifestResult | None = None
        # Layer components; ``None`` until their layer plugs in (see ``_build_*``).
        self.invocation: Pipeline | None = None
        self.matter: MatterComponent | None = None
        self.intents: IntentEngine | None = None
        self.mcp_hub: McpHub | None = None
        self.mesh: MeshNode | None = None
        self.automations: AutomationRunner | None = None
        self.started_at: float | None = None
        self._db: Database | None = None
        # Tools this service registered itself (core + manifest), removed again on stop.
        self._own_tools: list[str] = []
        self._started: list[tuple[str, Component]] = []
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self.api_port: int | None = None

    # -- parts ------------------------------------------------------------------------

    @property
    def db(self) -> Database:
        """Return the database; raise ``ServiceNotStartedError`` before ``start()``."""
        if self._db is None:
            raise ServiceNotStartedError("the service's database exists after start()")
        return self._db

    @property
    def state_dir(self) -> Path:
        """Return the state directory."""
        return self.config.state_dir

    def tool_env(self) -> ToolEnv:
        """Return the resources tool factories get."""
        return ToolEnv(
            db=self.db,
            state_dir=self.state_dir,
            node_id=self.node_id,
            clock=time.time,
            client_handler=self.client_tools.handler,
        )

    def problems(self) -> list[dict[str, Any]]:
        """Return what is wrong but not fatal, in a form safe to publish (no secrets)."""
        if self.manifest_result is None:
            return []
        return [
            {"component": "tools_manifest", **problem.public_json()}
            for problem in self.manifest_result.problems
        ]

    def status(self) -> dict[str, Any]:
        """Return the health summary served at ``/healthz``.

        ``status`` is ``starting`` before ``start()`` finished, ``degraded`` while
        ``problems`` is not empty, else ``ok``.
        """
        problems = self.problems()
        if self.started_at is None:
            state = "starting"
        else:
            state = "degraded" if problems else "ok"
        return {
            "status": state,
            "version": self.version,
            "node_id": self.node_id,
            "uptime_s": round(time.monotonic() - self.started_at, 3) if self.started_at else 0.0,
            "tools": len(self.registry),
            "components": {
                "invocation": self.invocation is not None,
                "matter": self.matter is not None,
                "mesh": self.mesh is not None,
            },
            "problems": problems,
            **({"mcp_servers": self.mcp_hub.status()} if self.mcp_hub is not None else {}),
        }

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Start every part bottom-up; on failure stop what started and re-raise."""
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            secure_tree(self.state_dir)
            self._db = Database(self.state_dir / DB_FILE_NAME)
            self._load_tools()
            for name, build in (
                ("invocation", self._build_invocation),
                ("matter", self._build_matter),
                ("voice", self._build_voice),
                ("mcp_hub", self._build_mcp_hub),
                ("mesh", self._build_mesh),
                ("automations", self._build_automations),
            ):
                component = build()
                if component is not None:
                    await component.start()
                    self._started.append((name, component))
            self.started_at = time.monotonic()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop the API and every started part in reverse order (idempotent)."""
        await self.stop_api()
        while self._started:
            name, component = self._started.pop()
            try:
                await component.stop()
            except Exception:
                _LOGGER.exception("stopping %s failed", name)
        # Their handlers are bound to the database closed below; the next start loads them anew.
        while self._own_tools:
            self.registry.unregister(self._own_tools.pop())
        if self._db is not None:
            self._db.close()
            self._db = None
        self.started_at = None

    async def __aenter__(self) -> BridgeService:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def route_plugins(self) -> Sequence[Callable[[web.Application], None]]:
        """Return the faces served on the API's HTTP server besides its own routes.

        MCP's streamable HTTP (``/mcp``, ``/mcp/compact``) and the web console (``/``).
        """
        from bridge.console import pages as console_pages
        from bridge.mcp import http as mcp_http  # loads the MCP SDK only when the API runs

        return (mcp_http.setup, console_pages.setup)

    async def start_api(self, host: str | None = None, port: int | None = None) -> int:
        """Serve the HTTP API on ``host:port`` (config defaults); return the bound port."""
        from bridge.api.app import create_app  # a face: loaded only when the API runs
        from bridge.api.connections import (
            GuardedAppRunner,
            quiet_accept_errors,
            raise_open_file_limit,
        )

        raise_open_file_limit()
        quiet_accept_errors(asyncio.get_running_loop())
        app = create_app(self)
        self._runner = GuardedAppRunner(
            app, self.config.api, access_log=None, handle_signals=False, shutdown_timeout=2.0
        )
        await self._runner.setup()
        self._site = web.TCPSite(
            self._runner,
            host or self.config.api.host,
            self.config.api.port if port is None else port,
            backlog=1024,  # bursts of new connections wait in the kernel, not in SYN retries
        )
        await self._site.start()
        bound = self._runner.addresses
        self.api_port = int(bound[0][1]) if bound else self.config.api.port
        _LOGGER.info("HTTP API on %s:%s", host or self.config.api.host, self.api_port)
        self._write_api_file(host or self.config.api.host)
        return self.api_port

    def _write_api_file(self, host: str) -> None:
        # The CLI finds this running bridge through its state directory (devices rename).
        import json
        import os

        doc = {"url": local_url(host, self.api_port or self.config.api.port), "pid": os.getpid()}
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = self.state_dir / API_FILE_NAME
            # Private from its first byte, whatever the umask.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                os.fchmod(fh.fileno(), 0o600)
                fh.write(json.dumps(doc) + "\n")
        except OSError as err:
            _LOGGER.warning("cannot write %s: %s", API_FILE_NAME, err)

    async def stop_api(self) -> None:
        """Stop serving HTTP (idempotent)."""
        if self._runner is not None:
            (self.state_dir / API_FILE_NAME).unlink(missing_ok=True)
            await self._runner.cleanup()
        self._runner = None
        self._site = None

    # -- plug-in points ---------------------------------------------------------------

    def _load_tools(self) -> None:
        env = self.tool_env()
        for spec in store_tools({}, env):
            self._own_tools.append(self.registry.register(spec.definition, spec.handler).identity)
        manifest = self.config.tools_manifest
        if manifest is not None:
            self.manifest_result = load_manifest(manifest, self.registry, env, builtins=BUILTINS)
            self._own_tools.extend(self.manifest_result.loaded)
            for problem in self.manifest_result.problems:
                _LOGGER.error("tool manifest %s: %s", manifest, problem.message)

    def _build_invocation(self) -> Component | None:
        """Build the invocation runtime on this start's database, trusting the node key."""
        from bridge.auth.keys import KEY_FILE_NAME, NodeKey
        from bridge.invocation.pipeline import Pipeline

        key = NodeKey.load_or_create(self.state_dir / KEY_FILE_NAME)
        if self.config.mesh.enabled:
            from bridge.mesh.node_id import node_id_for

            # The mesh names this node by the id derived from its key; the Matter tools'
            # node_affinity (built before the mesh node) must carry that id, not the name.
            self.node_id = node_id_for(key.public_key_b64)
        self.invocation = Pipeline.build(
            config=self.config,
            db=self.db,
            registry=self.registry,
            events=self.events,
            key=key,
            node_id=self.node_id,
        )
        self._wire_mesh()
        return self.invocation

    def _build_matter(self) -> Component | None:
        """Return the Matter runtime when enabled: managed or external controller + tools."""
        if not self.enable_matter:
            return None
        from bridge.matter import MatterComponent  # Matter libraries load only when on

        # Built on every start: its device names live in this start's database.
        self.matter = MatterComponent.build(
            self.config,
            registry=self.registry,
            events=self.events,
            db=self.db,
            node_id=self.node_id,
        )
        return self.matter

    def _build_voice(self) -> Component | None:
        """Return spoken-command handling when Matter devices are served."""
        if self.matter is None or self.invocation is None:
            self.intents = None
            return None
        from bridge.voice.service import VoiceComponent

        matter = self.matter
        component = VoiceComponent.build(
            self.config,
            self.registry,
            self.invocation.invoker,
            matter.device_list,
            matter.room_list,
            tool_for=matter.tool_for,
            floors=matter.floor_list,
        )
        self.intents = component.engine
        return component

    def _build_automations(self) -> Component | None:
        """Return the automations runner on this start's database and pipeline."""
        if self.invocation is None:
            self.automations = None
            return None
        from bridge.automations import AutomationRunner, HomePlace, RuleStore, zone

        matter = self.matter
        settings = self.config.automations
        if settings.timezone is not None:
            try:
                zone(settings.timezone)
            except BridgeError as err:
                raise ConfigInvalidError(
                    f"automations.timezone: {err.message}", {"key": "automations.timezone"}
                ) from err

        def state_of(device_id: str, path: str) -> Any:
            return matter.attribute(device_id, path) if matter is not None else None

        self.automations = AutomationRunner(
            pipeline=self.invocation,
            registry=self.registry,
            events=self.events,
            store=RuleStore(self.db),
            state_of=state_of,
            home=HomePlace(
                latitude=settings.latitude, longitude=settings.longitude, timezone=settings.timezone
            ),
            people=settings.people,
            bindings=matter.bindings if matter is not None else None,
            tool_for=(
                (lambda capability, device: matter.tool_for(capability, device_id=device))
                if matter is not None
                else None
            ),
        )
        return self.automations

    def _build_mcp_hub(self) -> Component | None:
        """Return the McpHub when MCP servers are configured."""
        if not self.config.mcp_servers:
            self.mcp_hub = None
            return None
        from bridge.sources.mcp_hub import McpHub  # the MCP client loads only when used

        self.mcp_hub = McpHub(self.config.mcp_servers, self.registry, self.events)
        return self.mcp_hub

    def _build_mesh(self) -> Component | None:
        """Return the mesh node when enabled; it becomes the invoker's remote executor."""
        if not self.config.mesh.enabled:
            return None
        if self.mesh is None:
            from bridge.mesh.node import build_mesh_node  # the mesh sits above the service's core

            node = build_mesh_node(self.config, self.registry, self.events)
            # The node id is derived from the node key, so tokens' allowed_nodes match it.
            self.node_id = node.identity.node_id
            self.mesh = node
            self._wire_mesh()
        return self.mesh

    def _wire_mesh(self) -> None:
        """Make the mesh node the invoker's remote executor once both exist.

        Called whenever either is built: the invocation runtime is rebuilt on every
        start, the mesh node only on the first.
        """
        if self.invocation is None or self.mesh is None:
            return
        self.invocation.invoker.node_id = self.mesh.identity.node_id
        self.invocation.invoker.set_remote_executor(self.mesh)
        self.mesh.use_verifier(self.invocation.verifier)
        self.mesh.use_audit(self.invocation.audit)
        self.mesh.use_runner(self.invocation.invoker.invoke)
