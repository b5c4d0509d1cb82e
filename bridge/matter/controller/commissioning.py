"""Commissioning Matter devices through the controller, with progress events.

One module because a commissioning's steps, its progress events and its waits for the
device's tools share one state machine.

Details: docs/modules.md, ``bridge.matter.controller.commissioning``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bridge.config import ThreadConfig
from bridge.errors import (
    BridgeError,
    CommissioningFailedError,
    ControllerUnavailableError,
    DeviceUnavailableError,
    InvalidParamsError,
    NotFoundError,
)
from bridge.events import EventBus
from bridge.matter.controller.gateway import ControllerCommandError, ControllerGateway
from bridge.matter.controller.pairing import (
    PairingCode,
    parse_pairing_code,
    validate_discriminator,
    validate_passcode,
)
from bridge.matter.controller.thread import (
    NoThreadDatasetError,
    read_active_dataset,
    validate_dataset_hex,
)
from bridge.tools.registry import RegisteredTool, ToolRegistry

LOGGER = logging.getLogger(__name__)
EVENT_TYPE = "commissioning.progress"
# python-matter-server error codes (its common/errors.py), stable across versions.
_ERR_COMMISSION_FAILED = 1
_ERR_INTERVIEW_FAILED = 2
_ERR_NOT_READY, _ERR_NOT_RESOLVING, _ERR_NOT_EXISTS = 3, 4, 5
_ERR_INVALID_ARGUMENTS = 8
# commission_on_network filter: 2 = long (12-bit) discriminator.
_FILTER_LONG_DISCRIMINATOR = 2
_LOG_SETTLE_S = 0.3
_KNOWN_POLL_S = 0.5  # how often a node with no tools is looked for among the devices


class CommissionStage(StrEnum):
    """Progress stages reported in ``commissioning.progress`` events, in order."""

    DISCOVERING = "discovering"
    PASE = "pase"
    ATTESTATION = "attestation"
    OPERATIONAL = "operational"
    INTERVIEW = "interview"
    TOOLS_READY = "tools_ready"
    FAILED = "failed"


# SDK / server log lines that prove a stage was reached.
_LOG_STAGES: tuple[tuple[re.Pattern[str], CommissionStage], ...] = (
    (re.compile(r"Discovered device to be commissioned"), CommissionStage.DISCOVERING),
    (re.compile(r"PASE session established"), CommissionStage.PASE),
    (
        re.compile(r"commissioning step '(SendAttestationRequest|AttestationVerification)'"),
        CommissionStage.ATTESTATION,
    ),
    (
        re.compile(r"Performing next commissioning step '(SendNOC|kFindOperational\w*)'"),
        CommissionStage.OPERATIONAL,
    ),
    (re.compile(r"Interviewing node"), CommissionStage.INTERVIEW),
)
_ATTESTATION_FAILURE = re.compile(
    r"Failed Device Attestation|AttestationVerification.*(fail|error)|attestation.*failed",
    re.IGNORECASE,
)


class NetworkKind(StrEnum):
    """How the device reaches the network while being commissioned."""

    ON_NETWORK = "on_network"
    WIFI = "wifi"
    THREAD = "thread"


@dataclass(frozen=True, slots=True, kw_only=True)
class CommissionRequest:
    """What a person gave to commission one device."""

    code: str | None = None
    passcode: int | None = None
    discriminator: int | None = None
    network: NetworkKind = NetworkKind.ON_NETWORK
    wifi_ssid: str | None = None
    wifi_password: str | None = None
    thread_dataset_hex: str | None = None
    name: str | None = None
    room: str | None = None

    @classmethod
    def from_json(cls, doc: Any) -> CommissionRequest:
        """Read and validate a request body; raise ``InvalidParamsError`` when malformed."""
        if not isinstance(doc, dict):
            raise InvalidParamsError("the commissioning request must be a JSON object")
        known = {
            "code",
            "passcode",
            "pin",
            "discriminator",
            "network",
            "wifi_ssid",
            "wifi_password",
            "thread_dataset",
            "name",
            "room",
        }
        unknown = sorted(set(doc) - known)
        if unknown:
            raise InvalidParamsError(f"unknown fields: {', '.join(unknown)}", {"fields": unknown})
        strings = ("code", "wifi_ssid", "wifi_password", "thread_dataset", "name", "room")
        for key in strings:
            if doc.get(key) is not None and not isinstance(doc[key], str):
                raise InvalidParamsError(f"'{key}' must be a string", {"field": key})
        passcode = doc.get("passcode", doc.get("pin"))
        for key, value in (("passcode", passcode), ("discriminator", doc.get("discriminator"))):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise InvalidParamsError(f"'{key}' must be an integer", {"field": key})
        network_text = doc.get("network")
        if network_text is None:
            if doc.get("thread_dataset"):
                network_text = "thread"
            elif doc.get("wifi_ssid"):
                network_text = "wifi"
            else:
                network_text = "on_network"
        try:
            network = NetworkKind(network_text)
        except ValueError as err:
            raise InvalidParamsError(
                "'network' is one of on_network, wifi, thread", {"field": "network"}
            ) from err
        request = cls(
            code=doc.get("code"),
            passcode=passcode,
            discriminator=doc.get("discriminator"),
            network=network,
            wifi_ssid=doc.get("wifi_ssid"),
            wifi_password=doc.get("wifi_password"),
            thread_dataset_hex=doc.get("thread_dataset"),
            name=doc.get("name"),
            room=doc.get("room"),
        )
        request.validate()
        return request

    def validate(self) -> PairingCode | None:
        """Check the request's consistency; return the parsed code if one was given."""
        parsed: PairingCode | None = None
        if self.code is not None:
            if self.passcode is not None or self.discriminator is not None:
                raise InvalidParamsError("give either 'code' or 'passcode' + 'discriminator'")
            parsed = parse_pairing_code(self.code)
        elif self.passcode is None or self.discriminator is None:
            raise InvalidParamsError(
                "give a pairing 'code' (QR 'MT:…' or manual digits) or both "
                "'passcode' and 'discriminator'"
            )
        else:
            validate_passcode(self.passcode)
            validate_discriminator(self.discriminator)
        if self.network is NetworkKind.WIFI and not (self.wifi_ssid and self.wifi_password):
            raise InvalidParamsError("Wi-Fi commissioning needs 'wifi_ssid' and 'wifi_password'")
        if self.network is not NetworkKind.WIFI and (self.wifi_ssid or self.wifi_password):
            raise InvalidParamsError("Wi-Fi credentials are only used with network 'wifi'")
        if self.thread_dataset_hex is not None:
            if self.network is not NetworkKind.THREAD:
                raise InvalidParamsError("a Thread dataset is only used with network 'thread'")
            validate_dataset_hex(self.thread_dataset_hex)
        if self.network is not NetworkKind.ON_NETWORK and self.code is None:
            raise InvalidParamsError("Wi-Fi and Thread commissioning need a pairing 'code'")
        return parsed


