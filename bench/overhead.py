"""What the bridge adds to a Matter command: direct controller WebSocket vs a bridge tool call.

In one run against the same real device (a matter.js on/off light commissioned on the
bridge's managed python-matter-server, all inside a private network namespace):

(a) ``device_command`` OnOff.Toggle sent straight over the controller's WebSocket API;
(b) the same action as ``POST /v1/invoke`` of the light's ``_toggle`` tool over HTTP to
    the bridge (a separate ``atmosphere-bridge run`` process), with a real signed token
    checked on every call (resolve → validate → authorize → execute → record).

Calls are strictly interleaved, the order flipped every pair (direct, bridge, bridge,
direct, ...), after a warm-up of both sides, so machine load and the device's own
timing hit both sides alike. Prints one JSON line: ``direct_p50_ms``, ``direct_p99_ms``,
``bridge_p50_ms``, ``bridge_p99_ms``, ``overhead_p50_ms`` and ``overhead_p99_ms`` (p50
and p99 of the PAIRED differences bridge[i] - direct[i], the two calls of one pair run
back to back; a difference of two p99s is no tail figure and can even come out
negative), ``p50_minus_p50_ms`` (the old figure), the sample count, and CPU per call:
``bridge_cpu_ms_per_call`` (the bridge process, all its threads, per bridge call) and
``controller_cpu_ms_per_command`` (the controller the bridge started, per command it
served: one direct and one bridged command per pair). CPU figures hold up on a busy
machine where wall-clock ones do not. ``--breakdown`` adds where a bridge call's time
goes: ``http`` (client round trip minus the bridge's own ``duration_ms``: HTTP both
ways, auth middleware, body parsing, response encoding), ``pipeline`` (``duration_ms``
minus the handler's ``execution.duration_ms``), ``handler`` and its excess over the
direct call, and the bridge process's CPU time per call.

``--channel ws`` makes (b) a ``tool_invoke`` over one ``/v1/calls/ws`` socket (the
persistent call channel an agent keeps open) instead of ``POST /v1/invoke``;
``--channel http,ws`` runs one phase of each against the same bridge, each with its own
interleaved direct calls and CPU figures (the WebSocket phase's keys start ``ws_``).
``--channel relay`` sends the direct command through ``bench/relay.py``, a bare
WebSocket relay process (keys ``relay_``; its CPU is the relay's): the floor of what any
process between agent and controller adds on this machine. ``--channel rawhttp`` is
the same ``POST /v1/invoke`` from a minimal keep-alive HTTP/1.1 client (the request's
bytes made once, one write; the answer read by Content-Length): aiohttp's client costs
~0.25 ms more CPU per request than its WebSocket per frame, and sends the body in a
segment of its own (a second wake-up of the bridge), which ``http`` charges to the bridge.

Before any phase the bench waits until the bridge, its controller and the device are
quiet (``settle_s``) and sends ``--prewarm`` direct commands: the device and controller
answer their first few hundred commands slower and with a longer tail, which whichever
phase ran first used to pay. ``--bridge`` runs another checkout's ``atmosphere-bridge``
(a before); ``--other PATH`` runs the whole bench for that bridge and then for this
checkout's in one invocation and prints before -> after of the main figures with their
ratios, beside each run's floor (a bare client's CPU per command: the machine's speed
then); ``--samples FILE`` writes every latency in call order.

Usage (root, after ``make install``):
    .venv/bin/python bench/overhead.py [--calls 500] [--warmup 50] [--breakdown]
                                       [--channel http|rawhttp|ws|relay|http,ws,relay]
                                       [--prewarm 600] [--bridge PATH] [--samples FILE]
                                       [--other PATH/.venv/bin/atmosphere-bridge]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from benchlib import (
    controller_headers,
    cpu_seconds,
    descendants,
    paired,
    percentile,
    settle,
    start_profile,
    stop_process,
    summarize_profile,
    tree_cpu_seconds,
    user_system_seconds,
)

from bridge import netns
from bridge.auth.keys import KEY_FILE_NAME, NodeKey
from bridge.auth.tokens import issue_token
from bridge.demo.virtual_devices import DeviceKind, VirtualDevice, node_available, write_test_paa

REPO = Path(__file__).resolve().parents[1]


async def wait_for_line(proc: asyncio.subprocess.Process, prefix: str, timeout_s: float) -> str:
    assert proc.stdout is not None
    async with asyncio.timeout(timeout_s):
        while True:
            line = (await proc.stdout.readline()).decode()
            if not line:
                raise RuntimeError("the bridge exited before it was ready")
            if line.startswith(prefix):
                return line.strip()


async def run(
    calls: int,
    warmup: int,
    breakdown: bool,
    channels: list[str],
    profile: Path | None = None,
    samples_to: Path | None = None,
    prewarm: int = 600,
    program: Path = REPO / ".venv" / "bin" / "atmosphere-bridge",
) -> dict[str, Any]:
    reason = netns.unsupported_reason() or node_available()
    if reason:
        raise SystemExit(f"overhead benchmark needs a fabric namespace: {reason}")
    base = Path(tempfile.mkdtemp(prefix="atmosphere-bench-", dir="/var/tmp"))
    ns = netns.create_namespace(f"atm-bench-{os.getpid()}")
    device = VirtualDevice(
        kind=DeviceKind.ONOFF,
        state_dir=base / "device",
        port=5540,
        passcode=20202301,
        discriminator=0x50A,
        label="Bench Lamp",
        netns=ns,
    )
    bridge: asyncio.subprocess.Process | None = None
    relay: asyncio.subprocess.Process | None = None
    results: dict[str, dict[str, Any]] = {}
    quiet: dict[str, float] = {}
    try:
        state = base / "state"
        await asyncio.to_thread(write_test_paa, state / "controller" / "paa")
        await asyncio.to_thread(device.start)
        config = base / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "state_dir": str(state),
                    "api": {"host": "127.0.0.1", "port": 0},
                    "matter": {
                        "netns": ns.name,
                        # This checkout's controller, for another checkout's bridge
                        # too (one under /tmp cannot see its own: PrivateTmp).
                        "controller_venv": str(REPO / ".venv-controller"),
                    },
                }
            )
        )
        token = issue_token(
            NodeKey.load_or_create(state / KEY_FILE_NAME),
            agent_id="bench",
            permissions=["device:*"],
            ttl_s=3600,
        )
        bridge = await asyncio.create_subprocess_exec(
            str(program),
            "--config",
            str(config),
            "run",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        line = await wait_for_line(bridge, "atmosphere-bridge listening on", 120)
        url = line.rsplit(" ", 1)[1]
        headers = {"Authorization": f"Bearer {token}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            assert device.pairing is not None
            async with http.post(
                f"{url}/v1/devices/commission", json={"code": device.pairing.manual}
            ) as resp:
                result = await resp.json()
            if resp.status != 201:
                raise RuntimeError(f"commissioning failed: {result}")
            node_id = result["node_id"]
            toggle = next(t for t in result["tools"] if t.endswith("_toggle"))
            controller_url = f"ws://{ns.ns_address}:5580/ws"
            async with (
                aiohttp.ClientSession() as ws_session,
                # Uncompressed, like the bridge's own adapter connection.
                ws_session.ws_connect(
                    controller_url, compress=0, headers=controller_headers(state)
                ) as ws,
            ):
                await ws.receive_json()
                direct = direct_toggler(ws, node_id)

                async def via_http() -> tuple[float, dict[str, Any]]:
                    started = time.perf_counter()
                    async with http.post(
                        f"{url}/v1/invoke", json={"tool": toggle, "params": {}}
                    ) as resp:
                        body = await resp.json()
                    return (time.perf_counter() - started) * 1000, body

                channel = await http.ws_connect(
                    f"{url.replace('http', 'ws', 1)}/v1/calls/ws", compress=0
                )
                call_ids = itertools.count(1)

                async def via_ws() -> tuple[float, dict[str, Any]]:
                    call_id = f"c{next(call_ids)}"
                    started = time.perf_counter()
                    await channel.send_str(
                        json.dumps(
                            {"type": "tool_invoke", "id": call_id, "tool": toggle, "params": {}}
                        )
                    )
                    while True:
                        body = json.loads((await channel.receive()).data)
                        if body.get("request_id") == call_id:
                            break
                    return (time.perf_counter() - started) * 1000, body

                # The same POST over a minimal keep-alive HTTP/1.1 client: the request's
                # bytes made once, the answer read by its Content-Length. aiohttp's client
                # spends ~0.2 ms more CPU per request than its WebSocket does per frame
                # (bench_client_cpu_ms_per_bridge_call); this channel keeps that
                # client-side cost out of the bridge's overhead.
                host, port_text = url.removeprefix("http://").rsplit(":", 1)
                raw_reader, raw_writer = await asyncio.open_connection(host, int(port_text))
                raw_body = json.dumps({"tool": toggle, "params": {}}).encode()
                raw_request = (
                    f"POST /v1/invoke HTTP/1.1\r\nHost: {host}:{port_text}\r\n"
                    f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(raw_body)}\r\n\r\n"
                ).encode() + raw_body

                async def via_rawhttp() -> tuple[float, dict[str, Any]]:
                    started = time.perf_counter()
                    raw_writer.write(raw_request)
                    head = await raw_reader.readuntil(b"\r\n\r\n")
                    length = next(
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    )
                    body = json.loads(await raw_reader.readexactly(length))
                    return (time.perf_counter() - started) * 1000, body

                vias = {"http": via_http, "ws": via_ws, "rawhttp": via_rawhttp}
                controller = descendants(bridge.pid)  # the managed controller (and its netns exec)
                if "relay" in channels:
                    relay = await asyncio.create_subprocess_exec(
                        sys.executable,
                        str(REPO / "bench" / "relay.py"),
                        controller_url,
                        str(state / "controller" / "controller.key"),
                        stdout=asyncio.subprocess.PIPE,
                    )
                    relay_port = (await wait_for_line(relay, "relay listening on", 30)).split()[-1]
                    relayed = await ws_session.ws_connect(
                        f"ws://127.0.0.1:{relay_port}/ws", compress=0
                    )
                    await relayed.receive_json()  # the controller's greeting, passed on
                    relay_ids = itertools.count(1)

                    async def via_relay() -> tuple[float, dict[str, Any]]:
                        return await toggle_over(relayed, f"r{next(relay_ids)}", node_id)

                    vias["relay"] = via_relay
                # Let the commissioning's aftermath (the controller's subscriptions and
                # storage, the bridge's tool generation) die down before any phase.
                device_pids = [device.pid] if device.pid else []
                quiet = await settle([bridge.pid, *controller, *device_pids])
                # The device and the controller answer the first few hundred commands
                # slower and with a longer tail (seen: the first phase's direct p50 4.0 ms
                # falling to 2.7 ms, its p99 15.7 to 6.6 ms, over ~400 commands, with
                # both processes otherwise idle): warm them up before any phase.
                for _ in range(prewarm):
                    await direct()
                for name in channels:
                    # The process between the bench and the controller: the bridge, or
                    # the bare relay (whose CPU is then the one counted).
                    middle = relay.pid if name == "relay" else bridge.pid
                    spy = None
                    if profile is not None:
                        spy = start_profile(middle, profile.with_suffix(f".{name}.txt"))
                    results[name] = await phase(
                        direct, vias[name], calls, warmup, middle, controller
                    )
                    if spy is not None:
                        spy.send_signal(signal.SIGINT)
                        await asyncio.to_thread(spy.wait, 60)
                        print(
                            f"{name}:",
                            summarize_profile(profile.with_suffix(f".{name}.txt"), top=45),
                            flush=True,
                        )
                await channel.close()
                raw_writer.close()
                if relay is not None:
                    await relayed.close()
    finally:
        if relay is not None and relay.returncode is None:
            relay.kill()
            await relay.wait()
        if bridge is not None:
            await stop_process(bridge)
        await asyncio.to_thread(device.stop)
        netns.delete_namespace(ns.name)
        shutil.rmtree(base, ignore_errors=True)
    if samples_to is not None:  # the raw latencies, in call order, for a closer look
        samples_to.write_text(
            json.dumps(
                {
                    name: {"direct": results[name]["direct"], "bridge": results[name]["bridge"]}
                    for name in channels
                }
            )
        )
    out: dict[str, Any] = {**quiet}
    for name in channels:
        figures = summarize(results[name], breakdown)
        # HTTP's figures keep their historical names; other channels are prefixed.
        prefix = "" if name == "http" else f"{name}_"
        out.update({f"{prefix}{k}": v for k, v in figures.items()})
    return out


def direct_toggler(
    ws: aiohttp.ClientWebSocketResponse, node_id: int
) -> Callable[[], Awaitable[float]]:
    """Return a function sending one direct Toggle over ``ws``: its ms, raising on error."""
    ids = itertools.count(1)

    async def direct() -> float:
        elapsed, msg = await toggle_over(ws, str(next(ids)), node_id)
        if "error_code" in msg:
            raise RuntimeError(f"direct call failed: {msg}")
        return elapsed

    return direct


async def toggle_over(
    ws: aiohttp.ClientWebSocketResponse, msg_id: str, node_id: int
) -> tuple[float, dict[str, Any]]:
    """Send OnOff.Toggle as a raw ``device_command``; return (ms, the controller's answer)."""
    started = time.perf_counter()
    await ws.send_json(
        {
            "message_id": msg_id,
            "command": "device_command",
            "args": {
                "node_id": node_id,
                "endpoint_id": 1,
                "cluster_id": 6,
                "command_name": "Toggle",
                "payload": {},
            },
        }
    )
    while True:
        msg = await ws.receive_json()
        if msg.get("message_id") == msg_id:
            return (time.perf_counter() - started) * 1000, msg


async def phase(
    direct: Callable[[], Awaitable[float]],
    via: Callable[[], Awaitable[tuple[float, dict[str, Any]]]],
    calls: int,
    warmup: int,
    bridge_pid: int,
    controller: list[int],
) -> dict[str, Any]:
    """Interleave ``direct`` and ``via`` calls; return the samples and CPU of the run."""
    samples: dict[str, Any] = {"direct": [], "bridge": [], "server": [], "handler": []}
    own = {"direct": 0.0, "bridge": 0.0}  # this bench's loop-thread CPU on each side

    async def timed_direct() -> float:
        t0 = time.thread_time()
        elapsed = await direct()
        own["direct"] += time.thread_time() - t0
        return elapsed

    async def bridged() -> float:
        t0 = time.thread_time()
        elapsed, body = await via()
        own["bridge"] += time.thread_time() - t0
        if "message_id" in body:  # the relay: the controller's own answer, passed on
            if "error_code" in body:
                raise RuntimeError(f"relayed call failed: {body}")
            return elapsed
        if body.get("status") != "success":
            raise RuntimeError(f"bridge call failed: {body}")
        samples["server"].append(float(body["duration_ms"]))
        samples["handler"].append(float(body["execution"]["duration_ms"]))
        return elapsed

    for _ in range(warmup):  # sessions, caches, first-call paths on both sides
        await direct()
        await bridged()
    samples["server"].clear()
    samples["handler"].clear()
    cpu_before = cpu_seconds(bridge_pid)
    ctl_before = tree_cpu_seconds(controller)
    user_before, system_before = user_system_seconds(bridge_pid)
    own["direct"] = own["bridge"] = 0.0
    for i in range(calls):
        # Strictly interleaved, the order flipped every pair: each side sees the same
        # machine load and follows the other side's call equally often.
        if i % 2:
            samples["bridge"].append(await bridged())
            samples["direct"].append(await timed_direct())
        else:
            samples["direct"].append(await timed_direct())
            samples["bridge"].append(await bridged())
    samples["bridge_cpu_s"] = cpu_seconds(bridge_pid) - cpu_before
    user_after, system_after = user_system_seconds(bridge_pid)
    samples["bridge_user_s"] = user_after - user_before
    samples["bridge_system_s"] = system_after - system_before
    samples["client_direct_s"] = own["direct"]
    samples["client_bridge_s"] = own["bridge"]
    samples["controller_cpu_s"] = tree_cpu_seconds(controller) - ctl_before
    return samples


def summarize(samples: dict[str, Any], breakdown: bool) -> dict[str, Any]:
    """Return one channel's figures from its samples."""
    direct_ms, bridge_ms = samples["direct"], samples["bridge"]
    server_ms, handler_ms = samples["server"], samples["handler"]
    d50, d99 = percentile(direct_ms, 0.5), percentile(direct_ms, 0.99)
    b50, b99 = percentile(bridge_ms, 0.5), percentile(bridge_ms, 0.99)
    diffs = paired(bridge_ms, direct_ms)
    out: dict[str, Any] = {
        "direct_p50_ms": round(d50, 3),
        "direct_p99_ms": round(d99, 3),
        "bridge_p50_ms": round(b50, 3),
        "bridge_p99_ms": round(b99, 3),
        "overhead_p50_ms": round(percentile(diffs, 0.5), 3),
        "overhead_p99_ms": round(percentile(diffs, 0.99), 3),
        "p50_minus_p50_ms": round(b50 - d50, 3),
        "calls_each": len(direct_ms),
        # CPU the bridge process (not its controller) used per bridge call, all included.
        "bridge_cpu_ms_per_call": round(samples["bridge_cpu_s"] * 1000 / len(bridge_ms), 3),
        "controller_cpu_ms_per_command": round(
            samples["controller_cpu_s"] * 1000 / (len(bridge_ms) + len(direct_ms)), 3
        ),
        # The bridge's CPU split into user and kernel time (10 ms ticks, summed).
        "bridge_user_ms_per_call": round(samples["bridge_user_s"] * 1000 / len(bridge_ms), 3),
        "bridge_system_ms_per_call": round(samples["bridge_system_s"] * 1000 / len(bridge_ms), 3),
        # Floors from the same run: this bench's own event-loop thread (a bare aiohttp
        # client) per direct command (one WebSocket frame out, one in) and per bridge call.
        "bare_ws_client_cpu_ms_per_command": round(
            samples["client_direct_s"] * 1000 / len(direct_ms), 3
        ),
        "bench_client_cpu_ms_per_bridge_call": round(
            samples["client_bridge_s"] * 1000 / len(bridge_ms), 3
        ),
    }
    if breakdown and server_ms:
        # Where a bridge call's time goes, per call then as p50/p99 of each part:
        # transport = client round trip minus the bridge's duration_ms (HTTP or the
        # WebSocket frame both ways, auth, body parsing, response encoding); pipeline =
        # duration_ms minus the handler (replay, resolve, validate, authorize, audit,
        # events); handler = the Matter tool's handler, whose controller round trip is
        # what ``direct`` measures. (For HTTP the transport part is called ``http``.)
        http_part = [b - s for b, s in zip(bridge_ms, server_ms, strict=True)]
        pipe_part = [s - h for s, h in zip(server_ms, handler_ms, strict=True)]
        for name, values in (("http", http_part), ("pipeline", pipe_part), ("handler", handler_ms)):
            out[f"{name}_p50_ms"] = round(percentile(values, 0.5), 3)
            out[f"{name}_p99_ms"] = round(percentile(values, 0.99), 3)
        out["handler_minus_direct_p50_ms"] = round(percentile(handler_ms, 0.5) - d50, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per side (default 300)")
    parser.add_argument("--warmup", type=int, default=50, help="warm-up calls per side")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="add http/pipeline/handler p50/p99 of the bridge calls to the line",
    )
    parser.add_argument(
        "--channel",
        default="http",
        help="the bridge side: http (POST /v1/invoke), rawhttp (the same POST from a "
        "minimal keep-alive HTTP/1.1 client), ws (tool_invoke over one "
        "/v1/calls/ws socket), relay (the direct command through bench/relay.py: the "
        "floor of any process in between), or several as http,ws,relay (one phase "
        "each, same bridge and device)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="record the bridge with py-spy during each phase into FILE.<channel>.txt "
        "(collapsed stacks) and print the busiest functions",
    )
    parser.add_argument(
        "--bridge",
        type=Path,
        default=REPO / ".venv" / "bin" / "atmosphere-bridge",
        help="the atmosphere-bridge to run (another checkout's, for a before)",
    )
    parser.add_argument(
        "--prewarm",
        type=int,
        default=600,
        help="direct commands sent before any phase, to warm the device and "
        "controller up (default 600)",
    )
    parser.add_argument(
        "--samples",
        type=Path,
        default=None,
        help="write every call's latency (ms, in call order) to this JSON file",
    )
    parser.add_argument(
        "--other",
        type=Path,
        default=None,
        help="another checkout's atmosphere-bridge: run it (before), then this "
        "one (after), and print before -> after with ratios",
    )
    args = parser.parse_args()
    channels = [c.strip() for c in args.channel.split(",") if c.strip()]
    if not channels or any(c not in ("http", "rawhttp", "ws", "relay") for c in channels):
        parser.error("--channel takes http, rawhttp, ws, relay or a comma-separated list")
    if args.other is not None:
        sides = {}
        for side, program in (("before", args.other), ("after", args.bridge)):
            sides[side] = asyncio.run(
                run(
                    args.calls,
                    args.warmup,
                    args.breakdown,
                    channels,
                    None,
                    None,
                    max(0, args.prewarm),
                    program,
                )
            )
            print(json.dumps({side: sides[side]}), flush=True)
        print_ratios(sides["before"], sides["after"], channels)
        return
    line = asyncio.run(
        run(
            args.calls,
            args.warmup,
            args.breakdown,
            channels,
            args.profile,
            args.samples,
            max(0, args.prewarm),
            args.bridge,
        )
    )
    print(json.dumps(line), flush=True)


def print_ratios(before: dict[str, Any], after: dict[str, Any], channels: list[str]) -> None:
    """Print before -> after (and after / before) of each channel's main figures."""
    names = (
        "overhead_p50_ms",
        "overhead_p99_ms",
        "bridge_cpu_ms_per_call",
        "controller_cpu_ms_per_command",
        "bare_ws_client_cpu_ms_per_command",
    )
    print(f"{'figure':<42}{'before':>10}{'after':>10}{'after/before':>14}")
    for channel in channels:
        prefix = "" if channel == "http" else f"{channel}_"
        for name in names:
            key = prefix + name
            if key in before and key in after and before[key]:
                print(
                    f"{key:<42}{before[key]:>10.3f}{after[key]:>10.3f}"
                    f"{after[key] / before[key]:>14.2f}"
                )


if __name__ == "__main__":
    sys.exit(main())
