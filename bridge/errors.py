"""Stable error codes and the error base every layer derives from.

Every error that can cross the wire (HTTP, WebSocket, mesh) is a ``BridgeError``
subclass with a stable ``code``, a ``retryable`` flag and an HTTP status. Subclasses
that set ``code`` register themselves in ``ERROR_MAP`` so a wire error can be turned
back into the right exception with ``error_from_json``.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, ClassVar, Self


class ErrorCode(StrEnum):
    """Closed set of error codes shown to clients and peers."""

    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    AMBIGUOUS_TOOL = "AMBIGUOUS_TOOL"
    INVALID_DEFINITION = "INVALID_DEFINITION"
    INVALID_PARAMS = "INVALID_PARAMS"
    INVALID_REQUEST = "INVALID_REQUEST"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    RATE_LIMITED = "RATE_LIMITED"
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
    CONFIRMATION_DENIED = "CONFIRMATION_DENIED"
    CONFIRMATION_TIMEOUT = "CONFIRMATION_TIMEOUT"
    TIMEOUT = "TIMEOUT"
    DEVICE_UNAVAILABLE = "DEVICE_UNAVAILABLE"
    NO_CAPABLE_NODE = "NO_CAPABLE_NODE"
    HOP_LIMIT_EXCEEDED = "HOP_LIMIT_EXCEEDED"
    TOOL_FAILED = "TOOL_FAILED"
    NOT_FOUND = "NOT_FOUND"
    CONFLICT = "CONFLICT"
    CONFIG_INVALID = "CONFIG_INVALID"
    CONTROLLER_UNAVAILABLE = "CONTROLLER_UNAVAILABLE"
    COMMISSIONING_FAILED = "COMMISSIONING_FAILED"
    CLIENT_UNAVAILABLE = "CLIENT_UNAVAILABLE"
    COMPONENT_UNAVAILABLE = "COMPONENT_UNAVAILABLE"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    HEADERS_TOO_LARGE = "HEADERS_TOO_LARGE"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    OVERLOADED = "OVERLOADED"
    STORAGE_FULL = "STORAGE_FULL"
    INTERNAL = "INTERNAL"


ERROR_MAP: dict[str, type[BridgeError]] = {}


class BridgeError(Exception):
    """Base of every error the bridge reports to a user or a peer."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL
    retryable: ClassVar[bool] = False
    http_status: ClassVar[int] = 500

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Register the first class that declares each code."""
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            ERROR_MAP.setdefault(cls.code.value, cls)

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details or {}

    def but(self, *, message: str, details: dict[str, Any]) -> Self:
        """Return a copy of this error (same class and code) with ``message`` and ``details``."""
        # Not through __init__: subclasses may take other arguments.
        copy = type(self).__new__(type(self), message)
        copy.__dict__.update(self.__dict__)
        copy.args = (message,)
        copy.message = message
        copy.details = details
        copy.__cause__ = self.__cause__
        return copy

    def scrubbed(self, scrub: Callable[[Any], Any]) -> Self:
        """Return this error with ``scrub`` applied to its message and details (typed still)."""
        message = scrub(self.message)
        details = scrub(self.details)
        if message is self.message and details is self.details:
            return self
        return self.but(
            message=message if isinstance(message, str) else str(message),
            details=details if isinstance(details, dict) else {"details": details},
        )

    def to_json(self) -> dict[str, Any]:
        """Return the wire form ``{"code", "message", "details", "retryable"}``."""
        return {
            "code": self.code.value,
            "message": self.message,
            "details": self.details,
            "retryable": self.retryable,
        }


ERROR_MAP[ErrorCode.INTERNAL.value] = BridgeError


class ToolNotFoundError(BridgeError):
    """No tool matches the identity."""

    code = ErrorCode.TOOL_NOT_FOUND
    http_status = 404


class AmbiguousToolError(BridgeError):
    """An unqualified name exists in several namespaces."""

    code = ErrorCode.AMBIGUOUS_TOOL
    http_status = 409


class InvalidDefinitionError(BridgeError):
    """A tool definition (file, manifest entry, decorator) is invalid."""

    code = ErrorCode.INVALID_DEFINITION
    http_status = 422


class InvalidParamsError(BridgeError):
    """Call parameters do not match the tool's parameter schema."""

    code = ErrorCode.INVALID_PARAMS
    http_status = 400


class InvalidRequestError(BridgeError):
    """A request body, message or query is malformed."""

    code = ErrorCode.INVALID_REQUEST
    http_status = 400


class UnauthenticatedError(BridgeError):
    """No valid token or signature."""

    code = ErrorCode.UNAUTHENTICATED
    http_status = 401


class PermissionDeniedError(BridgeError):
    """The token does not grant what the tool requires."""

    code = ErrorCode.PERMISSION_DENIED
    http_status = 403


