"""Virtual Matter devices (the project's matter.js script) as supervised processes.

Used by ``make demo`` and the end-to-end tests: each ``VirtualDevice`` runs
``devices/virtual_device.mjs`` (optionally inside a fabric network namespace), waits for
its ``READY`` line, keeps its pairing codes and records every state change the device
itself reports (``STATE``/``LOCAL`` lines), so a test reads a device's state from the
device, not from the controller. ``press()`` is the physical button (SIGUSR1).
``write_test_paa`` writes the controller's trust store for these devices.

Details: docs/modules.md, ``bridge.demo.virtual_devices``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, ClassVar

from bridge.errors import BridgeError
from bridge.netns import NetworkNamespace

DEVICES_DIR = Path(__file__).resolve().parents[2] / "devices"


class VirtualDeviceError(BridgeError):
    """A virtual device could not be started or did not report in time."""


class DeviceKind(StrEnum):
    """The virtual device types the script provides."""

    ONOFF = "onoff"
    DIMMABLE = "dimmable"
    COLOR = "color"
    THERMOSTAT = "thermostat"
    COVER = "cover"
    # Issue 29's kinds (devices/kinds/index.mjs), by their ``--kind`` names.
    BUTTON = "button"
    LIGHT_SWITCH = "light-switch"  # an On/Off Light Switch: bindings, Toggle to bound lights
    LEAK = "leak"
    FREEZE = "freeze"
    RAIN = "rain"
    CONTACT = "contact"
    OCCUPANCY = "occupancy"
    ILLUMINANCE = "illuminance"
    PRESSURE = "pressure"
    FLOW = "flow"
    HUMIDITY = "humidity"
    TEMPERATURE = "temperature"
    AIR_QUALITY = "air-quality"
    SMOKE_CO = "smoke-co"
    FAN = "fan"
    AIR_PURIFIER = "air-purifier"
    EXTRACTOR_HOOD = "extractor-hood"
    WATER_HEATER = "water-heater"
    ENERGY_PLUG = "energy-plug"
    EV_CHARGER = "ev-charger"
    ROBOT_VACUUM = "robot-vacuum"
    LAUNDRY_WASHER = "laundry-washer"
    DISHWASHER = "dishwasher"
    ROLLER_SHADE = "roller-shade"
    DRAPERY = "drapery"
    AWNING = "awning"
    SHUTTER = "shutter"
    VENETIAN_BLIND = "venetian-blind"
    GARAGE_DOOR = "garage-door"
    CLOSURE_PANEL = "closure-panel"
    DOOR_LOCK = "door-lock"
    WATER_VALVE = "water-valve"
    CHIME = "chime"
    COOK_SURFACE = "cook-surface"
    SPEAKER = "speaker"  # its OnOff is its mute, its LevelControl its volume


@dataclass(frozen=True, slots=True, kw_only=True)
class PairingCodes:
    """The codes a fresh device prints for commissioning."""

    qr: str
    manual: str
    passcode: int
    discriminator: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChange:
    """One attribute change reported by the device itself."""

    cluster: str
    attribute: str
    value: Any
    local: bool
    at: float


def node_available() -> str | None:
    """Return why the virtual devices cannot run here, or None when they can."""
    if shutil.which("node") is None:
        return "Node.js is not installed (run 'make install')"
    if not (DEVICES_DIR / "node_modules" / "@matter" / "main").is_dir():
        return "devices/node_modules is missing (run 'make devices')"
    return None


def write_test_paa(paa_dir: Path, *, devices_dir: Path = DEVICES_DIR) -> None:
    """Write matter.js's test PAA roots (and the ``.version`` marker) into ``paa_dir``."""
    try:
        subprocess.run(  # noqa: S603 - fixed argv
            ["node", "write_paa.mjs", str(paa_dir)],  # noqa: S607 - node from PATH
            cwd=devices_dir,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except (OSError, subprocess.SubprocessError) as err:
        raise VirtualDeviceError(f"cannot write the test PAA trust store: {err}") from err


def follow(stream: IO[str], log_path: Path, take: Callable[[str], None]) -> None:
    """Append every line a device script prints to ``log_path``; hand each to ``take``."""
    with log_path.open("a", encoding="utf-8") as log:
        for line in stream:
            log.write(line)
            log.flush()
            take(line.strip())


def log_tail(log_path: Path) -> str:
    """Return the last 1,500 characters of a device script's log."""
    return log_path.read_text(errors="replace")[-1500:]


def stop_process(
    proc: subprocess.Popen[str] | None, reader: threading.Thread | None, timeout_s: float
) -> None:
    """Stop a device script's process (SIGINT, then SIGKILL) and join its output reader."""
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    if reader is not None:
        reader.join(5)


class VirtualDevice:
    """One matter.js device process with its pairing codes and reported state."""

    # The ports the devices running in this process listen on, per network namespace:
    # a second device on a running one's port cannot listen, and its start would wait
    # out its timeout with no word of why. (A shared discriminator is not refused: only
    # a device open for commissioning advertises it, and test fabrics reuse them.)
    _held: ClassVar[dict[tuple[str, str, int], str]] = {}
    _held_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        *,
        kind: DeviceKind,
        state_dir: Path,
        port: int,
        passcode: int = 20202021,
        discriminator: int = 3840,
        label: str | None = None,
        netns: NetworkNamespace | None = None,
        devices_dir: Path = DEVICES_DIR,
        options: tuple[str, ...] = (),
    ) -> None:
        self.kind = kind
        self.options = options  # more of the script's flags (``--level-trim 200`` …)
        self.state_dir = state_dir
        self.port = port
        self.passcode = passcode
        self.discriminator = discriminator
        self.label = label
        self.netns = netns
        self.devices_dir = devices_dir
        self.pairing: PairingCodes | None = None
        self.commissioned_at_start = False
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._changes: list[StateChange] = []
        self._cond = threading.Condition()
        self._ready = False

    @property
    def pid(self) -> int | None:
        """Return the device's PID while it runs."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    @property
    def log_path(self) -> Path:
        """Return the file with the device's full output."""
        return self.state_dir / "device.log"

    def command(self) -> list[str]:
        """Return the argv that starts this device."""
        argv = [
            "node",
            str(self.devices_dir / "virtual_device.mjs"),
            "--kind",
            self.kind.value,
            "--state-dir",
            str(self.state_dir / "storage"),
            "--port",
            str(self.port),
            "--passcode",
            str(self.passcode),
            "--discriminator",
            str(self.discriminator),
        ]
        if self.label:
            argv += ["--label", self.label]
        argv += self.options
        return [*self.netns.exec_prefix(), *argv] if self.netns else argv

    def start(self, timeout_s: float = 45.0) -> None:
        """Start the process and wait for READY (and its pairing codes when fresh)."""
        if self.pid is not None:
            return
        self._hold()
        try:
            self._start(timeout_s)
        except BaseException:
            self._release()
            raise

    def _claims(self) -> tuple[tuple[str, str, int], ...]:
        space = self.netns.name if self.netns is not None else ""
        return ((space, "port", self.port),)

    def _hold(self) -> None:
        """Claim this device's port in its namespace, or refuse."""
        me = f"{self.label or self.kind.value} ({self.state_dir.name})"
        with VirtualDevice._held_lock:
            for claim in self._claims():
                holder = VirtualDevice._held.get(claim)
                if holder is not None and holder != me:
                    raise VirtualDeviceError(
                        f"virtual device {me}: {claim[1]} {claim[2]} is held by running "
                        f"device {holder}"
                    )
            for claim in self._claims():
                VirtualDevice._held[claim] = me

    def _release(self) -> None:
        me = f"{self.label or self.kind.value} ({self.state_dir.name})"
        with VirtualDevice._held_lock:
            for claim in self._claims():
                if VirtualDevice._held.get(claim) == me:
                    del VirtualDevice._held[claim]

    def _start(self, timeout_s: float) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with self._cond:
            self._ready = False
        env = {**os.environ, "MATTER_LOG_LEVEL": "info"}
        try:
            self._proc = subprocess.Popen(  # noqa: S603 - argv built above
                self.command(),
                cwd=self.devices_dir,
                env=env,
                text=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as err:
            raise VirtualDeviceError(f"cannot start virtual {self.kind} device: {err}") from err
        assert self._proc.stdout is not None  # noqa: S101 - set by PIPE above
        self._reader = threading.Thread(
            target=self._read, args=(self._proc.stdout,), daemon=True, name=f"vdev-{self.kind}"
        )
        self._reader.start()
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not self._ready:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise VirtualDeviceError(
                        f"virtual {self.kind} device did not become ready; "
                        f"log tail:\n{log_tail(self.log_path)}"
                    )
                self._cond.wait(0.2)

    def _read(self, stream: IO[str]) -> None:
        follow(stream, self.log_path, self._line)

    def _line(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        self._fact(word, rest)

    def _fact(self, word: str, rest: str) -> None:
        """Take one line the device printed: its word and its JSON object."""
        if word not in ("PAIRING", "READY", "STATE", "LOCAL"):
            return
        try:
            data = json.loads(rest)
        except ValueError:
            return
        with self._cond:
            if word == "PAIRING":
                self.pairing = PairingCodes(
                    qr=str(data["qr"]),
                    manual=str(data["manual"]),
                    passcode=int(data["passcode"]),
                    discriminator=int(data["discriminator"]),
                )
            elif word == "READY":
                self.commissioned_at_start = bool(data.get("commissioned"))
                self._ready = True
            else:
                self._changes.append(
                    StateChange(
                        cluster=str(data["cluster"]),
                        attribute=str(data["attribute"]),
                        value=data["value"],
                        local=word == "LOCAL",
                        at=time.monotonic(),
                    )
                )
            self._cond.notify_all()

    def changes(self) -> list[StateChange]:
        """Return every state change reported so far."""
        with self._cond:
            return list(self._changes)

    def mark(self) -> int:
        """Return a position in the change log, for ``wait_state(since=...)``."""
        with self._cond:
            return len(self._changes)

    def wait_state(
        self,
        cluster: str,
        attribute: str,
        expected: Any,
        *,
        since: int = 0,
        timeout_s: float = 10.0,
        local: bool | None = None,
    ) -> StateChange:
        """Wait until the device reports ``cluster.attribute == expected`` after ``since``.

        ``local=True`` waits for the button press's own report (``LOCAL``), ``False`` for
        a change reported as ``STATE``; None takes either.
        """
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                for change in self._changes[since:]:
                    if (change.cluster, change.attribute, change.value) == (
                        cluster,
                        attribute,
                        expected,
                    ) and local in (None, change.local):
                        return change
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [(c.cluster, c.attribute, c.value) for c in self._changes[since:]]
                    raise VirtualDeviceError(
                        f"{self.kind} device never reported {cluster}.{attribute}={expected!r}; "
                        f"reported {seen}"
                    )
                self._cond.wait(remaining)

    def press(self) -> None:
        """Press the device's "physical button" (SIGUSR1): toggle a light, warm a room."""
        pid = self.pid
        if pid is None:
            raise VirtualDeviceError(f"virtual {self.kind} device is not running")
        os.kill(pid, signal.SIGUSR1)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the process (SIGINT, then SIGKILL) and keep its storage for a restart."""
        proc, self._proc = self._proc, None
        self._release()
        stop_process(proc, self._reader, timeout_s)
        self._reader = None
