"""The bridge's configuration: one YAML file, one frozen dataclass per section.

``load_config(path, **overrides)`` reads the file (or uses defaults when ``path`` is
``None``), validates it against the JSON Schema shipped in the package
(``bridge/config.schema.json``; errors name the key path, e.g. ``api.port``), applies
command-line overrides and returns a ``BridgeConfig``. ``resolve_config_path`` picks the
file when the command line names none: ``$ATMOSPHERE_BRIDGE_CONFIG``, then
``/etc/atmosphere-bridge/config.yaml`` if it exists (an installed appliance).

Details: docs/modules.md, ``bridge.config``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from bridge.errors import ConfigInvalidError

SYSTEM_CONFIG_PATH = Path("/etc/atmosphere-bridge/config.yaml")
CONFIG_ENV_VAR = "ATMOSPHERE_BRIDGE_CONFIG"


# Bind addresses that mean "every interface": a client on this machine reaches them on loopback.
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - compared with, never bound


def is_wildcard_host(host: str) -> bool:
    """Return whether ``host`` is a bind-to-every-interface address."""
    return host in WILDCARD_HOSTS


def local_url(host: str, port: int) -> str:
    """Return the URL a client on this machine reaches a server bound on ``host:port`` at."""
    host = "127.0.0.1" if is_wildcard_host(host) else host
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiConfig:
    """HTTP/WebSocket API settings."""

    host: str = "127.0.0.1"
    port: int = 8765
    max_body_bytes: int = 1_048_576
    max_header_bytes: int = 20_480
    max_json_depth: int = 64
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    idle_timeout_s: float = 75.0
    max_connections: int = 4096
    # Host names (besides loopback, IP addresses and this machine's name) the API and
    # console answer to: a DNS-rebinding page arrives with a name not in this list.
    allowed_hosts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsoleConfig:
    """Web console settings: the webhook told of each new approval.

    Its body is HMAC-SHA256 signed with the secret read from
    ``approval_webhook_secret_file`` (a file, so the secret stays out of the YAML).
    """

    approval_webhook_url: str | None = None
    approval_webhook_secret_file: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthConfig:
    """Token verification settings."""

    trusted_issuers: tuple[str, ...] = ()
    clock_skew_s: float = 300.0
    expiry_skew_s: float = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditConfig:
    """How much the audit log keeps, and the disk it keeps free for itself."""

    # A call's params or result text longer than this keeps its head and SHA-256 only.
    max_value_bytes: int = 4096
    # Call rows older than this are deleted (hourly); None keeps them for ever.
    retention_days: float | None = 365.0
    # Below this much free disk, low-priority writes (core:store_data, new jobs) are
    # refused so the audit of what the bridge still does has room.
    disk_reserve_mb: int = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class MatterConfig:
    """Matter controller settings (managed controller unless ``controller_url`` is set)."""

    enabled: bool = True
    controller_url: str | None = None
    # The file holding the key an external controller's guard demands (0600).
    controller_key_file: str | None = None
    controller_venv: str | None = None
    controller_port: int = 5580
    netns: str | None = None
    temperature_unit: str = "C"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadConfig:
    """Thread border router settings."""

    otbr_url: str | None = None
    dataset_hex: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MeshConfig:
    """Mesh node settings."""

    enabled: bool = False
    node_name: str | None = None
    interfaces: tuple[str, ...] = ()
    trust: str = "allowlist"
    trusted_nodes: tuple[str, ...] = ()
    peers: tuple[str, ...] = ()
    announce_interval_s: float = 30.0
    announcement_ttl_s: float = 120.0
    gossip_interval_s: float = 5.0
    gossip_fanout: int = 2
    discovery: bool = True
    max_clock_skew_s: float = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class DoctorConfig:
    """Settings of ``atmosphere-bridge doctor`` (where to look, what is enough)."""

    root: Path = Path("/")
    interface: str | None = None
    controller_storage: Path = Path("/data")
    controller_user: str = "atmosphere-matter"
    free_disk_warn_mb: int = 500
    free_disk_fail_mb: int = 100
    timeout_s: float = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerConfig:
    """One MCP server whose tools the McpHub brings into the registry.

    Either ``command`` (+ ``args``, ``env``) for a stdio server the bridge starts, or
    ``url`` (streamable HTTP, optionally with a bearer token read from ``token_file``).
    """

    name: str = ""
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    token_file: Path | None = None
    permissions: tuple[str, ...] = ()
    timeout_s: float = 30.0
    refresh_s: float = 5.0

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> McpServerConfig:
        """Build one entry of ``mcp_servers`` (already checked by the schema)."""
        return cls(
            name=str(doc["name"]),
            command=doc.get("command"),
            args=tuple(doc.get("args") or ()),
            env=dict(doc.get("env") or {}),
            url=doc.get("url"),
            token_file=Path(doc["token_file"]) if doc.get("token_file") else None,
            permissions=tuple(doc.get("permissions") or ()),
            timeout_s=float(doc.get("timeout_s", 30.0)),
            refresh_s=float(doc.get("refresh_s", 5.0)),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BridgeConfig:
    """The whole configuration."""

    state_dir: Path = Path("./state")
    tools_manifest: Path | None = None
    api: ApiConfig = field(default_factory=ApiConfig)
    auth: AuthConfig = field(default_factory=AuthConfig)
    audit: AuditConfig = field(default_factory=AuditConfig)
    matter: MatterConfig = field(default_factory=MatterConfig)
    thread: ThreadConfig = field(default_factory=ThreadConfig)
    mesh: MeshConfig = field(default_factory=MeshConfig)
    doctor: DoctorConfig = field(default_factory=DoctorConfig)
    mcp_servers: tuple[McpServerConfig, ...] = ()
    console: ConsoleConfig = field(default_factory=ConsoleConfig)


@cache
def config_schema() -> dict[str, Any]:
    """Return the JSON Schema of the configuration file."""
    text = resources.files("bridge").joinpath("config.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> jsonschema.protocols.Validator:
    schema = config_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _key_path(path: Any) -> str:
    parts: list[str] = []
    for part in path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + str(part))
    return "".join(parts)


def validate_config_data(data: dict[str, Any], source: str = "configuration") -> None:
    """Check a parsed configuration against the schema; raise ``ConfigInvalidError``.

    The message names the first offending key path (``api.port: ...``); ``details``
    lists every problem as ``{"key", "message"}``.
    """
    errors = sorted(
        _validator().iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    if not errors:
        return
    problems = []
    for err in errors:
        key = _key_path(err.absolute_path)
        message = err.message
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            section = err.schema if isinstance(err.schema, dict) else {}
            allowed = set(section.get("properties", {}))
            extra = sorted(k for k in err.instance if k not in allowed)
            prefix = key + "." if key else ""
            key = prefix + extra[0] if extra else key
            message = f"unknown key (allowed: {', '.join(sorted(allowed))})"
        elif err.validator == "oneOf" and key.startswith("mcp_servers"):
            message = "give either 'command' (a stdio server) or 'url' (streamable HTTP), not both"
        problems.append({"key": key or "(top level)", "message": message})
    first = problems[0]
    raise ConfigInvalidError(
        f"{source}: {first['key']}: {first['message']}",
        {"key": first["key"], "errors": problems},
    )


def resolve_config_path(explicit: Path | str | None = None) -> Path | None:
    """Return the configuration file to use: explicit, then the env var, then the system file."""
    if explicit is not None and str(explicit) != "":
        return Path(explicit)
    env = os.environ.get(CONFIG_ENV_VAR)
    if env:
        return Path(env)
    if SYSTEM_CONFIG_PATH.is_file():
        return SYSTEM_CONFIG_PATH
    return None


_PATH_KEYS = frozenset({"state_dir", "tools_manifest", "root", "controller_storage"})


def _build(cls: type[Any], data: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigInvalidError(
                f"unknown configuration key '{where}{key}'", {"key": where + key}
            )
        default = getattr(cls(), key)
        if is_dataclass(default):
            if not isinstance(value, dict):
                raise ConfigInvalidError(f"'{where}{key}' must be a mapping", {"key": where + key})
            kwargs[key] = _build(type(default), value, f"{where}{key}.")
        elif key == "mcp_servers":
            kwargs[key] = tuple(McpServerConfig.from_json(v) for v in value or ())
        elif isinstance(default, tuple):
            kwargs[key] = tuple(value or ())
        elif key in _PATH_KEYS and value is not None:
            kwargs[key] = Path(value)
        else:
            kwargs[key] = value
    return cls(**kwargs)


def load_config(path: Path | str | None = None, **overrides: Any) -> BridgeConfig:
    """Load the configuration file (defaults when ``path`` is None) and apply overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except OSError as err:
            raise ConfigInvalidError(f"cannot read configuration {path}: {err.strerror}") from err
        except yaml.YAMLError as err:
            raise ConfigInvalidError(f"configuration {path} is not valid YAML: {err}") from err
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigInvalidError(f"configuration {path} must be a mapping at the top level")
        data = loaded or {}
        validate_config_data(data, str(path))
    config: BridgeConfig = _build(BridgeConfig, data, "")
    top = {k: v for k, v in overrides.items() if v is not None}
    return replace(config, **top) if top else config
