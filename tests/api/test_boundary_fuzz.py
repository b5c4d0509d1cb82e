"""Over 10,000 generated hostile requests to a real bridge: every route and message type.

One bridge (mesh on, static and discovery-less, so the mesh routes reach their
handlers; Matter off) serves its API on loopback; a Wyoming intent server forwards to
it. A seeded generator (``random.Random``, so a failure replays) builds requests for
every route the router serves (from the OpenAPI registry, path parameters filled with
hostile text), WebSocket frames on ``/v1/events``, ``tool_invoke`` frames on the call
socket ``/v1/calls/ws`` (each answered by exactly one ``tool_response``), Wyoming events,
``/mcp`` JSON-RPC bodies and raw HTTP heads (too long, malformed), mixing in the cases
from issue 14: deep nesting up to 100,000, lone surrogates in every field, NaN/Infinity,
huge numbers, ``ttl_seconds: 1e30``, an envelope with a NaN timestamp, oversized bodies and headers.
Interleaved, valid ``core:store_data`` writes are acknowledged.

Asserts: no 5xx (the one exception: the routes that need Matter — devices, rooms,
floors, spoken commands, Matter bindings — answer 503 ``COMPONENT_UNAVAILABLE``, because
this bridge runs without Matter); every error is the JSON error form; no
``Traceback`` in any response or log record, no record with exception info; the log
stays under ``LOG_BOUND`` bytes; afterwards every acknowledged write reads back equal,
has its audit record, and the server answers a normal call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest
from wyoming.event import Event, async_read_event

from bridge.api.events_routes import MAX_CLIENT_FRAME
from bridge.api.openapi import OPENAPI_KEY
from bridge.cli.wyoming import http_speaker
from bridge.config import ApiConfig, BridgeConfig, MatterConfig, MeshConfig
from bridge.service import BridgeService
from bridge.tools.context import CallContext
from bridge.tools.definition import Execution, Requires, ToolDefinition
from bridge.voice.wyoming import WyomingIntentServer
from tests.support.auth import bearer, service_token
from tests.support.ports import free_port

HTTP_REQUESTS = 9_000
WS_FRAMES = 600
CALL_FRAMES = 400
WYOMING_EVENTS = 400
RAW_HEADS = 300
CONCURRENCY = 48
LOG_BOUND = 64 * 1024  # bytes of log for the whole run (one line per cause per minute)
SEED = 14
MCP_PATHS = ("/mcp", "/mcp/compact")  # JSON-RPC errors, not the bridge's error form
CONSOLE_PREFIX = "/console/"
MATTER_ROUTES = (
    "/v1/devices",
    "/v1/rooms",
    "/v1/floors",
    "/v1/intents/handle",
    "/v1/automations/bindings",
)

HOSTILE_STRINGS = [
    "\ud800",
    "a\udeadb",
    "\udfff",
    "",
    " ",
    "x" * 5000,
    "\u0000",
    "../../etc/passwd",
    "core:store_data",
    "fuzz:echo",
    "%ff",
    "\u202e",
    "é中🙂",
    "null",
    "1e30",
    "{{device_id}}",
]
HOSTILE_NUMBERS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e999",
    "1e30",
    "9" * 400,
    "-0",
    "1e-400",
    "12345678901234567890123",
]


@dataclass
class Live:
    service: BridgeService
    url: str
    port: int
    wyoming_port: int
    tokens: dict[str, str]


class _LogTap(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bytes = 0
        self.bad: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        self.bytes += len(text) + 40
        if record.exc_info or "Traceback" in text:
            self.bad.append(f"{record.name}: {text[:300]}")


async def _echo(params: dict[str, Any], ctx: CallContext) -> Any:
    return {"echo": params}


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[Live]:
    port = free_port()
    config = BridgeConfig(
        state_dir=tmp_path / "state",
        api=ApiConfig(host="127.0.0.1", port=port),
        matter=replace(MatterConfig(), enabled=False),
        mesh=MeshConfig(enabled=True, node_name="fuzz", discovery=False),
    )
    service = BridgeService(config, enable_matter=False)
    await service.start()
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "maximum": 10},
            "s": {"type": "string", "maxLength": 8},
        },
        "required": ["n"],
        "additionalProperties": False,
    }
    service.registry.register(
        ToolDefinition(
            name="echo",
            namespace="fuzz",
            description="Echo",
            parameters=schema,
            requires=Requires(permissions=("fuzz:run:{s}",)),
            execution=Execution(async_allowed=True),
        ),
        _echo,
    )
    await service.start_api("127.0.0.1", port)
    url = f"http://127.0.0.1:{port}"
    tokens = {
        "star": service_token(service, "fuzzer", ("*",)),
        "narrow": service_token(service, "narrow", ("fuzz:run:a",)),
        "nothing": service_token(service, "nobody", ("nothing:at:all",)),
    }
    wyoming = WyomingIntentServer(http_speaker(url, tokens["star"], timeout_s=10), port=0)
    wyoming_port = await wyoming.start()
    try:
        yield Live(service=service, url=url, port=port, wyoming_port=wyoming_port, tokens=tokens)
    finally:
        await wyoming.stop()
        await service.stop_api()
        await service.stop()


# -- the generator -------------------------------------------------------------------


class Gen:
    """Hostile JSON texts, bodies, paths and headers from one seeded ``Random``."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def string(self) -> str:
        r = self.r
        if r.random() < 0.5:
            return r.choice(HOSTILE_STRINGS)
        return "".join(
            chr(r.choice([r.randint(32, 126), r.randint(0xA0, 0x2FFF)]))
            for _ in range(r.randint(0, 12))
        )

    def value(self, depth: int = 0) -> str:
        """Return JSON-ish text: mostly valid, sometimes NaN, surrogates, deep or huge."""
        r = self.r
        roll = r.random()
        if depth > 3 or roll < 0.35:
            leaf = r.random()
            if leaf < 0.3:
                return json.dumps(self.string())
            if leaf < 0.45:
                return r.choice(HOSTILE_NUMBERS)
            if leaf < 0.7:
                return str(r.randint(-(2**40), 2**40))
            return r.choice(["true", "false", "null", "1.5", "0", '"ok"'])
        if roll < 0.42:
            n = r.choice([65, 200, 1000, 100_000])
            return "[" * n + "]" * n
        if roll < 0.45:
            return '"' + "z" * r.choice([70_000, 1_100_000]) + '"'
        if roll < 0.7:
            return "[" + ",".join(self.value(depth + 1) for _ in range(r.randint(0, 4))) + "]"
        items = []
        for _ in range(r.randint(0, 4)):
            items.append(f"{json.dumps(self.string())}:{self.value(depth + 1)}")
        return "{" + ",".join(items) + "}"

    def invoke_body(self) -> str:
        r = self.r
        fields = [
            f'"tool":{
                r.choice([json.dumps("fuzz:echo"), json.dumps("core:store_data"), self.value(2)])
            }'
        ]
        for name in (
            "params",
            "idempotency_key",
            "context",
            "routing",
            "id",
            "timestamp",
            "version",
        ):
            if r.random() < 0.4:
                if name == "context":
                    inner = (
                        f'{{"trace_id":{json.dumps(self.string())},"session_id":{self.value(3)}}}'
                    )
                elif name == "params" and r.random() < 0.5:
                    inner = (
                        f'{{"key":"k{r.randint(0, 9)}","value":{self.value(1)},'
                        f'"ttl_seconds":{r.choice(["1e30", "1e400", "-1", "3", "NaN"])}}}'
                    )
                else:
                    inner = self.value(1)
                fields.append(f'"{name}":{inner}')
        return "{" + ",".join(fields) + "}"

    def envelope(self) -> str:
        r = self.r
        ts = r.choice(["NaN", "Infinity", "1e308", str(time.time()), '"x"', "null"])
        return (
            f'{{"type":"mesh_envelope","kind":{
                json.dumps(r.choice(["push", "gossip", "invoke", "x"]))
            },"from":{json.dumps(self.string())},"to":"","nonce":'
            f'{json.dumps(self.string())},"timestamp":{ts},"node_name":"n",'
            f'"public_key":"AAAA","body":{self.value(1)},"signature":"AAAA"}}'
        )

    def rule_body(self) -> str:
        """Return a rule-shaped document with hostile parts (issue 32's routes)."""
        r = self.r
        hostile = self.value(2)
        rule_id = r.choice(
            [json.dumps(f"fz{r.randint(0, 10**6)}"), json.dumps(self.string()), self.value(3)]
        )
        zone = r.choice(
            [
                json.dumps(self.string()),
                '"Europe/Berlin"',
                '"../../etc/passwd"',
                '"UTC\\u0000"',
                hostile,
            ]
        )
        trigger = r.choice(
            [
                f'{{"type":"tool_call","tool":{r.choice([json.dumps("fuzz:echo"), hostile])}}}',
                f'{{"type":"time","at":{r.choice([json.dumps("07:30"), hostile])},"timezone":{zone}}}',  # noqa: E501
                f'{{"type":"sun","event":"sunset","latitude":{r.choice(HOSTILE_NUMBERS)},'
                f'"longitude":{self.value(3)},"offset_min":{self.value(3)}}}',
                f'{{"type":"state","device_id":{json.dumps(self.string())},"path":"1/6/0",'
                f'"for_s":{r.choice(HOSTILE_NUMBERS)},"equals":{self.value(1)}}}',
                f'{{"type":"presence","person":{json.dumps(self.string())},"home":{hostile}}}',
            ]
        )
        action = r.choice(
            [
                f'{{"type":"call","tool":"fuzz:echo","params":{self.value(1)}}}',
                f'{{"type":"delay","seconds":{r.choice(HOSTILE_NUMBERS)}}}',
                f'{{"type":"notify","url":{json.dumps(self.string())},"message":{hostile}}}',
            ]
        )
        actions = ",".join([action] * r.choice([1, 2, 33]))
        extra = r.choice(
            [
                "",
                f',"permissions":{self.value(2)}',
                f',"conditions":[{{"type":"time_window","after":"22:00",'
                f'"before":{hostile},"timezone":{zone}}}]',
                f',"rate_limit_per_minute":{r.choice(HOSTILE_NUMBERS)}',
            ]
        )
        return f'{{"id":{rule_id},"trigger":{trigger},"actions":[{actions}]{extra}}}'

    def body(self, path: str) -> bytes:
        r = self.r
        roll = r.random()
        if roll < 0.05:
            return bytes(r.randint(0, 255) for _ in range(r.randint(0, 64)))
        if roll < 0.07:
            return b""
        if roll < 0.08:
            return b'{"tool":"fuzz:echo"}' + b" " * (1_100_000)
        if path.startswith("/v1/mesh/"):
            text = self.envelope() if r.random() < 0.7 else self.value()
        elif path in ("/v1/invoke", "/v1/jobs", "/v1/toolmanager/execute"):
            text = self.invoke_body() if r.random() < 0.8 else self.value()
        elif path in MCP_PATHS:
            text = (
                f'{{"jsonrpc":"2.0","id":{self.value(3)},"method":'
                f"{json.dumps(r.choice(['initialize', 'tools/list', 'tools/call', 'x']))},"
                f'"params":{self.value(1)}}}'
            )
        elif path == "/v1/automations":
            text = self.rule_body() if r.random() < 0.8 else self.value()
        elif path == "/v1/intents/handle":
            text = f'{{"text":{self.value(3)},"language":{self.value(3)}}}'
        else:
            text = self.value()
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = text.encode("utf-8", "surrogatepass")
        if r.random() < 0.03:  # cut short
            data = data[: r.randint(0, len(data))]
        return data

    def fill(self, template: str) -> str:
        out = []
        for part in template.split("/"):
            if part.startswith("{") and part.endswith("}"):
                part = quote(self.string().encode("utf-8", "surrogatepass"), safe="")[:300] or "x"
            out.append(part)
        return "/".join(out)


