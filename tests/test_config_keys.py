"""Every configuration key does what docs/configuration.md promises, in a real process.

The list of keys is generated from ``bridge/config.schema.json`` (sections walked, the
fields of an ``mcp_servers`` entry as ``mcp_servers[].<field>``); a test claims the keys
whose effect it observes with ``@effect_of``, and ``test_every_key_has_a_test_of_its_effect``
names each key nobody claims. The processes are ``atmosphere-bridge run`` (or ``doctor``,
``generate``) started with ``--config FILE`` and no flag that overrides a key, on real
loopback ports, with a temporary state directory; several keys share one process, each
key's effect is asserted by its own test.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import math
import os
import selectors
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.errors import BridgeError
from tests.support.ports import free_port
from tests.support.processes import wait_until

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent / "atmosphere-bridge"
START_TIMEOUT_S = 60.0

F = TypeVar("F", bound=Callable[..., Any])
COVERED: dict[str, list[str]] = {}


def effect_of(*keys: str) -> Callable[[F], F]:
    """Mark a test as the one observing the effect of ``keys``."""

    def mark(fn: F) -> F:
        for key in keys:
            COVERED.setdefault(key, []).append(fn.__name__)
        return fn

    return mark


def schema_keys(node: dict[str, Any], prefix: str = "") -> list[str]:
    """Return the key paths of a schema node: sections walked, a list's entry fields too."""
    keys: list[str] = []
    for name, sub in node.get("properties", {}).items():
        if sub.get("type") == "object" and "properties" in sub:
            keys += schema_keys(sub, f"{prefix}{name}.")
            continue
        keys.append(prefix + name)
        if sub.get("type") == "array" and "properties" in sub.get("items", {}):
            keys += schema_keys(sub["items"], f"{prefix}{name}[].")
    return keys


def documented_keys() -> list[str]:
    """Return every key of ``bridge/config.schema.json`` (read here, not through the code)."""
    return schema_keys(json.loads((REPO / "bridge/config.schema.json").read_text()))


# -- a real bridge process ---------------------------------------------------------------


