"""The bridge's configuration: one YAML file, one frozen dataclass per section.

``load_config(path, **overrides)`` reads the file (or uses defaults when ``path`` is
``None``), validates it against the JSON Schema shipped in the package
(``bridge/config.schema.json``; errors name the key path, e.g. ``api.port``), applies
command-line overrides and returns a ``BridgeConfig``. ``resolve_config_path`` picks the
file when the command line names none: ``$ATMOSPHERE_BRIDGE_CONFIG``, then
``/etc/atmosphere-bridge/config.yaml`` if it exists (an installed appliance).

``resolve_config(path, flags=…)`` is what every command uses: it layers the defaults, the
file, the environment variables of ``ENV_KEYS`` and the flags given on the command line
(each later layer wins, and only for the keys it sets), validates the result and returns
it with the source of every key (``ResolvedConfig.sources``); ``ResolvedConfig.to_json``
shows it with secret-like values redacted (``atmosphere-bridge config show``).

Details: docs/modules.md, ``bridge.config``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import jsonschema
import yaml

from bridge.errors import ConfigInvalidError

SYSTEM_CONFIG_PATH = Path("/etc/atmosphere-bridge/config.yaml")
CONFIG_ENV_VAR = "ATMOSPHERE_BRIDGE_CONFIG"
# Environment variables that set one key; they beat the file and lose to a flag.
ENV_KEYS: Mapping[str, str] = {
    "ATMOSPHERE_CONTROLLER_VENV": "matter.controller_venv",
    # Set by the appliance's unit: the systemd credential holding the controller's key.
    "ATMOSPHERE_MATTER_CONTROLLER_KEY_FILE": "matter.controller_key_file",
}


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
class SitesConfig:
    """The road to other sites through a NATS hub (docs/sites.md); off while no hub is set."""

    site: str | None = None
    hub_urls: tuple[str, ...] = ()
    credentials_file: str | None = None
    request_timeout_s: float = 10.0
    tls_ca_file: str | None = None


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
    sites: SitesConfig = field(default_factory=SitesConfig)


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
class FloorConfig:
    """One floor of the home: its name, level, the words for it and its rooms."""

    name: str
    level: int = 0
    aliases: tuple[str, ...] = ()
    rooms: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> FloorConfig:
        """Build one entry of ``voice.floors`` (already checked by the schema)."""
        return cls(
            name=str(doc["name"]),
            level=int(doc.get("level", 0)),
            aliases=tuple(str(a) for a in doc.get("aliases") or ()),
            rooms=tuple(str(r) for r in doc.get("rooms") or ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceConfig:
    """Spoken commands: the units the home speaks in, and its floors.

    ``units``: ``metric`` (degrees Celsius), ``imperial`` (degrees Fahrenheit) or
    ``auto`` — Fahrenheit when a thermostat displays Fahrenheit (its Thermostat User
    Interface Configuration), else from the locale (``LC_ALL``/``LANG`` of a
    Fahrenheit country), else Celsius.

    ``floors``: which rooms are on which floor ("turn off the lights upstairs"); a
    floor's ``level`` (0 the ground floor, 1 the one above, -1 a basement) gives it the
    everyday words of each language ("upstairs", "oben", "à l'étage" …) besides its
    name and aliases.
    """

    units: str = "auto"
    floors: tuple[FloorConfig, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AutomationsConfig:
    """Where the home is and who lives there, for automation rules.

    ``latitude``/``longitude``: the home's place, used by sunrise/sunset triggers that
    give none; ``timezone``: the zone of time triggers and time windows that give none;
    ``people``: the names whose presence may be reported (``PUT
    /v1/automations/presence/{person}``) and that presence triggers and conditions name.
    """

    latitude: float | None = None
    longitude: float | None = None
    timezone: str | None = None
    people: tuple[str, ...] = ()


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
    voice: VoiceConfig = field(default_factory=VoiceConfig)
    automations: AutomationsConfig = field(default_factory=AutomationsConfig)


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
        elif key == "floors":
            kwargs[key] = tuple(FloorConfig.from_json(v) for v in value or ())
        elif isinstance(default, tuple):
            kwargs[key] = tuple(value or ())
        elif key in _PATH_KEYS and value is not None:
            kwargs[key] = Path(value)
        else:
            kwargs[key] = value
    return cls(**kwargs)


def load_config(path: Path | str | None = None, **overrides: Any) -> BridgeConfig:
    """Load the configuration file (defaults when ``path`` is None) and apply overrides."""
    data = _read_file(path) if path is not None else {}
    config: BridgeConfig = _build(BridgeConfig, data, "")
    top = {k: v for k, v in overrides.items() if v is not None}
    return replace(config, **top) if top else config


class Source(StrEnum):
    """Where a key's value came from, in increasing precedence."""

    DEFAULT = "default"
    FILE = "file"
    ENVIRONMENT = "environment"
    FLAG = "flag"


REDACTED = "<redacted>"
# A key named like this holds a secret itself (a ``*_file`` key only names where one is).
_SECRET_NAME = re.compile(r"secret|token|password|passphrase|credential|private|(^|_)key$")


def config_keys(schema: Mapping[str, Any] | None = None, prefix: str = "") -> Iterator[str]:
    """Yield every key path of the schema (``api.port``), sections walked, lists as one key."""
    schema = config_schema() if schema is None else schema
    for name, sub in schema.get("properties", {}).items():
        if sub.get("type") == "object" and "properties" in sub:
            yield from config_keys(sub, f"{prefix}{name}.")
        else:
            yield prefix + name