# -- senders -------------------------------------------------------------------------


@dataclass
class Tally:
    requests: int = 0
    by_status: dict[int, int] | None = None
    failures: list[str] | None = None

    def __post_init__(self) -> None:
        self.by_status = {}
        self.failures = []

    def saw(self, status: int) -> None:
        assert self.by_status is not None
        self.requests += 1
        self.by_status[status] = self.by_status.get(status, 0) + 1

    def fail(self, what: str) -> None:
        assert self.failures is not None
        self.failures.append(what[:400])


async def _http(
    live: Live,
    session: aiohttp.ClientSession,
    gen: Gen,
    tally: Tally,
    routes: list[tuple[str, str]],
    acked: dict[str, tuple[Any, str]],
    index: int,
) -> None:
    r = gen.r
    if index % 25 == 0:  # an acknowledged write to check afterwards
        key = f"fz{index}"
        value = {"i": index, "text": "é中🙂" * (index % 5), "list": [index, None, True]}
        call = {"tool": "core:store_data", "params": {"key": key, "value": value}}
        async with session.post(
            live.url + "/v1/invoke", json=call, headers=bearer(live.tokens["star"])
        ) as resp:
            body = await resp.json()
            tally.saw(resp.status)
            if resp.status == 200:
                acked[key] = (value, body["call_id"])
            else:
                tally.fail(f"valid write answered {resp.status}: {body}")
        return
    method, template = r.choice(routes)
    if r.random() < 0.1:
        method = r.choice(["PUT", "PATCH", "OPTIONS", "TRACE", "DELETE"])
    path = gen.fill(template)
    if r.random() < 0.1:
        path += "?" + r.choice(
            [
                "limit=x",
                "q=%ff",
                "status=bogus",
                "types=bogus",
                "token=" + quote(gen.string().encode("utf-8", "surrogatepass")),
                "view=flat&q=a&limit=1000",
            ]
        )
    headers: dict[str, str] = {}
    who = r.choice(["star", "star", "narrow", "nothing", "none", "garbage"])
    if who in live.tokens:
        headers.update(bearer(live.tokens[who]))
    elif who == "garbage":
        headers["Authorization"] = "Bearer " + r.choice(["x", "a.b.c", "e30.e30", "Bearer"])
    headers["Content-Type"] = r.choice(
        ["application/json"] * 6
        + ["text/plain", "application/json; charset=latin-1", "multipart/form-data"]
    )
    if template in MCP_PATHS:
        headers["Accept"] = "application/json, text/event-stream"
    data = gen.body(template) if method not in ("GET", "HEAD") or r.random() < 0.05 else None
    try:
        async with session.request(
            method, live.url + path, data=data, headers=headers, allow_redirects=False
        ) as resp:
            raw = await resp.read()
            tally.saw(resp.status)
            _check_answer(tally, method, template, resp.status, resp.content_type, raw)
    except aiohttp.ClientError as err:
        # Oversized bodies may be answered (413) and the socket closed before all is sent.
        if not (data and len(data) > 1_000_000):
            tally.fail(f"{method} {template}: {type(err).__name__} {err}")
        tally.saw(0)


