"""``POST /v1/intents/handle``: a spoken sentence in, a tool call and a sentence to speak out.

Body ``{"text": "turn off the kitchen lights", "language": "en", "area": "Kitchen"}``
(``language`` defaults to ``en``; tags like ``de-DE`` are accepted; ``area`` is the
speaker's room — a voice satellite's — where sentences without a place act). The
sentence runs with the caller's token, so the tool's own permission decides; the answer
is the engine's ``IntentReply`` JSON (``speech``, ``handled``, ``intent``, ``calls``,
``suggestions``, ``duration_ms``) with status 200 even when nothing was done — the
``speech`` says why.
"""

from __future__ import annotations

from aiohttp import web

from bridge.api.bearer import token_of
from bridge.api.http import json_response, read_json, service_of
from bridge.api.openapi import add_route
from bridge.errors import running
from bridge.invocation.spoken import SpokenCommand


async def handle_intent(request: web.Request) -> web.Response:
    """Recognise the sentence, run it with the caller's token and answer what to say."""
    token = token_of(request)
    # Checked as it is read by ``SpokenCommand.CHECK``: malformed is 400 whether or not
    # the voice engine runs.
    command = SpokenCommand.from_checked(await read_json(request))
    engine = running(service_of(request).intents, "voice")
    reply = await engine.handle(command.text, command.language, token=token, area=command.area)
    return json_response(reply.to_json())


def setup(app: web.Application) -> None:
    """Add the intent route."""
    add_route(
        app,
        "POST",
        "/v1/intents/handle",
        handle_intent,
        operation_id="handleIntent",
        summary="Run a spoken sentence (Home Assistant intent templates) with the caller's token",
        tags=["voice"],
        request_body=SpokenCommand.CHECK,
        responses={"200": "speech, handled, intent, calls, suggestions, duration_ms"},
    )
