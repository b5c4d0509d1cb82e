"""The console's health page data and QR codes of secrets shown once.

``GET /console/api/health`` runs the doctor's checks (cached for a few seconds, one run
at a time, never on the event loop's time) and adds versions and the controller's state;
it needs ``admin:health``. ``POST /console/api/qr`` draws a QR code of a text sent in the
body (a new token), so the secret never travels in a URL.
"""

from __future__ import annotations

import asyncio
import io
import platform
import time
from importlib import metadata
from typing import Any

from aiohttp import web

from bridge import __version__
from bridge.api.http import read_body, service_of
from bridge.auth.permissions import covers
from bridge.console.headers import headers as _headers
from bridge.console.sessions import check_csrf, session_of
from bridge.doctor.runner import run_doctor
from bridge.errors import InvalidRequestError, PermissionDeniedError, UnauthenticatedError, running
from bridge.jsonlimits import JsonLimits, loads
from bridge.matter import catalogue_sdk_version

HEALTH_PERMISSION = "admin:health"
HEALTH_CACHE_S = 10.0
MAX_QR_BODY = 20_000
MAX_QR_SECRET = 4_000  # a QR code holds at most ~2.9 kB of bytes at level L; refuse above
_HEALTH_KEY: web.AppKey[dict[str, Any]] = web.AppKey("console_health")
DISTRIBUTIONS = ("atmosphere-bridge", "aiohttp", "mcp", "hassil", "home-assistant-intents")


def _allowed(request: web.Request, permission: str) -> None:
    session = session_of(request)
    if session is None:
        raise UnauthenticatedError("sign in to the console first", {"reason": "missing"})
    runtime = running(service_of(request).invocation, "invocation")
    token = runtime.verifier.verify(session.token)
    runtime.invoker.charge(token)  # every route counts against the token's rate limit
    if not any(covers(p, permission) for p in token.permissions):
        raise PermissionDeniedError(f"this needs '{permission}'", {"required": permission})


def versions(request: web.Request) -> dict[str, Any]:
    """Return the bridge's, Python's, the main libraries' and the controller's versions."""
    found: dict[str, Any] = {"bridge": __version__, "python": platform.python_version()}
    for name in DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    # The Matter SDK the shipped cluster catalogue was written from (not installed).
    found["cluster_catalogue_sdk"] = catalogue_sdk_version()
    matter = service_of(request).matter
    info = matter.server_info() if matter is not None else None
    found["controller_sdk"] = (info or {}).get("sdk_version")
    found["controller_schema"] = (info or {}).get("schema_version")
    return found


async def health(request: web.Request) -> web.Response:
    """Answer the doctor's checks, versions and the controller's state (``admin:health``)."""
    _allowed(request, HEALTH_PERMISSION)
    state = request.app[_HEALTH_KEY]
    async with state["lock"]:
        if time.monotonic() - state["at"] > HEALTH_CACHE_S or state["report"] is None:
            # The checks of the parts as they run (the managed controller's own address).
            matter = service_of(request).matter
            running = (matter.url, matter.headers) if matter is not None else None
            report = await run_doctor(service_of(request).config, controller=running)
            state["report"], state["at"] = report.to_json(), time.monotonic()
    service = service_of(request)
    matter = service.matter
    controller: dict[str, Any] = {"enabled": matter is not None}
    if matter is not None:
        controller.update(
            connected=matter.connected,
            url=matter.url,
            managed=matter.managed,
            server_info=matter.server_info(),
        )
    body = {
        "doctor": state["report"],
        "versions": versions(request),
        "controller": controller,
        "bridge": service.status(),
    }
    return web.json_response(body, headers=_headers())


async def qr(request: web.Request) -> web.Response:
    """Draw ``{"text"}`` as a QR code (SVG) for a signed-in browser (CSRF-checked)."""
    session = session_of(request)
    if session is None:
        raise UnauthenticatedError("sign in to the console first", {"reason": "missing"})
    check_csrf(request, session)
    body = loads(
        await read_body(request, MAX_QR_BODY), JsonLimits(max_bytes=MAX_QR_BODY, max_depth=2)
    )
    text = body.get("text") if isinstance(body, dict) else None
    if not isinstance(text, str) or not 0 < len(text) <= MAX_QR_SECRET:
        raise InvalidRequestError(f'body is {{"text": 1-{MAX_QR_SECRET} characters}}')
    import segno

    out = io.BytesIO()
    try:
        code = segno.make(text, error="l", micro=False)
    except ValueError as err:  # segno's DataOverflowError: more than a QR code holds
        raise InvalidRequestError(
            "the text is too long for a QR code; copy it instead", {"reason": "too_long_for_qr"}
        ) from err
    code.save(out, kind="svg", scale=4, border=4)
    return web.Response(body=out.getvalue(), content_type="image/svg+xml", headers=_headers())


def setup(app: web.Application) -> None:
    """Keep the health cache on ``app`` (its routes are added by ``pages.setup``)."""
    app[_HEALTH_KEY] = {"lock": asyncio.Lock(), "at": 0.0, "report": None}
