"""Doctor checks of the Thread border router (otbr-agent's REST API) and its dataset.

The border router is read with ``python-otbr-api`` (the active dataset as TLVs) plus a
plain ``GET /node/state`` for the node's Thread role. Nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import aiohttp
import python_otbr_api
from python_otbr_api.tlv_parser import MeshcopTLVType

from bridge.doctor.controller_check import ServerInfo
from bridge.doctor.models import CheckResult, Status
from bridge.errors import BridgeError
from bridge.matter import parse_tlvs

ATTACHED_ROLES = frozenset({"leader", "router", "child"})


@dataclass(frozen=True, slots=True, kw_only=True)
class BorderRouterProbe:
    """What the border router answered; ``error`` is set when it could not be read."""

    url: str
    role: str | None = None
    dataset_tlvs: bytes | None = None
    error: str | None = None
    dataset_error: str | None = None
    summary: dict[str, str] = field(default_factory=dict)


def summarize_dataset(tlvs: bytes) -> dict[str, str]:
    """Return the dataset's public fields (never the network key or PSKc)."""
    items = parse_tlvs(tlvs)
    names = {
        MeshcopTLVType.NETWORKNAME: "network_name",
        MeshcopTLVType.CHANNEL: "channel",
        MeshcopTLVType.PANID: "pan_id",
        MeshcopTLVType.EXTPANID: "ext_pan_id",
    }
    out: dict[str, str] = {}
    for tag, key in names.items():
        item = items.get(tag)
        if item is None:
            continue
        if tag == MeshcopTLVType.CHANNEL:
            out[key] = str(int.from_bytes(item.data, "big"))
        elif tag == MeshcopTLVType.PANID:
            out[key] = "0x" + item.data.hex()
        else:
            out[key] = str(item)
    return out


async def probe_border_router(url: str, timeout_s: float) -> BorderRouterProbe:
    """Read the node's role and active dataset from the REST API at ``url``."""
    url = url.rstrip("/")
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        try:
            async with session.get(f"{url}/node/state") as resp:
                if resp.status != 200:
                    return BorderRouterProbe(
                        url=url, error=f"GET {url}/node/state answered HTTP {resp.status}"
                    )
                body = await resp.json(content_type=None)
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as err:
            return BorderRouterProbe(
                url=url, error=f"cannot read {url}/node/state: {err or type(err).__name__}"
            )
        role = body.get("state") if isinstance(body, dict) else body
        role_text = str(role).lower() if role is not None else "unknown"
        api = python_otbr_api.OTBR(url, session, timeout=max(1, round(timeout_s)))
        try:
            tlvs = await api.get_active_dataset_tlvs()
        except (python_otbr_api.OTBRError, aiohttp.ClientError, OSError, TimeoutError) as err:
            return BorderRouterProbe(
                url=url, role=role_text, dataset_error=str(err) or type(err).__name__
            )
    summary: dict[str, str] = {}
    dataset_error = None
    if tlvs:
        try:
            summary = summarize_dataset(tlvs)
        except BridgeError as err:
            dataset_error = f"the active dataset does not parse: {err.message}"
    return BorderRouterProbe(
        url=url, role=role_text, dataset_tlvs=tlvs, summary=summary, dataset_error=dataset_error
    )


_NOT_CONFIGURED_FIX = (
    "set thread.otbr_url (http://127.0.0.1:8081 when otbr-agent runs on this Pi); "
    "see firmware_notes/otbr-agent.md. Wi-Fi and Ethernet devices work without it"
)


def check_border_router(url: str | None, probe: BorderRouterProbe | None) -> CheckResult:
    """Check the border router's REST API answers."""
    title = "Thread border router REST API reachable"
    if url is None or probe is None:
        return CheckResult(
            name="border_router",
            title=title,
            status=Status.WARN,
            found="no border router configured (thread.otbr_url is empty)",
            fix=_NOT_CONFIGURED_FIX,
        )
    if probe.error is not None:
        return CheckResult(
            name="border_router",
            title=title,
            status=Status.FAIL,
            found=probe.error,
            fix="systemctl status otbr-agent; journalctl -u otbr-agent -e. The REST API "
            "listens on 127.0.0.1:8081 unless otbr-agent was given --rest-listen-address/"
            "--rest-listen-port; a wrong radio baud rate makes otbr-agent exit at start",
        )
    return CheckResult(
        name="border_router",
        title=title,
        status=Status.OK,
        found=f"{probe.url} answers; Thread role {probe.role}",
    )


