"""The appliance as a Pi installs it: install.sh with real pip installs, both units started
as systemd would start them, a matter.js light commissioned and switched.

``scripts/install.sh --root R --skip-packages --no-start`` builds the bridge venv (the
project installed from its sources, not editable) and the controller venv with pip, as
on a Pi. The two units are then started from their own staged unit files: ``ExecStart``,
``User``/``Group`` (the uids ``systemd-sysusers`` gave them in ``R/etc/passwd``),
``Environment``/``EnvironmentFile``, ``UMask``, ``StateDirectory`` (created 0700 and
owned by the service user, as systemd does), ``PrivateTmp`` and, for the controller,
``BindPaths`` onto ``/data`` — each process in a private mount namespace of its own —
and the units' hardening as ``tests/appliance/sandbox.py`` applies it without systemd:
``ProtectSystem=strict``, ``ProtectHome``, ``PrivateDevices``, ``LimitNOFILE``,
``NoNewPrivileges`` and, through libseccomp, ``SystemCallFilter``,
``SystemCallErrorNumber``, ``RestrictAddressFamilies`` and ``RestrictNamespaces``. The
test checks those on the running services and with a probe started the same way.
Paths under ``/opt/atmosphere-bridge`` and ``/etc/atmosphere-bridge`` are rewritten to
the staged root, and the staged configuration's ``state_dir`` and controller storage
point into it.

Stand-ins, named as such: the machine's Thread-less LAN is a private network namespace
(the real-fabric harness's) holding the devices, the controller and the bridge; the
system Python a Pi has in ``/usr/bin`` is this machine's pyenv interpreter under
``/root`` (mode 0700 here), made reachable to the service users inside each process's
own mount namespace only (``/root`` is covered by an empty tmpfs there, with the pyenv
tree bound back). Nothing on the host changes.

A person then does what docs/appliance.md says, as the service user: issue a token,
``atmosphere-bridge commission CODE``, ``atmosphere-bridge invoke TOOL`` — and the
light's own report says it is on.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from bridge.demo.virtual_devices import DeviceKind, write_test_paa
from bridge.matter import KEY_HEADER
from tests.appliance import sandbox
from tests.appliance.conftest import INSTALL, PYTHON, REPO
from tests.support.fabric import Fabric, fabric_unavailable_reason, open_fabric
from tests.support.real import require, tools_reason

pytestmark = [pytest.mark.fabric, pytest.mark.processes, pytest.mark.namespaces]

PREFIX = "/opt/atmosphere-bridge"
ETC = "/etc/atmosphere-bridge"
PYENV_ROOT = Path(PYTHON).resolve().parents[2]  # .../versions/X.Y.Z -> .../.pyenv (or prefix)
LIGHT_NAME, LIGHT_ROOM = "Porch Light", "Porch"
LIGHT_TOOL = "matter:porch_light_on"


def unit_fields(path: Path) -> dict[str, list[str]]:
    """Return a unit file's ``Key=value`` lines (continuations joined), values per key."""
    fields: dict[str, list[str]] = {}
    logical = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        key, _, value = logical.partition("=")
        fields.setdefault(key.strip(), []).append(value.strip())
        logical = ""
    return fields


def passwd_ids(root: Path, name: str) -> tuple[int, int]:
    """Return the uid and gid ``systemd-sysusers`` gave ``name`` in the staged root."""
    for line in (root / "etc/passwd").read_text().splitlines():
        parts = line.split(":")
        if parts[0] == name:
            return int(parts[2]), int(parts[3])
    raise AssertionError(f"{name} is not in {root}/etc/passwd")


def staged(root: Path, text: str) -> str:
    """Rewrite the installed locations in ``text`` to the staged root."""
    return text.replace(PREFIX, f"{root}{PREFIX}").replace(ETC, f"{root}{ETC}")


def env_file(path: Path) -> dict[str, str]:
    """Return the variables of a systemd ``EnvironmentFile``."""
    out: dict[str, str] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                out[key.strip()] = value.strip().strip('"')
    return out