def _check_answer(
    tally: Tally, method: str, template: str, status: int, ctype: str, raw: bytes
) -> None:
    if b"Traceback" in raw:
        tally.fail(f"{method} {template}: traceback in the response")
    if status >= 500:
        matter_off = (
            template.startswith(MATTER_ROUTES)
            and status == 503
            and json.loads(raw)["error"]["code"] == "COMPONENT_UNAVAILABLE"
        )
        if not matter_off:
            tally.fail(f"{method} {template}: {status} {raw[:300]!r}")
    if template.startswith(CONSOLE_PREFIX) or template == "/":
        # The console's pages answer people: an HTML page (or a plain 404 for a missing
        # static file), never a 5xx or a traceback (checked above).
        if status >= 400 and ctype not in ("text/html", "text/plain", "application/json"):
            tally.fail(f"{method} {template}: {status} answered {ctype}")
        return
    if status >= 400 and template not in MCP_PATHS and method != "HEAD":
        try:
            error = json.loads(raw)["error"]
            assert set(error) == {"code", "message", "details", "retryable"}
        except (ValueError, KeyError, TypeError, AssertionError):
            tally.fail(f"{method} {template}: {status} not the JSON error form: {raw[:200]!r}")
    if template in MCP_PATHS and status >= 400 and ctype != "application/json":
        tally.fail(f"{template} {status} answered {ctype}")


