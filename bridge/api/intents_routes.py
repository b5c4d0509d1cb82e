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
from bridge.errors import ControllerUnavailableError, InvalidParamsError

FIELDS = frozenset({"text", "language", "area"})


async def handle_intent(request: web.Request) -> web.Response:
    """Recognise the sentence, run it with the caller's token and answer what to say."""
    token = token_of(request)
    body = await read_json(request)  # a malformed body is 400 whether or not Matter runs
    engine = service_of(request).intents
    if engine is None:
        raise ControllerUnavailableError("spoken commands need the Matter layer, which is off")
    if not isinstance(body, dict):
        raise InvalidParamsError("the body must be a JSON object {\"text\", \"language\"}")
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise InvalidParamsError(f"unknown fields: {', '.join(unknown)}", {"fields": unknown})
    text = body.get("text")
    language = body.get("language", "en")
    if not isinstance(text, str):
        raise InvalidParamsError("'text' must be a string", {"field": "text"})
    if not isinstance(language, str) or not 2 <= len(language) <= 16:
        raise InvalidParamsError("'language' must be a language tag like 'en' or 'de-DE'",
                                 {"field": "language"})  # fmt: skip
    area = body.get("area")
    if area is not None and (not isinstance(area, str) or not 1 <= len(area) <= 64):
        raise InvalidParamsError("'area' must be a room name of 1-64 characters",
                                 {"field": "area"})  # fmt: skip
    reply = await engine.handle(text, language, token=token, area=area)
    return json_response(reply.to_json())


def setup(app: web.Application) -> None:
    """Add the intent route."""
    add_route(
        app, "POST", "/v1/intents/handle", handle_intent,
        operation_id="handleIntent",
        summary="Run a spoken sentence (Home Assistant intent templates) with the caller's token",
        tags=["voice"],
        body_error=InvalidParamsError,
        request_body={
            "type": "object",
            "required": ["text"],
            "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": 500},
                "language": {"type": "string", "default": "en",
                             "description": "en, de, fr, es or nl (tags like de-DE work)"},
                "area": {"type": "string", "minLength": 1, "maxLength": 64,
                         "description": "The speaker's room (name or alias): sentences "
                                        "without a place act there"},
            },
            "additionalProperties": False,
        },
        responses={"200": "speech, handled, intent, calls, suggestions, duration_ms"},
    )  # fmt: skip
