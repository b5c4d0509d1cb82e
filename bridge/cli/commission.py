"""``atmosphere-bridge commission CODE``: commission a Matter device through the running bridge.

The command validates the code locally (a mistyped manual code fails before anything is
sent), opens ``/v1/events`` for ``commissioning.progress``, asks the bridge to
commission (``POST /v1/devices/commission?wait=false``) and prints each stage until
``tools_ready`` (exit 0, with the new tools) or ``failed`` (``error [CODE]: …``, exit 1).
The ``devices list`` / ``devices remove`` helpers live here too; all talk through
``bridge.cli.client``. ``--url`` defaults to the configured API address; ``--token`` to
``$ATMOSPHERE_BRIDGE_TOKEN``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from bridge.cli.client import BridgeUnreachableError, add_client_args, base_url, call, headers
from bridge.errors import InvalidParamsError, error_from_json

if TYPE_CHECKING:
    from bridge.matter import CommissionRequest

STAGE_TEXT = {
    "discovering": "looking for the device on the network",
    "pase": "secure session with the setup code established (PASE)",
    "attestation": "checking the device's certificates (attestation)",
    "operational": "device joined the fabric (operational certificate)",
    "interview": "reading the device's clusters (interview)",
    "tools_ready": "tools ready",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``commission`` command."""
    p = subparsers.add_parser("commission", help="commission a Matter device by its pairing code")
    p.add_argument("code", nargs="?", help="QR payload (MT:...) or 11/21-digit manual code")
    p.add_argument("--passcode", type=int, help="setup passcode (with --discriminator, no code)")
    p.add_argument("--discriminator", type=int, help="12-bit discriminator (with --passcode)")
    p.add_argument("--name", help="friendly name for the new device")
    p.add_argument("--room", help="room the device is in")
    p.add_argument("--wifi-ssid", help="Wi-Fi network the device should join")
    p.add_argument("--wifi-password", help="Wi-Fi password")
    p.add_argument(
        "--thread", action="store_true", help="a Thread device: use the border router's dataset"
    )
    p.add_argument("--thread-dataset", help="Thread active dataset as hex TLVs")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait (default 300)")
    p.add_argument("--json", action="store_true", help="print the final result as JSON")
    add_client_args(p)
    p.set_defaults(func=commission_command)


def request_from_args(args: argparse.Namespace) -> CommissionRequest:
    """Return the validated commissioning request the options describe."""
    from bridge.matter import CommissionRequest

    network = "on_network"
    if args.wifi_ssid or args.wifi_password:
        network = "wifi"
    if args.thread or args.thread_dataset:
        network = "thread"
    doc: dict[str, Any] = {"network": network}
    for key, value in (
        ("code", args.code),
        ("passcode", args.passcode),
        ("discriminator", args.discriminator),
        ("name", args.name),
        ("room", args.room),
        ("wifi_ssid", args.wifi_ssid),
        ("wifi_password", args.wifi_password),
        ("thread_dataset", args.thread_dataset),
    ):
        if value is not None:
            doc[key] = value
    return CommissionRequest.from_json(doc)


def request_body(req: CommissionRequest) -> dict[str, Any]:
    """Return the HTTP body for a commissioning request."""
    body: dict[str, Any] = {"network": req.network.value}
    for key, value in (
        ("code", req.code),
        ("passcode", req.passcode),
        ("discriminator", req.discriminator),
        ("name", req.name),
        ("room", req.room),
        ("wifi_ssid", req.wifi_ssid),
        ("wifi_password", req.wifi_password),
        ("thread_dataset", req.thread_dataset_hex),
    ):
        if value is not None:
            body[key] = value
    return body