async def _websocket(live: Live, session: aiohttp.ClientSession, gen: Gen, tally: Tally) -> None:
    """Each frame is answered: the server reads client frames only to drain them, so a
    ping sent right after it must come back as its pong (same payload) on a live socket;
    anything else received must be an event, and an oversize frame gets close 1009."""
    sent = 0
    while sent < WS_FRAMES:
        who = gen.r.choice(["star", "narrow", "nothing"])
        big = False
        async with session.ws_connect(
            live.url + "/v1/events", autoping=False, headers=bearer(live.tokens[who])
        ) as ws:
            while sent < WS_FRAMES and not big:
                roll = gen.r.random()
                frame: str | bytes = (
                    gen.value()
                    if roll < 0.7
                    else gen.body("/v1/events")[:2000]
                    if roll < 0.9
                    else "x" * 200_000
                )
                big = len(frame) > MAX_CLIENT_FRAME  # the server closes with 1009
                if isinstance(frame, str):
                    await ws.send_str(frame)
                else:
                    await ws.send_bytes(frame)
                sent += 1
                tally.saw(101)
                if big:
                    break
                marker = f"frame-{sent}".encode()
                await ws.ping(marker)
                answer = await _ws_answer(ws)
                if (answer.type, answer.data) != (aiohttp.WSMsgType.PONG, marker):
                    tally.fail(
                        f"/v1/events frame {sent} ({frame[:40]!r}): answered "
                        f"{answer.type.name} {str(answer.data)[:100]} instead of its pong"
                    )
                    return
            if big:  # the server closes with 1009 (message too big); read that close
                answer = await _ws_answer(ws)
                if (answer.type, answer.data) != (aiohttp.WSMsgType.CLOSE, 1009):
                    tally.fail(
                        f"/v1/events oversize frame answered {answer.type.name} "
                        f"{answer.data!r}, not close 1009"
                    )
                continue
            await ws.close()
            if ws.close_code != 1000:
                tally.fail(f"/v1/events closed with {ws.close_code}")


