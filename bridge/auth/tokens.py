"""Agent tokens: issuing, parsing and verifying signed, scoped, expiring credentials.

Details: docs/modules.md, ``bridge.auth.tokens``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from bridge.auth.canonical import b64d, b64e, canonical_json
from bridge.auth.keys import NodeKey, verify
from bridge.auth.permissions import validate_pattern
from bridge.errors import InvalidRequestError, UnauthenticatedError
from bridge.storage import Database

TOKEN_VERSION = 1
MAX_TOKEN_CHARS = 16_384
# What a token may weigh: it travels in an HTTP header (``Authorization: Bearer …``)
# (the API accepts up to 16,500 characters there, ``bridge.api.bearer.MAX_AUTH_HEADER``), so
# ``issue_token`` refuses longer ones; ``token issue`` also checks ``api.max_header_bytes``.
MAX_USABLE_TOKEN_CHARS = 16_000
EXPIRY_SKEW_S = 5.0
_PAYLOAD_KEYS = frozenset(
    {"v", "agent_id", "issued_at", "expires_at", "permissions", "issuer", "constraints"}
)
_CONSTRAINT_KEYS = frozenset({"max_hops", "allowed_nodes", "rate_limit"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraints:
    """Limits a token puts on its holder beyond its permissions."""

    max_hops: int | None = None
    allowed_nodes: tuple[str, ...] = ()
    rate_limit_per_minute: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the payload form."""
        return {
            "max_hops": self.max_hops,
            "allowed_nodes": list(self.allowed_nodes),
            "rate_limit": (
                None
                if self.rate_limit_per_minute is None
                else {"per_minute": self.rate_limit_per_minute}
            ),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentToken:
    """A verified (or freshly issued) token's contents."""

    agent_id: str
    issued_at: float
    expires_at: float
    permissions: tuple[str, ...]
    constraints: Constraints = field(default_factory=Constraints)
    issuer: str
    signature: str
    raw: str = ""
    id: str = ""

    def payload(self) -> dict[str, Any]:
        """Return the signed payload as a JSON object."""
        return {
            "v": TOKEN_VERSION,
            "agent_id": self.agent_id,
            "issued_at": self.issued_at,
            "expires_at": self.expires_at,
            "permissions": list(self.permissions),
            "issuer": self.issuer,
            "constraints": self.constraints.to_json(),
        }

    def to_json(self) -> dict[str, Any]:
        """Return the payload plus the signature, for display."""
        return {**self.payload(), "signature": self.signature}


def _millis_down(t: float) -> float:
    """Return ``t`` cut to whole milliseconds, never later than ``t``.

    Rounding to the nearest millisecond put a token's ``issued_at`` up to 0.5 ms after
    the moment it was made: with ``auth.expiry_skew_s: 0`` the token was "not valid yet"
    when used at once (a console link's freshly minted token, refused with 401).
    """
    millis = math.floor(t * 1000)
    # t * 1000 may round up onto the next whole number: step back then.
    return millis / 1000 if millis / 1000 <= t else (millis - 1) / 1000


def issue_token(
    key: NodeKey,
    *,
    agent_id: str,
    permissions: Iterable[str],
    ttl_s: float,
    constraints: Constraints | None = None,
    now: float | None = None,
) -> str:
    """Sign and return a token; raise ``InvalidRequestError`` for bad inputs."""
    if not isinstance(agent_id, str) or not agent_id or len(agent_id) > 256:
        raise InvalidRequestError("agent_id must be 1-256 characters")
    if not agent_id.isprintable() or agent_id != agent_id.encode("utf-8", "replace").decode():
        raise InvalidRequestError("agent_id must be printable text (no control characters)")
    if not math.isfinite(ttl_s) or ttl_s <= 0 or ttl_s > 100 * 365 * 86_400:
        raise InvalidRequestError("ttl must be a positive number of seconds, at most 100 years")
    perms = tuple(permissions)
    for perm in perms:
        validate_pattern(perm)
    cons = constraints or Constraints()
    if cons.max_hops is not None and cons.max_hops < 0:
        raise InvalidRequestError("max_hops must be >= 0")
    if cons.rate_limit_per_minute is not None and cons.rate_limit_per_minute <= 0:
        raise InvalidRequestError("rate limit must be a positive number of calls per minute")
    issued = time.time() if now is None else now
    token = AgentToken(
        agent_id=agent_id,
        issued_at=_millis_down(issued),
        expires_at=_millis_down(issued + ttl_s),
        permissions=perms,
        constraints=cons,
        issuer=key.public_key_b64,
        signature="",
    )
    body = canonical_json(token.payload())
    raw = f"{b64e(body)}.{key.sign(body)}"
    if len(raw) > MAX_USABLE_TOKEN_CHARS:
        raise InvalidRequestError(
            f"this token would be {len(raw)} characters; a token must fit in an HTTP header "
            f"(at most {MAX_USABLE_TOKEN_CHARS}): use fewer, broader permission patterns "
            "(e.g. 'device:control:*' instead of one per device)",
            {"chars": len(raw), "max_chars": MAX_USABLE_TOKEN_CHARS},
        )
    return raw


def token_id(signature: str) -> str:
    """Return the public id of the token with ``signature`` (32 hex digits)."""
    digest = hashlib.sha256(b"atmosphere-bridge token id v1\0" + signature.encode()).hexdigest()
    return digest[:32]


def token_hash(raw: str) -> str:
    """Return the SHA-256 (hex) of a raw token, the ledger's proof of which token it was."""
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def _reject(reason: str, message: str, token_id_: str | None = None) -> UnauthenticatedError:
    details: dict[str, Any] = {"reason": reason}
    if token_id_ is not None:
        # Which token was refused, for the audit: the caller holds that token already.
        details["token_id"] = token_id_
    return UnauthenticatedError(message, details)


SUBJECT_SEPARATOR = "/"
# Who administers tokens: names agents freely, issues tokens that outlive it (they are
# not revoked with it), lists and revokes every token (``bridge.api.tokens_routes``).
ADMIN_TOKENS_PERMISSION = "admin:tokens"


def principal(agent_id: str) -> str:
    """Return who stands behind ``agent_id``: its part before the first ``/``.

    A token issued by a token is named ``<issuer-agent>/<name>`` (see
    ``bridge.api.tokens_routes``), so every token a holder mints shares the holder's
    principal: "not your own call" and "N distinct approvers" count principals, and a
    holder cannot out-vote a rule by minting approvers of its own.
    """
    return agent_id.split(SUBJECT_SEPARATOR, 1)[0]


def _respelled(raw: str) -> str | None:
    """Return the canonical spelling of a token written another way, or ``None``.

    Only to name, in the audit, which token a refused spelling was: the bytes a lenient
    decoder would read (whitespace dropped, ``+/`` read as ``-_``, padding dropped, the
    spare bits of each part's last character cleared), written canonically.
    """
    text = "".join(raw.split()).replace("+", "-").replace("/", "_")
    parts = text.split(".")
    if len(parts) != 2 or len(text) > MAX_TOKEN_CHARS:
        return None
    out = []
    for part in parts:
        part = part.rstrip("=")
        if len(part) % 4 == 1:
            return None
        try:
            data = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        except (binascii.Error, ValueError):
            return None
        out.append(b64e(data))
    canonical = ".".join(out)
    return canonical if canonical != raw else None


def _str_list(value: Any, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _reject("malformed", f"token field '{name}' must be a list of strings")
    return tuple(value)


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _reject("malformed", f"token field '{name}' must be a number")
    try:
        number = float(value)
    except OverflowError as err:
        raise _reject("malformed", f"token field '{name}' is out of range") from err
    if not math.isfinite(number):
        raise _reject("malformed", f"token field '{name}' must be a finite number")
    return number


def parse_token(raw: str) -> tuple[AgentToken, bytes]:
    """Parse a token without checking trust or time; return it and the signed bytes."""
    if not isinstance(raw, str) or len(raw) > MAX_TOKEN_CHARS or raw.count(".") != 1:
        raise _reject("malformed", "token is not '<payload>.<signature>'")
    body_b64, signature = raw.split(".")
    try:
        # Both parts canonical before anything else: one token, one spelling.
        signature_ok = len(b64d(signature)) == 64
        body = b64d(body_b64)
        doc = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise _reject("malformed", "token is not canonical base64url JSON and signature") from err
    if not signature_ok:
        raise _reject("malformed", "token signature is not 64 bytes of base64url")
    if not isinstance(doc, dict) or set(doc) != _PAYLOAD_KEYS or doc["v"] != TOKEN_VERSION:
        raise _reject("malformed", "token payload has the wrong fields or version")
    cons = doc["constraints"]
    if not isinstance(cons, dict) or set(cons) != _CONSTRAINT_KEYS:
        raise _reject("malformed", "token constraints have the wrong fields")
    max_hops = cons["max_hops"]
    if max_hops is not None and (isinstance(max_hops, bool) or not isinstance(max_hops, int)):
        raise _reject("malformed", "token constraint 'max_hops' must be an integer or null")
    rate = cons["rate_limit"]
    per_minute: int | None = None
    if rate is not None:
        if not isinstance(rate, dict) or set(rate) != {"per_minute"}:
            raise _reject("malformed", "token constraint 'rate_limit' must be {per_minute}")
        value = rate["per_minute"]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise _reject("malformed", "token rate limit must be a positive integer")
        per_minute = value
    agent_id, issuer = doc["agent_id"], doc["issuer"]
    if not isinstance(agent_id, str) or not agent_id or not isinstance(issuer, str):
        raise _reject("malformed", "token agent_id and issuer must be strings")
    token = AgentToken(
        agent_id=agent_id,
        issued_at=_number(doc["issued_at"], "issued_at"),
        expires_at=_number(doc["expires_at"], "expires_at"),
        permissions=_str_list(doc["permissions"], "permissions"),
        constraints=Constraints(
            max_hops=max_hops,
            allowed_nodes=_str_list(cons["allowed_nodes"], "allowed_nodes"),
            rate_limit_per_minute=per_minute,
        ),
        issuer=issuer,
        signature=signature,
        raw=raw,
        id=token_id(signature),
    )
    return token, body


class Revocations:
    """Revoked token ids, each with its notice signed by the token's issuer.

    A notice is ``{"type": "token_revocation", "token_id", "issuer", "expires_at",
    "revoked_at", "signature"}``; the signature (by ``issuer``) covers the canonical
    JSON of the other fields, so any node can check it without trusting the sender.
    Kept in memory (checked on every verification) and, with a database, in
    ``revoked_tokens`` so a restart keeps them. A notice is dropped once its token has
    expired: an expired token is refused anyway.
    """

    MAX_ENTRIES = 100_000

    def __init__(self, db: Database | None = None) -> None:
        self._db = db
        self._notices: dict[str, dict[str, Any]] = {}
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        if db is not None:
            db.migrate("auth.revoked_tokens.v1", _REVOKED_MIGRATION)
            self.reload_sync()

    def reload_sync(self) -> None:
        """Load every stored notice whose token has not expired yet."""
        if self._db is None:
            return
        rows = self._db.fetchall_sync(
            "SELECT notice_json FROM revoked_tokens WHERE expires_at > ?", (time.time(),)
        )
        for row in rows:
            notice = json.loads(row["notice_json"])
            self._notices[notice["token_id"]] = notice

    def __contains__(self, token_id: object) -> bool:
        return token_id in self._notices

    def notices(self) -> list[dict[str, Any]]:
        """Return every live notice (for gossip), dropping those of expired tokens."""
        now = time.time()
        for tid in [t for t, n in self._notices.items() if n["expires_at"] <= now]:
            del self._notices[tid]
        return list(self._notices.values())

    def subscribe(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``listener(notice)`` for every newly accepted revocation; return unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def revoke(self, key: NodeKey, token_id_: str, expires_at: float) -> dict[str, Any]:
        """Sign and store a revocation of one of ``key``'s tokens; return the notice."""
        fields: dict[str, Any] = {
            "type": "token_revocation",
            "token_id": token_id_,
            "issuer": key.public_key_b64,
            "expires_at": float(expires_at),
            "revoked_at": round(time.time(), 3),
        }
        notice = {**fields, "signature": key.sign(canonical_json(fields))}
        self._store(notice)
        return notice

    def accept(self, doc: Any, trusted_issuers: Iterable[str]) -> bool:
        """Take a notice from a peer; return whether it is new and valid.

        Refused silently (``False``): not a notice, an issuer not trusted here, a bad
        signature, an already expired token, or one already known.
        """
        if not isinstance(doc, dict) or set(doc) != _NOTICE_KEYS:
            return False
        if doc.get("type") != "token_revocation":
            return False
        tid, issuer, sig = doc.get("token_id"), doc.get("issuer"), doc.get("signature")
        expires, revoked = doc.get("expires_at"), doc.get("revoked_at")
        if not (
            isinstance(tid, str)
            and len(tid) == 32
            and isinstance(issuer, str)
            and isinstance(sig, str)
            and _finite(expires)
            and _finite(revoked)
        ):
            return False
        if tid in self._notices or issuer not in set(trusted_issuers):
            return False
        if float(cast("float", expires)) <= time.time():
            return False
        fields = {k: v for k, v in doc.items() if k != "signature"}
        if not verify(issuer, canonical_json(fields), sig):
            return False
        self._store(dict(doc))
        return True

    def _store(self, notice: dict[str, Any]) -> None:
        if notice["token_id"] in self._notices:
            return
        if len(self._notices) >= self.MAX_ENTRIES:
            self.notices()
            if len(self._notices) >= self.MAX_ENTRIES:
                return
        self._notices[notice["token_id"]] = notice
        if self._db is not None:
            self._db.execute_sync(
                "INSERT OR IGNORE INTO revoked_tokens (token_id, issuer, expires_at, revoked_at, "
                "notice_json) VALUES (?, ?, ?, ?, ?)",
                (
                    notice["token_id"],
                    notice["issuer"],
                    notice["expires_at"],
                    notice["revoked_at"],
                    json.dumps(notice, sort_keys=True),
                ),
            )
        for listener in list(self._listeners):
            listener(notice)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_NOTICE_KEYS = frozenset({"type", "token_id", "issuer", "expires_at", "revoked_at", "signature"})

_REVOKED_MIGRATION = """
CREATE TABLE revoked_tokens (
    token_id TEXT PRIMARY KEY,
    issuer TEXT NOT NULL,
    expires_at REAL NOT NULL,
    revoked_at REAL NOT NULL,
    notice_json TEXT NOT NULL
);
"""


class TokenVerifier:
    """Verify tokens against a set of trusted issuer public keys and the revocations.

    ``clock_skew_s`` is how far clocks of nodes may differ for a token's validity
    (default ``EXPIRY_SKEW_S``); it is not the replay window of requests.
    """

    def __init__(
        self,
        trusted_issuers: Iterable[str],
        *,
        clock_skew_s: float = EXPIRY_SKEW_S,
        clock: Callable[[], float] = time.time,
        cache_size: int = 4096,
        revocations: Revocations | None = None,
    ) -> None:
        self.trusted_issuers = frozenset(trusted_issuers)
        self.clock_skew_s = clock_skew_s
        self.revocations = revocations if revocations is not None else Revocations()
        self._clock = clock
        self._cache: OrderedDict[str, AgentToken] = OrderedDict()
        self._cache_size = cache_size

    def verify(self, raw: str) -> AgentToken:
        """Return the token's contents; raise ``UnauthenticatedError`` if it is not valid now."""
        token = self._cache.get(raw)
        if token is None:
            try:
                token = self._verified(raw)
            except UnauthenticatedError as err:
                if err.details.get("reason") == "malformed" and isinstance(raw, str):
                    self._attribute(raw, err)
                raise
            self._cache[raw] = token
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        self.check(token)
        return token

    def _verified(self, raw: str) -> AgentToken:
        token, body = parse_token(raw)
        if token.issuer not in self.trusted_issuers:
            raise _reject("unknown_issuer", "token issuer is not trusted")
        if not verify(token.issuer, body, token.signature):
            raise _reject("bad_signature", "token signature does not verify")
        return token

    def _attribute(self, raw: str, err: UnauthenticatedError) -> None:
        """Name in ``err`` the genuine token a refused spelling of it stands for, if any.

        The spelling stays refused (one token, one spelling); the audit learns whose it
        was (``details.token_id``, ``details.reason`` ``non_canonical``).
        """
        canonical = _respelled(raw)
        if canonical is None:
            return
        try:
            token = self._cache.get(canonical) or self._verified(canonical)
        except UnauthenticatedError:
            return
        err.details["reason"] = "non_canonical"
        err.details["token_id"] = token.id

    def check(self, token: AgentToken) -> None:
        """Raise ``UnauthenticatedError`` if an already verified token is revoked or expired now.

        For holders of long-lived connections (event sockets) to re-check cheaply.
        """
        if token.id in self.revocations:
            raise _reject("revoked", "token has been revoked", token.id)
        now = self._clock()
        if now < token.issued_at - self.clock_skew_s:
            raise _reject("not_yet_valid", "token is not valid yet", token.id)
        if now >= token.expires_at + self.clock_skew_s:
            raise _reject("expired", "token has expired", token.id)

    def state(self, token_id_: str, expires_at: float) -> str:
        """Return ``valid``, ``revoked`` or ``expired`` for a token known by id and expiry."""
        if token_id_ in self.revocations:
            return "revoked"
        if self._clock() >= expires_at + self.clock_skew_s:
            return "expired"
        return "valid"

    def now(self) -> float:
        """Return the time this verifier judges validity by (Unix seconds)."""
        return self._clock()

    def expiry_deadline(self, token: AgentToken) -> float:
        """Return the Unix time from which ``token`` is refused as expired."""
        return token.expires_at + self.clock_skew_s


_LEDGER_MIGRATION = """
CREATE TABLE issued_tokens (
    signature TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    issued_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    payload_json TEXT NOT NULL
);
CREATE INDEX issued_tokens_agent ON issued_tokens(agent_id, issued_at);
"""

_LEDGER_V2 = """
CREATE TABLE issued_tokens_v2 (
    id TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    permissions_json TEXT NOT NULL,
    issued_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
"""


def _ledger_v2(conn: sqlite3.Connection) -> None:
    """Rewrite the v1 ledger (payload + signature) into ids and hashes, then drop it."""
    conn.execute(_LEDGER_V2.strip())
    for row in conn.execute("SELECT signature, payload_json FROM issued_tokens").fetchall():
        payload = json.loads(row[1])
        raw = f"{b64e(canonical_json(payload))}.{row[0]}"
        conn.execute(
            "INSERT OR IGNORE INTO issued_tokens_v2 VALUES (?, ?, ?, ?, ?, ?)",
            (
                token_id(row[0]),
                token_hash(raw),
                payload["agent_id"],
                json.dumps(payload.get("permissions", [])),
                payload["issued_at"],
                payload["expires_at"],
            ),
        )
    conn.execute("DROP TABLE issued_tokens")
    conn.execute("ALTER TABLE issued_tokens_v2 RENAME TO issued_tokens")
    conn.execute("CREATE INDEX issued_tokens_agent ON issued_tokens(agent_id, issued_at)")


# Which token issued this one (``POST /v1/tokens``); NULL when the node's key holder did.
_LEDGER_V3 = """
ALTER TABLE issued_tokens ADD COLUMN issued_by TEXT;
CREATE INDEX issued_tokens_issued_by ON issued_tokens(issued_by);
"""


class IssuedTokens:
    """The ledger of tokens issued by this node: ids and hashes, nothing to rebuild one."""

    def __init__(self, db: Database) -> None:
        self._db = db
        db.migrate("auth.issued_tokens.v1", _LEDGER_MIGRATION)
        db.migrate_with("auth.issued_tokens.v2", _ledger_v2, scrub=True)
        db.migrate("auth.issued_tokens.v3_issued_by", _LEDGER_V3)

    def record_sync(self, raw: str, *, issued_by: str | None = None) -> AgentToken:
        """Parse ``raw`` and add its id, hash and metadata to the ledger; return its contents.

        ``issued_by`` is the id of the token that asked for it (``None``: the node's key
        holder, an administrator).
        """
        token, _ = parse_token(raw)
        self._db.execute_sync(
            "INSERT OR IGNORE INTO issued_tokens (id, token_sha256, agent_id, permissions_json, "
            "issued_at, expires_at, issued_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                token.id,
                token_hash(raw),
                token.agent_id,
                json.dumps(list(token.permissions)),
                token.issued_at,
                token.expires_at,
                issued_by,
            ),
        )
        return token

    def issued_by_sync(self, token_id_: str) -> list[dict[str, Any]]:
        """Return the ledger entries of the tokens ``token_id_`` issued."""
        rows = self._db.fetchall_sync(
            "SELECT * FROM issued_tokens WHERE issued_by = ?", (token_id_,)
        )
        return [_entry(row) for row in rows]

    def get_sync(self, token_id_: str) -> dict[str, Any] | None:
        """Return one ledger entry (without its revocation state) or ``None``."""
        row = self._db.fetchone_sync("SELECT * FROM issued_tokens WHERE id = ?", (token_id_,))
        return None if row is None else _entry(row)

    def list_sync(self, *, agent_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Return ``{id, agent_id, permissions, issued_at, expires_at}`` newest first."""
        limit = max(1, min(limit, 10_000))
        if agent_id is None:
            rows = self._db.fetchall_sync(
                "SELECT * FROM issued_tokens ORDER BY issued_at DESC LIMIT ?", (limit,)
            )
        else:
            rows = self._db.fetchall_sync(
                "SELECT * FROM issued_tokens WHERE agent_id = ? ORDER BY issued_at DESC LIMIT ?",
                (agent_id, limit),
            )
        return [_entry(row) for row in rows]


def _entry(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "agent_id": row["agent_id"],
        "permissions": json.loads(row["permissions_json"]),
        "issued_at": row["issued_at"],
        "expires_at": row["expires_at"],
        "issued_by": row["issued_by"],
    }
