"""Console sign-in: one-time links, browser sessions, the session cookie and CSRF.

Details: docs/modules.md, ``bridge.console.sessions``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard

from aiohttp import web

from bridge.auth.canonical import b64d
from bridge.auth.permissions import covers
from bridge.errors import InvalidRequestError, PermissionDeniedError, UnauthenticatedError
from bridge.limits import CONSOLE_BOUND, CONSOLE_SESSIONS, CONSOLE_SESSIONS_PER_TOKEN
from bridge.storage import Database

COOKIE = "atm_session"
CSRF_HEADER = "X-CSRF-Token"
LINK_TTL_S = 600.0
SESSION_TTL_S = 12 * 3600.0
MAX_SESSIONS = CONSOLE_SESSIONS
# A session that may decide approvals is privileged: no other token's sign-in evicts it.
PRIVILEGED_PERMISSION = "admin:approve"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PERMISSIONS = ("*",)

_MIGRATION = """
CREATE TABLE console_links (
    code_hash TEXT PRIMARY KEY,
    permissions_json TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
"""


SECRET_BYTES = 32  # of a sign-in code, a session id, a CSRF secret


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def is_secret(text: object) -> TypeGuard[str]:
    """Return whether ``text`` is a secret as this module makes them.

    That is canonical unpadded base64url of ``SECRET_BYTES`` random bytes. Anything
    else is refused before any lookup: a secret has one spelling.
    """
    if not isinstance(text, str) or len(text) != 43:
        return False
    try:
        return len(b64d(text)) == SECRET_BYTES
    except ValueError:
        return False


def link_subject(code: str) -> str:
    """Return the agent id of the console token a sign-in code makes: one per link."""
    return _hash(code)[:12]


class LinkStore:
    """One-time sign-in codes, stored hashed in the bridge database."""

    def __init__(self, db: Database) -> None:
        self._db = db
        db.migrate("console.links.v1", _MIGRATION)

    def create_sync(
        self,
        *,
        permissions: Iterable[str] = DEFAULT_PERMISSIONS,
        label: str = "console",
        ttl_s: float = LINK_TTL_S,
        now: float | None = None,
    ) -> str:
        """Store a new code's hash and return the code (shown once, never stored)."""
        import json

        from bridge.auth.permissions import validate_pattern

        perms = list(permissions)
        for perm in perms:
            validate_pattern(perm)
        if not 0 < ttl_s <= 86_400:
            raise InvalidRequestError("a sign-in link lives between 1 s and 1 day")
        if not label or len(label) > 64:
            raise InvalidRequestError("the link's label must be 1-64 characters")
        code = secrets.token_urlsafe(SECRET_BYTES)
        created = time.time() if now is None else now
        self._db.execute_sync("DELETE FROM console_links WHERE expires_at < ?", (created,))
        self._db.execute_sync(
            "INSERT INTO console_links (code_hash, permissions_json, label, created_at, "
            "expires_at) VALUES (?, ?, ?, ?, ?)",
            (_hash(code), json.dumps(perms), label, created, created + ttl_s),
        )
        return code

    async def consume(self, code: str) -> tuple[list[str], str]:
        """Use up ``code``; return its permissions and label or raise ``UnauthenticatedError``."""
        import json

        if not is_secret(code):
            raise UnauthenticatedError("this sign-in link is not valid", {"reason": "malformed"})
        rows = await self._db.fetchall(
            "DELETE FROM console_links WHERE code_hash = ? AND expires_at > ? "
            "RETURNING permissions_json, label",
            (_hash(code), time.time()),
        )
        if not rows:
            raise UnauthenticatedError(
                "this sign-in link was used already or has expired; make a new one with "
                "'atmosphere-bridge console link'",
                {"reason": "link_used_or_expired"},
            )
        row = rows[0]
        return list(json.loads(row["permissions_json"])), str(row["label"])


@dataclass(frozen=True, slots=True, kw_only=True)
class Session:
    """A signed-in browser: its console token and CSRF secret."""

    id: str
    token: str
    agent_id: str
    permissions: tuple[str, ...]
    csrf: str
    expires_at: float
    # The token's id, and whether the console minted it for this session (a one-time
    # link): such a token is revoked at sign-out, a pasted one is the user's to keep.
    token_id: str = ""
    minted: bool = False

    def to_json(self) -> dict[str, Any]:
        """Return what a page may know about its own session (never the token)."""
        return {
            "agent_id": self.agent_id,
            "permissions": list(self.permissions),
            "expires_at": self.expires_at,
        }


class SessionStore:
    """Signed-in browsers by session id (in memory, bounded, expiring)."""

    def __init__(
        self, *, max_sessions: int = MAX_SESSIONS, per_token: int = CONSOLE_SESSIONS_PER_TOKEN
    ) -> None:
        self._sessions: dict[str, Session] = {}
        self._max = max_sessions
        self._per_token = per_token

    def create(
        self,
        *,
        token: str,
        agent_id: str,
        permissions: Iterable[str],
        expires_at: float,
        token_id: str = "",
        minted: bool = False,
    ) -> Session:
        """Start a session for ``token``.

        A token signing in once more than ``per_token`` times ends its own oldest
        session. When the store is full, the oldest session that cannot decide
        approvals (of any token) makes room; a privileged session is never evicted by
        another token's sign-in: with only those left, ``OverloadedError`` is raised.
        """
        self._purge()
        key = token_id or token
        mine = [s.id for s in self._sessions.values() if (s.token_id or s.token) == key]
        while len(mine) >= self._per_token:
            self._sessions.pop(mine.pop(0), None)
        if len(self._sessions) >= self._max:
            evictable = next((s.id for s in self._sessions.values() if not _privileged(s)), None)
            if evictable is None:
                raise CONSOLE_BOUND.node_error()
            self._sessions.pop(evictable)
        session = Session(
            id=secrets.token_urlsafe(SECRET_BYTES),
            token=token,
            agent_id=agent_id,
            permissions=tuple(permissions),
            csrf=secrets.token_urlsafe(SECRET_BYTES),
            expires_at=expires_at,
            token_id=token_id,
            minted=minted,
        )
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str | None) -> Session | None:
        """Return the live session ``session_id`` names, or ``None``."""
        if not is_secret(session_id):
            return None
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if session.expires_at <= time.time():
            self._sessions.pop(session_id, None)
            return None
        return session

    def end(self, session_id: str) -> None:
        """Forget a session (sign-out)."""
        self._sessions.pop(session_id, None)

    def _purge(self) -> None:
        now = time.time()
        for sid in [s.id for s in self._sessions.values() if s.expires_at <= now]:
            self._sessions.pop(sid, None)