def _key_schema(key: str) -> Mapping[str, Any]:
    node: Mapping[str, Any] = config_schema()
    for part in key.split("."):
        node = node["properties"][part]
    return node


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    *sections, name = key.split(".")
    for section in sections:
        data = data.setdefault(section, {})
    data[name] = value


def _has(data: Mapping[str, Any], key: str) -> bool:
    *sections, name = key.split(".")
    for section in sections:
        sub = data.get(section)
        if not isinstance(sub, Mapping):
            return False
        data = sub
    return name in data


def _plain(value: Any) -> Any:
    """Return ``value`` as the file would spell it (paths as strings, tuples as lists)."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    return value


def _redact_url(url: str) -> str:
    """Return ``url`` without a password in it and with its query's values hidden."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = (
        "&".join(
            f"{pair.split('=', 1)[0]}={REDACTED}" if "=" in pair else REDACTED
            for pair in parts.query.split("&")
        )
        if parts.query
        else ""
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def redact(key: str, value: Any, schema: Mapping[str, Any] | None = None) -> Any:
    """Return ``value`` of ``key`` safe to print: secrets replaced by ``<redacted>``.

    Secret are values the schema marks ``writeOnly`` (a Thread dataset holds the network
    key, a webhook URL is a capability), values of keys named like a secret (``*token*``,
    ``*password*``, ``*secret*`` — but not ``*_file``, which only names a file), every
    value of an ``env`` mapping, and the password and query values of any URL.
    """
    schema = _key_schema(key) if schema is None else schema
    name = key.rsplit(".", 1)[-1]
    if value is None:
        return None
    if schema.get("writeOnly") or (_SECRET_NAME.search(name) and not name.endswith("_file")):
        return REDACTED
    if isinstance(value, Mapping):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        out = {}
        for sub, item in value.items():
            sub_schema = props.get(sub, extra if isinstance(extra, Mapping) else {})
            out[sub] = REDACTED if name == "env" else redact(f"{key}.{sub}", item, sub_schema)
        return out
    if isinstance(value, list):
        items = schema.get("items", {})
        return [redact(f"{key}[]", item, items) for item in value]
    if isinstance(value, str) and re.match(r"^[a-z][a-z0-9+.-]*://", value):
        return _redact_url(value)
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedConfig:
    """The configuration every command uses, with where each key's value came from."""

    config: BridgeConfig
    path: Path | None
    sources: Mapping[str, Source]
    env_vars: Mapping[str, str] = field(default_factory=dict)
    # How the file was chosen: --config (flag), $ATMOSPHERE_BRIDGE_CONFIG, or the system file.
    path_source: Source | None = None

    def value(self, key: str) -> Any:
        """Return the value of ``key`` (``api.port``) as the file would spell it."""
        node: Any = self.config
        for part in key.split("."):
            node = getattr(node, part)
        return _plain(node)

    def to_json(self) -> dict[str, Any]:
        """Return ``{file, file_source, keys: {key: {value, source[, variable]}}}``, redacted."""
        keys: dict[str, Any] = {}
        for key, source in self.sources.items():
            entry: dict[str, Any] = {"value": redact(key, self.value(key)), "source": str(source)}
            if source is Source.ENVIRONMENT:
                entry["variable"] = self.env_vars[key]
            keys[key] = entry
        return {
            "file": None if self.path is None else str(self.path),
            "file_source": None if self.path_source is None else str(self.path_source),
            "keys": keys,
        }


def _read_file(path: Path | str) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigInvalidError(f"cannot read configuration {path}: {err.strerror}") from err
    except yaml.YAMLError as err:
        raise ConfigInvalidError(f"configuration {path} is not valid YAML: {err}") from err
    if loaded is not None and not isinstance(loaded, dict):
        raise ConfigInvalidError(f"configuration {path} must be a mapping at the top level")
    data: dict[str, Any] = loaded or {}
    validate_config_data(data, str(path))
    return data


def resolve_config(
    path: Path | str | None = None,
    *,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> ResolvedConfig:
    """Return the configuration: defaults < file < environment (``ENV_KEYS``) < flags.

    ``flags`` maps key paths (``api.port``) to the values given on the command line; a
    flag that was not given must not be in it. An empty environment variable counts as
    unset. Raises ``ConfigInvalidError`` naming the key and where its bad value came from.
    """
    environ = os.environ if environ is None else environ
    data = _read_file(path) if path is not None else {}
    sources = {key: Source.FILE if _has(data, key) else Source.DEFAULT for key in config_keys()}
    env_vars: dict[str, str] = {}
    for var, key in ENV_KEYS.items():
        if environ.get(var, "").strip():
            _set(data, key, environ[var].strip())
            sources[key] = Source.ENVIRONMENT
            env_vars[key] = var
    for key, value in (flags or {}).items():
        if key not in sources:
            raise ConfigInvalidError(f"unknown configuration key '{key}'", {"key": key})
        _set(data, key, _plain(value))
        sources[key] = Source.FLAG
    try:
        validate_config_data(data)
    except ConfigInvalidError as err:
        key = err.details.get("key", "")
        origin = {Source.FLAG: "command line", Source.ENVIRONMENT: f"${env_vars.get(key)}"}.get(
            sources.get(key, Source.FILE), str(path)
        )
        raise ConfigInvalidError(f"{origin}: {err.message.split(': ', 1)[1]}", err.details) from err
    config: BridgeConfig = _build(BridgeConfig, data, "")
    return ResolvedConfig(
        config=config, path=None if path is None else Path(path), sources=sources, env_vars=env_vars
    )
