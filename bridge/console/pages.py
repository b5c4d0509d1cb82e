"""The console's routes: sign-in and sign-out, the page shells, static files, device state.

Details: docs/modules.md, ``bridge.console.pages``.
"""

from __future__ import annotations

import html
import time
from importlib import resources
from typing import Any

from aiohttp import web

from bridge.auth.permissions import covers
from bridge.auth.tokens import AgentToken, issue_token
from bridge.console.headers import headers as _headers
from bridge.console.sessions import (
    COOKIE,
    SESSION_TTL_S,
    SESSIONS_KEY,
    LinkStore,
    Session,
    SessionStore,
    link_subject,
    same_origin,
    session_of,
    set_cookie,
)
from bridge.errors import (
    BridgeError,
    InvalidRequestError,
    PermissionDeniedError,
    UnauthenticatedError,
    running,
)

PAGES: tuple[tuple[str, str], ...] = (
    ("home", "Home"),
    ("approvals", "Approvals"),
    ("rules", "Rules"),
    ("devices", "Devices"),
    ("rooms", "Rooms"),
    ("tokens", "Agents"),
    ("mesh", "Mesh"),
    ("audit", "Audit"),
    ("health", "Health"),
)
STATIC_TYPES = {"console.js": "text/javascript", "console.css": "text/css"}
MAX_FORM_BYTES = 20_000
# (cluster id, attribute id) pairs the pages show: OnOff, LevelControl, ColorControl,
# Thermostat, DoorLock, WindowCovering, TemperatureMeasurement.
STATE_ATTRIBUTES: tuple[tuple[int, int], ...] = (
    (6, 0),
    (8, 0),
    (0x300, 0),
    (0x300, 1),
    (0x300, 7),
    (0x300, 8),
    (0x201, 0),
    (0x201, 0x11),
    (0x201, 0x12),
    (0x201, 0x1C),
    (0x101, 0),
    (0x102, 0xE),
    (0x402, 0),
)


def _page(title: str, body: str, *, session: Session | None = None, page: str = "") -> str:
    esc = html.escape
    nav = ""
    meta = ""
    if session is not None:
        items = "".join(
            f'<li><a href="/console/{key}"{" aria-current=page" if key == page else ""}>'
            f"{esc(label)}</a></li>"
            for key, label in PAGES
        )
        nav = (
            f'<nav aria-label="Console"><ul>{items}</ul>'
            f'<form method="post" action="/console/signout" class="signout">'
            f'<input type="hidden" name="csrf" value="{esc(session.csrf)}">'
            f'<span class="who">{esc(session.agent_id)}</span>'
            f'<button type="submit">Sign out</button></form></nav>'
        )
        meta = f'<meta name="csrf" content="{esc(session.csrf)}">'
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{meta}<title>{esc(title)} · Atmosphere</title>"
        '<link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="/console/static/console.css">'
        '<script type="module" src="/console/static/console.js"></script>'
        f'</head><body><header><span class="brand">Atmosphere</span>{nav}</header>'
        f'<main id="main" data-page="{esc(page)}" tabindex="-1">'
        f"<h1>{esc(title)}</h1>{body}</main></body></html>"
    )


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", headers=_headers())


def _sign_in_page(
    message: str = "", status: int = 200, *, step: str | None = None, reason: object = None
) -> web.Response:
    marks = "".join(
        f' data-{name}="{html.escape(str(value))}"'
        for name, value in (("step", step), ("reason", reason))
        if value is not None
    )
    note = f'<p class="error" role="alert"{marks}>{html.escape(message)}</p>' if message else ""
    body = (
        f"{note}<p>Open the link printed by <code>atmosphere-bridge console link</code> "
        "(or the <code>make demo</code> banner), or paste a token.</p>"
        '<form method="post" action="/console/signin" class="card">'
        '<label for="token">Token</label>'
        '<textarea id="token" name="token" rows="4" required autocomplete="off" '
        'spellcheck="false"></textarea>'
        '<button type="submit">Sign in</button></form>'
    )
    return _html(_page("Sign in", body, page="signin"), status)


def _service(request: web.Request) -> Any:
    from bridge.api.http import service_of

    return service_of(request)