@dataclass(frozen=True, slots=True, kw_only=True)
class CommissionResult:
    """A commissioned device: its node, the stages seen, and the tools it brought."""

    commission_id: str
    node_id: int
    stages: tuple[CommissionStage, ...]
    tools: tuple[str, ...]
    elapsed_s: float
    name: str | None = None
    room: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "commission_id": self.commission_id,
            "node_id": self.node_id,
            "stages": [s.value for s in self.stages],
            "tools": list(self.tools),
            "elapsed_s": round(self.elapsed_s, 3),
            "name": self.name,
            "room": self.room,
        }


@dataclass
class _Attempt:
    commission_id: str
    started: float = field(default_factory=time.monotonic)
    stages: list[CommissionStage] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


class Commissioner:
    """Commission, list and remove devices on one controller, one commissioning at a time."""

    def __init__(
        self,
        *,
        controller_url: str | Callable[[], str] | None = None,
        gateway: ControllerGateway | None = None,
        events: EventBus,
        registry: ToolRegistry | None = None,
        thread: ThreadConfig | None = None,
        log_follower: Callable[[], AsyncIterator[str]] | None = None,
        namer: Callable[[int, CommissionRequest], Awaitable[None]] | None = None,
        timeout_s: float = 240.0,
        tools_timeout_s: float = 30.0,
    ) -> None:
        if gateway is None:
            if controller_url is None:
                raise ValueError("Commissioner needs a controller_url or a gateway")
            gateway = ControllerGateway(controller_url)
        self.rpc = gateway
        self._events = events
        self._registry = registry
        self._thread = thread or ThreadConfig()
        self._log_follower = log_follower
        self._namer = namer
        self._timeout_s = timeout_s
        self._tools_timeout_s = tools_timeout_s
        self._node_known: Callable[[int], bool] | None = None
        self._lock = asyncio.Lock()

    def set_node_known(self, known: Callable[[int], bool]) -> None:
        """Say how to tell that the bridge built a node's devices (tools or none)."""
        self._node_known = known

    def set_namer(self, namer: Callable[[int, CommissionRequest], Awaitable[None]]) -> None:
        """Set what names a new node's devices (called before ``tools_ready``)."""
        self._namer = namer

    async def commission(
        self, request: CommissionRequest, *, commission_id: str | None = None
    ) -> CommissionResult:
        """Commission one device and return its node and tools; raise a ``BridgeError``."""
        parsed = request.validate()
        attempt = _Attempt(commission_id=commission_id or uuid.uuid4().hex[:12])
        async with self._lock:
            try:
                return await self._commission(request, parsed, attempt)
            except BridgeError as err:
                self._publish(attempt, CommissionStage.FAILED, error=err.to_json())
                raise

    async def _commission(
        self, request: CommissionRequest, parsed: PairingCode | None, attempt: _Attempt
    ) -> CommissionResult:
        network_only = True
        if request.network is NetworkKind.WIFI:
            await self._call_setup(
                "set_wifi_credentials",
                ssid=request.wifi_ssid or "",
                credentials=request.wifi_password or "",
            )
            network_only = False
        elif request.network is NetworkKind.THREAD:
            dataset = await self.thread_dataset(request.thread_dataset_hex)
            await self._call_setup("set_thread_dataset", dataset=dataset)
            network_only = False
        self._publish(
            attempt, CommissionStage.DISCOVERING, code=parsed.to_json() if parsed else None
        )
        follower = asyncio.create_task(self._follow_log(attempt)) if self._log_follower else None
        try:
            if request.code is not None:
                node = await self._call_commission(
                    attempt,
                    parsed,
                    "commission_with_code",
                    code=request.code.strip(),
                    network_only=network_only,
                )
            else:
                node = await self._call_commission(
                    attempt,
                    parsed,
                    "commission_on_network",
                    setup_pin_code=request.passcode,
                    filter_type=_FILTER_LONG_DISCRIMINATOR,
                    filter=request.discriminator,
                )
        finally:
            if follower is not None:
                await asyncio.sleep(0.1)  # let the last log lines of this attempt arrive
                follower.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await follower
        node_id = int(node["node_id"])
        # The answer proves the device joined the fabric and was interviewed.
        self._publish(attempt, CommissionStage.OPERATIONAL, node_id=node_id)
        self._publish(attempt, CommissionStage.INTERVIEW, node_id=node_id)
        tools = await self._wait_for_tools(node_id)
        if self._namer is not None and (request.name or request.room):
            # Name before announcing the tools, so their announced names are final.
            await self._namer(node_id, request)
            if self._registry is not None:
                tools = tools_of_node(self._registry, node_id)
        self._publish(attempt, CommissionStage.TOOLS_READY, node_id=node_id, tools=list(tools))
        return CommissionResult(
            commission_id=attempt.commission_id,
            node_id=node_id,
            stages=tuple(attempt.stages),
            tools=tools,
            elapsed_s=time.monotonic() - attempt.started,
            name=request.name,
            room=request.room,
        )

    async def thread_dataset(self, explicit_hex: str | None) -> str:
        """Return the Thread dataset to use: explicit, configured, or the border router's."""
        if explicit_hex:
            return validate_dataset_hex(explicit_hex)
        if self._thread.dataset_hex:
            return validate_dataset_hex(self._thread.dataset_hex)
        if self._thread.otbr_url:
            return await read_active_dataset(self._thread.otbr_url)
        raise NoThreadDatasetError(
            "no Thread dataset: set thread.otbr_url (the border router's REST API) or "
            "thread.dataset_hex in the configuration, or pass the dataset as hex TLVs"
        )

    async def _call_setup(self, command: str, **args: Any) -> None:
        try:
            await self.rpc.call(command, timeout_s=30, **args)
        except TimeoutError as err:
            raise ControllerUnavailableError(f"the controller did not answer {command}") from err
        except ControllerCommandError as err:
            raise CommissioningFailedError(
                f"the controller rejected {command}: {err.details or err.error_code}",
                {"command": command},
            ) from err

    async def _call_commission(
        self, attempt: _Attempt, parsed: PairingCode | None, command: str, **args: Any
    ) -> dict[str, Any]:
        try:
            node = await self.rpc.call(command, timeout_s=self._timeout_s, **args)
        except TimeoutError as err:
            raise DeviceUnavailableError(
                f"commissioning did not finish within {self._timeout_s:.0f} s",
                {"stage": _last(attempt)},
            ) from err
        except ControllerCommandError as err:
            if self._log_follower is not None:
                # The SDK's last lines (the reason) may still be on their way to the log.
                await asyncio.sleep(_LOG_SETTLE_S)
            raise _explain_failure(err, attempt, parsed) from err
        if not isinstance(node, dict) or not isinstance(node.get("node_id"), int):
            raise CommissioningFailedError("the controller's answer carries no node id")
        return node

    async def _follow_log(self, attempt: _Attempt) -> None:
        assert self._log_follower is not None  # noqa: S101 - checked by the caller
        async for line in self._log_follower():
            attempt.log.append(line)
            for pattern, stage in _LOG_STAGES:
                if pattern.search(line):
                    self._publish(attempt, stage)

    async def _wait_for_tools(self, node_id: int) -> tuple[str, ...]:
        registry = self._registry
        if registry is None:
            return ()
        changed = asyncio.Event()
        unsubscribe = registry.subscribe(lambda _action, _tool: changed.set())
        try:
            deadline = time.monotonic() + self._tools_timeout_s
            while True:
                tools = tools_of_node(registry, node_id)
                # The generator registers a node's tools in one pass; wait for a quiet moment.
                if tools:
                    await asyncio.sleep(0.2)
                    return tools_of_node(registry, node_id)
                if self._node_known is not None and self._node_known(node_id):
                    # Devices and their tools are applied in one pass: built with none
                    # (a button: events only) is the answer, not a reason to wait 30 s.
                    return ()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    LOGGER.warning("node %s commissioned but no tools appeared", node_id)
                    return ()
                changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), min(remaining, _KNOWN_POLL_S))
        finally:
            unsubscribe()

    def _publish(self, attempt: _Attempt, stage: CommissionStage, **data: Any) -> None:
        if stage is not CommissionStage.FAILED:
            if stage in attempt.stages:
                return
            attempt.stages.append(stage)
        payload = {
            "commission_id": attempt.commission_id,
            "stage": stage.value,
            "elapsed_ms": round((time.monotonic() - attempt.started) * 1000),
            **{k: v for k, v in data.items() if v is not None},
        }
        self._events.publish(EVENT_TYPE, payload)

    async def nodes(self) -> list[dict[str, Any]]:
        """Return the controller's nodes as ``get_nodes`` reports them."""
        result = await self.rpc.call("get_nodes", timeout_s=30)
        return list(result or [])

    async def remove(self, node_id: int) -> None:
        """Remove a node from the fabric; raise ``NotFoundError`` when it is unknown."""
        try:
            await self.rpc.call("remove_node", timeout_s=60, node_id=node_id)
        except ControllerCommandError as err:
            if err.error_code == _ERR_NOT_EXISTS:
                raise NotFoundError(f"no Matter node {node_id}", {"node_id": node_id}) from err
            raise CommissioningFailedError(
                f"removing node {node_id} failed: {err.details or err.error_code}",
                {"node_id": node_id},
            ) from err


