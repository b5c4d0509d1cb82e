"""``atmosphere-bridge config show`` and the one resolution every command shares.

Run as real processes: the precedence default < file < environment < flag, a flag that
is not given leaves the file's value alone, secrets never printed, and commands other
than ``run`` (``keys``, ``mcp``, ``wyoming``, ``demo``, ``doctor``, ``generate``) read
the same resolved configuration.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

BIN = Path(sys.executable).parent / "atmosphere-bridge"
REPO = Path(__file__).resolve().parents[2]


def bridge(
    tmp_path: Path,
    *args: str,
    env: dict[str, str] | None = None,
    config: dict[str, Any] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``atmosphere-bridge`` with ``--config`` (when given) and return the result."""
    cmd = [str(BIN)]
    if config is not None:
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        cmd += ["--config", str(path)]
    environ = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "ATMOSPHERE_CONTROLLER_VENV",
            "ATMOSPHERE_BRIDGE_CONFIG",
            "ATMOSPHERE_MATTER_CONTROLLER_KEY_FILE",
            "ATMOSPHERE_BRIDGE_TOKEN",
            "DEMO_PORT",
        )
    }
    return subprocess.run(
        [*cmd, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**environ, **(env or {})},
        check=False,
    )


def show(
    tmp_path: Path,
    *flags: str,
    env: dict[str, str] | None = None,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    done = bridge(tmp_path, "config", "show", "--json", *flags, env=env, config=config)
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def test_precedence_is_default_file_environment_flag(tmp_path: Path) -> None:
    config = {
        "api": {"host": "127.0.0.3", "port": 9100},
        "matter": {"controller_venv": "/opt/from-file"},
    }
    env = {"ATMOSPHERE_CONTROLLER_VENV": "/opt/from-env"}
    doc = show(tmp_path, "--port", "9200", env=env, config=config)
    keys = doc["keys"]
    assert (doc["file"], doc["file_source"]) == (str(tmp_path / "config.yaml"), "flag")
    assert keys["api.max_body_bytes"] == {"value": 1048576, "source": "default"}
    assert keys["api.host"] == {"value": "127.0.0.3", "source": "file"}
    assert keys["matter.controller_venv"] == {
        "value": "/opt/from-env",
        "source": "environment",
        "variable": "ATMOSPHERE_CONTROLLER_VENV",
    }
    assert keys["api.port"] == {"value": 9200, "source": "flag"}
    # Without the environment the file wins; a blank variable counts as unset.
    key_env = {"ATMOSPHERE_MATTER_CONTROLLER_KEY_FILE": "/run/credentials/x/controller.key"}
    doc = show(tmp_path, env=key_env, config=config)
    assert doc["keys"]["matter.controller_key_file"] == {
        "value": "/run/credentials/x/controller.key",
        "source": "environment",
        "variable": "ATMOSPHERE_MATTER_CONTROLLER_KEY_FILE",
    }
    doc = show(tmp_path, env={"ATMOSPHERE_CONTROLLER_VENV": " "}, config=config)
    assert doc["keys"]["matter.controller_venv"] == {"value": "/opt/from-file", "source": "file"}
    assert doc["keys"]["api.port"] == {"value": 9100, "source": "file"}


def test_a_flag_not_given_leaves_the_file_alone(tmp_path: Path) -> None:
    doc = show(tmp_path, config={"matter": {"enabled": False}, "state_dir": "/srv/st"})
    assert doc["keys"]["matter.enabled"] == {"value": False, "source": "file"}
    assert doc["keys"]["state_dir"] == {"value": "/srv/st", "source": "file"}
    doc = show(tmp_path, "--matter", config={"matter": {"enabled": False}})
    assert doc["keys"]["matter.enabled"] == {"value": True, "source": "flag"}
    doc = show(tmp_path, "--no-matter")
    assert doc["keys"]["matter.enabled"] == {"value": False, "source": "flag"}
    # The file named by $ATMOSPHERE_BRIDGE_CONFIG is read the same way.
    env_file = tmp_path / "env.yaml"
    env_file.write_text("matter: {enabled: false}\n")
    doc = show(tmp_path, env={"ATMOSPHERE_BRIDGE_CONFIG": str(env_file)})
    assert (doc["file"], doc["file_source"]) == (str(env_file), "environment")
    assert doc["keys"]["matter.enabled"] == {"value": False, "source": "file"}
    doc = show(tmp_path, "--state-dir", "/srv/flag", config={"state_dir": "/srv/st"})
    assert doc["keys"]["state_dir"] == {"value": "/srv/flag", "source": "flag"}


def test_every_schema_key_is_shown(tmp_path: Path) -> None:
    schema = json.loads((REPO / "bridge/config.schema.json").read_text())
    expected: list[str] = []

    def walk(prefix: str, node: dict[str, Any]) -> None:
        # A key is a leaf unless the schema gives it named properties of its own.
        for name, sub in node["properties"].items():
            if sub.get("type") == "object" and "properties" in sub:
                walk(f"{prefix}{name}.", sub)
            else:
                expected.append(f"{prefix}{name}")

    walk("", schema)
    doc = show(tmp_path)
    assert (doc["file"], doc["file_source"]) == (None, None)
    assert sorted(doc["keys"]) == sorted(expected)
    assert {entry["source"] for entry in doc["keys"].values()} == {"default"}


SECRETS = ("0e08aabbccddeeff0011", "T0HOOKSECRET", "sk-live-SECRET", "hunter2", "qtoken123")


def test_secrets_are_never_printed(tmp_path: Path) -> None:
    config = {
        "thread": {"dataset_hex": SECRETS[0]},
        "console": {
            "approval_webhook_url": f"https://hooks.example/services/{SECRETS[1]}",
            "approval_webhook_secret_file": "/etc/atmosphere-bridge/hook.secret",
        },
        "matter": {"controller_url": f"ws://admin:{SECRETS[3]}@127.0.0.1:5580/ws?t={SECRETS[4]}"},
        "mcp_servers": [
            {"name": "calc", "command": "/usr/bin/calc", "env": {"API_KEY": SECRETS[2]}},
            {
                "name": "web",
                "url": f"http://127.0.0.1:9000/mcp?key={SECRETS[4]}",
                "token_file": "/etc/atmosphere-bridge/web.token",
            },
        ],
    }
    text = bridge(tmp_path, "config", "show", config=config)
    as_json = bridge(tmp_path, "config", "show", "--json", config=config)
    for done in (text, as_json):
        assert done.returncode == 0, done.stderr
        for secret in SECRETS:
            assert secret not in done.stdout
            assert secret.lower() not in done.stdout.lower()
    keys = json.loads(as_json.stdout)["keys"]
    assert keys["thread.dataset_hex"]["value"] == "<redacted>"
    assert keys["console.approval_webhook_url"]["value"] == "<redacted>"
    # Where a secret file is, is not a secret.
    assert keys["console.approval_webhook_secret_file"]["value"] == (
        "/etc/atmosphere-bridge/hook.secret"
    )
    assert keys["matter.controller_url"]["value"] == (
        "ws://<redacted>@127.0.0.1:5580/ws?t=<redacted>"
    )
    calc, web = keys["mcp_servers"]["value"]
    assert calc["env"] == {"API_KEY": "<redacted>"}
    assert web["url"] == "http://127.0.0.1:9000/mcp?key=<redacted>"
    assert web["token_file"] == "/etc/atmosphere-bridge/web.token"
    # A key left unset shows as null, not as redacted.
    assert keys["thread.otbr_url"]["value"] is None


def test_text_output_names_file_value_and_source(tmp_path: Path) -> None:
    done = bridge(
        tmp_path, "config", "show", "--port", "9300", config={"api": {"host": "127.0.0.4"}}
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"file: {tmp_path / 'config.yaml'} (--config)"
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[1:]}
    assert rows["api.host"] == '"127.0.0.4"  (file)'
    assert rows["api.port"] == "9300  (flag)"
    assert rows["api.max_connections"] == "4096  (default)"


def test_a_bad_flag_value_is_refused_as_the_command_lines(tmp_path: Path) -> None:
    done = bridge(tmp_path, "config", "show", "--port", "70000")
    assert done.returncode == 1
    assert done.stderr == (
        "error [CONFIG_INVALID]: command line: api.port: 70000 is greater than the maximum "
        "of 65535\n"
    )
    done = bridge(
        tmp_path,
        "config",
        "show",
        env={"ATMOSPHERE_CONTROLLER_VENV": "x"},
        config={"matter": {"controler_venv": "y"}},
    )
    assert done.returncode == 1
    assert "matter.controler_venv: unknown key" in done.stderr


# -- other commands read the same resolved configuration -----------------------------------


def test_keys_init_uses_the_files_state_dir(tmp_path: Path) -> None:
    done = bridge(tmp_path, "keys", "init", "--json", config={"state_dir": str(tmp_path / "st")})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["path"] == str(tmp_path / "st" / "node.key")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_mcp_and_invoke_reach_the_files_api_address(tmp_path: Path) -> None:
    port = _closed_port()
    token = tmp_path / "token"
    token.write_text("x\n")
    token.chmod(0o600)
    config = {"api": {"port": port}}
    done = bridge(tmp_path, "mcp", "--token-file", str(token), config=config)
    assert done.returncode == 1
    assert f"cannot reach the bridge at http://127.0.0.1:{port}/v1/openapi.json" in done.stderr
    done = bridge(tmp_path, "invoke", "core:get_data", "--token", "x", config=config)
    assert done.returncode == 1
    assert f"http://127.0.0.1:{port}/v1/invoke" in done.stderr


def test_demo_takes_its_port_from_flag_environment_then_file(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config = {"api": {"port": port}}
        done = bridge(tmp_path, "demo", "--exit-after-ready", config=config)
        assert done.returncode == 1, done.stdout
        assert f"port {port} on 127.0.0.1 is in use" in done.stderr
        done = bridge(
            tmp_path,
            "demo",
            "--exit-after-ready",
            env={"DEMO_PORT": str(port)},
            config={"api": {"port": _closed_port()}},
        )
        assert f"port {port} on 127.0.0.1 is in use" in done.stderr
        done = bridge(
            tmp_path,
            "demo",
            "--exit-after-ready",
            "--port",
            str(port),
            env={"DEMO_PORT": str(_closed_port())},
        )
        assert f"port {port} on 127.0.0.1 is in use" in done.stderr
    # Port 0 (fine for run) cannot serve the demo's printed commands.
    done = bridge(tmp_path, "demo", "--exit-after-ready", config={"api": {"port": 0}})
    assert done.stderr == "error [INTERNAL]: the demo needs a fixed API port (1-65535), not 0\n"


def test_doctor_root_flag_beats_the_file(tmp_path: Path) -> None:
    (tmp_path / "flag-root").mkdir()
    config = {
        "doctor": {"root": str(tmp_path / "file-root")},
        "matter": {"enabled": False},
        "state_dir": str(tmp_path / "st"),
    }
    done = bridge(
        tmp_path, "doctor", "--json", "--root", str(tmp_path / "flag-root"), config=config
    )
    report = json.loads(done.stdout)
    (interface,) = [c for c in report["checks"] if c["name"] == "interface"]
    # The flag's (empty) tree has no route; the file's root does not even exist.
    assert interface["found"] == "no LAN interface found (no default route)"
    doc = show(tmp_path, config=config)
    assert doc["keys"]["doctor.root"] == {"value": str(tmp_path / "file-root"), "source": "file"}


def test_wyoming_relays_to_the_files_api_address(tmp_path: Path) -> None:
    api_port, listen = _closed_port(), _closed_port()
    token = tmp_path / "token"
    token.write_text("x\n")
    token.chmod(0o600)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"api": {"port": api_port}}))
    proc = subprocess.Popen(
        [
            str(BIN),
            "--config",
            str(path),
            "wyoming",
            "--token-file",
            str(token),
            "--port",
            str(listen),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert (
            line == f"wyoming intent service on 127.0.0.1:{listen} -> http://127.0.0.1:{api_port}"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=20)
