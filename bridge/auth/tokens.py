"""Agent tokens: issuing, parsing and verifying signed, scoped, expiring credentials.

Wire format (version 1)::

    token = base64url(canonical_json(payload)) "." base64url(ed25519_signature)

The signature covers the exact payload bytes carried in the first part. The payload is
a JSON object with exactly these keys::

    {"v": 1, "agent_id": str, "issued_at": float, "expires_at": float,
     "permissions": [str, ...], "issuer": <issuer public key, base64url>,
     "constraints": {"max_hops": int | null, "allowed_nodes": [str, ...],
                     "rate_limit": {"per_minute": int} | null}}

``TokenVerifier`` accepts a token only if it parses, its issuer is one of the trusted
public keys, the signature verifies under that key, and ``issued_at - skew <= now <
expires_at + skew``. Every rejection is an ``UnauthenticatedError`` whose details carry
a ``reason``: ``malformed``, ``unknown_issuer``, ``bad_signature``, ``expired`` or
``not_yet_valid``.

``IssuedTokens`` keeps a ledger of the tokens this node issued (contents and signature,
never the raw token) in the bridge database, for ``atmosphere-bridge token list``.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bridge.auth.canonical import b64d, b64e, canonical_json
from bridge.auth.keys import NodeKey, verify
from bridge.auth.permissions import validate_pattern
from bridge.errors import InvalidRequestError, UnauthenticatedError
from bridge.storage import Database

TOKEN_VERSION = 1
MAX_TOKEN_CHARS = 16_384
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
    if not agent_id or len(agent_id) > 256:
        raise InvalidRequestError("agent_id must be 1-256 characters")
    if ttl_s <= 0:
        raise InvalidRequestError("ttl must be positive")
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
        issued_at=round(issued, 3),
        expires_at=round(issued + ttl_s, 3),
        permissions=perms,
        constraints=cons,
        issuer=key.public_key_b64,
        signature="",
    )
    body = canonical_json(token.payload())
    return f"{b64e(body)}.{key.sign(body)}"


def _reject(reason: str, message: str) -> UnauthenticatedError:
    return UnauthenticatedError(message, {"reason": reason})


def _str_list(value: Any, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _reject("malformed", f"token field '{name}' must be a list of strings")
    return tuple(value)


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _reject("malformed", f"token field '{name}' must be a number")
    return float(value)


def parse_token(raw: str) -> tuple[AgentToken, bytes]:
    """Parse a token without checking trust or time; return it and the signed bytes."""
    if not isinstance(raw, str) or len(raw) > MAX_TOKEN_CHARS or raw.count(".") != 1:
        raise _reject("malformed", "token is not '<payload>.<signature>'")
    body_b64, signature = raw.split(".")
    try:
        body = b64d(body_b64)
        doc = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise _reject("malformed", "token payload is not base64url JSON") from err
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
    )
    return token, body


class TokenVerifier:
    """Verify tokens against a set of trusted issuer public keys."""

    def __init__(
        self,
        trusted_issuers: Iterable[str],
        *,
        clock_skew_s: float = 300.0,
        clock: Callable[[], float] = time.time,
        cache_size: int = 4096,
    ) -> None:
        self.trusted_issuers = frozenset(trusted_issuers)
        self.clock_skew_s = clock_skew_s
        self._clock = clock
        self._cache: OrderedDict[str, AgentToken] = OrderedDict()
        self._cache_size = cache_size

    def verify(self, raw: str) -> AgentToken:
        """Return the token's contents; raise ``UnauthenticatedError`` if it is not valid now."""
        token = self._cache.get(raw)
        if token is None:
            token, body = parse_token(raw)
            if token.issuer not in self.trusted_issuers:
                raise _reject("unknown_issuer", "token issuer is not trusted")
            if not verify(token.issuer, body, token.signature):
                raise _reject("bad_signature", "token signature does not verify")
            self._cache[raw] = token
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        now = self._clock()
        if now < token.issued_at - self.clock_skew_s:
            raise _reject("not_yet_valid", "token is not valid yet")
        if now >= token.expires_at + self.clock_skew_s:
            raise _reject("expired", "token has expired")
        return token


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


class IssuedTokens:
    """The ledger of tokens issued by this node (no raw tokens are stored)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        db.migrate("auth.issued_tokens.v1", _LEDGER_MIGRATION)

    def record_sync(self, raw: str) -> AgentToken:
        """Parse ``raw`` and add it to the ledger; return its contents."""
        token, _ = parse_token(raw)
        self._db.execute_sync(
            "INSERT OR IGNORE INTO issued_tokens (signature, agent_id, issued_at, expires_at, "
            "payload_json) VALUES (?, ?, ?, ?, ?)",
            (
                token.signature, token.agent_id, token.issued_at, token.expires_at,
                json.dumps(token.payload(), sort_keys=True),
            ),
        )
        return token

    def list_sync(self, *, agent_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Return issued tokens' payloads and signatures, newest first."""
        if agent_id is None:
            rows = self._db.fetchall_sync(
                "SELECT * FROM issued_tokens ORDER BY issued_at DESC LIMIT ?", (limit,)
            )
        else:
            rows = self._db.fetchall_sync(
                "SELECT * FROM issued_tokens WHERE agent_id = ? ORDER BY issued_at DESC LIMIT ?",
                (agent_id, limit),
            )
        return [{**json.loads(row["payload_json"]), "signature": row["signature"]} for row in rows]
