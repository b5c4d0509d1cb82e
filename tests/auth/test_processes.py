"""Real ``atmosphere-bridge run`` processes: crash safety, private state, mesh-wide revocation.

- SIGKILL during a burst of ``core:store_data`` calls: every call the bridge answered
  200 has its audit row and its stored value; ``PRAGMA integrity_check`` is ``ok``.
- The state directory (db, WAL, SHM, key, api file …), written under a loose umask,
  cannot be read by another local user (``nobody``, via ``setpriv``).
- A token revoked on the node that issued it is refused there at once and, after the
  signed notice has been gossiped, on a peer that trusts that node as issuer.
"""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.mesh.node_id import node_id_for
from tests.support.ports import free_port
from tests.support.processes import stop, wait_until
from tests.support.real import bridge_script_reason, require, root_reason, tools_reason

BRIDGE = Path(sys.executable).parent / "atmosphere-bridge"

pytestmark = pytest.mark.processes


@pytest.fixture(scope="module", autouse=True)
def _real_parts() -> None:
    require(bridge_script_reason())


@dataclass
class Proc:
    name: str
    port: int
    state: Path
    log: Path
    popen: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def http(
    method: str, url: str, body: Any = None, token: str | None = None, timeout: float = 10.0
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def start(proc: Proc, config: dict[str, Any]) -> None:
    path = proc.state.parent / f"{proc.name}.yaml"
    path.write_text(yaml.safe_dump(config))
    with proc.log.open("wb") as log:
        # A loose umask, as a careless shell would have: the bridge must not inherit it.
        proc.popen = subprocess.Popen(
            [str(BRIDGE), "--config", str(path), "run", "--no-matter"],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=proc.state.parent,
            umask=0o022,
        )
    wait_until(
        lambda: http("GET", f"{proc.url}/healthz")[0] == 200,
        30,
        f"{proc.name} to serve /healthz ({proc.log})",
    )


@pytest.fixture
def bridge() -> Iterator[tuple[Proc, NodeKey]]:
    # Under /tmp and world-traversable (pytest's own tmp dirs are 0700), so another user
    # reaches the state directory and only its own modes keep them out.
    base = Path(tempfile.mkdtemp(prefix="atmosphere-state-", dir="/tmp"))
    base.chmod(0o755)
    proc = Proc(name="solo", port=free_port(), state=base / "state", log=base / "solo.log")
    key = NodeKey.create(proc.state / KEY_FILE_NAME)
    try:
        start(
            proc,
            {
                "state_dir": str(proc.state),
                "api": {"host": "127.0.0.1", "port": proc.port},
                "matter": {"enabled": False},
            },
        )
        yield proc, key
    finally:
        stop(proc, grace_s=10.0)
        shutil.rmtree(base, ignore_errors=True)


def test_sigkill_during_a_burst_loses_no_acknowledged_call(
    bridge: tuple[Proc, NodeKey],
) -> None:
    proc, key = bridge
    token = issue_token(key, agent_id="burst", permissions=["*"], ttl_s=600)
    acked: dict[str, str] = {}  # call_id -> key
    failures: list[str] = []  # anything but a 200 before the kill
    lock = threading.Lock()
    killed = threading.Event()
    stop_at = time.monotonic() + 20

    def worker(n: int) -> None:
        i = 0
        while time.monotonic() < stop_at and not killed.is_set():
            i += 1
            name = f"w{n}-{i}"
            try:
                status, body = http(
                    "POST",
                    f"{proc.url}/v1/invoke",
                    {
                        "tool": "core:store_data",
                        "params": {"key": name, "value": {"n": i}},
                    },
                    token,
                    timeout=5,
                )
            except OSError as err:
                if not killed.is_set():
                    with lock:
                        failures.append(f"{name}: {type(err).__name__} {err} before the kill")
                return
            if status != 200:
                if not killed.is_set():
                    with lock:
                        failures.append(f"{name}: {status} {body} before the kill")
                return
            with lock:
                acked[body["call_id"]] = name

    assert proc.popen is not None
    with ThreadPoolExecutor(8) as pool:
        workers = [pool.submit(worker, n) for n in range(8)]
        wait_until(lambda: len(acked) >= 200 or bool(failures), 15, "200 acknowledged calls")
        killed.set()
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(timeout=10)
        proc.popen = None
    for done in workers:
        done.result()  # a worker's own exception fails the test
    assert failures == []
    assert len(acked) >= 200
    conn = sqlite3.connect(proc.state / "bridge.db")
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    audited = dict(
        conn.execute(
            "SELECT call_id, decision || '/' || outcome FROM audit_log "
            "WHERE tool LIKE 'core:store_data%'"
        ).fetchall()
    )
    stored = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM core_data")}
    conn.close()
    missing_rows = [c for c in acked if audited.get(c) != "allowed/completed"]
    missing_values = [k for k in acked.values() if stored.get(k) != {"n": int(k.split("-")[1])}]
    assert (missing_rows, missing_values) == ([], [])


@pytest.mark.namespaces
def test_state_directory_is_private_to_the_service_user(bridge: tuple[Proc, NodeKey]) -> None:
    require(root_reason("acting as another user") or tools_reason("setpriv"))
    proc, key = bridge
    token = issue_token(key, agent_id="a", permissions=["*"], ttl_s=600)
    status, _ = http(
        "POST",
        f"{proc.url}/v1/invoke",
        {"tool": "core:store_data", "params": {"key": "k", "value": 1}},
        token,
    )
    assert status == 200
    names = sorted(p.name for p in proc.state.iterdir())
    assert {"bridge.db", "bridge.db-wal", "bridge.db-shm", KEY_FILE_NAME, "api.json"} <= set(names)
    modes = {
        p.relative_to(proc.state).as_posix(): oct(p.stat().st_mode & 0o777)
        for p in proc.state.rglob("*")
    }
    assert oct(proc.state.stat().st_mode & 0o777) == "0o700"
    assert {m for m in modes.values()} <= {"0o600", "0o700"}, modes
    # As 'nobody': not one file can be opened, the directory not even listed. The
    # control file beside it (0644) proves the probe can read what is readable.
    control = proc.state.parent / "control.txt"
    control.write_text("readable")
    control.chmod(0o644)
    probe = (
        'n=0; for f in "$@"; do cat -- "$f" >/dev/null 2>&1 && n=$((n+1)); done; '
        'ls "$STATE" >/dev/null 2>&1 && n=$((n+1)); echo "$n"'
    )

    def readable(*paths: Path) -> str:
        result = subprocess.run(
            [
                "setpriv",
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "/bin/sh",
                "-c",
                probe,
                "probe",
                *map(str, paths),
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={"STATE": str(proc.state), "PATH": "/usr/bin:/bin"},
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert readable(control) == "1"  # the control file (the directory is not listable)
    files = [p for p in proc.state.rglob("*") if p.is_file()]
    assert len(files) >= 5
    assert readable(*files) == "0"


def test_a_revoked_token_is_refused_here_and_on_a_peer(tmp_path: Path) -> None:
    procs = {
        n: Proc(name=n, port=free_port(), state=tmp_path / n, log=tmp_path / f"{n}.log")
        for n in ("a", "b")
    }
    keys = {n: NodeKey.create(p.state / KEY_FILE_NAME) for n, p in procs.items()}
    ids = {n: node_id_for(k.public_key_b64) for n, k in keys.items()}
    try:
        for name, proc in procs.items():
            other = "b" if name == "a" else "a"
            start(
                proc,
                {
                    "state_dir": str(proc.state),
                    "api": {"host": "127.0.0.1", "port": proc.port},
                    # B accepts tokens A issues, so it must also honour A's revocations.
                    "auth": {"trusted_issuers": [keys["a"].public_key_b64]},
                    "matter": {"enabled": False},
                    "mesh": {
                        "enabled": True,
                        "node_name": name,
                        "discovery": False,
                        "trusted_nodes": [ids[other]],
                        "peers": [procs[other].url],
                        "gossip_interval_s": 0.3,
                        "announce_interval_s": 1.0,
                    },
                },
            )
        a, b = procs["a"], procs["b"]
        admin = issue_token(keys["a"], agent_id="admin", permissions=["*"], ttl_s=600)
        status, issued = http(
            "POST",
            f"{a.url}/v1/tokens",
            {
                "agent_id": "kitchen-tablet",
                "permissions": ["storage:read"],
                "ttl_s": 3600,
            },
            admin,
        )
        assert status == 201, issued
        user = issued.pop("token")
        assert issued["revoked"] is False
        status, listed = http("GET", f"{a.url}/v1/tokens", token=admin)
        assert status == 200
        assert [t for t in listed["tokens"] if t["id"] == issued["id"]] == [issued]
        assert user not in json.dumps(listed)
        call = {"tool": "core:get_data", "params": {"key": "x"}}
        for node in (a, b):
            status, body = http("POST", f"{node.url}/v1/invoke", call, user)
            assert status == 200, body
        status, revoked = http("DELETE", f"{a.url}/v1/tokens/{issued['id']}", token=admin)
        assert (status, revoked) == (200, {**issued, "revoked": True})
        status, body = http("POST", f"{a.url}/v1/invoke", call, user)
        assert (status, body["error"]["details"]["reason"]) == (401, "revoked")

        def refused_on_b() -> bool:
            code, answer = http("POST", f"{b.url}/v1/invoke", call, user)
            return code == 401 and answer["error"]["details"]["reason"] == "revoked"

        wait_until(refused_on_b, 10, "B to refuse the revoked token")
        # B keeps it across a restart (stored with its signed notice).
        stop(b, sig=signal.SIGTERM, grace_s=10.0)
        start(b, yaml.safe_load((tmp_path / "b.yaml").read_text()))
        assert refused_on_b()
        # A revoked token cannot even ask; revoking needs token:manage; a second
        # revocation answers the same entry.
        status, body = http("DELETE", f"{a.url}/v1/tokens/{issued['id']}", token=user)
        assert (status, body["error"]["details"]["reason"]) == (401, "revoked")
        reader = issue_token(keys["a"], agent_id="reader", permissions=["storage:read"], ttl_s=60)
        status, body = http("DELETE", f"{a.url}/v1/tokens/{issued['id']}", token=reader)
        assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
        status, body = http(
            "POST",
            f"{a.url}/v1/tokens",
            {"agent_id": "x", "permissions": ["*"], "ttl_s": 60},
            reader,
        )
        assert (status, body["error"]["code"]) == (403, "PERMISSION_DENIED")
        status, body = http("DELETE", f"{a.url}/v1/tokens/{issued['id']}", token=admin)
        assert (status, body["revoked"]) == (200, True)
        status, body = http("DELETE", f"{a.url}/v1/tokens/{'0' * 32}", token=admin)
        assert (status, body["error"]["code"]) == (404, "NOT_FOUND")
    finally:
        for proc in procs.values():
            stop(proc, grace_s=10.0)


def test_cli_revoke_reaches_the_running_bridge_at_once(bridge: tuple[Proc, NodeKey]) -> None:
    proc, _key = bridge

    def cli(*argv: str) -> str:
        result = subprocess.run(
            [str(BRIDGE), *argv, "--state-dir", str(proc.state)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    raw = cli("token", "issue", "--agent", "tablet", "--perm", "storage:read", "--ttl", "1h")
    raw = raw.strip()
    call = {"tool": "core:get_data", "params": {"key": "x"}}
    assert http("POST", f"{proc.url}/v1/invoke", call, raw)[0] == 200
    [listed] = [json.loads(line) for line in cli("token", "list").splitlines()]
    assert (listed["agent_id"], listed["revoked"]) == ("tablet", False)
    entry = json.loads(cli("token", "revoke", listed["id"]))
    assert entry == {**listed, "revoked": True}
    status, body = http("POST", f"{proc.url}/v1/invoke", call, raw)
    assert (status, body["error"]["details"]["reason"]) == (401, "revoked")