async def _calls_socket(live: Live, session: aiohttp.ClientSession, gen: Gen, tally: Tally) -> None:
    """Each ``tool_invoke`` frame on the call socket is answered by one ``tool_response``:
    a result, or an error in the JSON error form (a frame too big for the socket closes it
    with 1009, and a new socket is answered again)."""
    limit = live.service.config.api.max_body_bytes
    url = live.url.replace("http", "ws") + "/v1/calls/ws"
    sent = 0
    while sent < CALL_FRAMES:
        who = gen.r.choice(["star", "narrow", "nothing"])
        async with session.ws_connect(url, headers=bearer(live.tokens[who])) as ws:
            while sent < CALL_FRAMES:
                frame = gen.invoke_body() if gen.r.random() < 0.8 else gen.value()
                data = frame.encode("utf-8", "surrogatepass")
                sent += 1
                tally.saw(101)
                if gen.r.random() < 0.05:  # a binary frame: refused, the socket stays
                    await ws.send_bytes(data)
                else:
                    await ws.send_str(data.decode("utf-8", "replace"))
                answer = await asyncio.wait_for(ws.receive(), 15)
                if len(data) > limit:
                    if (answer.type, answer.data) != (aiohttp.WSMsgType.CLOSE, 1009):
                        tally.fail(f"/v1/calls/ws oversize frame answered {answer.type.name}")
                    break
                if answer.type is not aiohttp.WSMsgType.TEXT:
                    tally.fail(f"/v1/calls/ws frame {frame[:60]!r} answered {answer.type.name}")
                    return
                if "Traceback" in answer.data:
                    tally.fail(f"/v1/calls/ws frame {frame[:60]!r}: traceback")
                doc = json.loads(answer.data)
                if doc.get("type") != "tool_response" or (
                    doc["status"] == "error"
                    and set(doc["error"]) != {"code", "message", "details", "retryable"}
                ):
                    tally.fail(f"/v1/calls/ws frame {frame[:60]!r} answered {answer.data[:200]}")
                elif doc["status"] == "error" and doc["error"]["code"] == "INTERNAL":
                    tally.fail(f"/v1/calls/ws frame {frame[:60]!r}: INTERNAL {answer.data[:200]}")
                    return


async def _ws_answer(ws: aiohttp.ClientWebSocketResponse) -> aiohttp.WSMessage:
    """Return the next message that is not an event (events may interleave)."""
    while True:
        msg = await asyncio.wait_for(ws.receive(), 15)
        if msg.type is aiohttp.WSMsgType.TEXT and "type" in json.loads(msg.data):
            continue
        return msg