def _privileged(session: Session) -> bool:
    return any(covers(p, PRIVILEGED_PERMISSION) for p in session.permissions)


SESSIONS_KEY: web.AppKey[SessionStore] = web.AppKey("console_sessions", SessionStore)


def session_of(request: web.Request) -> Session | None:
    """Return the request's console session, if its cookie names a live one."""
    store = request.app.get(SESSIONS_KEY)
    if store is None:
        return None
    return store.get(request.cookies.get(COOKIE))


def same_origin(request: web.Request) -> bool:
    """Return whether the request's ``Origin`` is this server (missing counts as foreign)."""
    origin = request.headers.get("Origin")
    if not origin:
        return False
    return origin == f"{request.scheme}://{request.host}"


def check_csrf(request: web.Request, session: Session) -> None:
    """Raise ``PermissionDeniedError`` unless a state-changing request proves it is ours."""
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode(), session.csrf.encode()) or not same_origin(request):
        raise PermissionDeniedError(
            "this console request lacks its CSRF token or comes from another origin",
            {"reason": "csrf"},
        )


def set_cookie(response: web.StreamResponse, session: Session) -> None:
    """Attach the session cookie (HttpOnly, SameSite=Strict, path /)."""
    response.set_cookie(
        COOKIE,
        session.id,
        httponly=True,
        samesite="Strict",
        path="/",
        max_age=max(0, int(session.expires_at - time.time())),
    )


@web.middleware
async def middleware(request: web.Request, handler: Any) -> web.StreamResponse:
    """Let a signed-in browser call ``/v1/`` with its session's token (CSRF-checked)."""
    if (
        not request.path.startswith("/v1/")
        or "Authorization" in request.headers
        or COOKIE not in request.cookies
    ):
        response: web.StreamResponse = await handler(request)
        return response
    session = session_of(request)
    if session is None:
        raise UnauthenticatedError(
            "the console session has ended; sign in again", {"reason": "session_ended"}
        )
    is_upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
    if is_upgrade and not same_origin(request):
        raise PermissionDeniedError("WebSocket from another origin", {"reason": "origin"})
    if request.method not in SAFE_METHODS:
        check_csrf(request, session)
    headers = request.headers.copy()
    headers["Authorization"] = f"Bearer {session.token}"
    response = await handler(request.clone(headers=headers))
    return response