class RateLimitedError(BridgeError):
    """The token's rate limit is exhausted."""

    code = ErrorCode.RATE_LIMITED
    http_status = 429
    retryable = True


class ConfirmationRequiredError(BridgeError):
    """The tool is dangerous and needs confirmation."""

    code = ErrorCode.CONFIRMATION_REQUIRED
    http_status = 409


class ConfirmationDeniedError(BridgeError):
    """An approver denied the call."""

    code = ErrorCode.CONFIRMATION_DENIED
    http_status = 403


class ConfirmationTimeoutError(BridgeError):
    """Nobody approved the call in time."""

    code = ErrorCode.CONFIRMATION_TIMEOUT
    http_status = 408
    retryable = True


class ToolTimeoutError(BridgeError):
    """The tool did not finish within its timeout."""

    code = ErrorCode.TIMEOUT
    http_status = 504
    retryable = True


class DeviceUnavailableError(BridgeError):
    """The Matter device behind the tool is not reachable."""

    code = ErrorCode.DEVICE_UNAVAILABLE
    http_status = 503
    retryable = True


class NoCapableNodeError(BridgeError):
    """No node in the mesh offers the tool."""

    code = ErrorCode.NO_CAPABLE_NODE
    http_status = 503
    retryable = True


class HopLimitExceededError(BridgeError):
    """A forwarded request ran out of hops or would loop."""

    code = ErrorCode.HOP_LIMIT_EXCEEDED
    http_status = 508


class ToolFailedError(BridgeError):
    """The tool's handler failed."""

    code = ErrorCode.TOOL_FAILED
    http_status = 502


class NotFoundError(BridgeError):
    """A resource (job, approval, device, route) does not exist."""

    code = ErrorCode.NOT_FOUND
    http_status = 404


class ConflictError(BridgeError):
    """The request conflicts with current state (duplicate, already decided)."""

    code = ErrorCode.CONFLICT
    http_status = 409


class ConfigInvalidError(BridgeError):
    """A configuration file is invalid."""

    code = ErrorCode.CONFIG_INVALID
    http_status = 500


class ControllerUnavailableError(BridgeError):
    """The Matter controller cannot be reached."""

    code = ErrorCode.CONTROLLER_UNAVAILABLE
    http_status = 503
    retryable = True


class CommissioningFailedError(BridgeError):
    """Commissioning a device failed."""

    code = ErrorCode.COMMISSIONING_FAILED
    http_status = 422


class ClientUnavailableError(BridgeError):
    """A client tool needs the caller's client and none of its WebSockets is connected."""

    code = ErrorCode.CLIENT_UNAVAILABLE
    http_status = 503
    retryable = True


class ComponentUnavailableError(BridgeError):
    """A part of this node the request needs (invocation, Matter, mesh, …) is not running.

    One answer wherever a part is off or not started: 503 ``COMPONENT_UNAVAILABLE`` with
    ``details.component`` naming the part (never 401 or 404, which would say something
    about the caller's token or the path instead).
    """

    code = ErrorCode.COMPONENT_UNAVAILABLE
    http_status = 503


def running[T](part: T | None, component: str) -> T:
    """Return ``part``; raise ``ComponentUnavailableError`` naming ``component`` when ``None``."""
    if part is None:
        raise ComponentUnavailableError(
            f"{component} is not running on this node", {"component": component}
        )
    return part


class PayloadTooLargeError(BridgeError):
    """A request body or message is larger than this node takes."""

    code = ErrorCode.PAYLOAD_TOO_LARGE
    http_status = 413


class HeadersTooLargeError(BridgeError):
    """The request line or a header is longer than this node takes, or too many headers."""

    code = ErrorCode.HEADERS_TOO_LARGE
    http_status = 431


class RequestTimeoutError(BridgeError):
    """The client was too slow sending its request."""

    code = ErrorCode.REQUEST_TIMEOUT
    http_status = 408


class OverloadedError(BridgeError):
    """This node has no room for the connection or request now; try again shortly."""

    code = ErrorCode.OVERLOADED
    retryable = True
    http_status = 503


class StorageFullError(BridgeError):
    """The state directory's disk is full: nothing was written; retry once space is freed."""

    code = ErrorCode.STORAGE_FULL
    http_status = 507
    retryable = True


class InternalError(BridgeError):
    """An unexpected failure; details are logged, not shown."""

    code = ErrorCode.INTERNAL
    http_status = 500


def error_from_json(data: dict[str, Any]) -> BridgeError:
    """Rebuild an error from its wire form; unknown codes become ``InternalError``."""
    code = str(data.get("code", ErrorCode.INTERNAL.value))
    cls = ERROR_MAP.get(code, InternalError)
    details = data.get("details")
    return cls(str(data.get("message", "")), details if isinstance(details, dict) else None)
