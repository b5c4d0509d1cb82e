"""Configuration: schema validation with key paths, defaults, file resolution, docs in sync."""

from __future__ import annotations

import json
import re
from dataclasses import MISSING, fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest

from bridge import config as cfg
from bridge.cli.main import _add_config_option
from bridge.errors import ConfigInvalidError, ErrorCode

REPO = Path(__file__).resolve().parents[1]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def _defaults(cls: type[Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(cls):
        default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
        if is_dataclass(default):
            out.update(_defaults(type(default), f"{prefix}{f.name}."))
        else:
            out[prefix + f.name] = default
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def _schema_keys(schema: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in schema["properties"].items():
        if sub.get("type") == "object":
            out.update(_schema_keys(sub, f"{prefix}{key}."))
        else:
            out[prefix + key] = sub.get("default", MISSING)
    return out


def test_schema_matches_the_dataclasses() -> None:
    defaults = _defaults(cfg.BridgeConfig)
    schema = _schema_keys(cfg.config_schema())
    assert sorted(schema) == sorted(defaults)
    for key, default in defaults.items():
        if isinstance(default, Path):
            assert Path(schema[key]) == default, key
        else:
            assert schema[key] == _json_default(default), key


def test_every_option_is_documented_with_its_default() -> None:
    doc = (REPO / "docs/configuration.md").read_text()
    rows = dict(re.findall(r"^\| `([a-z_.]+)` \| [^|]+ \| `([^`]*)` \|", doc, re.M))
    defaults = _defaults(cfg.BridgeConfig)
    assert sorted(rows) == sorted(defaults)
    for key, default in defaults.items():
        if isinstance(default, Path):
            assert Path(rows[key]) == default, key
            continue
        shown = _json_default(default)
        expected = shown if isinstance(shown, str) else json.dumps(shown)
        assert rows[key] == expected, key


def test_no_file_gives_defaults() -> None:
    config = cfg.load_config(None)
    assert config == cfg.BridgeConfig()
    assert config.api.port == 8765
    assert config.doctor.controller_storage == Path("/data")


def test_full_file_is_loaded(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """
state_dir: /var/lib/atmosphere-bridge
api: {host: 0.0.0.0, port: 9000}
auth: {trusted_issuers: [abc], clock_skew_s: 10}
matter: {controller_url: "ws://127.0.0.1:5580/ws", temperature_unit: F}
thread: {otbr_url: "http://127.0.0.1:8081", dataset_hex: 0e08AABB}
mesh: {enabled: true, peers: [a, b]}
doctor: {root: /srv/root, interface: eth0, free_disk_warn_mb: 50}
""",
    )
    config = cfg.load_config(path)
    assert config.state_dir == Path("/var/lib/atmosphere-bridge")
    assert (config.api.host, config.api.port) == ("0.0.0.0", 9000)
    assert config.auth.trusted_issuers == ("abc",)
    assert config.auth.clock_skew_s == 10
    assert config.matter.temperature_unit == "F"
    assert config.thread.dataset_hex == "0e08AABB"
    assert config.mesh.peers == ("a", "b")
    assert config.doctor.root == Path("/srv/root")
    assert config.doctor.interface == "eth0"
    assert config.doctor.free_disk_warn_mb == 50
    assert config.doctor.free_disk_fail_mb == 100


def test_starting_configuration_of_the_appliance_is_valid() -> None:
    config = cfg.load_config(REPO / "systemd/atmosphere-bridge.yaml")
    assert config.matter.controller_url == "ws://127.0.0.1:5580/ws"
    assert config.doctor.controller_storage == Path("/var/lib/atmosphere-matter-controller")


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        ("api:\n  port: 70000\n", "api.port", "70000 is greater than the maximum of 65535"),
        ("api:\n  port: eighty\n", "api.port", "'eighty' is not of type 'integer'"),
        (
            "matter:\n  controler_url: x\n",
            "matter.controler_url",
            "unknown key (allowed: controller_key_file, controller_port, controller_url, "
            "controller_venv, enabled, netns, temperature_unit)",
        ),
        (
            "colour: red\n",
            "colour",
            "unknown key (allowed: api, audit, auth, automations, console, "
            "doctor, matter, mcp_servers, mesh, state_dir, thread, tools_manifest, voice)",
        ),
        ("mesh:\n  peers: [ok, 3]\n", "mesh.peers[1]", "3 is not of type 'string'"),
        (
            "matter:\n  temperature_unit: K\n",
            "matter.temperature_unit",
            "'K' is not one of ['C', 'F']",
        ),
        (
            "thread:\n  otbr_url: 127.0.0.1:8081\n",
            "thread.otbr_url",
            "'127.0.0.1:8081' does not match '^https?://'",
        ),
        (
            "thread:\n  dataset_hex: xyz\n",
            "thread.dataset_hex",
            "'xyz' does not match '^([0-9a-fA-F]{2})+$'",
        ),
        ("api: 5\n", "api", "5 is not of type 'object'"),
        (
            "doctor:\n  interface: 'eth0; rm'\n",
            "doctor.interface",
            "'eth0; rm' does not match '^[A-Za-z0-9._-]{1,15}$'",
        ),
        # A zero replay window would refuse every request: not a valid setting.
        ("auth:\n  clock_skew_s: 0\n", "auth.clock_skew_s", "0 is less than the minimum of 1"),
        (
            "auth:\n  expiry_skew_s: 301\n",
            "auth.expiry_skew_s",
            "301 is greater than the maximum of 300",
        ),
    ],
)
def test_invalid_values_name_the_key(tmp_path: Path, text: str, key: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigInvalidError) as info:
        cfg.load_config(path)
    err = info.value
    assert err.code is ErrorCode.CONFIG_INVALID
    assert err.message == f"{path}: {key}: {message}"
    assert err.details["key"] == key


def test_all_problems_are_listed(tmp_path: Path) -> None:
    path = _write(tmp_path, "api:\n  port: -1\n  host: ''\nmesh:\n  enabled: maybe\n")
    with pytest.raises(ConfigInvalidError) as info:
        cfg.load_config(path)
    assert [p["key"] for p in info.value.details["errors"]] == [
        "api.host",
        "api.port",
        "mesh.enabled",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "must be a mapping at the top level"),
        ("api: [unclosed\n", "is not valid YAML"),
    ],
)
def test_malformed_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigInvalidError, match=re.escape(message)):
        cfg.load_config(_write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigInvalidError) as info:
        cfg.load_config(tmp_path / "nope.yaml")
    assert info.value.message == (
        f"cannot read configuration {tmp_path / 'nope.yaml'}: No such file or directory"
    )


