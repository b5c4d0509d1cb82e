"""The road between sites: this node as a NATS client of a hub, carrying signed mesh messages.

A site (a home, a flat, an office) dials out to a hub (``nats-server``) and never opens
a port. On the hub, subjects are per site: ``atmo.ann.<site>`` carries the signed
announcements of the site's nodes, ``atmo.rev.<site>`` the token revocation notices
signed by their issuers, and ``atmo.call.<site>.<node id>`` the forwarded calls, as
NATS request/reply with the asking site's replies on ``_INBOX.<asking site>.>``. What
rides on them is exactly what the LAN road carries over HTTP: the announcement as its
origin signed it, the ``mesh_envelope`` with the signed request and its delegation,
and the signed ``mesh_answer``. The hub's permissions (``site_acl.py``) authenticate
the road; the signatures authenticate the content, so a hub can drop or delay messages
but neither forge nor alter a call or an answer. Details: docs/sites.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from bridge import jsonlimits
from bridge.errors import (
    BridgeError,
    ConfigInvalidError,
    InternalError,
    OverloadedError,
    UnauthenticatedError,
)
from bridge.mesh.envelope import MAX_ANSWER_BYTES
from bridge.mesh.gossip import Outcome
from bridge.mesh.node_id import NODE_ID_RE
from bridge.ratelog import RateLimitedLog

if TYPE_CHECKING:
    from bridge.config import SitesConfig

_LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(_LOGGER)

SITE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
SITE_SCHEME = "site:"
PREFIX = "atmo"
# At most this many forwarded calls run at once from the road (one task each), and at
# most MAX_WAITING more wait; beyond that a call is answered "overloaded" at once.
MAX_INFLIGHT = 64
MAX_WAITING = 256
# What a message on the road may be at most (the hub's max_payload is set to this too).
MAX_MESSAGE_BYTES = 1024 * 1024
_LIMITS = jsonlimits.JsonLimits(max_bytes=min(MAX_ANSWER_BYTES, MAX_MESSAGE_BYTES))
RECONNECT_WAIT_S = 0.5
# How long a stopping road waits for the hub to confirm its unsubscription.
UNSUBSCRIBE_FLUSH_S = 5.0
MAX_DIAL_WAIT_S = 5.0


async def settle(nc: Any, within_s: float) -> None:
    """Return once the hub has read everything ``nc`` sent before this call.

    One ``flush()`` does not promise that with nats-py (2.16): its PING goes straight to
    the socket while a SUB, UNSUB or PUB still waits in the client's buffer for the
    flusher task, so the hub can answer the PING before it has read them (a stop then
    returned while the hub still routed calls to this node; a test's listener missed a
    message sent "after" its subscription). By the time the first PONG is back the
    flusher has written the buffer, so a second PING follows it on the wire, and the
    hub answers it only after it has read what came before. Both within ``within_s``.
    """
    async with asyncio.timeout(within_s):
        await nc.flush(timeout=within_s)
        await nc.flush(timeout=within_s)


def announce_subject(site: str) -> str:
    """Return the subject on which ``site`` publishes its nodes' announcements."""
    return f"{PREFIX}.ann.{site}"


def revocation_subject(site: str) -> str:
    """Return the subject on which ``site`` publishes revocation notices."""
    return f"{PREFIX}.rev.{site}"


def call_subject(site: str, node_id: str) -> str:
    """Return the request subject of node ``node_id`` at ``site``."""
    return f"{PREFIX}.call.{site}.{node_id}"


def inbox_prefix(site: str) -> str:
    """Return the prefix of ``site``'s reply subjects (only it may subscribe there)."""
    return f"_INBOX.{site}"


def site_url(site: str, node_id: str) -> str:
    """Return the address the router uses for a node reached over the site road."""
    return f"{SITE_SCHEME}{site}/{node_id}"