class Unit:
    """One staged service started the way its unit file says, inside the namespace."""

    def __init__(self, fabric: Fabric, root: Path, name: str, log: Path) -> None:
        self.fields = unit_fields(root / "etc/systemd/system" / name)
        self.root = root
        self.fabric = fabric
        self.name = name
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def ids(self) -> tuple[int, int]:
        """Return the unit's ``User``/``Group`` ids in the staged root."""
        uid, _ = passwd_ids(self.root, self.fields["User"][0])
        _, gid = passwd_ids(self.root, self.fields["Group"][0])
        return uid, gid

    def credentials_dir(self) -> Path:
        """Return where ``LoadCredential=`` puts the unit's credentials (systemd's ``%d``)."""
        return self.root / "run/credentials" / self.name

    def load_credentials(self) -> None:
        """Copy each ``LoadCredential=name:path`` as systemd does: a directory and files
        readable by the service's user only (0500 / 0400)."""
        uid, gid = self.ids()
        folder = self.credentials_dir()
        folder.mkdir(parents=True, exist_ok=True)
        for spec in self.fields.get("LoadCredential", []):
            name, _, source = spec.partition(":")
            target = folder / name
            shutil.copyfile(staged(self.root, source), target)
            os.chown(target, uid, gid)
            os.chmod(target, 0o400)
        os.chown(folder, uid, gid)
        os.chmod(folder, 0o500)

    def environment(self) -> dict[str, str]:
        """Return the unit's environment: a service's minimum plus ``Environment*``."""
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/"}
        for spec in self.fields.get("EnvironmentFile", []):
            env.update(env_file(Path(staged(self.root, spec.lstrip("-")))))
        for spec in self.fields.get("Environment", []):
            for item in shlex.split(spec.replace("%d", str(self.credentials_dir()))):
                key, _, value = item.partition("=")
                env[key] = value
        return env

    def argv(self) -> list[str]:
        """Return ``ExecStart`` with ``$VAR`` expanded from the environment, paths staged."""
        env = self.environment()
        words: list[str] = []
        for word in shlex.split(staged(self.root, self.fields["ExecStart"][0])):
            if word.startswith("$"):
                words.extend(shlex.split(env.get(word[1:].strip("{}"), "")))
            else:
                words.append(word)
        return words

    def state_dir(self) -> Path:
        """Create the unit's ``StateDirectory`` as systemd does: mode and owner."""
        name = self.fields["StateDirectory"][0]
        path = self.root / "var/lib" / name
        path.mkdir(parents=True, exist_ok=True)
        uid, gid = self.ids()
        os.chown(path, uid, gid)
        os.chmod(path, int(self.fields.get("StateDirectoryMode", ["0755"])[0], 8))
        return path

    def command(
        self,
        argv: list[str],
        *,
        binds: tuple[tuple[Path, str], ...] = (),
        extra_env: dict[str, str] | None = None,
    ) -> list[str]:
        """Return ``argv`` run as the unit runs its service: namespace, mounts, hardening
        (tests/appliance/sandbox.py), limits, user, then the unit's seccomp filter."""
        uid, gid = self.ids()
        umask = self.fields.get("UMask", ["0022"])[0]
        mounts = [
            # A handle on the interpreter before /root is covered (see the module doc).
            "mount -t tmpfs atm-handle /mnt",
            f"mkdir /mnt/pyenv && mount --bind {shlex.quote(str(PYENV_ROOT))} /mnt/pyenv",
            "mount -t tmpfs -o mode=0755 atm-root /root",
            f"mkdir -p {shlex.quote(str(PYENV_ROOT))}",
            f"mount --bind /mnt/pyenv {shlex.quote(str(PYENV_ROOT))}",
        ]
        state = self.root / "var/lib" / self.fields["StateDirectory"][0]
        mounts += sandbox.mount_steps(self.fields, state, binds)
        script = " && ".join(mounts) + f' && umask {umask} && exec "$@"'
        env = [f"{k}={v}" for k, v in sorted({**self.environment(), **(extra_env or {})}.items())]
        seccomp = sandbox.write_seccomp_exec(self.root / "sandbox", self.name, self.fields)
        python = f"{self.root}{PREFIX}/venv/bin/python"
        return [
            *self.fabric.namespace.exec_prefix(),
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            script,
            "sh",
            "setpriv",
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--no-new-privs",
            "env",
            "-i",
            *env,
            python,
            *seccomp,
            *argv,
        ]

    def start(self, *, binds: tuple[tuple[Path, str], ...] = ()) -> None:
        """Start the service in the background, its output in ``self.log``."""
        self.load_credentials()
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                self.command(self.argv(), binds=binds),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout_s: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run the staged CLI as this unit's user (what ``sudo -u USER`` does on a Pi)."""
        cli = f"{self.root}{PREFIX}/venv/bin/atmosphere-bridge"
        argv = self.command([cli, *args], extra_env=env)
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)

    def stop(self) -> None:
        """Stop the service by its PID (SIGTERM, then SIGKILL), as systemd would."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def wait_until(check: object, timeout_s: float, what: str, log: Path) -> None:
    """Poll ``check()`` until it is true; fail with the service log's tail."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else "(no log)"
    raise AssertionError(f"{what} not within {timeout_s:g} s; log tail:\n{tail}")


