"""The approval webhook: tell a notification service of new pending approvals, batched.

Approvals that arrive within ``BATCH_WINDOW_S`` of each other go out in one POST (at
most ``MAX_BATCH`` per POST, at most one POST per window): a burst of requests from one
caller is one notification, not hundreds. The body is ``{"type": "approval.pending",
"approvals": [...], "count", "approval": <the first>, "console_url"}``.

Details: docs/modules.md, ``bridge.console.webhook``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

_LOGGER = logging.getLogger(__name__)
SECRET_NAME = re.compile(r"pin|code|pass|secret|token|key", re.IGNORECASE)
SIGNATURE_HEADER = "X-Atmosphere-Signature"
TIMESTAMP_HEADER = "X-Atmosphere-Timestamp"
TIMEOUT_S = 5.0
BATCH_WINDOW_S = 1.0
MAX_BATCH = 50


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    """Return the signature header value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def redact(params: dict[str, Any], secret_params: list[str]) -> dict[str, Any]:
    """Return ``params`` with secret-looking or declared-secret values replaced."""
    return {
        k: "[redacted]" if k in secret_params or SECRET_NAME.search(k) else v
        for k, v in params.items()
    }


def _secret_params(service: Any, tool: str) -> list[str]:
    entry = service.registry.get(tool)
    if entry is None:
        return []
    extra = entry.definition.audit.extra or {}
    names = extra.get("secret_params") or []
    return [str(n) for n in names]


async def _deliver(
    session: aiohttp.ClientSession, url: str, secret: bytes, doc: dict[str, Any]
) -> None:
    body = json.dumps(doc, separators=(",", ":"), sort_keys=True).encode()
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        TIMESTAMP_HEADER: timestamp,
        SIGNATURE_HEADER: sign(secret, timestamp, body),
    }
    async with session.post(url, data=body, headers=headers) as res:
        if res.status >= 300:
            raise aiohttp.ClientResponseError(
                res.request_info, (), status=res.status, message="webhook refused"
            )


async def _run(service: Any, url: str, secret: bytes) -> None:
    last_log = 0.0
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        service.events.subscription("approval.pending") as sub,
    ):
        while True:
            events = [await sub.get()]
            # Whatever else arrives within the window joins this POST.
            deadline = time.monotonic() + BATCH_WINDOW_S
            while len(events) < MAX_BATCH and (left := deadline - time.monotonic()) > 0:
                try:
                    events.append(await asyncio.wait_for(sub.get(), left))
                except TimeoutError:
                    break
            approvals = []
            for event in events:
                approval = dict(event.data)
                approval["params"] = redact(
                    dict(approval.get("params") or {}),
                    _secret_params(service, str(approval.get("tool"))),
                )
                approvals.append(approval)
            doc = {
                "type": "approval.pending",
                "approvals": approvals,
                "count": len(approvals),
                "approval": approvals[0],
                "console_url": "/console/approvals",
            }
            try:
                await _deliver(session, url, secret, doc)
            except (aiohttp.ClientError, TimeoutError, OSError) as err:
                if time.monotonic() - last_log > 60:
                    last_log = time.monotonic()
                    _LOGGER.warning("approval webhook %s failed: %s", url, err)


async def webhook_ctx(app: web.Application) -> AsyncIterator[None]:
    """Run the webhook sender while the application runs (when configured)."""
    from bridge.api.http import SERVICE_KEY

    service = app[SERVICE_KEY]
    conf = service.config.console
    task: asyncio.Task[None] | None = None
    if conf.approval_webhook_url and conf.approval_webhook_secret_file:
        try:
            path = Path(conf.approval_webhook_secret_file)
            secret = (await asyncio.to_thread(path.read_bytes)).strip()
        except OSError as err:
            _LOGGER.warning("cannot read the approval webhook secret: %s; webhook off", err)
            secret = b""
        if secret:
            task = asyncio.get_running_loop().create_task(
                _run(service, conf.approval_webhook_url, secret), name="approval-webhook"
            )
    yield
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
