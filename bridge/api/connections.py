"""Connections to the HTTP API: limits, timeouts and JSON answers below the router.

Details: docs/modules.md, ``bridge.api.connections``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler

from bridge.config import ApiConfig
from bridge.errors import (
    BridgeError,
    HeadersTooLargeError,
    InternalError,
    InvalidRequestError,
    OverloadedError,
    RequestTimeoutError,
)
from bridge.ratelog import RateLimitedLog

_LOG = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOG)
# File descriptors kept for everything but client connections (db, controller, peers).
FD_RESERVE = 256
_REASONS = {
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
    400: "Bad Request",
}


def raise_open_file_limit() -> tuple[int, int]:
    """Raise the soft open-file limit to the hard limit; return ``(soft, hard)`` after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1_048_576)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as err:
            _LOG.warning("cannot raise the open-file limit to %s: %s", target, err)
    return soft, hard


def effective_max_connections(config: ApiConfig) -> int:
    """Return the connection cap: the configured one, kept under the open-file limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return config.max_connections
    return max(1, min(config.max_connections, soft - FD_RESERVE))


def error_bytes(err: BridgeError) -> bytes:
    """Return a whole HTTP/1.1 response carrying ``err`` as JSON, closing the connection."""
    body = json.dumps({"error": err.to_json()}, separators=(",", ":")).encode()
    status = err.http_status
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
        "Content-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def _parse_error(exc: BaseException | None, limit: int) -> BridgeError:
    if isinstance(exc, LineTooLong) or (
        isinstance(exc, HttpProcessingError) and "too many headers" in str(exc.message).lower()
    ):
        return HeadersTooLargeError(
            f"the request line or a header is longer than {limit} bytes, or there are too "
            "many headers",
            {"max_header_bytes": limit},
        )
    return InvalidRequestError("malformed HTTP request", {"reason": "bad_http"})


class GuardedRequestHandler(RequestHandler):
    """One connection: aiohttp's protocol with JSON parse errors, a head timeout and a cap."""

    def __init__(self, manager: GuardedServer, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._guard = manager
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Take the connection, or answer 503 and close it when over the cap."""
        super().connection_made(transport)
        if len(self._guard.connections) > self._guard.max_connections:
            _RATE_LOG.warning(
                "over-cap",
                "connection refused: %s open (cap %s)",
                len(self._guard.connections),
                self._guard.max_connections,
            )
            err = OverloadedError(
                "this bridge has too many open connections; try again shortly",
                {"max_connections": self._guard.max_connections},
            )
            self._answer_and_close(err)

    def _answer_and_close(self, err: BridgeError) -> None:
        transport = self.transport
        if transport is not None and not transport.is_closing():
            try:
                transport.write(error_bytes(err))
            except (OSError, RuntimeError):
                pass
        self.force_close()

    def data_received(self, data: bytes) -> None:
        """Parse as aiohttp does; time the head from its first byte."""
        started = self._head_timer is None and data and self._awaiting_head()
        super().data_received(data)
        if self._awaiting_head():
            # A head still incomplete after these bytes: time it from now (a whole
            # request in one read, the usual case, never starts a timer).
            if started:
                self._head_timer = self._loop.call_later(
                    self._guard.header_timeout_s, self._head_expired
                )
        elif self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _awaiting_head(self) -> bool:
        return (
            not self._messages
            and self._current_request is None
            and not self._upgraded
            and self._payload_parser is None
            and not self._force_close
        )

    def _head_expired(self) -> None:
        self._head_timer = None
        if self._awaiting_head():
            _RATE_LOG.info("head-timeout", "closed a connection whose request head was too slow")
            self._answer_and_close(
                RequestTimeoutError(
                    "the request head arrived too slowly",
                    {"header_timeout_s": self._guard.header_timeout_s},
                )
            )

    def connection_lost(self, exc: BaseException | None) -> None:
        """Drop the head timer with the connection."""
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)

    def handle_error(
        self,
        request: Any,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """Answer a request aiohttp could not parse or handle as JSON; log one line per cause."""
        if status == 400 or isinstance(exc, HttpProcessingError):
            err = _parse_error(exc, self._guard.max_header_bytes)
            _RATE_LOG.info(
                f"parse:{type(exc).__name__}",
                "refused a malformed request (%s)",
                type(exc).__name__,
            )
        else:
            err = InternalError("internal error")
            _RATE_LOG.warning(
                f"handler:{status}:{type(exc).__name__}",
                "request failed below the router: %s %s",
                status,
                type(exc).__name__,
            )
        if request.writer.output_size > 0:
            raise ConnectionError("the response had started; cannot send an error")
        resp = web.Response(
            status=err.http_status,
            text=json.dumps({"error": err.to_json()}, separators=(",", ":")),
            content_type="application/json",
        )
        resp.force_close()
        return resp


class GuardedServer(web.Server):
    """aiohttp's low-level server making ``GuardedRequestHandler`` connections."""

    def __init__(self, *args: Any, config: ApiConfig, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_connections = effective_max_connections(config)
        self.header_timeout_s = config.header_timeout_s
        self.max_header_bytes = config.max_header_bytes

    def __call__(self) -> RequestHandler:
        """Return the protocol for one new connection."""
        return GuardedRequestHandler(self, loop=self._loop, **self._kwargs)


class GuardedAppRunner(web.AppRunner):
    """An ``AppRunner`` whose server guards connections as this module describes."""

    def __init__(self, app: web.Application, config: ApiConfig, **kwargs: Any) -> None:
        kwargs.setdefault("keepalive_timeout", config.idle_timeout_s)
        kwargs.setdefault("max_line_size", config.max_header_bytes)
        kwargs.setdefault("max_field_size", config.max_header_bytes)
        kwargs.setdefault("lingering_time", min(config.body_timeout_s, 10.0))
        super().__init__(app, **kwargs)
        self._config = config

    async def _make_server(self) -> web.Server:
        base = await super()._make_server()
        return GuardedServer(
            base.request_handler,
            request_factory=base.request_factory,
            handler_cancellation=base.handler_cancellation,
            loop=base._loop,
            config=self._config,
            **base._kwargs,
        )


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Make the loop report accept() resource errors once per minute, without a traceback."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        exc = context.get("exception")
        if "accept" in message or (isinstance(exc, OSError) and exc.errno in (23, 24)):
            _RATE_LOG.warning(
                f"accept:{message[:40]}", "%s: %s", message[:200], type(exc).__name__ if exc else ""
            )
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
