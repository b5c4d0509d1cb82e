"""A Wyoming intent-handling service: voice pipelines hand transcripts to the bridge.

A transcript becomes a spoken command ``{"text", "language", "area"}`` (the language and
area from the transcript, else the service's defaults) handed, unchecked, to ``speak``:
the command's one check is where it enters the bridge (``POST /v1/intents/handle``,
``SpokenCommand.CHECK``). A refused command is answered ``not-handled`` with the
bridge's error object in the event's context (``context.error.code``), so a satellite
gets the same stable code an HTTP caller does.

Details: docs/modules.md, ``bridge.voice.wyoming``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from wyoming.asr import Transcript
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Attribution, Describe, HandleModel, HandleProgram, Info
from wyoming.server import AsyncEventHandler

from bridge import __version__, jsonlimits
from bridge.errors import BridgeError
from bridge.jsonlimits import JsonLimits
from bridge.ratelog import RateLimitedLog
from bridge.voice.responses import LANGUAGES

_LOG = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOG)
# One Wyoming event: its header line, its data part and its (audio) payload.
MAX_EVENT_LINE = 64 * 1024
MAX_EVENT_DATA = 64 * 1024
MAX_EVENT_PAYLOAD = 1024 * 1024
EVENT_LIMITS = JsonLimits(max_bytes=MAX_EVENT_DATA, max_depth=32, max_string=16 * 1024)


@dataclass(frozen=True, slots=True)
class SpokenAnswer:
    """What the bridge answered a spoken command: handled or not, the speech, its error."""

    handled: bool
    speech: str
    # The bridge's error object (``code``, ``message``, …) when it refused the command.
    error: dict[str, Any] | None = None


# A spoken command's wire form ``{"text", "language", "area"?}`` -> the bridge's answer.
Speak = Callable[[dict[str, Any]], Awaitable[SpokenAnswer]]


def service_info(languages: Sequence[str] = LANGUAGES) -> Info:
    """Return the ``info`` this service describes itself with."""
    attribution = Attribution(name="Atmosphere Matter Bridge", url="")
    model = HandleModel(
        name="atmosphere-intents",
        attribution=attribution,
        installed=True,
        description="Home Assistant sentence templates on the bridge's Matter devices",
        version=__version__,
        languages=list(languages),
    )
    program = HandleProgram(
        name="atmosphere-bridge",
        attribution=attribution,
        installed=True,
        description="Runs spoken commands as the bridge's device and room tools",
        version=__version__,
        models=[model],
        supports_home_control=True,
    )
    return Info(handle=[program])


def _length(header: dict[str, Any], key: str, limit: int) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise ValueError(f"{key} must be an integer 0-{limit}")
    return value


async def read_event(reader: asyncio.StreamReader) -> Event | None:
    """Return the next event (``None`` at end of stream), read with the boundary's JSON limits.

    Raise ``ValueError`` (or a ``BridgeError``) for a malformed or oversized event.
    """
    line = await reader.readline()
    if not line:
        return None
    header = jsonlimits.loads(line, replace(EVENT_LIMITS, max_bytes=MAX_EVENT_LINE))
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ValueError("an event is a JSON object with a string 'type'")  # noqa: TRY004
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise ValueError("an event's 'data' is an object")  # noqa: TRY004
    data_length = _length(header, "data_length", MAX_EVENT_DATA)
    if data_length:
        extra = jsonlimits.loads(await reader.readexactly(data_length), EVENT_LIMITS)
        if not isinstance(extra, dict):
            raise ValueError("an event's data part is an object")
        data = {**data, **extra}
    payload_length = _length(header, "payload_length", MAX_EVENT_PAYLOAD)
    payload = await reader.readexactly(payload_length) if payload_length else None
    return Event(type=header["type"], data=data, payload=payload)


class _Handler(AsyncEventHandler):
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        speak: Speak,
        info: Info,
        default_language: str,
        default_area: str | None,
    ) -> None:
        super().__init__(reader, writer)
        self._speak = speak
        self._info = info
        self._language = default_language
        self._area = default_area

    async def run(self) -> None:
        """Handle events until the stream ends (the library's loop, with our reader)."""
        try:
            while (event := await read_event(self.reader)) is not None:
                if not await self.handle_event(event):
                    break
        finally:
            self.writer.close()

    async def handle_event(self, event: Event) -> bool:
        if Describe.is_type(event.type):
            await self.write_event(self._info.event())
            return True
        if not Transcript.is_type(event.type):
            return True  # other events (audio, pings) are not ours
        answer = await self._speak(self.command(event.data))
        if answer.handled:
            reply: Handled | NotHandled = Handled(text=answer.speech)
        else:
            context = None if answer.error is None else {"error": answer.error}
            reply = NotHandled(text=answer.speech, context=context)
        await self.write_event(reply.event())
        return True

    def command(self, data: dict[str, Any]) -> dict[str, Any]:
        """Return the spoken command a transcript's data stands for (as sent, unchecked)."""
        context = data.get("context")
        area = context.get("area", self._area) if isinstance(context, dict) else self._area
        command = {
            k: v
            for k, v in (
                ("text", data.get("text")),
                ("language", data.get("language") or self._language),
                ("area", area),
            )
            if v is not None
        }
        return command


class WyomingIntentServer:
    """Serve the Wyoming protocol on a TCP port; transcripts go to ``speak``."""

    def __init__(
        self,
        speak: Speak,
        *,
        host: str = "127.0.0.1",
        port: int = 10700,
        languages: Sequence[str] = LANGUAGES,
        default_language: str = "en",
        default_area: str | None = None,
    ) -> None:
        self._speak = speak
        self._area = default_area
        self.host = host
        self.port = port
        self._info = service_info(languages)
        self._language = default_language
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        """Start listening; return the bound port."""
        self._server = await asyncio.start_server(self._client, self.host, self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        """Stop listening and close the connections."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = _Handler(reader, writer, self._speak, self._info, self._language, self._area)
        try:
            await handler.run()
        except (
            ValueError,
            KeyError,
            TypeError,
            UnicodeDecodeError,
            ConnectionError,
            asyncio.IncompleteReadError,
            BridgeError,
        ) as err:
            _RATE_LOG.info(
                f"unreadable:{type(err).__name__}",
                "wyoming client sent something unreadable: %s",
                type(err).__name__,
            )
        finally:
            writer.close()
