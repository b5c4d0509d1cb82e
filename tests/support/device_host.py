"""Many matter.js devices in one Node process (``devices/device_host.mjs``).

Each ``devices/virtual_device.mjs`` process loads matter.js on its own: 4.3 s to READY
and 5.5 s of CPU per device here, 2.3 s of it the library's import. A test module that
needs dozens of devices and never kills one on its own (a crash, SIGSTOP) starts them
in one ``DeviceHost`` instead: the library loads once and each further device comes up
in about 0.1-0.4 s. A ``HostedDevice`` is the same device (``devices/device.mjs`` builds
both) with ``VirtualDevice``'s interface: pairing codes, reported state, ``press()``,
``stop()``/``start()`` (its storage stays, under the host's folder by the device's id).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bridge.demo.virtual_devices import (
    DEVICES_DIR,
    DeviceKind,
    VirtualDevice,
    VirtualDeviceError,
    follow,
    log_tail,
    stop_process,
)
from bridge.netns import NetworkNamespace

if TYPE_CHECKING:
    from tests.support.fabric import Fabric

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class DeviceHost:
    """One ``device_host.mjs`` process and the devices it runs, by id."""

    def __init__(
        self, state_dir: Path, *, netns: NetworkNamespace | None, devices_dir: Path = DEVICES_DIR
    ) -> None:
        self.state_dir = state_dir
        self.netns = netns
        self.devices_dir = devices_dir
        self.devices: dict[str, HostedDevice] = {}
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._cond = threading.Condition()
        self._up = False
        self._errors: list[tuple[str, str]] = []  # (id, message) of ERROR lines

    @property
    def log_path(self) -> Path:
        return self.state_dir / "host.log"

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def errors(self) -> list[tuple[str, str]]:
        """Every ERROR line so far: (device id or "-", message)."""
        with self._cond:
            return list(self._errors)

    def start(self, timeout_s: float = 60.0) -> None:
        """Start the host and wait until it reads commands."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        argv = ["node", str(self.devices_dir / "device_host.mjs")]
        argv += ["--state-dir", str(self.state_dir / "storage")]
        if self.netns is not None:
            argv = [*self.netns.exec_prefix(), *argv]
        self._proc = subprocess.Popen(
            argv,
            cwd=self.devices_dir,
            env={**os.environ, "MATTER_LOG_LEVEL": "info"},
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self._proc.stdout is not None
        self._reader = threading.Thread(
            target=self._read, args=(self._proc.stdout,), daemon=True, name="device-host"
        )
        self._reader.start()
        self._wait(lambda: self._up, timeout_s, "the device host did not start")

    def device(
        self,
        kind: DeviceKind,
        *,
        id: str,
        port: int,
        passcode: int,
        discriminator: int,
        label: str | None = None,
    ) -> HostedDevice:
        """Add a device (not started yet) with its own id, port and codes."""
        if not _ID.fullmatch(id) or id in self.devices:
            raise VirtualDeviceError(f"device id {id!r} is not valid here or is taken")
        dev = HostedDevice(
            self,
            id,
            kind=kind,
            port=port,
            passcode=passcode,
            discriminator=discriminator,
            label=label,
        )
        self.devices[id] = dev
        return dev

    def start_all(self, devices: Iterable[HostedDevice], timeout_s: float = 120.0) -> None:
        """Ask every device to start at once, then wait for each (the first error raises)."""
        waiting = [dev for dev in devices if not dev._running]
        for dev in waiting:
            dev._ask_start()
        for dev in waiting:
            dev._await_ready(timeout_s)

    def wait_errors(self, count: int, timeout_s: float = 10.0) -> list[tuple[str, str]]:
        """Wait until the host has answered ``count`` ERROR lines in all; return them."""
        self._wait(lambda: len(self._errors) >= count, timeout_s, f"fewer than {count} errors")
        return self.errors()

    def send(self, command: dict[str, Any]) -> None:
        """Write one command; refuse when the host is not running."""
        self.send_line(json.dumps(command))

    def send_line(self, line: str) -> None:
        """Write one line as it is (the tests send malformed ones too)."""
        proc = self._proc
        if proc is None or proc.poll() is not None or proc.stdin is None:
            raise VirtualDeviceError("the device host is not running")
        with self._send_lock:
            try:
                proc.stdin.write(line + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, ValueError) as err:
                raise VirtualDeviceError(f"the device host is not running: {err}") from err

    def stop(self, timeout_s: float = 20.0) -> None:
        """Close every device and the host (SIGINT, then SIGKILL); storage stays."""
        proc, self._proc = self._proc, None
        for dev in self.devices.values():
            dev._running = False
            dev._release()
        stop_process(proc, self._reader, timeout_s)
        self._reader = None

    def _wait(self, done: Any, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not done():
                proc = self._proc
                if proc is None or proc.poll() is not None or time.monotonic() > deadline:
                    raise VirtualDeviceError(f"{what}; host log tail:\n{log_tail(self.log_path)}")
                self._cond.wait(0.2)

    def _read(self, stream: IO[str]) -> None:
        follow(stream, self.log_path, self._line)
        with self._cond:
            self._cond.notify_all()

    def _line(self, line: str) -> None:
        who, _, rest = line.partition(" ")
        word, _, data = rest.partition(" ")
        with self._cond:
            if who == "-" and word == "HOST":
                self._up = True
            elif word == "ERROR":
                try:
                    message = str(json.loads(data)["message"])
                except (ValueError, KeyError, TypeError):
                    message = data
                self._errors.append((who, message))
            self._cond.notify_all()
        dev = self.devices.get(who)
        if dev is not None:
            dev._fact(word, data)


class HostedDevice(VirtualDevice):
    """One device of a ``DeviceHost``: ``VirtualDevice``'s interface, no process of its own."""

    def __init__(
        self,
        host: DeviceHost,
        id: str,
        *,
        kind: DeviceKind,
        port: int,
        passcode: int,
        discriminator: int,
        label: str | None,
    ) -> None:
        super().__init__(
            kind=kind,
            state_dir=host.state_dir / id,
            port=port,
            passcode=passcode,
            discriminator=discriminator,
            label=label,
            netns=host.netns,
            devices_dir=host.devices_dir,
        )
        self.host = host
        self.id = id
        self._running = False
        self._stopped = False
        self._error: str | None = None

    @property
    def pid(self) -> int | None:
        """The host's PID while this device runs in it."""
        return self.host.pid if self._running else None

    @property
    def log_path(self) -> Path:
        return self.host.log_path

    def command(self) -> list[str]:
        raise VirtualDeviceError("a hosted device has no command of its own")

    def start(self, timeout_s: float = 45.0) -> None:
        """Start the device in the host and wait for its READY (or its ERROR)."""
        if self._running:
            return
        self._ask_start()
        self._await_ready(timeout_s)

    def _ask_start(self) -> None:
        self._hold()
        with self._cond:
            self._ready = False
            self._error = None
        command: dict[str, Any] = {
            "op": "start",
            "id": self.id,
            "kind": self.kind.value,
            "port": self.port,
            "passcode": self.passcode,
            "discriminator": self.discriminator,
        }
        if self.label:
            command["label"] = self.label
        try:
            self.host.send(command)
        except BaseException:
            self._release()
            raise

    def _await_ready(self, timeout_s: float) -> None:
        try:
            self._until(lambda: self._ready, timeout_s, "did not become ready")
        except BaseException:
            self._release()
            raise
        self._running = True

    def press(self) -> None:
        """The device's "physical button", as SIGUSR1 is for a device process."""
        if not self._running:
            raise VirtualDeviceError(f"virtual {self.kind} device is not running")
        self.host.send({"op": "press", "id": self.id})

    def stop(self, timeout_s: float = 10.0) -> None:
        """Close the device's node in the host; its storage stays for a restart."""
        running, self._running = self._running, False
        try:
            if running and self.host.pid is not None:
                with self._cond:
                    self._stopped = False
                    self._error = None  # an earlier press's or action's error is not this one
                self.host.send({"op": "stop", "id": self.id})
                self._until(lambda: self._stopped, timeout_s, "did not stop")
        finally:
            self._release()

    def _fact(self, word: str, rest: str) -> None:
        if word in ("ERROR", "STOPPED"):
            with self._cond:
                if word == "STOPPED":
                    self._stopped = True
                else:
                    self._error = rest
                self._cond.notify_all()
            return
        super()._fact(word, rest)

    def _until(self, done: Any, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not done():
                if self._error is not None:
                    raise VirtualDeviceError(f"virtual {self.kind} device {self.id}: {self._error}")
                if self.host.pid is None or time.monotonic() > deadline:
                    raise VirtualDeviceError(
                        f"virtual {self.kind} device {self.id} {what}; "
                        f"host log tail:\n{log_tail(self.log_path)}"
                    )
                self._cond.wait(0.2)


@contextmanager
def device_host(fabric: Fabric, name: str) -> Iterator[DeviceHost]:
    """A started host in the fabric's namespace (folder ``name``); stopped on exit."""
    host = DeviceHost(fabric.base_dir / name, netns=fabric.namespace)
    try:
        host.start()
        yield host
    finally:
        host.stop()