async def commission_via_bridge(
    url: str,
    token: str | None,
    req: CommissionRequest,
    *,
    timeout_s: float = 300.0,
    on_stage: Any = None,
) -> dict[str, Any]:
    """Commission through the running bridge, reporting stages; return the final event data."""
    import aiohttp

    # The token goes in the Authorization header only: a query string ends up in
    # proxies' and servers' request logs (the query form is for browsers, which cannot
    # set headers on a WebSocket).
    events_url = url.replace("http", "ws", 1) + "/v1/events?types=commissioning."
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(events_url, headers=headers(token)) as ws,
        ):
            started = await call(
                "POST", f"{url}/v1/devices/commission?wait=false", token, request_body(req)
            )
            commission_id = started["commission_id"]
            deadline = time.monotonic() + timeout_s
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BridgeUnreachableError(
                        f"no result from the bridge within {timeout_s:.0f} s"
                    )
                msg = await ws.receive(timeout=remaining)
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    raise BridgeUnreachableError("the bridge closed the event stream")
                event = json.loads(msg.data)
                data = event.get("data") or {}
                if data.get("commission_id") != commission_id:
                    continue
                if on_stage is not None:
                    on_stage(data)
                if data.get("stage") == "failed":
                    raise error_from_json(data.get("error") or {})
                if data.get("stage") == "tools_ready":
                    return dict(data)
    except (aiohttp.ClientError, TimeoutError) as err:
        raise BridgeUnreachableError(f"cannot follow commissioning at {url}: {err}") from err


def _print_stage(data: dict[str, Any]) -> None:
    stage = str(data.get("stage"))
    if stage == "failed":
        return
    text = STAGE_TEXT.get(stage, stage)
    node = f" (node {data['node_id']})" if "node_id" in data else ""
    print(f"[{data.get('elapsed_ms', 0) / 1000:6.2f}s] {stage:<12} {text}{node}", flush=True)


def commission_command(args: argparse.Namespace) -> int:
    """Commission one device and print its progress and tools."""
    req = request_from_args(args)
    url = base_url(args)
    result = asyncio.run(
        commission_via_bridge(
            url,
            args.token,
            req,
            timeout_s=args.timeout,
            on_stage=None if args.json else _print_stage,
        )
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    tools = result.get("tools") or []
    print(f"commissioned node {result.get('node_id')} with {len(tools)} tools:")
    for name in tools:
        print(f"  {name}")
    return 0


def list_devices(url: str, token: str | None) -> dict[str, Any]:
    """Return the running bridge's ``GET /v1/devices`` answer."""
    answer: dict[str, Any] = asyncio.run(call("GET", f"{url}/v1/devices", token))
    return answer


def format_devices(answer: dict[str, Any]) -> list[str]:
    """Return printable lines for a device list."""
    devices = answer.get("devices") or []
    if not devices:
        return ["no devices; commission one with: atmosphere-bridge commission CODE"]
    lines = [f"{'ID':<8} {'NAME':<24} {'ROOM':<14} {'KIND':<16} {'UP':<4} TOOLS"]
    for d in devices:
        lines.append(
            f"{d.get('id', ''):<8} {d.get('name', ''):<24} {d.get('room') or '-':<14} "
            f"{d.get('kind', ''):<16} {'yes' if d.get('available') else 'NO':<4} "
            f"{len(d.get('tools') or [])}"
        )
        unknown = [
            t.get("name", "")
            for t in d.get("device_type_info") or []
            if isinstance(t, dict) and not t.get("known", True)
        ]
        unmapped = [
            c.get("name", "") for c in d.get("unmapped_clusters") or [] if isinstance(c, dict)
        ]
        if unknown:
            lines.append(f"{'':<8} device type not in the device library: {', '.join(unknown)}")
        if unmapped:
            lines.append(
                f"{'':<8} no friendly tool for: {', '.join(unmapped)} "
                "(commands: matter:control_matter_device)"
            )
    return lines


def remove_device(url: str, token: str | None, device: str) -> dict[str, Any]:
    """Ask the running bridge to remove a device; return its answer."""
    if not device.strip():
        raise InvalidParamsError("name the device to remove (id, slug or name)")
    answer: dict[str, Any] = asyncio.run(
        call("DELETE", f"{url}/v1/devices/{quote(device, safe='')}", token)
    )
    return answer
