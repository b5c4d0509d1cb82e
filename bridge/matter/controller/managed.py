"""The managed Matter controller: python-matter-server run and supervised by the bridge.

Unless the configuration names an external controller URL, the bridge starts
python-matter-server from its own virtualenv (created by ``make install``; nothing is
installed at run time), keeps its storage, PAA trust store and log under the bridge's
state directory, restarts it with exponential backoff when it dies, and stops it by PID.

One module because start, supervision, restart and stop share one process's state.
Details: docs/modules.md, ``bridge.matter.controller.managed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import shutil
import signal
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO

import aiohttp

from bridge.errors import ControllerUnavailableError
from bridge.events import EventBus
from bridge.matter.controller.gateway import read_server_info
from bridge.matter.controller.guard import KEY_FILE_ENV, KEY_HEADER
from bridge.netns import NetworkNamespace
from bridge.ratelog import RateLimitedLog

LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(LOGGER)
# How long a restart the bridge asks for waits for a clean stop before SIGKILL.
RESTART_STOP_S = 2.0
# How often the server's log size is checked while it runs (a stat: nothing to speak of).
LOG_CHECK_S = 5.0
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# The launcher that puts the key and Origin check in front of the server's API.
GUARD_SCRIPT = Path(__file__).with_name("guard.py")

# Binds the instance's directories over the SDK's hard-coded paths, then becomes the server.
# $1: private /data, $2: private /tmp, $3: colon-separated top-level /tmp entries the server
# itself needs (its venv, storage, ...), re-exposed inside the private /tmp from the host's.
# /mnt only gets a tmpfs inside this private mount namespace, as a handle on the host's /tmp.
_ISOLATE_SCRIPT = (
    'mount --bind "$1" /data || exit 97; '
    "mount -t tmpfs atmosphere-host-tmp /mnt && mkdir /mnt/host-tmp "
    '&& mount --bind /tmp /mnt/host-tmp && mount --bind "$2" /tmp || exit 97; '
    'keep="$3"; IFS=:; for e in $keep; do '
    '[ -n "$e" ] || continue; '
    'mkdir -p -m 700 "/tmp/$e" && mount --bind "/mnt/host-tmp/$e" "/tmp/$e" || exit 97; '
    'done; unset IFS; shift 3; exec "$@"'
)


class ControllerState(StrEnum):
    """Lifecycle states of the managed controller."""

    STOPPED = "stopped"
    STARTING = "starting"
    RUNNING = "running"
    BACKOFF = "backoff"


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerSettings:
    """How to run one managed python-matter-server."""

    venv: Path
    state_dir: Path
    port: int = 5580
    netns: NetworkNamespace | None = None
    listen_address: str | None = None
    paa_dir: Path | None = None
    log_level: str = "info"
    # "progress" makes the SDK log each commissioning step; commissioning follows them.
    log_level_sdk: str = "progress"
    # The server's log is kept under this size while it runs, with one older copy
    # (``.log.1``): at "progress" the SDK writes ~8 lines per device command (~1 MB a
    # minute at 10 commands a second), on the disk the audit log needs.
    log_max_bytes: int = 5_000_000
    isolate_paths: bool = True
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 30.0
    healthy_after_s: float = 60.0
    ready_timeout_s: float = 90.0
    stop_timeout_s: float = 10.0
    extra_args: tuple[str, ...] = field(default_factory=tuple)

    @property
    def storage_dir(self) -> Path:
        """Return the server's storage directory (fabric credentials, nodes)."""
        return self.state_dir / "storage"

    @property
    def trust_store(self) -> Path:
        """Return the PAA root certificate directory."""
        return self.paa_dir if self.paa_dir is not None else self.state_dir / "paa"

    @property
    def log_path(self) -> Path:
        """Return the file that receives the server's stdout and stderr."""
        return self.state_dir / "matter-server.log"

    @property
    def key_path(self) -> Path:
        """Return the 0600 file holding the secret the server demands of every client."""
        return self.state_dir / "controller.key"

    @property
    def pid_path(self) -> Path:
        """Return the file naming the running server's PID (for a restarted bridge)."""
        return self.state_dir / "matter-server.pid"

    @property
    def host(self) -> str:
        """Return the address at which the bridge reaches the WebSocket."""
        if self.netns is not None:
            return self.netns.ns_address
        return self.listen_address or "127.0.0.1"

    @property
    def url(self) -> str:
        """Return the controller's WebSocket URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}/ws"


class ManagedController:
    """Start, supervise (restart with backoff) and stop one python-matter-server."""

    def __init__(self, settings: ControllerSettings, events: EventBus | None = None) -> None:
        self.settings = settings
        self._events = events
        self._proc: asyncio.subprocess.Process | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._stopping = False
        self._ready = asyncio.Event()
        self._state = ControllerState.STOPPED
        self.restarts = 0
        # Restarts the bridge asked for (``restart``): immediate, not counted as crashes.
        self.requested_restarts = 0
        self._restart_requested = False
        self.last_exit_code: int | None = None
        # Called each time the server answers on its WebSocket (a reconnect need not wait).
        self.on_ready: Callable[[], None] | None = None
        # A fresh secret for each bridge run: the server answers only requests carrying it.
        self._key = secrets.token_urlsafe(32)

    @property
    def headers(self) -> dict[str, str]:
        """Return the headers every connection to this controller must send."""
        return {KEY_HEADER: self._key}

    @property
    def url(self) -> str:
        """Return the WebSocket URL of the controller."""
        return self.settings.url

    @property
    def pid(self) -> int | None:
        """Return the PID of the running server, or None."""
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    @property
    def state(self) -> ControllerState:
        """Return the current lifecycle state."""
        return self._state

    @property
    def stopping(self) -> bool:
        """Return whether ``stop()`` has been called."""
        return self._stopping

    def command(self) -> list[str]:
        """Return the argv that starts the server (namespace and path isolation included)."""
        s = self.settings
        server = [
            # The controller's own interpreter runs the launcher that guards the API
            # (-I: neither the launcher's directory nor PYTHON* variables on its path).
            str(s.venv / "bin" / "python"),
            "-I",
            str(GUARD_SCRIPT),
            "--storage-path",
            str(s.storage_dir),
            "--port",
            str(s.port),
            "--paa-root-cert-dir",
            str(s.trust_store),
            "--log-level",
            s.log_level,
            "--log-level-sdk",
            s.log_level_sdk,
            *(["--listen-address", s.listen_address] if s.listen_address else []),
            *s.extra_args,
        ]
        argv = server
        if s.isolate_paths and os.geteuid() == 0:
            data_dir, tmp_dir = self._private_dirs()
            argv = [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "--",
                "sh",
                "-c",
                _ISOLATE_SCRIPT,
                "sh",
                str(data_dir),
                str(tmp_dir),
                ":".join(self._tmp_entries_needed()),
                *server,
            ]
        if s.netns is not None:
            argv = [*s.netns.exec_prefix(), *argv]
        return argv

    def _private_dirs(self) -> tuple[Path, Path]:
        return self.settings.state_dir / "sdk-data", self.settings.state_dir / "sdk-tmp"

    def _tmp_entries_needed(self) -> list[str]:
        """Return the top-level ``/tmp`` entries holding paths the server must still see."""
        s = self.settings
        tmp = Path("/tmp")  # noqa: S108 - the SDK's hard-coded location, not a temp file
        entries: set[str] = set()
        for path in (s.storage_dir, s.trust_store, s.log_path, s.key_path, s.venv, GUARD_SCRIPT):
            resolved = path.resolve()
            if _under(resolved, tmp) and resolved != tmp:
                entries.add(resolved.relative_to(tmp).parts[0])
        return sorted(entries)

    async def start(self, *, wait: bool = True) -> None:
        """Start the server and its supervisor; with ``wait``, return once it answers."""
        if self._supervisor is not None:
            return
        s = self.settings
        server_bin = s.venv / "bin" / "matter-server"
        if not server_bin.exists():
            raise ControllerUnavailableError(
                f"the controller is not installed: {server_bin} is missing; run 'make install'",
                {"venv": str(s.venv)},
            )
        await asyncio.to_thread(self._prepare_dirs)
        await asyncio.to_thread(self._end_stale_server)
        self._stopping = False
        self._supervisor = asyncio.create_task(self._supervise(), name="matter-controller")
        if wait:
            await self.wait_ready(s.ready_timeout_s)

    def _prepare_dirs(self) -> None:
        s = self.settings
        s.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        s.storage_dir.mkdir(mode=0o700, exist_ok=True)
        _write_private(s.key_path, self._key + "\n")
        with contextlib.suppress(OSError):
            rotate_log(s.log_path, s.log_max_bytes)
        if s.isolate_paths and os.geteuid() == 0:
            data_dir, tmp_dir = self._private_dirs()
            data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            # The mount point itself must exist; it stays an empty directory on the host.
            Path("/data").mkdir(exist_ok=True)
        else:
            LOGGER.warning(
                "controller runs without path isolation: it shares /data/chip_*.ini "
                "and /tmp/chip_kvs with any other CHIP controller on this machine"
            )

    def _end_stale_server(self) -> None:
        """End a server that a bridge killed without a chance to stop it left running.

        The server runs in its own session, so a SIGKILLed bridge leaves it behind with
        the port and the storage: the next server could not bind, and the restarted
        bridge would talk to an orphan no one supervises. Only a process whose command
        line is a matter-server on this instance's storage is ended.

        The pid file is not enough: a server restarted while the state disk was full
        could not write it, so the processes are also found by their command line.
        """
        path = self.settings.pid_path
        pids = set(_servers_on(self.settings.storage_dir))
        with contextlib.suppress(OSError, ValueError):
            pids.add(int(path.read_text(encoding="ascii").strip()))
        for pid in sorted(pids):
            if _runs_server(pid, self.settings.storage_dir):
                LOGGER.warning("ending controller pid %s left running by a previous bridge", pid)
                _end(pid, self.settings.stop_timeout_s)
        with contextlib.suppress(OSError):
            path.unlink()

    async def wait_ready(self, timeout_s: float) -> None:
        """Wait until the server answers on its WebSocket or raise CONTROLLER_UNAVAILABLE."""
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except TimeoutError as err:
            raise ControllerUnavailableError(
                f"the managed controller did not answer at {self.url} within {timeout_s:.0f} s",
                {"url": self.url, "log": str(self.settings.log_path), "tail": self.log_tail()},
            ) from err

    async def follow_log(self, poll_s: float = 0.05) -> AsyncIterator[str]:
        """Yield the server's log lines written from now on (until the caller stops)."""
        path = self.settings.log_path
        offset = await asyncio.to_thread(_size, path)
        pending = b""
        while True:
            chunk = await asyncio.to_thread(_read_from, path, offset)
            if len(chunk) == 0:
                if await asyncio.to_thread(_size, path) < offset:
                    offset = 0  # rotated or truncated
                await asyncio.sleep(poll_s)
                continue
            offset += len(chunk)
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                yield _ANSI.sub("", line.decode("utf-8", "replace"))

    def log_tail(self) -> list[str]:
        """Return the last lines of the server's log."""
        try:
            with self.settings.log_path.open("rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - 8192))
                lines = _ANSI.sub("", fh.read().decode("utf-8", "replace")).splitlines()
        except OSError:
            return []
        return lines[-20:]

    async def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the supervisor and the server (SIGINT, then SIGKILL after ``timeout_s``)."""
        self._stopping = True
        supervisor, self._supervisor = self._supervisor, None
        await self._terminate(timeout_s)
        with contextlib.suppress(OSError):
            await asyncio.to_thread(self.settings.pid_path.unlink)
        if supervisor is not None:
            supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await supervisor
        self._set_state(ControllerState.STOPPED)

    async def restart(self, reason: str) -> bool:
        """Stop the running server (SIGINT) so the supervisor starts it again at once.

        Return ``False`` when there is no running server to restart.
        """
        proc = self._proc
        if self._stopping or proc is None or proc.returncode is not None:
            return False
        LOGGER.warning("restarting the controller (pid %s): %s", proc.pid, reason)
        self._restart_requested = True
        self.requested_restarts += 1
        # A short grace: the server saves its state on SIGINT, but under load a clean
        # stop took 4 s of a recovery that must end within 10 s (docs/faults.md).
        await self._terminate(RESTART_STOP_S)
        self._ready.clear()  # the next wait_ready waits for the new server
        return True

    async def _terminate(self, timeout_s: float) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            LOGGER.warning("controller pid %s ignored SIGINT; killing it", proc.pid)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()

    def _set_state(self, state: ControllerState) -> None:
        self._state = state
        if state is not ControllerState.RUNNING:
            self._ready.clear()
        if self._events is not None:
            self._events.publish(
                "controller.state",
                {"state": state.value, "pid": self.pid, "restarts": self.restarts, "url": self.url},
            )

    async def _supervise(self) -> None:
        backoff = self.settings.backoff_initial_s
        while not self._stopping:
            started = time.monotonic()
            await self._run_once()
            if self.stopping:
                return
            ran_for = time.monotonic() - started
            if self._restart_requested:
                self._restart_requested = False
                continue
            if ran_for >= self.settings.healthy_after_s:
                backoff = self.settings.backoff_initial_s
            self.restarts += 1
            LOGGER.warning(
                "controller exited with %s after %.1f s; restarting in %.1f s (restart %d)",
                self.last_exit_code,
                ran_for,
                backoff,
                self.restarts,
            )
            self._set_state(ControllerState.BACKOFF)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.settings.backoff_max_s)

    async def _run_once(self) -> None:
        self._set_state(ControllerState.STARTING)
        log: IO[bytes] = await asyncio.to_thread(_open_log, self.settings.log_path)
        try:
            try:
                self._proc = await asyncio.create_subprocess_exec(
                    # The launcher sets umask 077 itself and reads the key from the file
                    # named here (the key itself never appears in an argv or a log).
                    *self.command(),
                    env={**os.environ, KEY_FILE_ENV: str(self.settings.key_path)},
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                )
            except (OSError, ValueError):
                LOGGER.exception("cannot start the controller")
                self.last_exit_code = None
                return
            LOGGER.info("controller started, pid %s, %s", self._proc.pid, self.url)
            with contextlib.suppress(OSError):  # a full disk must not stop the server
                await asyncio.to_thread(
                    _write_private, self.settings.pid_path, f"{self._proc.pid}\n"
                )
            probe = asyncio.create_task(self._probe_ready(self._proc))
            trim = asyncio.create_task(self._keep_log_small())
            try:
                self.last_exit_code = await self._proc.wait()
            finally:
                self._ready.clear()  # gone: nobody may take it as ready meanwhile
                for task in (probe, trim):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        finally:
            log.close()

    async def _keep_log_small(self) -> None:
        """Rotate the server's log while it runs, every ``LOG_CHECK_S``: see ``rotate_log``."""
        s = self.settings
        while True:
            await asyncio.sleep(LOG_CHECK_S)
            try:
                await asyncio.to_thread(rotate_log, s.log_path, s.log_max_bytes)
            except OSError as err:  # a full disk: the next check tries again
                _RATE_LOG.warning("log", "cannot rotate %s: %s", s.log_path, err)

    async def _probe_ready(self, proc: asyncio.subprocess.Process) -> None:
        # Ready means the WebSocket answers with its server_info message.
        timeout = aiohttp.ClientTimeout(total=3)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while proc.returncode is None:
                try:
                    async with session.ws_connect(self.url, headers=self.headers) as ws:
                        await read_server_info(ws, self.url, 3)
                except (aiohttp.ClientError, OSError, ControllerUnavailableError):
                    pass
                else:
                    self._set_state(ControllerState.RUNNING)
                    self._ready.set()
                    if self.on_ready is not None:
                        self.on_ready()
                    return
                await asyncio.sleep(0.25)


def with_umask(mask: int, argv: Sequence[str]) -> list[str]:
    """Return an argv that runs ``argv`` under ``mask`` (``/bin/sh`` sets it, then execs)."""
    return ["/bin/sh", "-c", f'umask {mask:03o} && exec "$0" "$@"', *argv]


def _runs_server(pid: int, storage_dir: Path) -> bool:
    """Return whether ``pid`` is a live matter-server using ``storage_dir``."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    server = any(a.endswith((b"/matter-server", b"/matter/controller/guard.py")) for a in args)
    return server and os.fsencode(storage_dir) in args and _alive(pid)


def _servers_on(storage_dir: Path) -> list[int]:
    """Return the pids of live matter-servers (or their launcher) using ``storage_dir``."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                if _runs_server(int(entry.name), storage_dir):
                    found.append(int(entry.name))
    return found


def _end(pid: int, timeout_s: float) -> None:
    """Send SIGINT to ``pid`` (not our child), SIGKILL after ``timeout_s``; wait until gone."""
    for sig, wait_s in ((signal.SIGINT, timeout_s), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return state[0] not in ("Z", "X")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read_from(path: Path, offset: int) -> bytes:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read(1_000_000)
    except OSError:
        return b""


def _under(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a 0600 file, whatever the umask (atomically)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        os.fchmod(fh.fileno(), 0o600)
        fh.write(text)
    tmp.replace(path)


def rotate_log(path: Path, max_bytes: int) -> bool:
    """Move the log's content to ``<log>.1`` and start it over when over ``max_bytes``.

    The server writes through a descriptor opened with ``O_APPEND`` (``_open_log``), so
    after the file is cut to nothing its next line lands at the start: no restart and no
    signal needed. The older copy is removed first, so a nearly full disk still has room
    for the new one; when even that copy cannot be written the log is cut all the same
    (a log must not take the disk the audit log needs). Lines the server writes between
    the copy and the cut are lost. Return whether it rotated.
    """
    if path.stat().st_size <= max_bytes:
        return False
    old = path.with_name(path.name + ".1")
    old.unlink(missing_ok=True)
    try:
        with path.open("rb") as src:
            fd = os.open(old, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    except OSError:
        old.unlink(missing_ok=True)
        os.truncate(path, 0)
        raise
    os.truncate(path, 0)
    return True


def _open_log(path: Path) -> IO[bytes]:
    """Open the controller's log for appending, readable by this user only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "ab")
