"""The ``tool_invoke`` / ``tool_response`` messages, their wire form, signatures and replay guard.

One place converts between wire JSON and these frozen models. Each message has one
JSON Schema here (``TOOL_INVOKE_SCHEMA``, ``TOOL_RESPONSE_SCHEMA``) and one check of it
(``ToolRequest.CHECK``, ``ToolResponse.CHECK``): ``from_json`` checks, then converts
without checking again (``from_checked``), so every boundary (HTTP, WebSocket, MCP,
mesh) refuses the same malformed message with the same ``InvalidRequestError``.

A message may be signed by the node that sent it: the signature is the ed25519
signature (by ``signer``) of the canonical encoding (``bridge.auth.canonical``) of the
wire form without ``signature``.

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
from bridge.tools.schemacheck import CheckedMessage, SchemaCheck

MAX_ID_CHARS = 128
MAX_HOP_BUDGET = 16


def new_id() -> str:
    """Return a fresh random message id."""
    return os.urandom(16).hex()  # 128 random bits, as uuid4 without its cost


def _text(limit: int, *, null: bool = True) -> dict[str, Any]:
    return {"type": ["string", "null"] if null else "string", "minLength": 1, "maxLength": limit}


_ID = _text(MAX_ID_CHARS)
_ID_LIST = {"type": "array", "maxItems": 64, "items": _text(MAX_ID_CHARS, null=False)}

CONTEXT_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "properties": {"agent_id": _text(256), "session_id": _ID, "trace_id": _ID},
}
ROUTING_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "properties": {
        "prefer_nodes": _ID_LIST,
        "exclude_nodes": _ID_LIST,
        "hop_budget": {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_HOP_BUDGET},
        "timeout_ms": {"type": ["integer", "null"], "minimum": 1, "maximum": 86_400_000},
        "path": _ID_LIST,
    },
}
# The ``tool_invoke`` message: every entrance (HTTP invoke and jobs, the call socket, MCP,
# the mesh) checks a request against this one schema, through ``ToolRequest.CHECK``.
TOOL_INVOKE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["tool"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "tool_invoke"},
        "id": _ID,
        "tool": _text(512, null=False),
        "version": _ID,
        "params": {"type": "object"},
        "context": CONTEXT_SCHEMA,
        "routing": ROUTING_SCHEMA,
        "auth": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "properties": {"token": _text(16_384)},
        },
        "idempotency_key": _text(256),
        "timestamp": {"type": ["number", "null"], "description": "epoch seconds"},
        "signer": _ID,
        "signature": _text(256),
    },
}
EXECUTION_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "Where the handler ran (null when the call was refused before running)",
    "required": ["node_id", "hops", "duration_ms"],
    "additionalProperties": False,
    "properties": {
        "node_id": {**_text(MAX_ID_CHARS, null=False), "description": "the node whose handler ran"},
        "hops": {
            "type": "integer",
            "minimum": 0,
            "maximum": 64,
            "description": "nodes passed to get there",
        },
        "duration_ms": {"type": "number", "minimum": 0, "description": "handler run time"},
        "path": {**_ID_LIST, "description": "nodes in order, ending with the executing one"},
        "attempts": {
            **_ID_LIST,
            "description": "nodes this node tried for a routed call, in order",
        },
    },
}
ERROR_OBJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["code"],
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "details": {"type": "object"},
        "retryable": {"type": "boolean"},
    },
}
# The ``tool_response`` message as it is read (a peer's answer, a stored idempotent
# outcome); ``bridge.api.openapi`` documents the same schema with every field present.
TOOL_RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["request_id", "status"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "tool_response"},
        "id": _ID,
        "request_id": {"type": "string", "maxLength": MAX_ID_CHARS},
        "call_id": {"type": ["string", "null"], "maxLength": MAX_ID_CHARS},
        "tool": _text(512),
        "status": {"enum": ["success", "error"]},
        "result": {},
        "error": {**ERROR_OBJECT_SCHEMA, "type": ["object", "null"]},
        "duration_ms": {"type": "number", "description": "the whole call at this node"},
        "node_id": {
            "type": ["string", "null"],
            "maxLength": MAX_ID_CHARS,
            "description": "the node that answered",
        },
        "execution": EXECUTION_SCHEMA,
        "timestamp": {"type": "number"},
        "signer": _ID,
        "signature": _text(256),
    },
}


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestContext:
    """Who asks and in which conversation."""

    agent_id: str | None = None
    session_id: str | None = None
    trace_id: str | None = None

    @classmethod
    def from_checked(cls, doc: Mapping[str, Any]) -> Self:
        """Return the context of a wire form already checked against ``CONTEXT_SCHEMA``."""
        return cls(
            agent_id=doc.get("agent_id"),
            session_id=doc.get("session_id"),
            trace_id=doc.get("trace_id"),
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

    @classmethod
    def from_checked(cls, doc: Mapping[str, Any]) -> Self:
        """Return the routing of a wire form already checked against ``ROUTING_SCHEMA``."""
        hops = doc.get("hop_budget")
        timeout = doc.get("timeout_ms")
        return cls(
            prefer_nodes=tuple(doc.get("prefer_nodes", ())),
            exclude_nodes=tuple(doc.get("exclude_nodes", ())),
            hop_budget=3 if hops is None else int(hops),
            timeout_ms=None if timeout is None else int(timeout),
            path=tuple(doc.get("path", ())),
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
    return RequestContext.from_checked(doc) if doc else _NO_CONTEXT


def _routing(doc: Any) -> RequestRouting:
    return RequestRouting.from_checked(doc) if doc else _DEFAULT_ROUTING


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
class ToolRequest(CheckedMessage, _Signable):
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

    CHECK: ClassVar[SchemaCheck] = SchemaCheck(TOOL_INVOKE_SCHEMA, what="tool_invoke")

    @classmethod
    def from_checked(cls, doc: Mapping[str, Any]) -> Self:
        """Return the request of a wire form already checked against ``TOOL_INVOKE_SCHEMA``.

        (The HTTP routes check a body with ``CHECK`` as it is read, then convert it here.)
        """
        auth = doc.get("auth")
        ts = doc.get("timestamp")
        return cls(
            id=doc.get("id") or new_id(),
            tool=doc["tool"],
            version=doc.get("version"),
            params=doc.get("params", {}),
            context=_context(doc.get("context")),
            routing=_routing(doc.get("routing")),
            token=auth.get("token") if auth else None,
            idempotency_key=doc.get("idempotency_key"),
            timestamp=time.time() if ts is None else float(ts),
            signer=doc.get("signer"),
            signature=doc.get("signature"),
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
class ExecutionInfo(CheckedMessage):
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

    CHECK: ClassVar[SchemaCheck] = SchemaCheck(
        {**EXECUTION_SCHEMA, "type": "object"}, what="execution"
    )

    @classmethod
    def from_checked(cls, doc: Mapping[str, Any]) -> Self:
        """Return the info of a wire form already checked against ``EXECUTION_SCHEMA``."""
        return cls(
            node_id=doc["node_id"],
            hops=int(doc["hops"]),
            duration_ms=float(doc["duration_ms"]),
            path=tuple(doc.get("path", ())),
            attempts=tuple(doc.get("attempts", ())),
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

    CHECK: ClassVar[SchemaCheck] = SchemaCheck(TOOL_RESPONSE_SCHEMA, what="tool_response")

    @classmethod
    def success(
        cls,
        request: ToolRequest,
        call_id: str,
        tool: str,
        result: Any,
        duration_ms: float,
        node_id: str,
        execution: ExecutionInfo | None = None,
        result_json: str | bytes | None = None,
    ) -> ToolResponse:
        """Return a success response to ``request`` (``result_json``: ``result`` encoded)."""
        return cls(
            request_id=request.id,
            call_id=call_id,
            tool=tool,
            status=ResponseStatus.SUCCESS,
            result=result,
            duration_ms=duration_ms,
            node_id=node_id,
            execution=execution,
            result_json=result_json,
        )

    @classmethod
    def failure(
        cls,
        request: ToolRequest,
        call_id: str,
        tool: str | None,
        error: BridgeError,
        duration_ms: float,
        node_id: str,
        execution: ExecutionInfo | None = None,
    ) -> ToolResponse:
        """Return an error response to ``request``."""
        return cls(
            request_id=request.id,
            call_id=call_id,
            tool=tool,
            status=ResponseStatus.ERROR,
            error=error.to_json(),
            raised=error,
            duration_ms=duration_ms,
            node_id=node_id,
            execution=execution,
        )

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
        """Parse a ``tool_response`` message; raise ``InvalidRequestError`` when off its schema.

        Beyond the schema: an ``error`` response must carry its ``error`` object.
        """
        cls.CHECK.check(doc)
        status = ResponseStatus(doc["status"])
        error = doc.get("error")
        if status is ResponseStatus.ERROR and error is None:
            raise InvalidRequestError(
                "an error tool_response needs error.code", {"reason": "schema", "field": "error"}
            )
        execution = doc.get("execution")
        return cls(
            id=doc.get("id") or new_id(),
            request_id=doc["request_id"],
            call_id=doc.get("call_id") or "",
            tool=doc.get("tool"),
            status=status,
            result=doc.get("result"),
            error=error,
            raised=None if error is None else error_from_json(error),
            duration_ms=float(doc.get("duration_ms", 0.0)),
            node_id=doc.get("node_id") or "",
            execution=None if execution is None else ExecutionInfo.from_checked(execution),
            timestamp=float(doc.get("timestamp", time.time())),
            signer=doc.get("signer"),
            signature=doc.get("signature"),
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