async def _wyoming_answer(reader: asyncio.StreamReader) -> Event | None:
    """Return the server's next event, None when it closed the connection (a reset is a
    close with our unread bytes still in its buffer)."""
    try:
        return await asyncio.wait_for(async_read_event(reader), 15)
    except ConnectionResetError:
        return None


class _Stop(Exception):
    pass


def _stop(tally: Tally, what: str) -> None:
    tally.fail(what)
    raise _Stop


async def _wyoming(live: Live, gen: Gen, tally: Tally) -> None:
    """Every event gets its answer: describe → info, a transcript → handled or not-handled
    (hostile text: that, or the connection closed with nothing sent when the event cannot
    be read), an unknown type → nothing (the next describe is still answered), an
    oversize length or an unreadable line → the connection closed with no byte sent; after
    every close a new connection is answered again."""
    sent = 0
    while sent < WYOMING_EVENTS:
        reader, writer = await asyncio.open_connection("127.0.0.1", live.wyoming_port)
        closed = False
        try:
            for _ in range(gen.r.randint(1, 6)):
                roll = gen.r.random()
                sent += 1
                tally.saw(1)
                if roll < 0.2:
                    writer.write(b'{"type":"describe"}\n')
                    answer = await _wyoming_answer(reader)
                    if answer is None or answer.type != "info":
                        _stop(tally, f"wyoming describe answered {answer}")
                    continue
                if roll < 0.3:
                    writer.write(
                        b'{"type":"ping-of-another-program","data":{}}\n{"type":"describe"}\n'
                    )
                    answer = await _wyoming_answer(reader)
                    if answer is None or answer.type != "info":
                        _stop(tally, f"wyoming unknown event, then describe: answered {answer}")
                    continue
                if roll < 0.6:
                    plain = gen.r.random() < 0.5
                    text = json.dumps(gen.string()) if plain else gen.value(3)
                    data = f'{{"text":{text}}}'.encode("utf-8", "surrogatepass")
                    writer.write(
                        f'{{"type":"transcript","data_length":{len(data)}}}\n'.encode() + data
                    )
                    answer = await _wyoming_answer(reader)
                    readable = plain and "\\ud" not in text.lower()
                    if answer is None and not readable:
                        closed = True
                        break
                    if (
                        answer is None
                        or answer.type not in ("handled", "not-handled")
                        or not isinstance(answer.data.get("text"), str)
                        or not answer.data["text"]
                    ):
                        _stop(tally, f"wyoming transcript {text[:60]!r} answered {answer}")
                    continue
                # Unreadable: an oversize data length or a hostile line. Nothing is sent
                # back and the connection is closed.
                writer.write(
                    b'{"type":"transcript","data_length":999999999}\n'
                    if roll < 0.7
                    else b"\xff" + gen.body("/wyoming")[:5000] + b"\n"
                )
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
                try:
                    rest = await asyncio.wait_for(reader.read(), 15)
                except ConnectionResetError:  # closed before reading all we sent
                    rest = b""
                if rest != b"":
                    _stop(tally, f"wyoming unreadable event answered {rest[:100]!r}")
                closed = True
                break
            if not closed:
                writer.write_eof()
                rest = await asyncio.wait_for(reader.read(), 15)
                if rest != b"":
                    _stop(tally, f"wyoming: unasked-for bytes at the end {rest[:100]!r}")
        except (ConnectionError, TimeoutError) as err:
            tally.fail(f"wyoming: {type(err).__name__} {err}")
            return
        except _Stop:
            return  # one wrong answer is enough: do not wait out every later one
        finally:
            writer.close()