def _verify_token(request: web.Request, raw: str) -> AgentToken:
    runtime = running(_service(request).invocation, "invocation")
    token: AgentToken = runtime.verifier.verify(raw)
    runtime.invoker.charge(token)  # every route counts against the token's rate limit
    return token


def _signed_in(
    request: web.Request, token_raw: str, agent: AgentToken, *, minted: bool = False
) -> web.Response:
    store = request.app[SESSIONS_KEY]
    session = store.create(
        token=token_raw,
        agent_id=agent.agent_id,
        permissions=agent.permissions,
        expires_at=min(agent.expires_at, time.time() + SESSION_TTL_S),
        token_id=agent.id,
        minted=minted,
    )
    response = web.HTTPSeeOther("/console/home", headers=_headers())
    set_cookie(response, session)
    raise response


async def _form(request: web.Request) -> dict[str, str]:
    if not same_origin(request):
        raise PermissionDeniedError("forms must come from this console", {"reason": "origin"})
    if (request.content_length or 0) > MAX_FORM_BYTES:
        raise PermissionDeniedError("form too large", {"reason": "size"})
    data = await request.post()
    return {k: v for k, v in data.items() if isinstance(v, str)}


async def root(request: web.Request) -> web.StreamResponse:
    """Send the browser to its home page or to sign in."""
    target = "/console/home" if session_of(request) else "/console/signin"
    raise web.HTTPSeeOther(target, headers=_headers())


async def sign_in_form(request: web.Request) -> web.Response:
    """Show the sign-in page."""
    return _sign_in_page()


async def sign_in(request: web.Request) -> web.Response:
    """Sign in with a pasted token."""
    try:
        form = await _form(request)
        raw = form.get("token", "").strip()
        agent = _verify_token(request, raw)
    except BridgeError as err:
        _count_refusal(request, err)
        return _sign_in_page(f"Not signed in: {err.message}", 401)
    return _signed_in(request, raw, agent)


def _count_refusal(request: web.Request, err: BridgeError) -> None:
    if isinstance(err, UnauthenticatedError):
        from bridge.api.bearer import count_refusal

        count_refusal(request, err)


async def link_form(request: web.Request) -> web.Response:
    """Show the one-time link's confirm button (a GET never uses the code up)."""
    code = request.query.get("code", "")
    body = (
        "<p>This one-time link signs this browser in to the console.</p>"
        '<form method="post" action="/console/link" class="card">'
        f'<input type="hidden" name="code" value="{html.escape(code)}">'
        '<button type="submit" id="use-link">Sign in to this bridge</button></form>'
    )
    return _html(_page("Sign in", body, page="signin"))


async def use_link(request: web.Request) -> web.Response:
    """Use up a one-time code: issue a console token with its permissions and sign in.

    Any refusal is 401 and says which step refused (``data-step`` on the page's alert,
    and its words): ``form`` (another site's form, too large), ``link`` (the code is
    malformed, used or expired), ``token`` (minting the session's token), ``record``
    (writing it to the ledger) or ``verify`` (checking it), with the error's ``reason``.
    """
    service = _service(request)
    step = "form"
    try:
        form = await _form(request)
        code = form.get("code", "")
        step = "link"
        perms, label = await LinkStore(service.db).consume(code)
        step = "token"
        runtime = running(service.invocation, "invocation")
        # Each link is its own subject: two people's links never share calls or votes.
        raw = issue_token(
            runtime.key,
            agent_id=f"console:{label}:{link_subject(code)}",
            permissions=perms,
            ttl_s=SESSION_TTL_S,
        )
        step = "record"
        _record_issued(service, raw)
        step = "verify"
        agent = _verify_token(request, raw)
    except BridgeError as err:
        _count_refusal(request, err)
        reason = err.details.get("reason") if isinstance(err.details, dict) else None
        return _sign_in_page(
            f"Not signed in: {_LINK_STEPS[step]}: {err.message}", 401, step=step, reason=reason
        )
    return _signed_in(request, raw, agent, minted=True)


_LINK_STEPS = {
    "form": "the form was refused",
    "link": "the link was refused",
    "token": "the session's token could not be made",
    "record": "the session's token could not be recorded",
    "verify": "the session's new token was refused",
}