@dataclass
class Bridge:
    """A running ``atmosphere-bridge`` started on a configuration file."""

    config: dict[str, Any]
    workdir: Path
    args: tuple[str, ...] = ("run",)
    env: dict[str, str] = field(default_factory=dict)
    prefix: tuple[str, ...] = ()
    popen: subprocess.Popen[bytes] | None = None
    url: str = ""
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.workdir / "bridge.log"

    @property
    def config_path(self) -> Path:
        return self.workdir / "config.yaml"

    @property
    def state(self) -> Path:
        return Path(self.config["state_dir"])

    def start(self, *, wait_listening: bool = True) -> Bridge:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(yaml.safe_dump(self.config))
        with self.log.open("wb") as log:
            self.popen = subprocess.Popen(
                [*self.prefix, str(BIN), "--config", str(self.config_path), *self.args],
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=self.workdir,
                env={**os.environ, **self.env},
            )
        if wait_listening:
            line = self.read_line(START_TIMEOUT_S)
            assert line.startswith("atmosphere-bridge listening on "), (line, self.stderr())
            self.url = line.rsplit(" ", 1)[1]
        return self

    def read_line(self, timeout_s: float) -> str:
        assert self.popen is not None
        assert self.popen.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self.popen.stdout, selectors.EVENT_READ)
            if not sel.select(timeout_s):
                raise AssertionError(f"no output in {timeout_s}s; log: {self.stderr()[-2000:]}")
        return self.popen.stdout.readline().decode().strip()

    def stderr(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def children(self) -> list[int]:
        """Return the PIDs of this process's child processes."""
        assert self.popen is not None
        found: list[int] = []
        for task in Path(f"/proc/{self.popen.pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(p) for p in (task / "children").read_text().split()]
        return found

    def stop(self) -> None:
        popen, self.popen = self.popen, None
        if popen is None:
            return
        if popen.poll() is None:
            popen.terminate()
            try:
                popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait(timeout=5)
        if popen.stdout is not None:
            popen.stdout.close()

    def key(self) -> NodeKey:
        return NodeKey.load(self.state / KEY_FILE_NAME)

    def token(self, permissions: tuple[str, ...] = ("*",), agent: str = "config-test") -> str:
        return issue_token(self.key(), agent_id=agent, permissions=permissions, ttl_s=600)


def http(
    method: str, url: str, body: Any = None, token: str | None = None, timeout_s: float = 40
) -> tuple[int, Any]:
    """Send one request; return the status and the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def raw(host: str, port: int, data: bytes, wait_s: float = 5.0) -> bytes:
    """Send ``data`` on a new connection and return what arrives within ``wait_s``."""
    with socket.create_connection((host, port), timeout=wait_s) as sock:
        sock.sendall(data)
        return _read_response(sock, wait_s)


def _read_response(sock: socket.socket, wait_s: float) -> bytes:
    sock.settimeout(wait_s)
    answer = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while b"\r\n\r\n" not in answer or not _complete(answer):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


def _complete(answer: bytes) -> bool:
    head, _, body = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return True


def status_and_error(answer: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    doc = json.loads(body) if body.strip() else {}
    return status, (doc.get("error") or {}) if isinstance(doc, dict) else {}


def request_bytes(
    host: str,
    port: int,
    path: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> bytes:
    """Return an HTTP/1.1 request (``Connection: close``) as bytes."""
    lines = [
        f"{method} {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Connection: close",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
    ]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# -- the completeness check --------------------------------------------------------------


def test_every_key_has_a_test_of_its_effect() -> None:
    missing = [key for key in documented_keys() if key not in COVERED]
    assert not missing, (
        f"these configuration keys have no test of their effect in {Path(__file__).name}: "
        f"{', '.join(missing)} - add a test that sets the key, starts the process and "
        "observes what docs/configuration.md promises, marked @effect_of('<key>')"
    )
    stale = sorted(set(COVERED) - set(documented_keys()))
    assert not stale, f"tests claim keys the schema does not have: {stale}"


def test_documented_keys_are_the_schema_keys() -> None:
    doc = (REPO / "docs/configuration.md").read_text()
    for key in documented_keys():
        if "[]" in key:
            section, name = key.split("[].", 1)
            rows = doc.split(f"## `{section}`", 1)[1]
            assert f"`{name}`" in rows, f"{key} is not explained in docs/configuration.md"
            continue
        assert f"| `{key}` |" in doc, f"{key} has no row in docs/configuration.md"


def test_an_unknown_key_is_refused_with_its_path(tmp_path: Path) -> None:
    bridge = Bridge(
        {"state_dir": str(tmp_path / "state"), "api": {"port": 0, "max_conections": 5}}, tmp_path
    )
    bridge.start(wait_listening=False)
    assert bridge.popen is not None
    assert bridge.popen.wait(timeout=60) == 1
    err = bridge.stderr()
    assert err.startswith(
        f"error [CONFIG_INVALID]: {bridge.config_path}: api.max_conections: "
        "unknown key (allowed: allowed_hosts, body_timeout_s, header_timeout_s, "
        "host, idle_timeout_s, max_body_bytes, max_connections, "
        "max_header_bytes, max_json_depth, port)"
    ), err
    assert "Traceback" not in err
    assert not (tmp_path / "state").exists()
    bridge.stop()


# -- one process: the API, auth, console, state and manifest keys, Matter off -----------

TOOLS_PY = """
from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.decorator import tool
from bridge.tools.definition import Confirmation


@tool("cfg_probe", description="Answer ok: a tool of the configuration tests' manifest",
      category="computing", idempotent=True)
async def cfg_probe(ctx: CallContext) -> dict[str, Any]:
    return {"ok": True}


@tool("cfg_gate_unlock", description="Unlock a gate: the configuration tests' dangerous tool",
      category="acting", dangerous=True,
      confirmation=Confirmation(mode="always", message="Unlock the {gate} gate?", timeout_s=30))
async def cfg_gate_unlock(gate: str, ctx: CallContext) -> dict[str, Any]:
    return {"unlocked": gate}
"""
WEBHOOK_SECRET = b"config-test-webhook-secret"


@dataclass
class Hook:
    """A webhook receiver on loopback that records every POST."""

    server: ThreadingHTTPServer
    received: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    got: threading.Event = field(default_factory=threading.Event)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])


def start_hook() -> Hook:
    hook: Hook

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            hook.received.append((self.path, dict(self.headers), body))
            hook.got.set()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    hook = Hook(ThreadingHTTPServer(("127.0.0.1", 0), Handler))
    threading.Thread(target=hook.server.serve_forever, daemon=True).start()
    return hook


@dataclass
class Main:
    bridge: Bridge
    hook: Hook
    port: int
    controller_port: int
    issuer: NodeKey

    @property
    def host(self) -> str:
        return "127.0.0.2"


@pytest.fixture(scope="module")
def main(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Main]:
    tmp = tmp_path_factory.mktemp("main")
    (tmp / "cfg_tools.py").write_text(TOOLS_PY)
    (tmp / "tools.yaml").write_text(
        yaml.safe_dump(
            {
                "tools": [
                    {"source": f"file:{tmp / 'cfg_tools.py'}", "entry": "cfg_probe"},
                    {"source": f"file:{tmp / 'cfg_tools.py'}", "entry": "cfg_gate_unlock"},
                ]
            }
        )
    )
    (tmp / "hook.secret").write_bytes(WEBHOOK_SECRET + b"\n")
    hook = start_hook()
    issuer = NodeKey.generate()
    port, controller_port = free_port(), free_port()
    bridge = Bridge(
        {
            "state_dir": str(tmp / "state"),
            "tools_manifest": str(tmp / "tools.yaml"),
            "api": {
                "host": "127.0.0.2",
                "port": port,
                "max_body_bytes": 4096,
                "max_header_bytes": 8190,
                "max_json_depth": 8,
                "header_timeout_s": 0.5,
                "body_timeout_s": 0.5,
                "idle_timeout_s": 2.0,
                "max_connections": 4,
                "allowed_hosts": ["bridge.home.test"],
            },
            "console": {
                "approval_webhook_url": f"http://127.0.0.1:{hook.port}/notify",
                "approval_webhook_secret_file": str(tmp / "hook.secret"),
            },
            "auth": {
                "trusted_issuers": [issuer.public_key_b64],
                "clock_skew_s": 20,
                "expiry_skew_s": 120,
            },
            "matter": {"enabled": False, "controller_port": controller_port},
            "automations": {
                "latitude": 60.0,
                "longitude": 90.0,
                "timezone": "Asia/Kathmandu",
                "people": ["anna"],
            },
        },
        tmp / "work",
    )
    try:
        yield Main(bridge.start(), hook, port, controller_port, issuer)
    finally:
        bridge.stop()
        hook.server.shutdown()
        assert "Traceback" not in bridge.stderr()


def _rule(main: Main, rule_id: str, trigger: dict[str, Any]) -> dict[str, Any]:
    status, made = http(
        "POST",
        f"{main.bridge.url}/v1/automations",
        {"id": rule_id, "trigger": trigger, "actions": [{"type": "delay", "seconds": 0}]},
        main.bridge.token(),
    )
    assert status == 201, made
    return made  # type: ignore[no-any-return]


@effect_of("automations.timezone")
def test_automations_timezone_is_the_zone_of_rules_that_give_none(main: Main) -> None:
    made = _rule(main, "cfg-midnight", {"type": "time", "at": "00:00"})
    # Midnight in Kathmandu (UTC+05:45, no daylight saving) is 18:15 UTC.
    assert made["next_at"] % 86_400 == 18 * 3600 + 15 * 60
    assert 0 < made["next_at"] - time.time() <= 86_400


def _sun_day(main: Main, name: str) -> tuple[float, float]:
    """Return the configured place's next sunrise and the length of that day, in seconds."""
    rise = _rule(main, f"cfg-{name}-rise", {"type": "sun", "event": "sunrise"})["next_at"]
    sets = _rule(main, f"cfg-{name}-set", {"type": "sun", "event": "sunset"})["next_at"]
    day = sets - rise if sets > rise else 86_400 - (rise - sets)  # next sunset may be today's
    return rise, day


@effect_of("automations.longitude")
def test_automations_longitude_places_the_solar_noon(main: Main) -> None:
    rise, day = _sun_day(main, "noon")
    # At 90° east the sun is highest near 06:00 UTC (15° an hour); the equation of time
    # moves it by at most 16.5 minutes over the year.
    noon = (rise + day / 2) % 86_400
    assert abs(noon - 6 * 3600) <= 17 * 60, noon / 3600


@effect_of("automations.latitude")
def test_automations_latitude_sets_the_day_length(main: Main) -> None:
    rise, day = _sun_day(main, "length")
    # At 60° north: the sunrise equation with Cooper's declination and the sun's centre
    # 0.833° below the horizon (refraction, radius) - a textbook formula, within ~15 min.
    n = datetime.fromtimestamp(rise, UTC).timetuple().tm_yday
    decl = math.radians(23.44) * math.sin(2 * math.pi * (284 + n) / 365)
    lat = math.radians(60.0)
    cos_h = (math.sin(math.radians(-0.833)) - math.sin(lat) * math.sin(decl)) / (
        math.cos(lat) * math.cos(decl)
    )
    expected = 2 * math.degrees(math.acos(cos_h)) / 15 * 3600
    assert abs(day - expected) <= 20 * 60, (day / 3600, expected / 3600)


@effect_of("automations.people")
def test_automations_people_may_have_their_presence_reported(main: Main) -> None:
    token = main.bridge.token()
    status, answer = http(
        "PUT", f"{main.bridge.url}/v1/automations/presence/anna", {"home": True}, token
    )
    assert (status, answer["person"], answer["home"]) == (200, "anna", True)
    status, answer = http(
        "PUT", f"{main.bridge.url}/v1/automations/presence/ben", {"home": True}, token
    )
    assert (status, answer["error"]["code"]) == (404, "NOT_FOUND")
    status, seen = http("GET", f"{main.bridge.url}/v1/automations/presence", token=token)
    assert list(seen["people"]) == ["anna"]


@effect_of("matter.enabled")
def test_matter_enabled_false_starts_no_controller_and_writes_nothing(main: Main) -> None:
    status, health = http("GET", f"{main.bridge.url}/healthz")
    assert status == 200
    assert health["components"] == {"invocation": True, "matter": False, "mesh": False}
    assert not (main.bridge.state / "controller").exists()
    assert main.bridge.children() == []
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", main.controller_port), timeout=5).close()
    assert "controller started" not in main.bridge.stderr()


@effect_of("state_dir")
def test_state_dir_holds_the_key_database_and_api_file(main: Main) -> None:
    state = main.bridge.state
    assert (state / "bridge.db").is_file()
    assert (state / KEY_FILE_NAME).stat().st_mode & 0o777 == 0o600
    assert state.stat().st_mode & 0o777 == 0o700
    assert json.loads((state / "api.json").read_text())["url"] == f"http://127.0.0.2:{main.port}"
    # The default ./state (relative to the working directory) is not used.
    assert not (main.bridge.workdir / "state").exists()


@effect_of("tools_manifest")
def test_tools_manifest_tools_are_served(main: Main) -> None:
    token = main.bridge.token()
    status, body = http("GET", f"{main.bridge.url}/v1/tools?view=flat", token=token)
    assert status == 200, body
    assert {"core:cfg_probe", "core:cfg_gate_unlock"} <= {t["name"] for t in body["tools"]}
    status, answer = http(
        "POST", f"{main.bridge.url}/v1/invoke", {"tool": "core:cfg_probe", "params": {}}, token
    )
    assert (status, answer["status"], answer["result"]) == (200, "success", {"ok": True})


@effect_of("api.host")
def test_api_host_is_the_address_served(main: Main) -> None:
    assert main.bridge.url == f"http://127.0.0.2:{main.port}"
    assert http("GET", f"http://127.0.0.2:{main.port}/healthz")[0] == 200
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", main.port), timeout=5).close()


@effect_of("api.port")
def test_api_port_is_the_port_served(main: Main) -> None:
    with socket.create_connection((main.host, main.port), timeout=5):
        pass
    assert main.bridge.url.endswith(f":{main.port}")


@effect_of("api.allowed_hosts")
def test_api_allowed_hosts_are_answered_and_other_names_are_not(main: Main) -> None:
    def health(host: str) -> tuple[int, dict[str, Any]]:
        head = f"GET /healthz HTTP/1.1\r\nHost: {host}:{main.port}\r\nConnection: close\r\n\r\n"
        return status_and_error(raw(main.host, main.port, head.encode()))

    # The listed name is answered; a name not listed (nor loopback, an address or this
    # machine's own) is refused as a DNS-rebound page's would be.
    assert health("bridge.home.test") == (200, {})
    assert health("BRIDGE.home.test.")[0] == 200  # the same name, case and root dot aside
    status, error = health("other.home.test")
    assert (status, error["code"], error["details"]) == (
        421,
        "INVALID_REQUEST",
        {"reason": "host_not_allowed", "host": "other.home.test"},
    )


def _probe_call(main: Main, pad: int) -> bytes:
    body = json.dumps({"tool": "core:cfg_probe", "params": {}}).encode() + b" " * pad
    auth = {"Authorization": f"Bearer {main.bridge.token()}"}
    return raw(main.host, main.port, request_bytes(main.host, main.port, "/v1/invoke", body, auth))


@effect_of("api.max_body_bytes")
def test_api_max_body_bytes_bounds_a_body(main: Main) -> None:
    # The same call, padded with JSON whitespace to 3,000 and to 5,000 bytes (limit 4,096).
    assert status_and_error(_probe_call(main, 3000)) == (200, {})
    status, error = status_and_error(_probe_call(main, 5000))
    assert (status, error["code"]) == (413, "PAYLOAD_TOO_LARGE")


@effect_of("api.max_header_bytes")
def test_api_max_header_bytes_bounds_a_header(main: Main) -> None:
    def get(pad: int) -> tuple[int, dict[str, Any]]:
        req = request_bytes(
            main.host, main.port, "/healthz", method="GET", headers={"X-Pad": "a" * pad}
        )
        return status_and_error(raw(main.host, main.port, req))

    assert get(8000)[0] == 200
    status, error = get(9000)  # under the default 20,480, over the configured 8,190
    assert (status, error["code"]) == (431, "HEADERS_TOO_LARGE")


@effect_of("api.max_json_depth")
def test_api_max_json_depth_bounds_nesting(main: Main) -> None:
    token = main.bridge.token()

    def call(arrays: int) -> tuple[int, Any]:
        value: Any = 1
        for _ in range(arrays):
            value = [value]
        return http(
            "POST",
            f"{main.bridge.url}/v1/invoke",
            {"tool": "core:cfg_probe", "params": {"x": value}},
            token,
        )

    status, body = call(10)  # 12 levels: the body, params, 10 arrays (limit 8)
    assert status == 400, body
    assert (body["error"]["code"], body["error"]["details"]["reason"]) == (
        "INVALID_REQUEST",
        "too_deep",
    )
    status, body = call(5)  # 7 levels: parsed, then refused by the tool's schema
    assert body["error"].get("details", {}).get("reason") != "too_deep", body
    assert body["error"]["code"] == "INVALID_PARAMS"


@effect_of("api.header_timeout_s")
def test_api_header_timeout_s_closes_a_slow_head(main: Main) -> None:
    start = time.monotonic()
    answer = raw(main.host, main.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n", wait_s=8)
    # 0.5 s configured; the default (10 s) would leave nothing within the 8 s waited.
    assert status_and_error(answer)[0] == 408, answer
    assert status_and_error(answer)[1]["code"] == "REQUEST_TIMEOUT"
    assert time.monotonic() - start < 8


@effect_of("api.body_timeout_s")
def test_api_body_timeout_s_closes_a_slow_body(main: Main) -> None:
    auth = {"Authorization": f"Bearer {main.bridge.token()}"}
    req = request_bytes(main.host, main.port, "/v1/invoke", b"x" * 100, auth)[:-90]
    answer = raw(main.host, main.port, req, wait_s=8)
    # 0.5 s configured; the default (30 s) would leave nothing within the 8 s waited.
    status, error = status_and_error(answer)
    assert (status, error["code"]) == (408, "REQUEST_TIMEOUT"), answer


@effect_of("api.idle_timeout_s")
def test_api_idle_timeout_s_closes_an_idle_connection(main: Main) -> None:
    with socket.create_connection((main.host, main.port), timeout=10) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {main.host}\r\n\r\n".encode())
        assert status_and_error(_read_response(sock, 10))[0] == 200
        start = time.monotonic()
        sock.settimeout(10)
        # 2 s configured; the default (75 s) would keep it open past the 10 s waited.
        assert sock.recv(1) == b""
        assert time.monotonic() - start < 10


@effect_of("api.max_connections")
def test_api_max_connections_refuses_one_more(main: Main) -> None:
    head = f"GET /healthz HTTP/1.1\r\nHost: {main.host}\r\n\r\n".encode()
    with contextlib.ExitStack() as stack:
        for _ in range(4):
            sock = stack.enter_context(socket.create_connection((main.host, main.port), 10))
            sock.sendall(head)
            assert status_and_error(_read_response(sock, 10))[0] == 200
        status, error = status_and_error(raw(main.host, main.port, head, wait_s=10))
    assert (status, error["code"]) == (503, "OVERLOADED")
    wait_until(lambda: http("GET", f"{main.bridge.url}/healthz")[0] == 200, 10, "room again")


@effect_of("auth.trusted_issuers")
def test_auth_trusted_issuers_tokens_are_accepted(main: Main) -> None:
    trusted = issue_token(main.issuer, agent_id="outside", permissions=["*"], ttl_s=600)
    other = issue_token(NodeKey.generate(), agent_id="outside", permissions=["*"], ttl_s=600)
    assert http("GET", f"{main.bridge.url}/v1/tools", token=trusted)[0] == 200
    status, body = http("GET", f"{main.bridge.url}/v1/tools", token=other)
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED")


@effect_of("auth.expiry_skew_s")
def test_auth_expiry_skew_s_tolerates_that_much_past_expiry(main: Main) -> None:
    key = main.bridge.key()
    now = time.time()
    # Expired 60 s ago: inside the configured 120 s (the default 5 s would refuse it).
    recent = issue_token(key, agent_id="late", permissions=["*"], ttl_s=540, now=now - 600)
    assert http("GET", f"{main.bridge.url}/v1/tools", token=recent)[0] == 200
    old = issue_token(key, agent_id="late", permissions=["*"], ttl_s=300, now=now - 600)
    assert http("GET", f"{main.bridge.url}/v1/tools", token=old)[0] == 401


@effect_of("auth.clock_skew_s")
def test_auth_clock_skew_s_is_the_replay_window(main: Main) -> None:
    token = main.bridge.token()

    def call(age_s: float) -> tuple[int, Any]:
        return http(
            "POST",
            f"{main.bridge.url}/v1/invoke",
            {"tool": "core:cfg_probe", "params": {}, "timestamp": time.time() - age_s},
            token,
        )

    assert call(5)[0] == 200
    # 60 s old: outside the configured 20 s (inside the default 300 s).
    status, body = call(60)
    assert (status, body["error"]["details"]["reason"]) == (401, "clock_skew"), body


@effect_of("console.approval_webhook_url", "console.approval_webhook_secret_file")
def test_console_webhook_is_posted_and_signed_with_the_secret_file(main: Main) -> None:
    token = main.bridge.token()
    answer: list[tuple[int, Any]] = []
    call = threading.Thread(
        target=lambda: answer.append(
            http(
                "POST",
                f"{main.bridge.url}/v1/invoke",
                {"tool": "core:cfg_gate_unlock", "params": {"gate": "garden"}},
                token,
            )
        )
    )
    call.start()
    try:
        assert main.hook.got.wait(20), "no webhook POST arrived"
        path, headers, body = main.hook.received[0]
        assert path == "/notify"
        # Signed as docs/configuration.md says, with the secret read from the file.
        timestamp = headers["X-Atmosphere-Timestamp"]
        mac = hmac.new(WEBHOOK_SECRET, timestamp.encode() + b"." + body, hashlib.sha256)
        assert headers["X-Atmosphere-Signature"] == f"sha256={mac.hexdigest()}"
        approval = json.loads(body)["approval"]
        assert (approval["tool"], approval["status"]) == ("core:cfg_gate_unlock@1.0.0", "pending")
        admin = main.bridge.token(("admin:approve",), agent="config-admin")
        status, body = http(
            "POST", f"{main.bridge.url}/v1/approvals/{approval['id']}", {"decision": "deny"}, admin
        )
        assert status == 200, body
    finally:
        call.join(40)
    assert answer[0][0] == 403


# -- the audit keys: one process started twice on the same state ---------------------------

AUDIT_TOOLS_PY = """
from typing import Any

from bridge.tools.context import CallContext
from bridge.tools.decorator import tool


@tool("cfg_echo_len", description="Answer the length of a text", category="computing",
      idempotent=True)
async def cfg_echo_len(text: str, ctx: CallContext) -> dict[str, Any]:
    return {"length": len(text)}
"""
# Between audit.max_value_bytes (2048) and its default (4096): kept whole by default.
AUDITED_TEXT = "y" * 3000


@dataclass
class Audited:
    bridge: Bridge
    old_rows: int

    def rows(self, agent: str) -> list[dict[str, Any]]:
        conn = sqlite3.connect(self.bridge.state / "bridge.db")
        conn.row_factory = sqlite3.Row
        try:
            found = conn.execute(
                "SELECT * FROM audit_log WHERE agent_id = ? ORDER BY id", (agent,)
            ).fetchall()
        finally:
            conn.close()
        return [dict(r) for r in found]


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Audited]:
    tmp = tmp_path_factory.mktemp("audited")
    (tmp / "cfg_audit_tools.py").write_text(AUDIT_TOOLS_PY)
    (tmp / "tools.yaml").write_text(
        yaml.safe_dump(
            {"tools": [{"source": f"file:{tmp / 'cfg_audit_tools.py'}", "entry": "cfg_echo_len"}]}
        )
    )
    bridge = Bridge(
        {
            "state_dir": str(tmp / "state"),
            "tools_manifest": str(tmp / "tools.yaml"),
            "api": {"port": 0},
            # Rows are kept three seconds; the reserve is more free disk than any disk here has.
            "audit": {
                "max_value_bytes": 2048,
                "retention_days": 3 / 86_400,
                "disk_reserve_mb": 1_048_576,
            },
            "matter": {"enabled": False},
        },
        tmp / "work",
    )
    try:
        bridge.start()
        token = bridge.token(agent="before-restart")
        for _ in range(3):
            status, _ = http(
                "POST",
                f"{bridge.url}/v1/invoke",
                {"tool": "core:cfg_echo_len", "params": {"text": "a"}},
                token,
            )
            assert status == 200
        bridge.stop()
        audited = Audited(bridge, 0)
        audited.old_rows = len(audited.rows("before-restart"))
        time.sleep(3.5)  # the three rows are now older than the retention
        bridge.start()  # the retention is applied at start, then hourly
        yield audited
    finally:
        bridge.stop()
        assert "Traceback" not in bridge.stderr()


@effect_of("audit.retention_days")
def test_audit_retention_days_deletes_older_rows(audited: Audited) -> None:
    assert audited.old_rows == 3  # written before the restart
    wait_until(lambda: not audited.rows("before-restart"), 20, "rows past the retention to go")


@effect_of("audit.max_value_bytes")
def test_audit_max_value_bytes_keeps_a_head_and_hash_of_longer_values(audited: Audited) -> None:
    token = audited.bridge.token(agent="long-value")
    status, body = http(
        "POST",
        f"{audited.bridge.url}/v1/invoke",
        {"tool": "core:cfg_echo_len", "params": {"text": AUDITED_TEXT}},
        token,
    )
    assert (status, body["result"]) == (200, {"length": 3000})
    wait_until(lambda: audited.rows("long-value"), 20, "the call's audit row")
    (row,) = audited.rows("long-value")
    sent = ('{"text": "' + AUDITED_TEXT + '"}').encode()  # 3,012 bytes: over 2,048
    assert json.loads(row["params_json"]) == {
        "truncated": True,
        "bytes": 3012,
        "sha256": hashlib.sha256(sent).hexdigest(),
        "head": sent[:1024].decode(),  # half the configured 2,048 bytes
    }


@effect_of("audit.disk_reserve_mb")
def test_audit_disk_reserve_mb_refuses_stored_data_and_audits_the_refusal(
    audited: Audited,
) -> None:
    token = audited.bridge.token(agent="store-writer")
    status, body = http(
        "POST",
        f"{audited.bridge.url}/v1/invoke",
        {"tool": "core:store_data", "params": {"key": "k", "value": 1}},
        token,
    )
    assert (status, body["error"]["code"], body["error"]["details"]["reason"]) == (
        507,
        "STORAGE_FULL",
        "disk_reserve",
    )
    wait_until(lambda: audited.rows("store-writer"), 20, "the refusal's audit row")
    (row,) = audited.rows("store-writer")
    assert (row["tool"], row["error_code"]) == ("core:store_data@1.0.0", "STORAGE_FULL")


# -- the Matter keys: a managed controller in a private namespace, an external one --------


def descendants(pid: int) -> list[int]:
    """Return every process below ``pid``."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                found += [int(child), *descendants(int(child))]
    return found


def cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


@dataclass
class Managed:
    bridge: Bridge
    server_pid: int
    venv: Path
    port: int
    namespace: str


@pytest.fixture(scope="module")
def managed(tmp_path_factory: pytest.TempPathFactory, fabric: Any) -> Iterator[Managed]:
    tmp = tmp_path_factory.mktemp("managed")
    venv = tmp / "controller-venv"
    venv.symlink_to((REPO / ".venv-controller").resolve())
    port = free_port()
    bridge = Bridge(
        {
            "state_dir": str(tmp / "state"),
            "api": {"port": 0},
            "matter": {
                "netns": fabric.namespace.name,
                "controller_port": port,
                "controller_venv": str(venv),
            },
        },
        tmp / "work",
    )
    try:
        bridge.start()
        assert bridge.popen is not None
        # The venv's interpreter runs the launcher that guards the server's API.
        servers = [
            p
            for p in descendants(bridge.popen.pid)
            if f"{venv}/bin/python" in cmdline(p)
            and any(a.endswith("/matter/controller/guard.py") for a in cmdline(p))
        ]
        assert len(servers) == 1, [cmdline(p) for p in descendants(bridge.popen.pid)]
        yield Managed(bridge, servers[0], venv, port, fabric.namespace.name)
    finally:
        bridge.stop()
        assert "Traceback" not in bridge.stderr()


@pytest.mark.fabric
@effect_of("matter.controller_venv")
def test_matter_controller_venv_runs_the_server_from_that_venv(managed: Managed) -> None:
    argv = cmdline(managed.server_pid)
    assert str(managed.venv / "bin" / "python") in argv
    assert (managed.bridge.state / "controller").is_dir()


@pytest.mark.fabric
@effect_of("matter.controller_port")
def test_matter_controller_port_is_the_controller_port(managed: Managed) -> None:
    argv = cmdline(managed.server_pid)
    assert argv[argv.index("--port") + 1] == str(managed.port)
    token = managed.bridge.token()
    status, body = http("GET", f"{managed.bridge.url}/v1/devices", token=token)
    assert status == 200, body
    controller = body["controller"]
    assert (controller["managed"], controller["connected"]) == (True, True)
    assert controller["url"].endswith(f":{managed.port}/ws")
    assert controller["pid"] == managed.server_pid


@pytest.mark.fabric
@effect_of("matter.netns")
def test_matter_netns_puts_the_controller_in_that_namespace(managed: Managed) -> None:
    inside = os.stat(f"/proc/{managed.server_pid}/ns/net").st_ino
    assert inside == os.stat(f"/run/netns/{managed.namespace}").st_ino
    assert inside != os.stat("/proc/self/ns/net").st_ino


def test_matter_netns_that_does_not_exist_is_refused_with_the_key(tmp_path: Path) -> None:
    bridge = Bridge(
        {
            "state_dir": str(tmp_path / "state"),
            "api": {"port": 0},
            "matter": {"netns": f"atm-none-{os.getpid()}"},
        },
        tmp_path,
    )
    bridge.start(wait_listening=False)
    assert bridge.popen is not None
    assert bridge.popen.wait(timeout=60) == 1
    err = bridge.stderr()
    assert f"error [CONFIG_INVALID]: matter.netns names 'atm-none-{os.getpid()}'" in err, err
    assert "Traceback" not in err
    bridge.stop()


async def _ws_status(url: str, headers: dict[str, str]) -> int:
    """Return the status of a WebSocket handshake with ``url`` (101 when it opens)."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as err:
            return err.status


@pytest.mark.fabric
@effect_of("matter.controller_url", "matter.controller_key_file")
def test_matter_controller_url_with_controller_key_file_connects_there_alone(
    tmp_path: Path, matter_controller: Any
) -> None:
    # The controller (guarded, like every managed one) refuses a client without its key.
    assert asyncio.run(_ws_status(matter_controller.url, {})) == 403
    assert asyncio.run(_ws_status(matter_controller.url, matter_controller.headers)) == 101
    bridge = Bridge(
        {
            "state_dir": str(tmp_path / "state"),
            "api": {"port": 0},
            "matter": {
                "controller_url": matter_controller.url,
                "controller_key_file": matter_controller.key_file,
            },
        },
        tmp_path,
    )
    try:
        bridge.start()
        status, body = http("GET", f"{bridge.url}/v1/devices", token=bridge.token())
        assert status == 200, body
        controller = body["controller"]
        # (Besides these, the node recovery's counters: no managed controller's fields.)
        assert {k: v for k, v in controller.items() if k != "recovery"} == {
            "url": matter_controller.url,
            "managed": False,
            "connected": True,
        }
        assert bridge.children() == []
        assert not (bridge.state / "controller").exists()
    finally:
        bridge.stop()


@effect_of("matter.temperature_unit")
def test_matter_temperature_unit_is_the_unit_of_generated_tools(tmp_path: Path) -> None:
    dump = REPO / "tests/fixtures/nodes/matterjs-commissioned/node-4-thermostat.json"
    config = tmp_path / "config.yaml"
    config.write_text("matter: {temperature_unit: F}\n")
    done = subprocess.run(
        [str(BIN), "--config", str(config), "generate", "--json", "--node-dump", str(dump)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=tmp_path,
    )
    tools = {t["definition"]["name"]: t["definition"] for t in json.loads(done.stdout)["tools"]}
    (set_temperature,) = [d for n, d in tools.items() if n.endswith("_set_temperature")]
    # The device's limits, 7-32 °C, in °F.
    assert set_temperature["parameters"]["properties"] == {
        "fahrenheit": {
            "type": "number",
            "minimum": 44.6,
            "maximum": 89.6,
            "description": "Target temperature in °F (44.6-89.6).",
        }
    }


@pytest.mark.fabric
@effect_of("voice.units")
def test_voice_units_is_the_unit_spoken_temperatures_are_in(tmp_path: Path, fabric: Any) -> None:
    import asyncio

    import aiohttp

    from tests.support.fabric import running_controller

    async def import_node(url: str, headers: dict[str, str], doc: dict[str, Any]) -> None:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(url, headers=headers) as ws,
        ):
            await ws.receive_json()  # server info
            await ws.send_json(
                {
                    "message_id": "1",
                    "command": "import_test_node",
                    "args": {"dump": json.dumps({"data": {"server": {"nodes": [doc]}}})},
                }
            )
            while (msg := await ws.receive_json()).get("message_id") != "1":
                pass
            assert "error_code" not in msg, msg

    # The recorded thermostat displays Celsius (TemperatureDisplayMode 0) and its tools
    # take Celsius (matter.temperature_unit C): only voice.units makes "72" Fahrenheit.
    dump = REPO / "tests/fixtures/nodes/matterjs-commissioned/node-4-thermostat.json"
    with running_controller(fabric, "config-voice-units") as ctl:
        asyncio.run(import_node(ctl.url, ctl.headers, json.loads(dump.read_text())))
        bridge = Bridge(
            {
                "state_dir": str(tmp_path / "state"),
                "api": {"port": 0},
                "matter": {"controller_url": ctl.url, "controller_key_file": ctl.key_file},
                "voice": {"units": "imperial"},
            },
            tmp_path,
        )
        try:
            bridge.start()
            token = bridge.token()
            found: list[Any] = []

            def thermostat() -> bool:
                _, body = http("GET", f"{bridge.url}/v1/devices", token=token)
                found[:] = [d for d in body.get("devices", []) if d["kind"] == "thermostat"]
                return bool(found)

            wait_until(thermostat, 30, "the thermostat")
            status, body = http(
                "PATCH",
                f"{bridge.url}/v1/devices/{found[0]['id']}",
                {"name": "Hall Thermostat"},
                token=token,
            )
            assert status == 200, body
            status, body = http(
                "POST",
                f"{bridge.url}/v1/intents/handle",
                {"text": "set the hall thermostat to 72 degrees"},
                token=token,
            )
            assert status == 200, body
            # 72 °F = (72 - 32) x 5/9 = 22.2 °C; spoken back as said
            assert body["calls"][0]["params"] == {"celsius": 22.2}, body
            assert body["speech"] == "Set Hall Thermostat to 72 degrees."
        finally:
            bridge.stop()


@pytest.mark.fabric
@effect_of(
    "voice.floors",
    "voice.floors[].name",
    "voice.floors[].level",
    "voice.floors[].aliases",
    "voice.floors[].rooms",
)
def test_voice_floors_are_the_floors_spoken_commands_know(tmp_path: Path, fabric: Any) -> None:
    import asyncio

    import aiohttp

    from tests.support.fabric import running_controller

    async def import_node(url: str, headers: dict[str, str], doc: dict[str, Any]) -> None:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(url, headers=headers) as ws,
        ):
            await ws.receive_json()  # server info
            await ws.send_json(
                {
                    "message_id": "1",
                    "command": "import_test_node",
                    "args": {"dump": json.dumps({"data": {"server": {"nodes": [doc]}}})},
                }
            )
            while (msg := await ws.receive_json()).get("message_id") != "1":
                pass
            assert "error_code" not in msg, msg

    dump = REPO / "tests/fixtures/nodes/matterjs-commissioned/node-1-onoff.json"
    floors = [
        {"name": "Top Floor", "level": 1, "aliases": ["the attic"], "rooms": ["bedroom"]},
        {"name": "Ground Floor", "level": 0, "rooms": ["Kitchen"]},
    ]
    with running_controller(fabric, "config-voice-floors") as ctl:
        asyncio.run(import_node(ctl.url, ctl.headers, json.loads(dump.read_text())))
        bridge = Bridge(
            {
                "state_dir": str(tmp_path / "state"),
                "api": {"port": 0},
                "matter": {"controller_url": ctl.url, "controller_key_file": ctl.key_file},
                "voice": {"floors": floors},
            },
            tmp_path,
        )
        try:
            bridge.start()
            token = bridge.token()
            found: list[Any] = []

            def light() -> bool:
                _, body = http("GET", f"{bridge.url}/v1/devices", token=token)
                found[:] = [d for d in body.get("devices", []) if d["kind"] == "light"]
                return bool(found)

            wait_until(light, 30, "the light")
            # rooms: matched by name regardless of case ("bedroom" names the room "Bedroom")
            status, body = http(
                "PATCH",
                f"{bridge.url}/v1/devices/{found[0]['id']}",
                {"name": "Bed Light", "room": "Bedroom"},
                token=token,
            )
            assert status == 200, body

            def said(text: str) -> dict[str, Any]:
                status, body = http(
                    "POST", f"{bridge.url}/v1/intents/handle", {"text": text}, token=token
                )
                assert status == 200, body
                return dict(body)

            # name, alias and level ("upstairs": the one floor above level 0) reach the
            # floor's room; the other floor has no light: nothing is done there.
            for text in (
                "turn off the lights on the top floor",
                "turn off the lights in the attic",
                "turn off the lights upstairs",
            ):
                body = said(text)
                tools = [c["tool"] for c in body["calls"]]
                assert tools == ["matter:room_bedroom_lights_off"], body
                assert body["speech"] == "Turned off the lights on Top Floor."
            body = said("turn off the lights downstairs")
            assert (body["calls"], body["handled"]) == ([], False), body

            # The configured floors seed the home model: changed through the API, they
            # stay changed across a restart on the same file ...
            status, body = http(
                "PATCH", f"{bridge.url}/v1/rooms/bedroom", {"floor": "Ground Floor"}, token=token
            )
            assert (status, body["floor"]) == (200, "Ground Floor"), body
            status, body = http(
                "PATCH", f"{bridge.url}/v1/floors/top_floor", {"aliases": ["the loft"]}, token=token
            )
            assert (status, body["aliases"]) == (200, ["the loft"]), body
            bridge.stop()
            bridge.start()
            token = bridge.token()
            wait_until(light, 30, "the light after the restart")

            def floors() -> list[tuple[str, list[str], list[str]]]:
                status, body = http("GET", f"{bridge.url}/v1/floors", token=token)
                assert status == 200, body
                return [
                    (f["floor"], f["aliases"], [r["room"] for r in f["rooms"]])
                    for f in body["floors"]
                ]

            assert floors() == [
                ("Top Floor", ["the loft"], []),
                ("Ground Floor", [], ["Bedroom"]),
            ]
            body = said("turn off the lights downstairs")
            assert [c["tool"] for c in body["calls"]] == ["matter:room_bedroom_lights_off"], body
            # ... until the entry is edited in the file: then it is applied again.
            floors_now = [
                {"name": "Top Floor", "level": 1, "aliases": ["the garret"], "rooms": ["bedroom"]},
                {"name": "Ground Floor", "level": 0, "rooms": ["Kitchen"]},
            ]
            bridge.stop()
            bridge.config["voice"] = {"floors": floors_now}
            bridge.start()
            token = bridge.token()
            wait_until(light, 30, "the light after the second restart")
            assert floors() == [
                ("Top Floor", ["the garret"], ["Bedroom"]),
                ("Ground Floor", [], []),
            ]
            body = said("turn off the lights in the garret")
            assert [c["tool"] for c in body["calls"]] == ["matter:room_bedroom_lights_off"], body
        finally:
            bridge.stop()


# -- the doctor and Thread keys: `atmosphere-bridge doctor --json` over a prepared tree --


@contextlib.contextmanager
def border_router_in_thread(state: Any) -> Iterator[str]:
    """Serve the border-router stand-in (no Thread radio here) from a background loop."""
    import asyncio

    from tests.appliance.otbr_standin import border_router_standin

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    serving = border_router_standin(state)
    try:
        yield asyncio.run_coroutine_threadsafe(serving.__aenter__(), loop).result(30)
    finally:
        asyncio.run_coroutine_threadsafe(serving.__aexit__(None, None, None), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


OTHER_DATASET_HEX = "0e080000000000010000000300000f"


@dataclass
class Doctor:
    reports: dict[str, dict[str, Any]]
    controller_url: str
    standin_requests: list[str]

    def check(self, run: str, name: str) -> dict[str, Any]:
        (check,) = [c for c in self.reports[run]["checks"] if c["name"] == name]
        return check


@pytest.fixture(scope="module")
def doctor(tmp_path_factory: pytest.TempPathFactory) -> Doctor:
    from tests.appliance.otbr_standin import BorderRouterState
    from tests.appliance.trees import HostTree, healthy_pi

    tmp = tmp_path_factory.mktemp("doctor")
    tree = HostTree(tmp / "root")
    healthy_pi(tree, interface="lan7")
    tree.link("lan8", flags=0x1)  # up, without multicast
    tree.passwd(**{"atmosphere-bridge": 999, "ctl-user": 4242})
    storage = tree.root / "srv/ctl-store"
    storage.mkdir(parents=True)
    storage.chmod(0o700)
    os.chown(storage, 4242, 4242)
    # A controller that accepts the connection and never answers.
    silent = socket.create_server(("127.0.0.1", 0))
    controller_url = f"ws://127.0.0.1:{silent.getsockname()[1]}/ws"
    state = BorderRouterState()
    reports: dict[str, dict[str, Any]] = {}
    with silent, border_router_in_thread(state) as otbr_url:
        runs = {
            "a": {
                "doctor": {
                    "root": str(tree.root),
                    "controller_storage": "/srv/ctl-store",
                    "controller_user": "ctl-user",
                    "free_disk_warn_mb": 10**9,
                    "free_disk_fail_mb": 0,
                    "timeout_s": 1,
                },
                "thread": {"otbr_url": otbr_url, "dataset_hex": OTHER_DATASET_HEX},
            },
            "b": {
                "doctor": {
                    "root": str(tree.root),
                    "interface": "lan8",
                    "free_disk_warn_mb": 10**9,
                    "free_disk_fail_mb": 10**9,
                    "timeout_s": 1,
                }
            },
        }
        for name, config in runs.items():
            path = tmp / f"{name}.yaml"
            path.write_text(
                yaml.safe_dump(
                    {
                        "state_dir": "/var/lib/atmosphere-bridge",
                        "matter": {"controller_url": controller_url},
                        **config,
                    }
                )
            )
            done = subprocess.run(
                [str(BIN), "--config", str(path), "doctor", "--json"],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=tmp,
                check=False,
            )
            assert done.returncode == 1, done.stderr
            assert "Traceback" not in done.stderr
            reports[name] = json.loads(done.stdout)
    return Doctor(reports, controller_url, state.requests)


@effect_of("doctor.root")
def test_doctor_root_is_the_tree_read(doctor: Doctor) -> None:
    # lan7 exists only in the prepared tree, as its default route's interface.
    check = doctor.check("a", "interface")
    assert (check["status"], check["found"].split(" ")[0]) == ("ok", "lan7")


@effect_of("doctor.interface")
def test_doctor_interface_is_the_interface_checked(doctor: Doctor) -> None:
    check = doctor.check("b", "interface")
    assert (check["status"], check["found"].split(" ")[0]) == ("fail", "lan8")
    assert "enable multicast" in check["fix"]


@effect_of("doctor.controller_storage", "doctor.controller_user")
def test_doctor_controller_storage_is_checked_for_the_controller_user(doctor: Doctor) -> None:
    check = doctor.check("a", "controller_storage")
    assert check["status"] == "ok"
    assert check["found"] == "/srv/ctl-store: owner uid 4242, mode 0700; ctl-user is uid 4242"
    # Run b keeps the defaults: /data does not exist in the tree.
    assert doctor.check("b", "controller_storage")["found"] == "/data does not exist"


@effect_of("doctor.free_disk_warn_mb")
def test_doctor_free_disk_warn_mb_warns_below_it(doctor: Doctor) -> None:
    assert doctor.check("a", "free_disk")["status"] == "warn"


@effect_of("doctor.free_disk_fail_mb")
def test_doctor_free_disk_fail_mb_fails_below_it(doctor: Doctor) -> None:
    assert doctor.check("b", "free_disk")["status"] == "fail"


@effect_of("doctor.timeout_s")
def test_doctor_timeout_s_bounds_each_network_check(doctor: Doctor) -> None:
    check = doctor.check("a", "controller")
    assert check["status"] == "fail"
    assert check["found"] == f"{doctor.controller_url} did not answer within 1 s"


@effect_of("thread.otbr_url")
def test_thread_otbr_url_is_the_border_router_read(doctor: Doctor) -> None:
    assert doctor.check("a", "border_router")["status"] == "ok"
    assert doctor.standin_requests, "the stand-in border router was never asked"
    assert doctor.check("b", "border_router")["status"] == "warn"


@effect_of("thread.dataset_hex")
def test_thread_dataset_hex_is_compared_with_the_active_dataset(doctor: Doctor) -> None:
    check = doctor.check("a", "thread_dataset")
    assert check["status"] == "warn"
    assert check["found"].endswith("; differs from thread.dataset_hex in the configuration")


# -- mcp_servers: a stdio and a streamable-HTTP server of the SDK, started by the bridge --

PROBE_SERVER = '''
"""An MCP server for the configuration tests: stdio, or streamable HTTP behind a bearer check."""

import asyncio
import json
import math
import os
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="probe")


@server.tool(description="Return the server's arguments and $PROBE_MODE.")
def whoami() -> str:
    return json.dumps({"args": sys.argv[1:], "mode": os.environ.get("PROBE_MODE")})


@server.tool(description="Sleep for the given seconds, then answer.")
async def nap(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "rested"


def guarded(app, expected, log_path):
    async def serve(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        auth = dict(scope["headers"]).get(b"authorization", b"").decode()
        body = []

        async def logged():
            message = await receive()
            body.append(message.get("body", b""))
            return message

        if auth != f"Bearer {expected}":
            with open(log_path, "a") as log:
                log.write(json.dumps({"auth": auth, "refused": True}) + "\\n")
            await send({"type": "http.response.start", "status": 401, "headers": []})
            return await send({"type": "http.response.body", "body": b""})
        await app(scope, logged, send)
        with open(log_path, "a") as log:
            log.write(json.dumps({"auth": auth, "body": b"".join(body).decode()}) + "\\n")
    return serve


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        import uvicorn

        port, token_file, log_path = int(sys.argv[2]), sys.argv[3], sys.argv[4]
        expected = open(token_file).read().strip()
        uvicorn.run(guarded(server.streamable_http_app(), expected, log_path),
                    host="127.0.0.1", port=port, log_level="warning")
'''
MCP_TOKEN = "config-test-mcp-token"


@dataclass
class Mcp:
    bridge: Bridge
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def call(
        self, tool: str, params: dict[str, Any], permissions: tuple[str, ...]
    ) -> tuple[int, Any]:
        token = self.bridge.token(permissions)
        return http("POST", f"{self.bridge.url}/v1/invoke", {"tool": tool, "params": params}, token)


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    tmp = tmp_path_factory.mktemp("mcp")
    script = tmp / "probe_server.py"
    script.write_text(PROBE_SERVER)
    token_file = tmp / "web.token"
    token_file.write_text(MCP_TOKEN + "\n")
    token_file.chmod(0o600)
    (tmp / "wrong.token").write_text("not-the-token\n")
    (tmp / "wrong.token").chmod(0o600)
    log = tmp / "web-requests.log"
    port = free_port()
    web = subprocess.Popen(
        [sys.executable, str(script), "http", str(port), str(token_file), str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    bridge = Bridge(
        {
            "state_dir": str(tmp / "state"),
            "api": {"port": 0},
            "matter": {"enabled": False},
            "mcp_servers": [
                {
                    "name": "probe",
                    "command": sys.executable,
                    "args": [str(script), "stdio", "marker-arg"],
                    "env": {"PROBE_MODE": "from-config"},
                    "permissions": ["probe:use"],
                },
                {
                    "name": "web",
                    "url": f"http://127.0.0.1:{port}/mcp",
                    "token_file": str(token_file),
                    "timeout_s": 1,
                    "refresh_s": 0.3,
                },
                {
                    "name": "intruder",
                    "url": f"http://127.0.0.1:{port}/mcp",
                    "token_file": str(tmp / "wrong.token"),
                },
            ],
        },
        tmp / "work",
    )
    try:
        wait_until(
            lambda: socket.create_connection(("127.0.0.1", port), 1).close() is None,
            30,
            "the HTTP MCP server",
        )
        bridge.start()
        running = Mcp(bridge, log)
        wait_until(
            lambda: all(
                http("GET", f"{bridge.url}/healthz")[1]["mcp_servers"][name]["connected"]
                for name in ("probe", "web")
            ),
            60,
            "both MCP servers to connect",
        )
        yield running
    finally:
        bridge.stop()
        web.terminate()
        web.wait(10)


@effect_of("mcp_servers", "mcp_servers[].name")
def test_mcp_servers_entries_are_connected_and_named(mcp: Mcp) -> None:
    status, health = http("GET", f"{mcp.bridge.url}/healthz")
    assert status == 200
    assert set(health["mcp_servers"]) == {"probe", "web", "intruder"}
    status, body = http(
        "GET", f"{mcp.bridge.url}/v1/tools?namespace=mcp&view=flat", token=mcp.bridge.token()
    )
    assert status == 200, body
    assert sorted(t["name"] for t in body["tools"]) == [
        "mcp:probe_nap",
        "mcp:probe_whoami",
        "mcp:web_nap",
        "mcp:web_whoami",
    ]
    assert {t["serverName"] for t in body["tools"]} == {"probe", "web"}


@effect_of("mcp_servers[].command", "mcp_servers[].args", "mcp_servers[].env")
def test_mcp_servers_command_args_and_env_start_the_stdio_server(mcp: Mcp) -> None:
    status, body = mcp.call("mcp:probe_whoami", {}, ("mcp:call:probe", "probe:use"))
    assert status == 200, body
    assert json.loads(body["result"]["result"]) == {
        "args": ["stdio", "marker-arg"],
        "mode": "from-config",
    }


@effect_of("mcp_servers[].permissions")
def test_mcp_servers_permissions_are_needed_besides_the_call_permission(mcp: Mcp) -> None:
    status, body = mcp.call("mcp:probe_whoami", {}, ("mcp:call:probe",))
    # A tool the token may not call answers exactly like an unknown one (issue 26's one
    # visibility rule: no 403/404 oracle); with the listed permission it runs (above).
    assert (status, body["error"]["code"]) == (404, "TOOL_NOT_FOUND")
    # The web entry lists none: its call permission is enough.
    status, body = mcp.call("mcp:web_whoami", {}, ("mcp:call:web",))
    assert status == 200, body


@effect_of("mcp_servers[].url", "mcp_servers[].token_file")
def test_mcp_servers_url_is_reached_with_the_token_file(mcp: Mcp) -> None:
    status, body = mcp.call("mcp:web_whoami", {}, ("mcp:call:web",))
    assert status == 200, body
    assert json.loads(body["result"]["result"])["args"][0] == "http"
    served = [r for r in mcp.requests() if not r.get("refused")]
    assert served
    assert {r["auth"] for r in served} == {f"Bearer {MCP_TOKEN}"}
    # The entry with another token file is refused by the server and serves no tools.
    assert any(r["auth"] == "Bearer not-the-token" for r in mcp.requests() if r.get("refused"))
    health = http("GET", f"{mcp.bridge.url}/healthz")[1]
    assert health["mcp_servers"]["intruder"]["connected"] is False


@effect_of("mcp_servers[].timeout_s")
def test_mcp_servers_timeout_s_bounds_a_call(mcp: Mcp) -> None:
    started = time.monotonic()
    status, body = mcp.call("mcp:web_nap", {"seconds": 8}, ("mcp:call:web",))
    # 1 s configured: the default (30 s) would have let the 8 s nap answer.
    assert time.monotonic() - started < 8
    assert (status, body["error"]["code"]) == (504, "TIMEOUT"), body
    status, body = mcp.call("mcp:web_nap", {"seconds": 0.1}, ("mcp:call:web",))
    assert (status, body["result"]) == (200, {"result": "rested"})


@effect_of("mcp_servers[].refresh_s")
def test_mcp_servers_refresh_s_is_how_often_the_list_is_read(mcp: Mcp) -> None:
    def lists() -> int:
        return sum('"tools/list"' in r.get("body", "") for r in mcp.requests())

    before = lists()
    time.sleep(3)
    # Every 0.3 s configured: about 10 reads in 3 s (the default 5 s: at most one).
    assert lists() - before >= 4


# -- the mesh keys: three nodes and three recording peers in a private namespace ---------
# mDNS needs multicast, which loopback lacks, and must not reach the real network: the
# nodes run in a namespace with lo and a veth pair va (10.232.0.1) / vb (10.232.0.2).


class Netns:
    """A private network namespace and a worker thread that lives inside it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pool: Any = None

    def create(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)
        for cmd in (
            ["netns", "add", self.name],
            ["-n", self.name, "link", "set", "lo", "up"],
            ["-n", self.name, "link", "add", "va", "type", "veth", "peer", "name", "vb"],
            ["-n", self.name, "addr", "add", "10.232.0.1/24", "dev", "va"],
            ["-n", self.name, "addr", "add", "10.232.0.2/24", "dev", "vb"],
            ["-n", self.name, "link", "set", "va", "up"],
            ["-n", self.name, "link", "set", "vb", "up"],
        ):
            subprocess.run(["ip", *cmd], check=True, capture_output=True)

        def enter() -> None:
            fd = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
            try:
                os.setns(fd, os.CLONE_NEWNET)
            finally:
                os.close(fd)

        self.pool = ThreadPoolExecutor(max_workers=1, initializer=enter)

    def run(self, fn: Callable[[], Any]) -> Any:
        return self.pool.submit(fn).result(timeout=60)

    def delete(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)


@dataclass
class Recorder:
    """A mesh peer that only records: it proves its own key and logs what a sends it.

    It answers ``/v1/mesh/hello`` with a real proof of its key (a trusts tofu, so the
    address is proven and a gossips to it), opens each envelope with a real verifier
    that trusts a's key only, logs the envelope's kind, and answers 503 OVERLOADED as a
    signed ``mesh_answer``: it keeps no announcements, so "in sync" would be a lie, and a
    signed refusal is an answer from the proven peer (a keeps the proof; an unsigned one
    would make a prove the address again before every round).
    """

    server: ThreadingHTTPServer
    name: str
    identity: Any

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"


def start_recorder(
    ns: Netns, name: str, log: list[tuple[str, float, str]], key_path: Path, trusted: str
) -> Recorder:
    from bridge.mesh.envelope import EnvelopeVerifier, seal_answer
    from bridge.mesh.node_id import NodeIdentity
    from bridge.mesh.proof import prove
    from bridge.mesh.trust import TrustPolicy

    identity = NodeIdentity.from_key(NodeKey.create(key_path), f"cfg-{name}")
    verifier = EnvelopeVerifier(
        identity.node_id, TrustPolicy("allowlist", (trusted,), identity.public_key_b64)
    )
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            doc = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            if self.path == "/v1/mesh/hello":
                log.append((name, time.monotonic(), "hello"))
                self.answer(200, prove(identity, doc))
                return
            try:
                with lock:
                    sender, _body = verifier.open(doc, str(doc.get("kind")))
            except BridgeError as err:
                log.append((name, time.monotonic(), f"refused {err.code}"))
                self.answer(err.http_status, {"error": err.to_json()})
                return
            log.append((name, time.monotonic(), str(doc["kind"])))
            error = {"code": "OVERLOADED", "message": "a recorder keeps no announcements"}
            self.answer(
                503,
                seal_answer(
                    identity,
                    to=sender.node_id,
                    nonce=sender.nonce,
                    status=503,
                    body={"error": error},
                ),
            )

        def answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ns.run(lambda: ThreadingHTTPServer(("10.232.0.2", 0), Handler))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return Recorder(server, name, identity)


def mdns_sockets(pid: int) -> int:
    """Return how many of ``pid``'s sockets are bound to UDP port 5353 (mDNS)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    count = 0
    for table in ("udp", "udp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            cols = line.split()
            if cols[1].rsplit(":", 1)[1] == "14E9" and cols[9] in inodes:
                count += 1
    return count


@dataclass
class Mesh:
    ns: Netns
    nodes: dict[str, Bridge]
    idents: dict[str, Any]
    keys: dict[str, NodeKey]
    ports: dict[str, int]
    recorders: list[Recorder]
    log: list[tuple[str, float, str]]

    def http(self, node: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        token = issue_token(self.keys[node], agent_id="config-test", permissions=["*"], ttl_s=600)
        url = f"http://{'10.232.0.2' if node == 'c' else '10.232.0.1'}:{self.ports[node]}{path}"
        return self.ns.run(lambda: http(method, url, body, token, timeout_s=20))  # type: ignore[no-any-return]

    def peers(self, node: str) -> dict[str, dict[str, Any]]:
        status, body = self.http(node, "GET", "/v1/mesh/peers")
        assert status == 200, body
        return {p["node_id"]: p for p in body["peers"]} | {"self": body["self"]}


MESH_TTL_S = 4.0


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    from bridge.mesh.node_id import NodeIdentity

    if os.geteuid() != 0:
        pytest.fail("the mesh keys need root for a private network namespace")
    tmp = tmp_path_factory.mktemp("mesh")
    ns = Netns(f"atm-cfg-{os.getpid()}")
    keys = {n: NodeKey.create(tmp / n / "state" / KEY_FILE_NAME) for n in ("a", "b", "c")}
    idents = {n: NodeIdentity.from_key(k, f"cfg-{n}") for n, k in keys.items()}
    ports = {n: free_port() for n in keys}
    log: list[tuple[str, float, str]] = []
    ns.create()
    nodes: dict[str, Bridge] = {}
    try:
        recorders = [
            start_recorder(
                ns, f"r{i}", log, tmp / f"r{i}" / KEY_FILE_NAME, idents["a"].public_key_b64
            )
            for i in range(3)
        ]
        configs = {
            "a": {
                "api": {"host": "0.0.0.0", "port": ports["a"]},
                "mesh": {
                    "node_name": "cfg-a",
                    "interfaces": ["va"],
                    "trust": "tofu",
                    "peers": [r.url for r in recorders],
                    "announce_interval_s": 0.5,
                    "announcement_ttl_s": MESH_TTL_S,
                    "gossip_interval_s": 0.3,
                    "gossip_fanout": 5,
                    "max_clock_skew_s": 100,
                },
            },
            "b": {
                "api": {"host": "0.0.0.0", "port": ports["b"]},
                "mesh": {
                    "node_name": "cfg-b",
                    "interfaces": ["vb"],
                    "trust": "allowlist",
                    "trusted_nodes": [idents["a"].node_id],
                },
            },
            "c": {
                "api": {"host": "10.232.0.2", "port": ports["c"]},
                "mesh": {
                    "node_name": "cfg-c",
                    "discovery": False,
                    "trust": "tofu",
                    "peers": [f"http://10.232.0.1:{ports['a']}"],
                },
            },
        }
        for name, config in configs.items():
            config["mesh"]["enabled"] = True
            nodes[name] = Bridge(
                {"state_dir": str(tmp / name / "state"), "matter": {"enabled": False}, **config},
                tmp / name,
                prefix=("ip", "netns", "exec", ns.name),
            )
            nodes[name].start()
        running = Mesh(ns, nodes, idents, keys, ports, recorders, log)
        a, b = idents["a"].node_id, idents["b"].node_id
        wait_until(
            lambda: (
                running.peers("a").get(b, {}).get("announcement") is not None
                and running.peers("b").get(a, {}).get("announcement") is not None
            ),
            30,
            "a and b to find each other by mDNS and exchange announcements",
        )
        wait_until(
            lambda: running.peers("c").get(a, {}).get("announcement") is not None,
            30,
            "c to learn a's announcement from its static peer",
        )
        yield running
    finally:
        for node in nodes.values():
            node.stop()
        ns.delete()
    for name, node in nodes.items():
        assert "Traceback" not in node.stderr(), name


@effect_of("mesh.enabled")
def test_mesh_enabled_runs_the_mesh_node(mesh: Mesh) -> None:
    status, health = mesh.http("a", "GET", "/healthz")
    assert (status, health["components"]["mesh"]) == (200, True)
    assert mesh.peers("a")["self"]["node_id"] == mesh.idents["a"].node_id


@effect_of("mesh.node_name")
def test_mesh_node_name_is_announced(mesh: Mesh) -> None:
    assert mesh.peers("a")["self"]["name"] == "cfg-a"
    assert mesh.peers("b")[mesh.idents["a"].node_id]["name"] == "cfg-a"


@effect_of("mesh.interfaces")
def test_mesh_interfaces_are_the_addresses_announced(mesh: Mesh) -> None:
    # a binds every address of the namespace; it announces only va's (all: lo's and vb's too).
    assert mesh.peers("a")["self"]["endpoints"] == [f"http://10.232.0.1:{mesh.ports['a']}"]
    assert mesh.peers("b")["self"]["endpoints"] == [f"http://10.232.0.2:{mesh.ports['b']}"]


@effect_of("mesh.discovery")
def test_mesh_discovery_finds_peers_by_mdns_or_not_at_all(mesh: Mesh) -> None:
    # a and b list no peer of each other: they found each other by mDNS.
    assert mesh.peers("a")[mesh.idents["b"].node_id]["discovered"] is True
    assert mdns_sockets(mesh.nodes["a"].popen.pid) >= 1  # type: ignore[union-attr]
    # c has discovery off: no mDNS socket, and a never discovers it.
    assert mdns_sockets(mesh.nodes["c"].popen.pid) == 0  # type: ignore[union-attr]
    assert mesh.peers("a").get(mesh.idents["c"].node_id, {}).get("discovered") is not True


@effect_of("mesh.trust")
def test_mesh_trust_tofu_trusts_a_first_seen_key_allowlist_does_not(mesh: Mesh) -> None:
    a_id, c_id = mesh.idents["a"].node_id, mesh.idents["c"].node_id
    # a and c (tofu, nobody listed) took each other's announcements.
    assert mesh.peers("c")[a_id]["trusted"] is True
    assert mesh.peers("a")[c_id]["trusted"] is True
    assert mesh.peers("a")[c_id]["announcement"] is not None
    # b (allowlist: a only) refuses c's announcement, which a gossips on.
    wait_until(
        lambda: mesh.peers("b").get(c_id, {}).get("trusted") is False,
        15,
        "b to see c's announcement and refuse it",
    )
    assert mesh.peers("b")[c_id]["announcement"] is None


@effect_of("mesh.trusted_nodes")
def test_mesh_trusted_nodes_are_accepted(mesh: Mesh) -> None:
    a_view = mesh.peers("b")[mesh.idents["a"].node_id]
    assert (a_view["trusted"], a_view["name"]) == (True, "cfg-a")
    assert a_view["announcement"] is not None


@effect_of("mesh.peers")
def test_mesh_peers_are_contacted_without_discovery(mesh: Mesh) -> None:
    # The recorders do no mDNS: only a's peers list names them.
    assert {name for name, _, kind in mesh.log if kind == "gossip_digest"} == {"r0", "r1", "r2"}
    # a proved each recorder's key before it sent that recorder a digest.
    for recorder in mesh.recorders:
        kinds = [kind for name, _, kind in mesh.log if name == recorder.name]
        assert kinds.index("hello") < kinds.index("gossip_digest"), kinds
    # c (discovery off) reached a through its one static peer.
    assert mesh.peers("c")[mesh.idents["a"].node_id]["name"] == "cfg-a"


def _rounds(log: list[tuple[str, float, str]]) -> list[set[str]]:
    """Group the recorded digests into rounds: a round's requests leave together."""
    rounds: list[set[str]] = []
    last = -1.0
    for name, at, kind in sorted(log, key=lambda e: e[1]):
        if kind != "gossip_digest":
            continue
        if at - last > 0.15:
            rounds.append(set())
        rounds[-1].add(name)
        last = at
    return rounds


@effect_of("mesh.gossip_interval_s")
def test_mesh_gossip_interval_s_is_the_round_period(mesh: Mesh) -> None:
    start = len(mesh.log)
    time.sleep(3)
    # Every 0.3 s configured: about 10 rounds in 3 s (the default, 5 s: at most one).
    assert len(_rounds(mesh.log[start:])) >= 4
    # The recorders' signed answers count: a proves each key at most once in the window
    # (when the 60 s proof runs out), not before every round.
    hellos = [name for name, _, kind in mesh.log[start:] if kind == "hello"]
    assert all(hellos.count(r.name) <= 1 for r in mesh.recorders), hellos


@effect_of("mesh.gossip_fanout")
def test_mesh_gossip_fanout_is_how_many_peers_a_round_reaches(mesh: Mesh) -> None:
    start = len(mesh.log)
    time.sleep(3)
    rounds = _rounds(mesh.log[start:])
    # a's targets: b, c and the three recorders; 5 configured reaches all of them each round
    # (the default, 2, never reaches three recorders in one round).
    assert len(rounds) >= 4
    assert sum(r == {"r0", "r1", "r2"} for r in rounds) >= len(rounds) - 1


@effect_of("mesh.announcement_ttl_s")
def test_mesh_announcement_ttl_s_is_how_long_an_announcement_lives(mesh: Mesh) -> None:
    view = mesh.peers("b")[mesh.idents["a"].node_id]["announcement"]
    assert 0 < view["expires_in_s"] <= MESH_TTL_S
    # b keeps the default (120 s) for its own.
    assert mesh.peers("a")[mesh.idents["b"].node_id]["announcement"]["expires_in_s"] > 10


@effect_of("mesh.announce_interval_s")
def test_mesh_announce_interval_s_is_how_often_a_node_announces(mesh: Mesh) -> None:
    a_id = mesh.idents["a"].node_id
    versions = set()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        versions.add(mesh.peers("b")[a_id]["announcement"]["version"])
        time.sleep(0.2)
    # Every 0.5 s configured: about 6 new versions in 3 s (the default, 30 s: one).
    assert len(versions) >= 3


@effect_of("mesh.max_clock_skew_s")
def test_mesh_max_clock_skew_s_is_the_freshness_window(mesh: Mesh) -> None:
    from bridge.mesh.announce import canonical_bytes
    from bridge.mesh.envelope import seal

    def push(age_s: float) -> int:
        doc = seal(
            mesh.idents["b"],
            to=mesh.idents["a"].node_id,
            kind="gossip_push",
            body={"type": "gossip_push", "announcements": []},
        )
        doc.pop("signature")
        doc["timestamp"] = time.time() - age_s
        doc["signature"] = mesh.idents["b"].sign(canonical_bytes(doc))
        return int(mesh.http("a", "POST", "/v1/mesh/push", doc)[0])

    # 60 s old: inside the configured 100 s (outside the default 30 s); 150 s is not.
    assert push(60) == 200
    assert push(150) == 401


# -- the site road keys (mesh.sites.*): bridges dialling a real nats-server hub ----------


class HubListener:
    """A NATS client with site y's credentials, in its own thread: hears, announces, stalls.

    It records every announcement on ``atmo.ann.*`` (subject, node id), announces the
    signed node ``ident`` (offering ``core:echo@1.0.0``) on ``atmo.ann.y``, and takes the calls
    addressed to site y without ever answering them.
    """

    def __init__(self, url: str, seed: Path, ident: Any, ca: Path | None = None) -> None:
        self.url, self.seed, self.ident, self.ca = url, seed, ident, ca
        self.heard: list[tuple[str, str]] = []
        self.calls: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._task: Any = None

    def start(self) -> None:
        self.thread.start()
        self._task = asyncio.run_coroutine_threadsafe(self._run(), self.loop)

    async def _run(self) -> None:
        import ssl

        import nats

        from bridge.mesh.announce import Announcement, Capability, ToolSummary, parameters_hash
        from tests.mesh.harness import whoami_definition

        tls = ssl.create_default_context(cafile=str(self.ca)) if self.ca else None
        nc = await nats.connect(self.url, nkeys_seed=str(self.seed), tls=tls)

        async def heard(msg: Any) -> None:
            self.heard.append((msg.subject, json.loads(msg.data).get("node_id", "")))

        async def called(msg: Any) -> None:
            self.calls.append(msg.subject)  # and never answered

        await nc.subscribe("atmo.ann.*", cb=heard)
        await nc.subscribe("atmo.call.y.*", cb=called)
        from dataclasses import replace

        echo = whoami_definition("echo", idempotent=False)  # a 30 s tool: the road's 1.5 s wins
        defn = replace(echo, execution=replace(echo.execution, timeout_ms=30_000))
        summary = ToolSummary(
            identity=defn.identity,
            description=defn.description,
            parameters_hash=parameters_hash(dict(defn.parameters)),
            available=True,
            definition=defn.to_json(),
        )
        announcement = Announcement(
            node_id=self.ident.node_id,
            node_name=self.ident.name,
            public_key=self.ident.public_key_b64,
            version=1,
            timestamp=time.time(),
            ttl_s=600,
            endpoints=(),
            capabilities=(Capability(name="core", tools=(summary,)),),
            devices=(),
        ).signed(self.ident)
        doc = json.dumps(announcement.to_json()).encode()
        try:
            while True:
                await nc.publish("atmo.ann.y", doc)
                await asyncio.sleep(0.5)
        finally:
            await nc.close()

    def stop(self) -> None:
        if self._task is not None:
            self.loop.call_soon_threadsafe(self._task.cancel)
        time.sleep(0.2)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@dataclass
class SiteRoad:
    plain: HubListener
    tls: HubListener
    x: Bridge
    z: Bridge
    stranger: Bridge
    ids: dict[str, str]
    admin: str


@pytest.fixture(scope="module")
def site_road(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteRoad]:
    from bridge.mesh.node_id import NodeIdentity, node_id_for
    from bridge.mesh.site_acl import write_seed
    from tests.support.hub import NATS_SERVER, Hub, make_tls

    assert Path(NATS_SERVER).exists(), "nats-server (Debian package) is missing: make install"
    tmp = tmp_path_factory.mktemp("sites")
    ca, cert, key = make_tls(tmp / "tls")
    hubs = [
        Hub(base=tmp / "hub", sites=["x", "y", "z"], port=free_port()),
        Hub(
            base=tmp / "tls-hub",
            sites=["x", "y", "z"],
            port=free_port(),
            tls_cert_file=str(cert),
            tls_key_file=str(key),
        ),
    ]
    y = NodeIdentity.from_key(NodeKey.generate(), "far-y")
    issuer = NodeKey.generate()
    keys = {n: NodeKey.create(tmp / n / "state" / KEY_FILE_NAME) for n in ("x", "z", "w")}
    ids = {n: node_id_for(k.public_key_b64) for n, k in keys.items()} | {"y": y.node_id}
    write_seed(tmp / "unknown.nk")  # a seed the hub never heard of
    listeners: list[HubListener] = []
    bridges: dict[str, Bridge] = {}
    try:
        for hub in hubs:
            hub.base.mkdir()
            hub.configure()
            hub.start()
        listeners = [
            HubListener(hubs[0].url, hubs[0].seed_file("y"), y),
            HubListener(hubs[1].url, hubs[1].seed_file("y"), y, ca=ca),
        ]
        for listener in listeners:
            listener.start()
        sites = {
            "x": {
                "site": "x",
                "hub_urls": [hubs[0].url],
                "credentials_file": str(hubs[0].seed_file("x")),
                "request_timeout_s": 1.5,
            },
            "z": {
                "site": "z",
                "hub_urls": [hubs[1].url],
                "credentials_file": str(hubs[1].seed_file("z")),
                "tls_ca_file": str(ca),
            },
            "w": {
                "site": "x",
                "hub_urls": [hubs[0].url],
                "credentials_file": str(tmp / "unknown.nk"),
            },
        }
        for name, road in sites.items():
            bridges[name] = Bridge(
                {
                    "state_dir": str(tmp / name / "state"),
                    "api": {"host": "127.0.0.1", "port": free_port()},
                    "auth": {"trusted_issuers": [issuer.public_key_b64]},
                    "matter": {"enabled": False},
                    "mesh": {
                        "enabled": True,
                        "node_name": f"site-{name}",
                        "discovery": False,
                        "trusted_nodes": [y.node_id],
                        "announce_interval_s": 0.5,
                        "sites": road,
                    },
                },
                tmp / name,
            ).start()
        admin = issue_token(issuer, agent_id="admin", permissions=["*"], ttl_s=600)
        yield SiteRoad(
            plain=listeners[0],
            tls=listeners[1],
            x=bridges["x"],
            z=bridges["z"],
            stranger=bridges["w"],
            ids=ids,
            admin=admin,
        )
    finally:
        for bridge in bridges.values():
            bridge.stop()
        for listener in listeners:
            listener.stop()
        for hub in hubs:
            hub.stop()


@effect_of("mesh.sites.hub_urls", "mesh.sites.site")
def test_mesh_sites_site_and_hub_urls_put_the_announcement_on_the_hub(
    site_road: SiteRoad,
) -> None:
    wait_until(
        lambda: ("atmo.ann.x", site_road.ids["x"]) in site_road.plain.heard,
        30,
        "x's announcement on its site subject at the hub",
    )


@effect_of("mesh.sites.credentials_file")
def test_mesh_sites_credentials_file_signs_in_to_the_hub(site_road: SiteRoad) -> None:
    wait_until(
        lambda: ("atmo.ann.x", site_road.ids["x"]) in site_road.plain.heard,
        30,
        "x (its seed known to the hub) to be heard",
    )
    # The same site name with a seed the hub does not know: refused at sign-in.
    wait_until(
        lambda: "authorization violation" in site_road.stranger.stderr().lower(),
        30,
        "the stranger to be refused by the hub",
    )
    assert all(node != site_road.ids["w"] for _, node in site_road.plain.heard)


@effect_of("mesh.sites.request_timeout_s")
def test_mesh_sites_request_timeout_s_bounds_the_wait_for_another_site(
    site_road: SiteRoad,
) -> None:
    x = site_road.x

    def holds_echo() -> bool:
        status, body = http("GET", f"{x.url}/v1/tools?namespace=core", token=site_road.admin)
        return status == 200 and any(t["tool"]["name"] == "echo" for t in body["tools"])

    wait_until(holds_echo, 30, "x to hold y's echo tool (announced on the hub)")
    started = time.monotonic()
    status, body = http(
        "POST",
        f"{x.url}/v1/invoke",
        {"tool": "core:echo@1.0.0", "params": {"text": "hi"}},
        token=site_road.admin,
    )
    took = time.monotonic() - started
    assert site_road.plain.calls == [f"atmo.call.y.{site_road.ids['y']}"]
    assert (status, body["error"]["code"]) == (504, "TIMEOUT"), body
    # 1.5 s configured, not the tool's 30 s.
    assert 1.4 <= took < 10.0, took


@effect_of("mesh.sites.tls_ca_file")
def test_mesh_sites_tls_ca_file_trusts_the_hub_s_certificate(site_road: SiteRoad) -> None:
    wait_until(
        lambda: ("atmo.ann.z", site_road.ids["z"]) in site_road.tls.heard,
        30,
        "z's announcement over the TLS hub",
    )
