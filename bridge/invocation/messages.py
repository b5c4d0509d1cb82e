"""The ``tool_invoke`` / ``tool_response`` messages, their wire form, signatures and replay guard.

One place converts between wire JSON and these frozen models. ``from_json`` rejects
unknown fields and wrong types with ``InvalidRequestError``, so every boundary (HTTP,
WebSocket, mesh) gets the same strict parsing. A message may be signed by the node
that sent it: the signature is the ed25519 signature (by ``signer``) of the canonical
encoding (``bridge.auth.canonical``) of the wire form without ``signature``.

Details: docs/modules.md, ``bridge.invocation.messages``.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar, Self

from bridge.auth.canonical import canonical_json
from bridge.auth.keys import NodeKey, verify
from bridge.errors import BridgeError, InvalidRequestError, UnauthenticatedError, error_from_json

MAX_ID_CHARS = 128
MAX_HOP_BUDGET = 16


def new_id() -> str:
    """Return a fresh random message id."""
    return os.urandom(16).hex()  # 128 random bits, as uuid4 without its cost


def _fields(
    doc: Any, what: str, allowed: frozenset[str], required: frozenset[str]
) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise InvalidRequestError(f"{what} must be a JSON object")
    keys = doc.keys()
    if not keys <= allowed:
        unknown = sorted(keys - allowed)
        raise InvalidRequestError(
            f"{what} has unknown field(s): {', '.join(map(str, unknown))}", {"unknown": unknown}
        )
    if not required <= keys:
        missing = sorted(required - keys)
        raise InvalidRequestError(
            f"{what} lacks field(s): {', '.join(missing)}", {"missing": missing}
        )
    return doc


def _opt_str(doc: Mapping[str, Any], key: str, what: str, limit: int = MAX_ID_CHARS) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > limit:
        raise InvalidRequestError(f"{what}.{key} must be a non-empty string of at most {limit}")
    return value


def _str_tuple(doc: Mapping[str, Any], key: str, what: str) -> tuple[str, ...]:
    value = doc.get(key, [])
    if (
        not isinstance(value, list)
        or len(value) > 64
        or not all(isinstance(v, str) and 0 < len(v) <= MAX_ID_CHARS for v in value)
    ):
        raise InvalidRequestError(f"{what}.{key} must be a list of strings")
    return tuple(value)


def _opt_int(doc: Mapping[str, Any], key: str, what: str, lo: int, hi: int) -> int | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidRequestError(f"{what}.{key} must be an integer in [{lo}, {hi}]")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestContext:
    """Who asks and in which conversation."""

    agent_id: str | None = None
    session_id: str | None = None
    trace_id: str | None = None

    _KEYS = frozenset({"agent_id", "session_id", "trace_id"})

    @classmethod
    def from_json(cls, doc: Any) -> Self:
        """Parse the wire form."""
        d = _fields(doc, "context", cls._KEYS, frozenset())
        return cls(
            agent_id=_opt_str(d, "agent_id", "context", 256),
            session_id=_opt_str(d, "session_id", "context"),
            trace_id=_opt_str(d, "trace_id", "context"),
        )

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {"agent_id": self.agent_id, "session_id": self.session_id, "trace_id": self.trace_id}


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRouting:
    """Where the call may run and how long it may take."""

    prefer_nodes: tuple[str, ...] = ()
    exclude_nodes: tuple[str, ...] = ()
    hop_budget: int = 3
    timeout_ms: int | None = None
    path: tuple[str, ...] = ()

    _KEYS = frozenset({"prefer_nodes", "exclude_nodes", "hop_budget", "timeout_ms", "path"})

    @classmethod
    def from_json(cls, doc: Any) -> Self:
        """Parse the wire form."""
        d = _fields(doc, "routing", cls._KEYS, frozenset())
        hops = _opt_int(d, "hop_budget", "routing", 0, MAX_HOP_BUDGET)
        return cls(
            prefer_nodes=_str_tuple(d, "prefer_nodes", "routing"),
            exclude_nodes=_str_tuple(d, "exclude_nodes", "routing"),
            hop_budget=3 if hops is None else hops,
            timeout_ms=_opt_int(d, "timeout_ms", "routing", 1, 86_400_000),
            path=_str_tuple(d, "path", "routing"),
        )

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "prefer_nodes": list(self.prefer_nodes),
            "exclude_nodes": list(self.exclude_nodes),
            "hop_budget": self.hop_budget,
            "timeout_ms": self.timeout_ms,
            "path": list(self.path),
        }


_NO_CONTEXT = RequestContext()
_DEFAULT_ROUTING = RequestRouting()


def _context(doc: Any) -> RequestContext:
    # Most calls carry no context: share the one empty (frozen) context.
    return RequestContext.from_json(doc) if doc else _NO_CONTEXT


def _routing(doc: Any) -> RequestRouting:
    return RequestRouting.from_json(doc) if doc else _DEFAULT_ROUTING


class _Signable:
    """Signing shared by both messages: ``signer``'s ed25519 signature of the wire form.

    The signature covers the canonical encoding of ``to_json(with_signature=False)``.
    """

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    signer: str | None
    signature: str | None

    def to_json(self, *, with_signature: bool = True) -> dict[str, Any]:
        """Return the wire form."""
        raise NotImplementedError

    def signing_bytes(self) -> bytes:
        """Return the canonical bytes a signature covers."""
        return canonical_json(self.to_json(with_signature=False))

    def signed(self, key: NodeKey) -> Self:
        """Return a copy signed by ``key``."""
        unsigned = replace(self, signer=key.public_key_b64, signature=None)
        return replace(unsigned, signature=key.sign(unsigned.signing_bytes()))

    def signature_valid(self) -> bool:
        """Return whether the message carries a valid signature by its ``signer``."""
        if self.signer is None or self.signature is None:
            return False
        return verify(self.signer, self.signing_bytes(), self.signature)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRequest(_Signable):
    """A ``tool_invoke`` message."""

    id: str = field(default_factory=new_id)
    tool: str
    version: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    context: RequestContext = field(default_factory=RequestContext)
    routing: RequestRouting = field(default_factory=RequestRouting)
    token: str | None = None
    idempotency_key: str | None = None
    timestamp: float = field(default_factory=time.time)
    signer: str | None = None
    signature: str | None = None
    # Local only (never on the wire): the compact tool this call was resolved from.
    via: str | None = field(default=None, compare=False)

    _KEYS = frozenset(
        {"type", "id", "tool", "version", "params", "context", "routing", "auth",
         "idempotency_key", "timestamp", "signer", "signature"}
    )

    @classmethod
    def from_json(cls, doc: Any) -> Self:
        """Parse a ``tool_invoke`` message; raise ``InvalidRequestError`` when malformed."""
        d = _fields(doc, "tool_invoke", cls._KEYS, frozenset({"tool"}))
        if d.get("type", "tool_invoke") != "tool_invoke":
            raise InvalidRequestError("message type must be 'tool_invoke'")
        tool = _opt_str(d, "tool", "tool_invoke", 512)
        params = d.get("params", {})
        if not isinstance(params, dict):
            raise InvalidRequestError("tool_invoke.params must be a JSON object")
        auth = d.get("auth")
        token: str | None = None
        if auth is not None:
            auth_d = _fields(auth, "auth", frozenset({"token"}), frozenset())
            token = _opt_str(auth_d, "token", "auth", 16_384)
        ts = d.get("timestamp")
        if ts is None:
            ts = time.time()
        elif isinstance(ts, bool) or not isinstance(ts, int | float) or ts != ts:
            raise InvalidRequestError("tool_invoke.timestamp must be a number (epoch seconds)")
        return cls(
            id=_opt_str(d, "id", "tool_invoke") or new_id(),
            tool=tool or "",
            version=_opt_str(d, "version", "tool_invoke"),
            params=params,
            context=_context(d.get("context")),
            routing=_routing(d.get("routing")),
            token=token,
            idempotency_key=_opt_str(d, "idempotency_key", "tool_invoke", 256),
            timestamp=float(ts),
            signer=_opt_str(d, "signer", "tool_invoke"),
            signature=_opt_str(d, "signature", "tool_invoke", 256),
        )

    def to_json(self, *, with_signature: bool = True) -> dict[str, Any]:
        """Return the wire form."""
        doc: dict[str, Any] = {
            "type": "tool_invoke",
            "id": self.id,
            "tool": self.tool,
            "version": self.version,
            "params": self.params,
            "context": self.context.to_json(),
            "routing": self.routing.to_json(),
            "auth": {"token": self.token},
            "idempotency_key": self.idempotency_key,
            "timestamp": self.timestamp,
            "signer": self.signer,
        }
        if with_signature:
            doc["signature"] = self.signature
        return doc


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionInfo:
    """Where and how long a call's handler ran (``tool_response.execution``).

    ``node_id`` is the node whose handler ran, ``hops`` how many nodes the request
    passed before reaching it (0 = the node that answered the caller), ``path`` the
    nodes in order ending with the executing one, ``duration_ms`` the handler's run
    time measured there, ``attempts`` the nodes the routing node tried, in order
    (empty for a local run).
    """

    node_id: str
    hops: int
    duration_ms: float
    path: tuple[str, ...] = ()
    attempts: tuple[str, ...] = ()

    _KEYS = frozenset({"node_id", "hops", "duration_ms", "path", "attempts"})

    @classmethod
    def from_json(cls, doc: Any) -> Self:
        """Parse the wire form; raise ``InvalidRequestError`` when malformed."""
        d = _fields(doc, "execution", cls._KEYS, frozenset({"node_id", "hops", "duration_ms"}))
        node_id = _opt_str(d, "node_id", "execution")
        hops = _opt_int(d, "hops", "execution", 0, 64)
        duration = d["duration_ms"]
        if isinstance(duration, bool) or not isinstance(duration, int | float) or duration < 0:
            raise InvalidRequestError("execution.duration_ms must be a non-negative number")
        return cls(
            node_id=node_id or "",
            hops=hops or 0,
            duration_ms=float(duration),
            path=_str_tuple(d, "path", "execution"),
            attempts=_str_tuple(d, "attempts", "execution"),
        )

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {
            "node_id": self.node_id,
            "hops": self.hops,
            "duration_ms": self.duration_ms,
            "path": list(self.path),
            "attempts": list(self.attempts),
        }


class ResponseStatus(StrEnum):
    """Outcome of a call."""

    SUCCESS = "success"
    ERROR = "error"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResponse(_Signable):
    """A ``tool_response`` message."""

    id: str = field(default_factory=new_id)
    request_id: str
    call_id: str
    tool: str | None = None
    status: ResponseStatus
    result: Any = None
    error: dict[str, Any] | None = None
    duration_ms: float = 0.0
    node_id: str = ""
    execution: ExecutionInfo | None = None
    timestamp: float = field(default_factory=time.time)
    signer: str | None = None
    signature: str | None = None
    # The typed error ``error`` is the wire form of (not on the wire): kept from where it
    # was raised, or read once from a peer's message, so no face rebuilds it.
    raised: BridgeError | None = field(default=None, compare=False, repr=False)
    # The result's JSON text when the invoker already encoded it (not on the wire as such):
    # the HTTP answer splices it in instead of encoding the result a second time.
    result_json: str | bytes | None = field(default=None, compare=False, repr=False)

    _KEYS = frozenset(
        {"type", "id", "request_id", "call_id", "tool", "status", "result", "error",
         "duration_ms", "node_id", "execution", "timestamp", "signer", "signature"}
    )

    @classmethod
    def success(cls, request: ToolRequest, call_id: str, tool: str, result: Any,
                duration_ms: float, node_id: str,
                execution: ExecutionInfo | None = None,
                result_json: str | bytes | None = None) -> ToolResponse:
        """Return a success response to ``request`` (``result_json``: ``result`` encoded)."""
        return cls(request_id=request.id, call_id=call_id, tool=tool,
                   status=ResponseStatus.SUCCESS, result=result,
                   duration_ms=duration_ms, node_id=node_id, execution=execution,
                   result_json=result_json)

    @classmethod
    def failure(cls, request: ToolRequest, call_id: str, tool: str | None, error: BridgeError,
                duration_ms: float, node_id: str,
                execution: ExecutionInfo | None = None) -> ToolResponse:
        """Return an error response to ``request``."""
        return cls(request_id=request.id, call_id=call_id, tool=tool,
                   status=ResponseStatus.ERROR, error=error.to_json(), raised=error,
                   duration_ms=duration_ms, node_id=node_id, execution=execution)

    @property
    def ok(self) -> bool:
        """Return whether the call succeeded."""
        return self.status is ResponseStatus.SUCCESS

    @property
    def problem(self) -> BridgeError | None:
        """Return the typed error of a failed call (``None`` on success)."""
        if self.raised is not None or self.error is None:
            return self.raised
        return error_from_json(self.error)  # a response built from a bare error document

    @property
    def http_status(self) -> int:
        """Return the HTTP status this response is served with."""
        problem = self.problem
        return 200 if problem is None else problem.http_status

    @classmethod
    def from_json(cls, doc: Any) -> Self:
        """Parse a ``tool_response`` message; raise ``InvalidRequestError`` when malformed."""
        d = _fields(doc, "tool_response", cls._KEYS, frozenset({"request_id", "status"}))
        if d.get("type", "tool_response") != "tool_response":
            raise InvalidRequestError("message type must be 'tool_response'")
        try:
            status = ResponseStatus(d["status"])
        except ValueError as err:
            raise InvalidRequestError("tool_response.status must be success or error") from err
        error = d.get("error")
        if status is ResponseStatus.ERROR and (
            not isinstance(error, dict) or not isinstance(error.get("code"), str)
        ):
            raise InvalidRequestError("an error tool_response needs error.code")
        duration = d.get("duration_ms", 0.0)
        ts = d.get("timestamp", time.time())
        for name, value in (("duration_ms", duration), ("timestamp", ts)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InvalidRequestError(f"tool_response.{name} must be a number")
        return cls(
            id=_opt_str(d, "id", "tool_response") or new_id(),
            request_id=_opt_str(d, "request_id", "tool_response") or "",
            call_id=_opt_str(d, "call_id", "tool_response") or "",
            tool=_opt_str(d, "tool", "tool_response", 512),
            status=status,
            result=d.get("result"),
            error=error if isinstance(error, dict) else None,
            raised=error_from_json(error) if isinstance(error, dict) else None,
            duration_ms=float(duration),
            node_id=str(d.get("node_id") or ""),
            execution=(
                ExecutionInfo.from_json(d["execution"])
                if d.get("execution") is not None else None
            ),
            timestamp=float(ts),
            signer=_opt_str(d, "signer", "tool_response"),
            signature=_opt_str(d, "signature", "tool_response", 256),
        )

    def to_json(self, *, with_signature: bool = True) -> dict[str, Any]:
        """Return the wire form."""
        doc: dict[str, Any] = {
            "type": "tool_response",
            "id": self.id,
            "request_id": self.request_id,
            "call_id": self.call_id,
            "tool": self.tool,
            "status": self.status.value,
            "result": self.result,
            "error": self.error,
            "duration_ms": self.duration_ms,
            "node_id": self.node_id,
            "execution": self.execution.to_json() if self.execution is not None else None,
            "timestamp": self.timestamp,
            "signer": self.signer,
        }
        if with_signature:
            doc["signature"] = self.signature
        return doc


class ReplayGuard:
    """Reject requests outside the clock-skew window and ids seen before."""

    def __init__(
        self,
        *,
        clock_skew_s: float = 300.0,
        clock: Callable[[], float] = time.time,
        max_ids: int = 200_000,
    ) -> None:
        self.clock_skew_s = clock_skew_s
        self._clock = clock
        self._seen: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._max_ids = max_ids

    def check(self, message_id: str, timestamp: float, *, agent_id: str = "") -> None:
        """Accept ``message_id`` once per agent; raise ``UnauthenticatedError`` if stale/reused."""
        now = self._clock()
        if abs(now - timestamp) > self.clock_skew_s:
            raise UnauthenticatedError(
                "request timestamp is outside the allowed clock skew",
                {"reason": "clock_skew", "skew_s": round(now - timestamp, 3)},
            )
        horizon = now - 2 * self.clock_skew_s
        while self._seen:
            oldest_id, seen_at = next(iter(self._seen.items()))
            if seen_at >= horizon and len(self._seen) < self._max_ids:
                break
            del self._seen[oldest_id]
        key = (agent_id, message_id)
        if key in self._seen:
            raise UnauthenticatedError("request id was already used", {"reason": "replayed"})
        self._seen[key] = now