def _record_issued(service: Any, raw: str) -> None:
    from bridge.auth.tokens import IssuedTokens

    IssuedTokens(service.db).record_sync(raw)


async def sign_out(request: web.Request) -> web.Response:
    """End the session and revoke the token the console minted for it.

    The Origin is checked before anything else: a page of another site must not even
    clear the cookie (a browser obeys the answer's Set-Cookie whatever sent the form).
    """
    if not same_origin(request):
        raise PermissionDeniedError("sign-out must come from this console", {"reason": "origin"})
    session = session_of(request)
    if session is not None:
        form = await _form(request)
        import hmac

        if not hmac.compare_digest(form.get("csrf", "").encode(), session.csrf.encode()):
            raise PermissionDeniedError("sign-out lacks its CSRF token", {"reason": "csrf"})
        request.app[SESSIONS_KEY].end(session.id)
        runtime = _service(request).invocation
        if session.minted and runtime is not None:
            # A copy of the session's token (a stolen cookie's, a leaked log's) dies too.
            runtime.revoke(session.token_id)
    response = web.HTTPSeeOther("/console/signin", headers=_headers())
    response.del_cookie(COOKIE, path="/")
    raise response


def _titles() -> dict[str, str]:
    return dict(PAGES)


async def page(request: web.Request) -> web.Response:
    """Render a page's shell for a signed-in browser."""
    name = request.match_info["page"]
    titles = _titles()
    if name not in titles:
        return _html(_page("Not found", "<p>No such page.</p>"), 404)
    session = session_of(request)
    if session is None:
        raise web.HTTPSeeOther("/console/signin", headers=_headers())
    body = f'<div id="content" aria-live="polite" data-page="{name}"><p>Loading…</p></div>'
    return _html(_page(titles[name], body, session=session, page=name))


async def static(request: web.Request) -> web.Response:
    """Serve the console's own script and style sheet."""
    name = request.match_info["name"]
    if name not in STATIC_TYPES:
        return web.Response(status=404, text="not found", headers=_headers())
    data = resources.files("bridge.console").joinpath("static", name).read_bytes()
    headers = _headers()
    headers["Cache-Control"] = "no-cache"
    return web.Response(body=data, content_type=STATIC_TYPES[name], headers=headers)


async def device_state(request: web.Request) -> web.Response:
    """Return each device's attribute values, state and control tools (session only).

    ``?device=<id>`` answers that device only (the home page re-reads one card after
    its device reported a change).
    """
    session = session_of(request)
    if session is None:
        raise UnauthenticatedError("sign in to the console first", {"reason": "missing"})
    token = _verify_token(request, session.token)
    if not any(covers(p, "device:read:devices") for p in token.permissions):
        raise PermissionDeniedError(
            "this needs 'device:read:devices'", {"required": "device:read:devices"}
        )
    service = _service(request)
    runtime = service.matter
    out: list[dict[str, Any]] = []
    if runtime is not None:
        await runtime.confirm()  # devices a call just changed: as they are now
        tools_by_device: dict[str, list[dict[str, Any]]] = {}
        for tool in runtime.device_tools():
            meta = tool.definition.metadata
            device = (meta.get("device") or {}).get("id")
            if device is None:
                continue
            matter = meta.get("matter") or {}
            tools_by_device.setdefault(device, []).append(
                {
                    "name": tool.definition.name,
                    "command": matter.get("command"),
                    "attribute": matter.get("attribute"),
                    "dangerous": tool.definition.dangerous,
                    "params": sorted(tool.definition.parameters.get("properties") or {}),
                }
            )
        only = request.query.get("device")
        for device in runtime.device_list():
            if only is not None and device.id != only:
                continue
            doc = device.to_json()
            # The newer kinds are shown from their state in human units and controlled
            # by their tools' row suffixes (a fan's speed, a vacuum's rooms ...).
            doc.update(runtime.device_view(device))
            doc["attrs"] = {
                f"{device.endpoint_id}/{c}/{a}": device.attr(c, a)
                for c, a in STATE_ATTRIBUTES
                if device.attr(c, a) is not None
            }
            doc["tools"] = sorted(tools_by_device.get(device.id, []), key=lambda t: t["name"])
            out.append(doc)
    return web.json_response({"devices": out}, headers=_headers())


