"""The Wyoming intent service, driven by the wyoming package's own client.

A real bridge on the real controller (recorded devices as test nodes) serves
``POST /v1/intents/handle``; the Wyoming service forwards transcripts to it over HTTP
with its token, exactly as ``atmosphere-bridge wyoming`` does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from wyoming.asr import Transcript
from wyoming.client import AsyncTcpClient
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info

from bridge.cli.main import main
from bridge.cli.wyoming import http_speaker
from bridge.voice.wyoming import WyomingIntentServer
from tests.support.home import Home

pytestmark = pytest.mark.controller


async def ask(port: int, event: object) -> object:
    client = AsyncTcpClient("127.0.0.1", port)
    await client.connect()
    try:
        await client.write_event(event.event())  # type: ignore[attr-defined]
        # A language's first sentence builds its templates (and the pre-filter's index):
        # seconds on a loaded 2-core machine, so the bound only catches a stall.
        async with asyncio.timeout(30):
            return await client.read_event()
    finally:
        await client.disconnect()


async def test_describe_transcripts_denial_and_garbage(home: Home) -> None:
    server = WyomingIntentServer(http_speaker(home.url, home.token("device:control:*")), port=0)
    port = await server.start()
    try:
        info = Info.from_event(await ask(port, Describe()))  # type: ignore[arg-type]
        (program,) = info.handle
        assert program.models[0].languages == ["en", "de", "fr", "es", "nl"]

        reply = await ask(port, Transcript(text="turn off the sofa lamp", language="en"))
        assert Handled.is_type(reply.type)  # type: ignore[attr-defined]
        assert Handled.from_event(reply).text == "Turned off Sofa Lamp."  # type: ignore[arg-type]
        reply = await ask(port, Transcript(text="schalte die Küchenlampe ein", language="de"))
        assert Handled.from_event(reply).text == "Kitchen Light ist eingeschaltet."  # type: ignore[arg-type]

        reply = await ask(port, Transcript(text="open the pod bay hatch", language="en"))
        assert NotHandled.is_type(reply.type)  # type: ignore[attr-defined]
        assert NotHandled.from_event(reply).text == "Sorry, I didn't understand that."  # type: ignore[arg-type]

        # Garbage on the socket ends that connection only.
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"\xff\xfe not json at all\n")
        await writer.drain()
        writer.close()
        # An oversized transcript is refused by the bridge's one check of a spoken
        # command, with the code an HTTP caller gets for it.
        refused = NotHandled.from_event(await ask(port, Transcript(text="x" * 600, language="en")))  # type: ignore[arg-type]
        assert refused.context is not None
        assert (refused.context["error"]["code"], refused.context["error"]["details"]["field"]) == (
            "INVALID_PARAMS",
            "text",
        )
        assert refused.text is not None
        assert refused.text.startswith("Sorry: spoken command does not match the schema at /text")
    finally:
        await server.stop()

    # The speaker's room: the satellite's context, else the service's own area.
    token = home.token("device:control:*")
    server = WyomingIntentServer(http_speaker(home.url, token), port=0)
    port = await server.start()
    try:
        here = Transcript(text="turn on the lights", language="en", context={"area": "Kitchen"})
        assert Handled.from_event(await ask(port, here)).text == "Turned on the lights in Kitchen."  # type: ignore[arg-type]
        nowhere = Transcript(text="turn on the lights", language="en")
        assert NotHandled.from_event(await ask(port, nowhere)).text == (  # type: ignore[arg-type]
            "Sorry, which room do you mean? I don't know where you are."
        )
        odd = Transcript(text="turn on the lights", language="en", context={"area": 7})
        refused = NotHandled.from_event(await ask(port, odd))  # type: ignore[arg-type]
        assert refused.context is not None
        assert (refused.context["error"]["code"], refused.context["error"]["details"]["field"]) == (
            "INVALID_PARAMS",
            "area",
        )
    finally:
        await server.stop()
    satellite = WyomingIntentServer(
        http_speaker(home.url, token), port=0, default_area="Wohnzimmer"
    )
    port = await satellite.start()
    try:
        reply = await ask(port, Transcript(text="mach das Licht aus", language="de"))
        assert Handled.from_event(reply).text == "Das Licht in Living Room ist ausgeschaltet."  # type: ignore[arg-type]
    finally:
        await satellite.stop()

    # A token that may only read: the denial is spoken, nothing runs.
    reader = WyomingIntentServer(http_speaker(home.url, home.token("device:read:*")), port=0)
    port = await reader.start()
    try:
        reply = await ask(port, Transcript(text="turn off the sofa lamp", language="en"))
        assert NotHandled.from_event(reply).text == (  # type: ignore[arg-type]
            "Sorry, you are not allowed to do that with Sofa Lamp."
        )
    finally:
        await reader.stop()


def test_cli_refuses_a_token_file_others_can_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token_file = tmp_path / "voice.token"
    token_file.write_text("secret-token-value")
    token_file.chmod(0o644)
    args = ["wyoming", "--url", "http://127.0.0.1:9", "--token-file", str(token_file)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "chmod 600" in err
    assert "secret-token-value" not in err