def _not_checked(name: str, title: str, why: str) -> CheckResult:
    return CheckResult(
        name=name,
        title=title,
        status=Status.WARN,
        found=f"not checked: {why}",
        fix="fix the failing check above first",
    )


def check_thread_network(probe: BorderRouterProbe | None) -> CheckResult:
    """Check the border router is attached to a Thread network."""
    title = "Thread network up"
    if probe is None or probe.error is not None:
        return _not_checked("thread_network", title, "the border router cannot be read")
    role = probe.role or "unknown"
    found = f"border router role: {role}"
    if role in ATTACHED_ROLES:
        return CheckResult(name="thread_network", title=title, status=Status.OK, found=found)
    if role == "disabled":
        return CheckResult(
            name="thread_network",
            title=title,
            status=Status.FAIL,
            found=found,
            fix="Thread is stopped: ot-ctl ifconfig up && ot-ctl thread start (with an "
            "active dataset; see firmware_notes/thread-network.md)",
        )
    if role == "detached":
        return CheckResult(
            name="thread_network",
            title=title,
            status=Status.FAIL,
            found=found,
            fix="the radio is not attached to any network: form one (ot-ctl dataset init new; "
            "dataset commit active; ifconfig up; thread start) or check the radio firmware "
            "and channel; it should become leader within ~10 s",
        )
    return CheckResult(
        name="thread_network",
        title=title,
        status=Status.WARN,
        found=found,
        fix="unexpected role; check ot-ctl state",
    )


def check_thread_dataset(
    probe: BorderRouterProbe | None, configured_hex: str | None
) -> CheckResult:
    """Check an active operational dataset exists (and matches a configured one)."""
    title = "Active Thread dataset present"
    if probe is None or probe.error is not None:
        return _not_checked("thread_dataset", title, "the border router cannot be read")
    if probe.dataset_error is not None:
        return CheckResult(
            name="thread_dataset",
            title=title,
            status=Status.FAIL,
            found=f"cannot read the active dataset: {probe.dataset_error}",
            fix="check otbr-agent's log; ot-ctl dataset active -x",
        )
    if not probe.dataset_tlvs:
        return CheckResult(
            name="thread_dataset",
            title=title,
            status=Status.FAIL,
            found="the border router has no active dataset",
            fix="form a network (ot-ctl dataset init new; ot-ctl dataset commit active) or "
            "import an existing one (ot-ctl dataset set active <hex>); see "
            "firmware_notes/thread-network.md",
        )
    s = probe.summary
    found = (
        f"network {s.get('network_name', '?')}, channel {s.get('channel', '?')}, "
        f"PAN ID {s.get('pan_id', '?')}, extended PAN ID {s.get('ext_pan_id', '?')}"
    )
    details = dict(s)
    if configured_hex and bytes.fromhex(configured_hex) != probe.dataset_tlvs:
        return CheckResult(
            name="thread_dataset",
            title=title,
            status=Status.WARN,
            details=details,
            found=found + "; differs from thread.dataset_hex in the configuration",
            fix="remove thread.dataset_hex (the bridge then uses the border router's) or "
            "update it to: ot-ctl dataset active -x",
        )
    return CheckResult(
        name="thread_dataset", title=title, status=Status.OK, found=found, details=details
    )


def check_thread_credentials(
    probe: BorderRouterProbe | None, info: ServerInfo | None
) -> CheckResult:
    """Check the controller has been given a Thread dataset for commissioning."""
    title = "Thread dataset handed to the controller"
    if probe is None or probe.error is not None or not probe.dataset_tlvs:
        return _not_checked("thread_credentials", title, "no active dataset to hand over")
    if info is None:
        return _not_checked("thread_credentials", title, "the controller cannot be reached")
    if info.thread_credentials_set:
        return CheckResult(
            name="thread_credentials",
            title=title,
            status=Status.OK,
            found="the controller reports thread_credentials_set",
        )
    # The controller keeps the dataset in memory only: the bridge sends it (set_thread_dataset)
    # right before it commissions a Thread device, and a controller restart forgets it.
    return CheckResult(
        name="thread_credentials",
        title=title,
        status=Status.WARN,
        found="the controller holds no Thread dataset yet (it has none after each start)",
        fix="nothing to do before commissioning: the bridge hands the border router's "
        "dataset over when it commissions a Thread device. If that fails at network "
        "setup, check thread.otbr_url and the thread_dataset check",
    )