@pytest.fixture(scope="module")
def appliance_fabric() -> Iterator[Fabric]:
    """A namespace of its own: the units listen on the ports their files name."""
    require(fabric_unavailable_reason() or tools_reason("setpriv", "unshare"))
    with open_fabric(f"atm-inst-{os.getpid()}") as fab:
        yield fab


def test_installed_appliance_commissions_and_switches_a_light(
    appliance_fabric: Fabric,
) -> None:
    started = time.monotonic()
    # Not under pytest's 0700 /tmp tree: the service users must reach the staged root.
    root = Path(tempfile.mkdtemp(prefix="atm-install-", dir="/var/tmp"))
    os.chmod(root, 0o755)
    units: list[Unit] = []
    try:
        done = subprocess.run(
            [
                "bash",
                str(INSTALL),
                "--root",
                str(root),
                "--skip-packages",
                "--no-start",
                "--python",
                PYTHON,
                "--interface",
                "lo",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        install_s = time.monotonic() - started
        venv = root / PREFIX.lstrip("/") / "venv"

        # The project is installed, not linked to this checkout.
        probe = subprocess.run(
            [
                str(venv / "bin/python"),
                "-c",
                "import bridge, json, importlib.resources as r, importlib.metadata as m;"
                "import bridge.matter.tools.cluster_maps as cm;"
                "d = m.distribution('atmosphere-bridge');"
                "print(json.dumps({'file': bridge.__file__,"
                " 'direct_url': d.read_text('direct_url.json'),"
                " 'maps': sorted(p.name for p in r.files('cluster_maps')"
                ".iterdir()),"
                " 'maps_dir': str(cm.DEFAULT_DIRECTORY),"
                " 'map_files': sorted(m.file for m in cm.load_cluster_maps()),"
                " 'static': sorted(p.name for p in r.files('bridge.console').joinpath('static')"
                ".iterdir())}))",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            cwd="/",
        )
        facts = json.loads(probe.stdout)
        assert facts["file"].startswith(str(venv)), facts["file"]
        assert '"editable": true' not in (facts["direct_url"] or ""), facts["direct_url"]
        assert not list(venv.glob("lib/python*/site-packages/__editable__*"))
        assert any(n.endswith(".yaml") for n in facts["maps"]), facts["maps"]
        # The installed bridge reads the maps shipped in its own site-packages, all of them.
        assert facts["maps_dir"].startswith(str(venv)), facts["maps_dir"]
        assert facts["maps_dir"].endswith("/site-packages/cluster_maps"), facts["maps_dir"]
        assert facts["map_files"] == sorted(p.name for p in (REPO / "cluster_maps").glob("*.yaml"))
        assert {"console.js", "console.css"} <= set(facts["static"])
        assert (root / PREFIX.lstrip("/") / "controller-venv/bin/matter-server").exists()
        # The controller's key: root's alone on disk, handed to both units as credentials.
        key_file = root / ETC.lstrip("/") / "controller.key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600, oct(key_file.stat().st_mode)
        assert (key_file.stat().st_uid, key_file.stat().st_gid) == (0, 0)
        key = key_file.read_text().strip()
        assert len(key) >= 32

        # The configuration a person would edit: its paths moved into the staged root.
        config_path = root / ETC.lstrip("/") / "config.yaml"
        config = yaml.safe_load(config_path.read_text())
        config["state_dir"] = str(root / "var/lib/atmosphere-bridge")
        config.setdefault("doctor", {})["controller_storage"] = str(
            root / "var/lib/atmosphere-matter-controller"
        )
        config_path.write_text(yaml.safe_dump(config))

        fab = appliance_fabric
        logs = root / "logs"
        logs.mkdir()
        controller = Unit(
            fab, root, "atmosphere-matter-controller.service", logs / "controller.log"
        )
        bridge = Unit(fab, root, "atmosphere-bridge.service", logs / "bridge.log")
        units += [controller, bridge]
        assert controller.fields["User"] == ["atmosphere-matter"]
        assert bridge.fields["User"] == ["atmosphere-bridge"]

        # The controller's state is bound on /data (BindPaths); test devices' PAA roots
        # go where its --paa-root-cert-dir looks (a Pi fetches the real ones).
        controller_state = controller.state_dir()
        write_test_paa(controller_state / "credentials")
        uid, gid = controller.ids()
        for path in [controller_state, *controller_state.rglob("*")]:
            os.chown(path, uid, gid)
        bind = controller.fields["BindPaths"][0].split(":")[1]
        controller.start(binds=((controller_state, bind),))
        bridge_state = bridge.state_dir()

        light = fab.device(DeviceKind.ONOFF)
        assert light.pairing is not None

        # After=/Requires=: the bridge starts once the controller answers.
        def controller_up() -> bool:
            assert controller.proc is not None
            tail = controller.log.read_text(errors="replace")[-3000:]
            assert controller.proc.poll() is None, f"the controller exited: {tail}"
            return b'"schema_version"' in _greeting(fab, {KEY_HEADER: key})

        wait_until(controller_up, 90, "the controller answering", controller.log)
        # Only the bridge commands it: no key, a wrong key, or a web page's Origin (even
        # with the key) is refused before the server sees the request.
        assert _greeting(fab, {}).strip() == b"403"
        assert _greeting(fab, {KEY_HEADER: "x" * 64}).strip() == b"403"
        assert _greeting(fab, {KEY_HEADER: key, "Origin": "http://evil.example"}).strip() == b"403"
        bridge.start()

        def bridge_up() -> bool:
            assert bridge.proc is not None
            tail = bridge.log.read_text(errors="replace")[-3000:]
            assert bridge.proc.poll() is None, f"the bridge exited: {tail}"
            return _healthz(bridge, config_path)

        wait_until(bridge_up, 90, "the bridge answering", bridge.log)

        issued = bridge.run(
            "--config",
            str(config_path),
            "token",
            "issue",
            "--agent",
            "porch-installer",
            "--perm",
            "*",
            "--ttl",
            "1h",
        )
        assert issued.returncode == 0, issued.stderr
        token = issued.stdout.strip().splitlines()[-1].strip()
        assert token.count(".") >= 1, issued.stdout
        assert token not in bridge.log.read_text(errors="replace")

        as_person = {"ATMOSPHERE_BRIDGE_TOKEN": token}
        commissioned = bridge.run(
            "--config",
            str(config_path),
            "commission",
            light.pairing.manual,
            "--name",
            LIGHT_NAME,
            "--room",
            LIGHT_ROOM,
            "--json",
            env=as_person,
            timeout_s=240,
        )
        assert commissioned.returncode == 0, commissioned.stdout + commissioned.stderr
        result = json.loads(commissioned.stdout)
        assert "porch_light_on" in json.dumps(result), result

        mark = light.mark()
        switched = bridge.run("--config", str(config_path), "invoke", LIGHT_TOOL, env=as_person)
        assert switched.returncode == 0, switched.stdout + switched.stderr
        light.wait_state("onOff", "onOff", True, since=mark)

        # Each service runs as its own user, and the controller kept its fabric in /data.
        for unit in units:
            assert unit.proc is not None
            status = Path(f"/proc/{unit.proc.pid}/status").read_text()
            uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
            assert uid_line.split()[1:] == [str(unit.ids()[0])] * 4, (unit.name, uid_line)
        assert any(controller_state.glob("chip*.ini")) or any(controller_state.glob("*.json"))

        # The units' hardening was in force while they did all this (tests/appliance/
        # sandbox.py): the running services carry the seccomp filter, no new privileges
        # and LimitNOFILE; a process started the same way sees a read-only system, no
        # home, a private /dev, and is refused other socket families and namespaces.
        for unit in units:
            assert unit.proc is not None
            status = Path(f"/proc/{unit.proc.pid}/status").read_text()
            assert "\nSeccomp:\t2\n" in status, (unit.name, status)
            assert "\nNoNewPrivs:\t1\n" in status, (unit.name, status)
            limits = Path(f"/proc/{unit.proc.pid}/limits").read_text()
            granted = sandbox.nofile(int(unit.fields["LimitNOFILE"][0]))
            assert re.search(rf"Max open files\s+{granted}\s+{granted}\s", limits), limits
        probe = subprocess.run(
            bridge.command(
                [
                    f"{root}{PREFIX}/venv/bin/python",
                    "-c",
                    SANDBOX_PROBE,
                    f"{root}{PREFIX}",
                    str(bridge_state),
                ]
            ),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert probe.returncode == 0, probe.stdout + probe.stderr
        assert json.loads(probe.stdout) == {
            "write the installed tree": "EROFS",
            "write /etc": "EROFS",
            "write the state directory": "ok",
            "write /tmp": "ok",
            "list /home": "EACCES",
            "/dev": [
                "fd",
                "full",
                "null",
                "random",
                "shm",
                "stderr",
                "stdin",
                "stdout",
                "tty",
                "urandom",
                "zero",
            ],
            "open files": [sandbox.nofile(65536)] * 2,
            "AF_INET socket": "ok",
            # Unfiltered, this kernel answers EAFNOSUPPORT and lets any user unshare a
            # user namespace: EPERM is the unit's filter (SystemCallErrorNumber=EPERM).
            "AF_ALG socket": "EPERM",
            "unshare a user namespace": "EPERM",
            "mount": "EPERM",
            "uid": bridge.ids()[0],
        }

        # State stays private: nothing in the service's state tree for anyone else.
        for path in [bridge_state, *bridge_state.rglob("*")]:
            mode = stat.S_IMODE(path.lstat().st_mode)
            assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
            assert path.lstat().st_uid == bridge.ids()[0], path
        total_s = time.monotonic() - started
        print(f"\ninstall.sh with pip {install_s:.1f} s; install to light on {total_s:.1f} s")
    finally:
        for unit in reversed(units):
            unit.stop()
        shutil.rmtree(root, ignore_errors=True)


SANDBOX_PROBE = r"""
import ctypes, errno, json, os, resource, socket, sys
installed, state = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
def outcome(action):
    try:
        action()
    except OSError as err:
        return errno.errorcode[err.errno]
    return "ok"
def touch(path):
    open(path, "w").close()
    os.unlink(path)
def call(rc):
    if rc != 0:
        raise OSError(ctypes.get_errno(), "refused")
print(json.dumps({
    "write the installed tree": outcome(lambda: touch(f"{installed}/probe")),
    "write /etc": outcome(lambda: touch("/etc/atm-probe")),
    "write the state directory": outcome(lambda: touch(f"{state}/probe")),
    "write /tmp": outcome(lambda: touch("/tmp/atm-probe")),
    "list /home": outcome(lambda: os.listdir("/home")),
    "/dev": sorted(os.listdir("/dev")),
    "open files": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
    "AF_INET socket": outcome(lambda: socket.socket(socket.AF_INET).close()),
    "AF_ALG socket": outcome(lambda: socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET).close()),
    "unshare a user namespace": outcome(lambda: call(libc.unshare(0x10000000))),
    "mount": outcome(lambda: call(libc.mount(b"none", b"/mnt", b"tmpfs", 0, None))),
    "uid": os.getuid(),
}))
"""


def _greeting(fab: Fabric, headers: dict[str, str]) -> bytes:
    """Return the first message the controller's port 5580 answers inside the namespace
    with ``headers``, or the HTTP status that refused the WebSocket."""
    probe = subprocess.run(
        [
            *fab.namespace.exec_prefix(),
            sys.executable,
            "-c",
            "import asyncio, aiohttp, json, sys\n"
            "async def main():\n"
            "    async with aiohttp.ClientSession() as s:\n"
            "        try:\n"
            "            async with s.ws_connect('ws://127.0.0.1:5580/ws',\n"
            "                                    headers=json.loads(sys.argv[1])) as ws:\n"
            "                print((await ws.receive(timeout=5)).data)\n"
            "        except aiohttp.WSServerHandshakeError as err:\n"
            "            print(err.status)\n"
            "asyncio.run(main())\n",
            json.dumps(headers),
        ],
        capture_output=True,
        timeout=30,
        check=False,
    )
    return probe.stdout


def _healthz(bridge: Unit, config_path: Path) -> bool:
    """Return whether the bridge's API answers /healthz, started, with Matter on."""
    config = yaml.safe_load(config_path.read_text())
    api = config.get("api", {})
    url = f"http://{api.get('host', '127.0.0.1')}:{api.get('port', 8765)}/healthz"
    probe = subprocess.run(
        [
            *bridge.fabric.namespace.exec_prefix(),
            sys.executable,
            "-c",
            f"import urllib.request; print(urllib.request.urlopen({url!r}, timeout=5).read()"
            ".decode())",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if probe.returncode != 0:
        return False
    health = json.loads(probe.stdout)
    return health["status"] != "starting" and health["components"]["matter"] is True
