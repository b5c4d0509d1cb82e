"""The bridge's configuration: one YAML file, one frozen dataclass per section.

``load_config(path, **overrides)`` reads the file (or uses defaults when ``path`` is
``None``), applies command-line overrides and returns a ``BridgeConfig``. Every option
and its default is documented in ``docs/configuration.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from bridge.errors import ConfigInvalidError


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiConfig:
    """HTTP/WebSocket API settings."""

    host: str = "127.0.0.1"
    port: int = 8765
    max_body_bytes: int = 1_048_576


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthConfig:
    """Token verification settings."""

    trusted_issuers: tuple[str, ...] = ()
    clock_skew_s: float = 300.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MatterConfig:
    """Matter controller settings (managed controller unless ``controller_url`` is set)."""

    enabled: bool = True
    controller_url: str | None = None
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


@dataclass(frozen=True, slots=True, kw_only=True)
class BridgeConfig:
    """The whole configuration."""

    state_dir: Path = Path("./state")
    tools_manifest: Path | None = None
    api: ApiConfig = field(default_factory=ApiConfig)
    auth: AuthConfig = field(default_factory=AuthConfig)
    matter: MatterConfig = field(default_factory=MatterConfig)
    thread: ThreadConfig = field(default_factory=ThreadConfig)
    mesh: MeshConfig = field(default_factory=MeshConfig)


def _build(cls: type[Any], data: dict[str, Any], where: str) -> Any:
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigInvalidError(f"unknown configuration key '{where}{key}'", {"key": where + key})
        default = getattr(cls(), key)
        if is_dataclass(default):
            if not isinstance(value, dict):
                raise ConfigInvalidError(f"'{where}{key}' must be a mapping", {"key": where + key})
            kwargs[key] = _build(type(default), value, f"{where}{key}.")
        elif isinstance(default, tuple):
            kwargs[key] = tuple(value or ())
        elif key in ("state_dir", "tools_manifest") and value is not None:
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
    config: BridgeConfig = _build(BridgeConfig, data, "")
    top = {k: v for k, v in overrides.items() if v is not None}
    return replace(config, **top) if top else config