def tools_of_node(registry: ToolRegistry, node_id: int) -> tuple[str, ...]:
    """Return the sorted names of the registered Matter tools that act on ``node_id``."""
    return tuple(sorted(t.definition.name for t in registry.list() if _node_of(t) == node_id))


def _node_of(tool: RegisteredTool) -> int | None:
    matter = tool.definition.metadata.get("matter")
    if isinstance(matter, dict) and isinstance(matter.get("node_id"), int):
        return int(matter["node_id"])
    return None


def _last(attempt: _Attempt) -> str | None:
    return attempt.stages[-1].value if attempt.stages else None


def _explain_failure(
    err: ControllerCommandError, attempt: _Attempt, parsed: PairingCode | None
) -> BridgeError:
    details: dict[str, Any] = {"stage": _last(attempt), "controller_error": err.error_code}
    log = "\n".join(attempt.log)
    if "Bluetooth commissioning is not available" in err.details:
        details["reason"] = "no_bluetooth"
        return CommissioningFailedError(
            "the controller has no Bluetooth adapter: Wi-Fi and Thread devices are "
            "commissioned over Bluetooth LE (start the controller with a Bluetooth adapter)",
            details,
        )
    if err.error_code == _ERR_INVALID_ARGUMENTS:
        details["reason"] = "invalid_code"
        return InvalidParamsError(
            f"the controller rejected the pairing input: {err.details}", details
        )
    if err.error_code == _ERR_INTERVIEW_FAILED:
        details["reason"] = "interview_failed"
        return CommissioningFailedError(
            "the device joined the fabric but could not be interviewed; try again", details
        )
    if err.error_code in (_ERR_NOT_READY, _ERR_NOT_RESOLVING):
        details["reason"] = "unreachable"
        return DeviceUnavailableError(f"the device is not reachable: {err.details}", details)
    if _ATTESTATION_FAILURE.search(log) or (
        CommissionStage.ATTESTATION in attempt.stages
        and CommissionStage.OPERATIONAL not in attempt.stages
    ):
        details["reason"] = "attestation_failed"
        return CommissioningFailedError(
            "device attestation failed: the device's certificates are not signed by a "
            "trusted PAA (is it a certified product, or is the trust store missing?)",
            details,
        )
    if attempt.log and "Discovered device to be commissioned" not in log:
        details["reason"] = "not_found"
        where = f" (discriminator {parsed.short_discriminator} of 16)" if parsed else ""
        return DeviceUnavailableError(
            f"no device in pairing mode answered{where}: is it powered, in pairing mode and "
            "on this network?",
            details,
        )
    if attempt.log and CommissionStage.PASE not in attempt.stages:
        details["reason"] = "wrong_code"
        return CommissioningFailedError(
            "the device was found but refused the setup code (PASE failed): check the code",
            details,
        )
    details["reason"] = "failed"
    return CommissioningFailedError(
        f"commissioning failed: {err.details or 'controller error'}", details
    )