def test_empty_file_gives_defaults(tmp_path: Path) -> None:
    assert cfg.load_config(_write(tmp_path, "")) == cfg.BridgeConfig()


def test_overrides_replace_top_level_values(tmp_path: Path) -> None:
    config = cfg.load_config(None, state_dir=tmp_path, tools_manifest=None)
    assert config.state_dir == tmp_path
    assert config.tools_manifest is None


def test_resolve_config_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cfg.CONFIG_ENV_VAR, raising=False)
    system = tmp_path / "etc/atmosphere-bridge/config.yaml"
    monkeypatch.setattr(cfg, "SYSTEM_CONFIG_PATH", system)
    assert cfg.resolve_config_path(None) is None
    system.parent.mkdir(parents=True)
    system.write_text("api: {port: 1}\n")
    assert cfg.resolve_config_path(None) == system
    monkeypatch.setenv(cfg.CONFIG_ENV_VAR, str(tmp_path / "env.yaml"))
    assert cfg.resolve_config_path(None) == tmp_path / "env.yaml"
    assert cfg.resolve_config_path("explicit.yaml") == Path("explicit.yaml")
    assert cfg.SYSTEM_CONFIG_PATH == system


def test_config_option_anywhere() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    doctor = sub.add_parser("doctor")
    doctor.add_argument("--json", action="store_true")
    nested = sub.add_parser("tools").add_subparsers(dest="sub")
    nested.add_parser("list")
    _add_config_option(parser, top=True)
    assert parser.parse_args(["--config", "a.yaml", "doctor"]).config == Path("a.yaml")
    assert parser.parse_args(["doctor", "--config", "b.yaml", "--json"]).config == Path("b.yaml")
    assert parser.parse_args(["tools", "list", "--config", "c.yaml"]).config == Path("c.yaml")
    assert parser.parse_args(["--config", "d.yaml", "tools", "list"]).config == Path("d.yaml")
    assert parser.parse_args(["doctor"]).config is None


def test_resolution_layers_and_sources(tmp_path: Path) -> None:
    path = _write(tmp_path, "api: {port: 9000, host: 127.0.0.5}\nmatter: {controller_venv: /f}\n")
    resolved = cfg.resolve_config(
        path, flags={"api.port": 9001}, environ={"ATMOSPHERE_CONTROLLER_VENV": "/e"}
    )
    assert (resolved.config.api.port, resolved.config.api.host) == (9001, "127.0.0.5")
    assert resolved.config.matter.controller_venv == "/e"
    assert resolved.sources["api.port"] is cfg.Source.FLAG
    assert resolved.sources["api.host"] is cfg.Source.FILE
    assert resolved.sources["matter.controller_venv"] is cfg.Source.ENVIRONMENT
    assert resolved.sources["api.max_connections"] is cfg.Source.DEFAULT
    # No file, no environment, no flag: exactly the defaults.
    bare = cfg.resolve_config(None, environ={})
    assert bare.config == cfg.BridgeConfig()
    assert set(bare.sources.values()) == {cfg.Source.DEFAULT}


def test_an_unknown_flag_key_is_refused() -> None:
    with pytest.raises(ConfigInvalidError) as info:
        cfg.resolve_config(None, flags={"api.prot": 1}, environ={})
    assert info.value.details == {"key": "api.prot"}


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("thread.dataset_hex", "0e08aabb", "<redacted>"),
        ("console.approval_webhook_url", "https://h.example/T1/secret", "<redacted>"),
        ("console.approval_webhook_secret_file", "/etc/s", "/etc/s"),
        (
            "matter.controller_url",
            "ws://u:pw@127.0.0.1:5580/ws",
            "ws://<redacted>@127.0.0.1:5580/ws",
        ),
        (
            "thread.otbr_url",
            "http://127.0.0.1:8081/?token=abc&x",
            "http://127.0.0.1:8081/?token=<redacted>&<redacted>",
        ),
        ("thread.otbr_url", None, None),
        ("api.port", 8765, 8765),
        ("mesh.trusted_nodes", ["k1"], ["k1"]),
    ],
)
def test_redact(key: str, value: Any, shown: Any) -> None:
    assert cfg.redact(key, value) == shown


def test_redact_hides_mcp_env_values_and_secret_named_keys() -> None:
    entry = {
        "name": "calc",
        "command": "/bin/calc",
        "env": {"API_KEY": "sk-1"},
        "token_file": "/etc/t",
    }
    assert cfg.redact("mcp_servers", [entry]) == [
        {
            "name": "calc",
            "command": "/bin/calc",
            "env": {"API_KEY": "<redacted>"},
            "token_file": "/etc/t",
        }
    ]
    # A future key named like a secret is hidden without a schema mark.
    assert cfg.redact("console.api_token", "t0k", {}) == "<redacted>"
    assert cfg.redact("console.password", "pw", {}) == "<redacted>"