MAX_QR_TEXT = 400
AUDIT_PERMISSION = "admin:audit"
AUDIT_PAGE = 50
AUDIT_MAX_ROWS = 10_000
AUDIT_FILTERS = {"agent": "agent_id", "tool": "tool", "decision": "decision"}
AUDIT_CSV_COLUMNS = (
    "id",
    "ts",
    "agent_id",
    "tool",
    "decision",
    "outcome",
    "error_code",
    "duration_ms",
    "call_id",
    "node_id",
)


async def audit(request: web.Request) -> web.Response:
    """Return audit entries (filters, pages of 50, or ``format=csv``) for a signed-in admin.

    Query: ``agent``, ``tool``, ``decision``, ``since`` (Unix seconds), ``page`` (0-based),
    ``format`` (``json`` or ``csv``; CSV holds every match up to 10,000 rows, without
    parameters or results). Needs ``admin:audit``.
    """
    session = session_of(request)
    if session is None:
        raise UnauthenticatedError("sign in to the console first", {"reason": "missing"})
    token = _verify_token(request, session.token)
    if not any(covers(p, AUDIT_PERMISSION) for p in token.permissions):
        raise PermissionDeniedError(
            f"this needs '{AUDIT_PERMISSION}'", {"required": AUDIT_PERMISSION}
        )
    query = request.query
    unknown = sorted(set(query) - {*AUDIT_FILTERS, "since", "page", "format"})
    if unknown:
        raise InvalidRequestError(f"unknown query parameter(s): {', '.join(unknown)}")
    filters: dict[str, Any] = {}
    for name, column in AUDIT_FILTERS.items():
        value = query.get(name, "").strip()
        if len(value) > 256:
            raise InvalidRequestError(f"{name} is longer than 256 characters")
        filters[column] = value or None
    try:
        since = float(query["since"]) if query.get("since") else None
        page_no = int(query.get("page", "0"))
    except ValueError as err:
        raise InvalidRequestError("since must be a number and page an integer") from err
    if since is not None and not 0 <= since < 1e11:
        raise InvalidRequestError("since must be Unix seconds")
    if not 0 <= page_no < AUDIT_MAX_ROWS // AUDIT_PAGE:
        raise InvalidRequestError(f"page must be 0-{AUDIT_MAX_ROWS // AUDIT_PAGE - 1}")
    fmt = query.get("format", "json")
    if fmt not in ("json", "csv"):
        raise InvalidRequestError("format must be 'json' or 'csv'")
    log = _service(request).invocation.audit
    if fmt == "csv":
        import csv
        import io

        rows = await log.query(**filters, since=since, limit=AUDIT_MAX_ROWS)
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(AUDIT_CSV_COLUMNS)
        for entry in rows:
            doc = entry.to_json()
            writer.writerow([_csv_cell(doc[c]) for c in AUDIT_CSV_COLUMNS])
        headers = _headers()
        headers["Content-Disposition"] = 'attachment; filename="audit.csv"'
        return web.Response(text=out.getvalue(), content_type="text/csv", headers=headers)
    rows = await log.query(**filters, since=since, limit=(page_no + 1) * AUDIT_PAGE + 1)
    window = rows[page_no * AUDIT_PAGE : (page_no + 1) * AUDIT_PAGE]
    return web.json_response(
        {
            "entries": [e.to_json() for e in window],
            "page": page_no,
            "page_size": AUDIT_PAGE,
            "more": len(rows) > (page_no + 1) * AUDIT_PAGE,
        },
        headers=_headers(),
        dumps=_json_dumps,
    )


def _json_dumps(data: Any) -> str:
    import json

    return json.dumps(data, default=str, ensure_ascii=False)


def _csv_cell(value: Any) -> str:
    text = "" if value is None else str(value)
    # A cell a spreadsheet would run as a formula is quoted with a leading apostrophe.
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