async def _raw(live: Live, gen: Gen, tally: Tally) -> None:
    """Each raw head gets an HTTP answer: a JSON error (4xx) or, for HEAD, 200 without a body."""
    limit = live.service.config.api.max_header_bytes
    heads = [
        b"GET /" + b"a" * (limit + 5) + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"b" * (limit + 5) + b"\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\n" + b"X-H: 1\r\n" * 300 + b"\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40 + b"\r\n\r\n",
        b"POST /v1/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"POST /v1/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n",
        b"GET /healthz HTTP/9.9\r\n\r\n",
        b"GET \x00\x01 HTTP/1.1\r\n\r\n",
        b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    ]
    for i in range(RAW_HEADS):
        raw = heads[i % len(heads)] if i < 2 * len(heads) else gen.r.choice(heads)
        reader, writer = await asyncio.open_connection("127.0.0.1", live.port)
        try:
            writer.write(raw)
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 15)
        except ConnectionError as err:
            answer = b""
            tally.fail(f"raw {raw[:30]!r}: {type(err).__name__} before any answer")
        finally:
            writer.close()
        head, _, body = answer.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1]) if head.startswith((b"HTTP/1.1 ", b"HTTP/1.0 ")) else 0
        tally.saw(status)
        if b"Traceback" in answer:
            tally.fail(f"raw {raw[:30]!r}: traceback {answer[:200]!r}")
        if raw.startswith(b"HEAD "):
            if (status, body) != (200, b""):
                tally.fail(f"raw HEAD: {answer[:200]!r}")
            continue
        if not 400 <= status < 500:
            tally.fail(f"raw {raw[:30]!r}: answered {answer[:200]!r}")
            continue
        try:
            json.loads(body)["error"]["code"]
        except (ValueError, KeyError, TypeError):
            tally.fail(f"raw {raw[:30]!r}: not JSON: {answer[:200]!r}")


async def test_ten_thousand_hostile_requests(live: Live) -> None:
    tap = _LogTap()
    root = logging.getLogger()
    root.addHandler(tap)
    old_level = root.level
    root.setLevel(logging.INFO)
    gen = Gen(SEED)
    tally = Tally()
    acked: dict[str, tuple[Any, str]] = {}
    app = live.service._runner.app  # type: ignore[union-attr]
    routes = [*sorted(app[OPENAPI_KEY].operations), ("HEAD", "/healthz")]
    started = time.monotonic()
    try:
        connector = aiohttp.TCPConnector(limit=CONCURRENCY)
        timeout = aiohttp.ClientTimeout(total=60)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            side = asyncio.gather(
                _websocket(live, session, Gen(SEED + 1), tally),
                _calls_socket(live, session, Gen(SEED + 4), tally),
                _wyoming(live, Gen(SEED + 2), tally),
                _raw(live, Gen(SEED + 3), tally),
            )
            for start in range(0, HTTP_REQUESTS, CONCURRENCY * 4):
                await asyncio.gather(
                    *(
                        _http(live, session, gen, tally, routes, acked, i)
                        for i in range(start, min(HTTP_REQUESTS, start + CONCURRENCY * 4))
                    )
                )
            await side
            took = time.monotonic() - started

            # Afterwards: every acknowledged write is there, audited, and calls still work.
            star = bearer(live.tokens["star"])
            for key, (value, _call_id) in acked.items():
                call = {"tool": "core:get_data", "params": {"key": key}}
                async with session.post(live.url + "/v1/invoke", json=call, headers=star) as resp:
                    body = await resp.json()
                    assert resp.status == 200, body
                    assert body["result"]["value"] == value
            runtime = live.service.invocation
            assert runtime is not None
            await runtime.audit.flush()
            audited = {
                e.call_id
                for e in await runtime.audit.query(
                    agent_id="fuzzer", tool="core:store_data@1.0.0", limit=10_000
                )
            }
            missing = {c for _, c in acked.values()} - audited
            assert not missing, f"{len(missing)} acknowledged writes have no audit record"
            call = {"tool": "fuzz:echo", "params": {"n": 3, "s": "a"}}
            async with session.post(
                live.url + "/v1/invoke", json=call, headers=bearer(live.tokens["narrow"])
            ) as resp:
                assert (resp.status, (await resp.json())["result"]) == (
                    200,
                    {"echo": {"n": 3, "s": "a"}},
                )
            async with session.get(live.url + "/healthz") as resp:
                assert resp.status == 200
    finally:
        root.removeHandler(tap)
        root.setLevel(old_level)
    print(
        f"\n{tally.requests} requests/messages in {took:.1f} s; statuses {tally.by_status}; "
        f"{len(acked)} acknowledged writes; log {tap.bytes} bytes"
    )
    assert tally.requests >= 10_000
    assert not tally.failures, "\n".join(tally.failures[:20])
    assert not tap.bad, "\n".join(tap.bad[:10])
    assert tap.bytes < LOG_BOUND
    assert len(acked) == len(range(0, HTTP_REQUESTS, 25))