def parse_site_url(url: str) -> tuple[str, str] | None:
    """Return ``(site, node_id)`` of a site-road address, ``None`` for any other URL."""
    if not url.startswith(SITE_SCHEME):
        return None
    site, _, node_id = url[len(SITE_SCHEME) :].partition("/")
    if not SITE_RE.match(site) or not NODE_ID_RE.match(node_id):
        return None
    return site, node_id


class SiteUnreachableError(ConnectionError):
    """The hub is not connected, or no bridge of that site listens: the call did not run."""


class SiteLostError(ConnectionError):
    """The hub connection dropped while a call was out: it may or may not have run."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteHandlers:
    """What the road hands to the node: announcements, revocations, forwarded calls."""

    accept_announcement: Callable[[Any], Outcome]
    accept_revocations: Callable[[Any], int]
    # Answer one forwarded call envelope with the document to reply (signed when it verified).
    answer_call: Callable[[Any], Awaitable[dict[str, Any]]]
    own_announcement: Callable[[], dict[str, Any] | None]
    revocation_notices: Callable[[], list[dict[str, Any]]]


class SiteRoad:
    """This node's connection to the hub: publish, subscribe, ask and answer."""

    def __init__(self, config: SitesConfig, *, node_id: str, handlers: SiteHandlers) -> None:
        if not config.site or not SITE_RE.match(config.site):
            raise ConfigInvalidError(
                "mesh.sites.site must be 1-32 of a-z, 0-9, '_' and '-' (starting with a "
                "letter or digit)",
                {"key": "mesh.sites.site"},
            )
        self.config = config
        self.site: str = config.site
        self.node_id = node_id
        self.handlers = handlers
        self.interval_s = 30.0
        # node id -> site, learned from the subject its announcement came on.
        self.site_of: dict[str, str] = {}
        self.received: dict[Outcome, int] = {}
        self._nc: Any = None
        self._calls: Any = None  # the subscription to this node's call subject
        self._tasks: set[asyncio.Task[None]] = set()
        self._inflight = asyncio.Semaphore(MAX_INFLIGHT)
        self._republish: asyncio.Task[None] | None = None
        # Set when the hub connection drops; a new one per connection, so a call that
        # was out when it dropped fails at once instead of waiting for its timeout.
        self._lost = asyncio.Event()
        self._closing = False

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self, interval_s: float) -> None:
        """Dial the hub in the background (until it answers), then subscribe and publish.

        Raises ``ConfigInvalidError`` at once for unreadable credentials or TLS files;
        an unreachable hub is not an error: the road keeps dialling.
        """
        self.interval_s = max(interval_s, 0.2)
        options = self._options()
        self._republish = asyncio.get_running_loop().create_task(self._run(options))

    def _options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "servers": list(self.config.hub_urls),
            "name": f"atmosphere {self.site}/{self.node_id}",
            "inbox_prefix": inbox_prefix(self.site),
            "allow_reconnect": True,
            "max_reconnect_attempts": -1,
            "reconnect_time_wait": RECONNECT_WAIT_S,
            "connect_timeout": 2,
            "ping_interval": 5,
            "max_outstanding_pings": 2,
            "error_cb": self._on_error,
            "disconnected_cb": self._on_disconnected,
            "reconnected_cb": self._on_reconnected,
        }
        if self.config.credentials_file:
            path = Path(self.config.credentials_file)
            try:
                options["nkeys_seed_str"] = read_seed(path)
            except OSError as err:
                raise ConfigInvalidError(
                    f"cannot read the site credentials {path}: {err.strerror}",
                    {"key": "mesh.sites.credentials_file"},
                ) from err
        if self.config.tls_ca_file:
            try:
                options["tls"] = ssl.create_default_context(cafile=self.config.tls_ca_file)
            except (OSError, ssl.SSLError) as err:
                raise ConfigInvalidError(
                    f"cannot read the hub's CA {self.config.tls_ca_file}: {err}",
                    {"key": "mesh.sites.tls_ca_file"},
                ) from err
        return options

    async def _run(self, options: dict[str, Any]) -> None:
        import nats  # the road's client loads only when sites are configured

        wait = RECONNECT_WAIT_S
        while self._nc is None:
            try:
                nc = await nats.connect(**options)
            except Exception as err:
                _RATE_LOG.warning(
                    "site-road:dial",
                    "site road of %s: hub not reachable (%s), retrying",
                    self.site,
                    err or type(err).__name__,
                )
                await asyncio.sleep(wait)
                wait = min(wait * 2, MAX_DIAL_WAIT_S)
                continue
            self._nc = nc
        await self._nc.subscribe(f"{PREFIX}.ann.*", cb=self._on_announcement)
        await self._nc.subscribe(f"{PREFIX}.rev.*", cb=self._on_revocations)
        self._calls = await self._nc.subscribe(
            call_subject(self.site, self.node_id), cb=self._on_call
        )
        _LOGGER.info("site road of %s up: hub %s", self.site, ", ".join(self.config.hub_urls))
        while True:
            await self.publish()
            await asyncio.sleep(self.interval_s)

    async def stop(self) -> None:
        """Stop taking calls, wait for the calls still running, close the hub connection.

        When it returns the hub knows this node takes no calls (a caller gets "no
        responders" at once, not a timeout): the unsubscription is flushed first.
        """
        if self._calls is not None:
            with contextlib.suppress(Exception):
                await self._calls.unsubscribe()
                # Up to 5 s: on a busy machine the hub's PONG took over 1 s (CI), and a
                # stop that returned before it left callers waiting out their timeout.
                await settle(self._nc, UNSUBSCRIBE_FLUSH_S)
            self._calls = None
        tasks = [t for t in (self._republish,) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5)
        if self._nc is not None:
            self._closing = True
            with contextlib.suppress(Exception):
                await self._nc.close()
            self._nc = None
            self._closing = False

    @property
    def connected(self) -> bool:
        """Return whether the hub connection is up now."""
        return self._nc is not None and bool(self._nc.is_connected)

    async def _on_error(self, err: Exception) -> None:
        _RATE_LOG.warning(f"site-road:{type(err).__name__}", "site road: %s", err)

    async def _on_disconnected(self) -> None:
        self._lost.set()
        if self._closing:
            return
        _LOGGER.warning("site road of %s: hub connection lost, reconnecting", self.site)

    async def _on_reconnected(self) -> None:
        self._lost = asyncio.Event()
        _LOGGER.info("site road of %s: hub connection back", self.site)
        self._spawn(self.publish())

    def _spawn(self, coro: Awaitable[None]) -> None:
        async def run() -> None:
            await coro

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- announcements and revocations -----------------------------------------------------

    async def publish(self) -> None:
        """Publish this node's announcement and its revocation notices (if connected)."""
        if not self.connected:
            return
        try:
            own = self.handlers.own_announcement()
            if own is not None:
                await self._nc.publish(announce_subject(self.site), orjson.dumps(own))
            notices = self.handlers.revocation_notices()
            if notices:
                await self._nc.publish(revocation_subject(self.site), orjson.dumps(notices))
        except Exception as err:  # the hub went away mid-publish: the next tick sends it
            _RATE_LOG.info("site-road:publish", "site road: publish failed: %s", err)

    async def publish_revocation(self, notice: dict[str, Any]) -> None:
        """Publish one fresh revocation notice to every site at once."""
        if self.connected:
            with contextlib.suppress(Exception):
                await self._nc.publish(revocation_subject(self.site), orjson.dumps([notice]))

    async def _on_announcement(self, msg: Any) -> None:
        site = msg.subject.rsplit(".", 1)[-1]
        doc = _load(msg.data)
        if doc is None or not SITE_RE.match(site):
            self._count(Outcome.MALFORMED)
            return
        outcome = self.handlers.accept_announcement(doc)
        self._count(outcome)
        if outcome in (Outcome.ACCEPTED, Outcome.DUPLICATE):
            origin = doc.get("node_id")
            if isinstance(origin, str) and origin != self.node_id:
                self.site_of[origin] = site

    async def _on_revocations(self, msg: Any) -> None:
        doc = _load(msg.data)
        try:
            self.handlers.accept_revocations(doc)
        except BridgeError as err:
            _RATE_LOG.info("site-road:revocations", "site road: revocations refused: %s", err)

    def _count(self, outcome: Outcome) -> None:
        self.received[outcome] = self.received.get(outcome, 0) + 1

    # -- calls --------------------------------------------------------------------------------

    async def _on_call(self, msg: Any) -> None:
        if not msg.reply:
            return
        if len(self._tasks) >= MAX_INFLIGHT + MAX_WAITING:
            busy = OverloadedError("this site has too many calls waiting; retry later")
            with contextlib.suppress(Exception):
                await msg.respond(orjson.dumps({"error": busy.to_json()}))
            return
        self._spawn(self._answer(msg))

    async def _answer(self, msg: Any) -> None:
        async with self._inflight:
            doc = _load(msg.data)
            try:
                answer = await self.handlers.answer_call(doc)
            except Exception:
                _LOGGER.exception("site road: answering a call failed")
                answer = {"error": InternalError("internal error").to_json()}
            with contextlib.suppress(Exception):
                await msg.respond(orjson.dumps(answer))

    async def request(
        self, site: str, node_id: str, envelope: dict[str, Any], timeout_s: float
    ) -> Any:
        """Send a forwarded call to ``node_id`` at ``site``; return its (unverified) answer.

        Raises ``SiteUnreachableError`` at once when the hub is not connected or no
        bridge of that site listens (the call did not run), ``SiteLostError`` at once
        when the hub connection drops while the call is out, and ``TimeoutError`` when
        no answer came in ``timeout_s`` (both: it may have run).
        """
        import nats.errors

        if not self.connected:
            raise SiteUnreachableError(f"the hub is not connected (site {site})")
        timeout = min(timeout_s, self.config.request_timeout_s)
        lost = self._lost
        asking = asyncio.ensure_future(
            self._nc.request(call_subject(site, node_id), orjson.dumps(envelope), timeout=timeout)
        )
        dropped = asyncio.ensure_future(lost.wait())
        try:
            done, _ = await asyncio.wait({asking, dropped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            dropped.cancel()
            if not asking.done():
                asking.cancel()
        if asking not in done:
            raise SiteLostError(f"the hub connection dropped while site {site} had the call")
        try:
            msg = asking.result()
        except nats.errors.NoRespondersError as err:
            raise SiteUnreachableError(f"no bridge of site {site} is connected") from err
        except (
            nats.errors.ConnectionClosedError,
            nats.errors.ConnectionReconnectingError,
            nats.errors.StaleConnectionError,
        ) as err:
            raise SiteUnreachableError(f"the hub connection dropped: {err}") from err
        except nats.errors.TimeoutError as err:
            raise TimeoutError(f"site {site} did not answer in {timeout:g} s") from err
        doc = _load(msg.data)
        if doc is None:
            raise UnauthenticatedError("the site's answer is not JSON")
        return doc

    def offers_url(self, node_id: str) -> str | None:
        """Return the site-road address of ``node_id`` when it was heard on the road."""
        site = self.site_of.get(node_id)
        if site is None or node_id == self.node_id:
            return None
        return site_url(site, node_id)

    def forget(self, node_id: str) -> None:
        """Drop what the road knows of ``node_id`` (its announcement expired)."""
        self.site_of.pop(node_id, None)


def read_seed(path: Path) -> str:
    """Return the nkey seed stored in ``path`` (the line starting with ``SU``)."""
    for line in path.read_text(encoding="ascii").splitlines():
        if line.strip().startswith("SU"):
            return line.strip()
    raise ConfigInvalidError(
        f"no user nkey seed (SU...) in {path}", {"key": "mesh.sites.credentials_file"}
    )


def _load(data: bytes) -> Any:
    try:
        return jsonlimits.loads(data, _LIMITS)
    except BridgeError:
        return None