async def qr_code(request: web.Request) -> web.Response:
    """Return ``?text=`` as a QR code (SVG, error correction M) for a signed-in browser."""
    if session_of(request) is None:
        raise UnauthenticatedError("sign in to the console first", {"reason": "missing"})
    text = request.query.get("text", "")
    if not 0 < len(text) <= MAX_QR_TEXT:
        raise InvalidRequestError(f"text must have 1-{MAX_QR_TEXT} characters")
    import io

    import segno

    out = io.BytesIO()
    segno.make(text, error="m", micro=False).save(out, kind="svg", scale=6, border=4)
    return web.Response(body=out.getvalue(), content_type="image/svg+xml", headers=_headers())


def setup(app: web.Application) -> None:
    """Add the console's routes at ``/`` and ``/console/``, and its session middleware."""
    from bridge.console.sessions import middleware as session_middleware

    app[SESSIONS_KEY] = SessionStore()
    # Right after the API's error middleware and Host check and before its bearer-token
    # check: a signed-in browser's cookie becomes the session's token for /v1/.
    app.middlewares.insert(2, session_middleware)
    from bridge.api.openapi import add_route
    from bridge.console import admin
    from bridge.console.webhook import webhook_ctx

    app.cleanup_ctx.append(webhook_ctx)
    admin.setup(app)

    html_page = {"200": "an HTML page", "303": "to the sign-in page"}
    for method, path, handler, op, summary, responses in (
        ("GET", "/", root, "consoleRoot", "The console: home or sign-in", {"303": "redirect"}),
        (
            "GET",
            "/console/signin",
            sign_in_form,
            "consoleSignInForm",
            "The sign-in page",
            html_page,
        ),
        (
            "POST",
            "/console/signin",
            sign_in,
            "consoleSignIn",
            "Sign in with a pasted token (form field token)",
            {"303": "signed in", "401": "token refused"},
        ),
        ("GET", "/console/link", link_form, "consoleLinkForm", "A one-time link's page", html_page),
        (
            "POST",
            "/console/link",
            use_link,
            "consoleUseLink",
            "Use up a one-time link's code (form field code)",
            {"303": "signed in", "401": "used or expired"},
        ),
        (
            "POST",
            "/console/signout",
            sign_out,
            "consoleSignOut",
            "End the session (form field csrf)",
            {"303": "signed out", "403": "CSRF secret missing"},
        ),
        (
            "GET",
            "/console/static/{name}",
            static,
            "consoleStatic",
            "The console's script and style sheet",
            {"200": "the file", "404": "no such file"},
        ),
        (
            "GET",
            "/console/api/state",
            device_state,
            "consoleDeviceState",
            "Devices' current attribute values and control tools (session cookie)",
            {"200": "devices", "401": "not signed in", "403": "no device:read:devices"},
        ),
        (
            "GET",
            "/console/api/qr",
            qr_code,
            "consoleQrCode",
            "A QR code of ?text= (SVG; session cookie)",
            {"200": "image/svg+xml", "400": "no or too long text", "401": "not signed in"},
        ),
        (
            "POST",
            "/console/api/qr",
            admin.qr,
            "consoleQrOfSecret",
            "A QR code of a secret shown once, sent as {text} (SVG; session cookie, CSRF header)",
            {
                "200": "image/svg+xml",
                "400": "no or too long text",
                "401": "not signed in",
                "403": "CSRF secret missing",
            },
        ),
        (
            "GET",
            "/console/api/health",
            admin.health,
            "consoleHealth",
            "The doctor's checks, "
            "versions and the controller's state (session cookie; needs admin:health)",
            {"200": "checks and versions", "401": "not signed in", "403": "no admin:health"},
        ),
        (
            "GET",
            "/console/api/audit",
            audit,
            "consoleAudit",
            "Audit entries: filters, pages, CSV (session cookie; needs admin:audit)",
            {
                "200": "entries or CSV",
                "400": "bad filter",
                "401": "not signed in",
                "403": "no admin:audit",
            },
        ),
        ("GET", "/console/{page}", page, "consolePage", "A console page", html_page),
    ):
        add_route(
            app,
            method,
            path,
            handler,
            operation_id=op,
            summary=summary,
            tags=["console"],
            responses=responses,
        )
