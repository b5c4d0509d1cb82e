"""Availability follows the device: a node that is back on the network is usable at once.

python-matter-server 8.1.2 marks a node available again only when its subscription is
re-established, and that waits for the CHIP SDK's resubscription back-off (up to 10 s,
then 20, 30, 50, 80 s ..., compiled into the SDK) or, when a setup attempt failed, for
its own 60-second setup retry. Its operational mDNS handler cuts the wait only when the
device's record is *new* to its cache, and only if a resubscription is scheduled at
that very moment. None of its WebSocket commands resubscribes a node: ``interview_node``
reads it (and leaves it unavailable), ``ping_node`` pings its addresses. Measured in
docs/faults.md.

So the bridge's launcher adds one, ``RESUBSCRIBE_COMMAND`` (``controller.guard``): the
server's own node setup, now. ``NodeRecovery`` watches for the device itself: every
mDNS answer carrying a node's operational record
(``<compressed fabric id>-<node id>._matter._tcp.local.``) while the controller holds
that node unavailable is a sighting; unavailable nodes are also asked for by name every
``query_interval_s``. ``grace_s`` after a sighting the node is resubscribed, again every
``retry_s`` until the device answers (for at most ``answer_window_s``): about half a
second from the device's announcement to a node that works.

A controller without the command (an external one, or a server version the launcher
does not extend) is the last resort's case: ``interview_node`` proves the device
answers, and if the controller still holds it unavailable ``after_answer_s`` later, the
managed controller is restarted (its start sets up every node afresh, so the device is
subscribed within seconds) - at most once per ``min_restart_interval_s`` (doubled for a
node each time a restart did not bring it back), never within ``settle_s`` of a
controller connection (it sets up its nodes then). An external controller, which the
bridge cannot restart, is told nothing more than the interview; the bridge says so once
a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bridge.errors import BridgeError
from bridge.matter.controller.adapter import MatterAdapter
from bridge.matter.controller.gateway import ControllerCommandError
from bridge.matter.controller.guard import RESUBSCRIBE_COMMAND
from bridge.matter.spec.models import AdapterEvent, AdapterEventKind
from bridge.ratelog import RateLimitedLog

LOGGER = logging.getLogger(__name__)
_RATE_LOG = RateLimitedLog(LOGGER)
OPERATIONAL_TYPE = "_matter._tcp.local."
_INSTANCE = re.compile(r"^([0-9A-Fa-f]{16})-([0-9A-Fa-f]{16})\._matter\._tcp\.local\.$")
_SRV, _TXT = 33, 16
# python-matter-server's error code for a command it does not know (InvalidCommand).
INVALID_COMMAND = 9
# A node that stays unavailable after restarts is not worth restarting for more often.
MAX_RESTART_INTERVAL_S = 1800.0
MAX_QUERY_INTERVAL_S = 30.0
QUERY_FLOOR_S = 0.5


def parse_instance(name: str) -> tuple[int, int] | None:
    """Return (compressed fabric id, node id) of an operational instance name, or None."""
    found = _INSTANCE.match(name)
    if found is None:
        return None
    return int(found.group(1), 16), int(found.group(2), 16)


def instance_name(compressed_fabric_id: int, node_id: int) -> str:
    """Return a node's operational mDNS instance name (Matter core spec 4.3.2.1)."""
    return f"{compressed_fabric_id:016X}-{node_id:016X}.{OPERATIONAL_TYPE}"


def _sightings(on_sighting: Callable[[int, int], None]) -> Any:
    """Return a zeroconf record listener reporting every operational instance answered."""
    from zeroconf import RecordUpdateListener

    class Sightings(RecordUpdateListener):
        def async_update_records(self, zc: Any, now: float, records: list[Any]) -> None:
            """Report each operational instance a received answer names (goodbyes aside)."""
            for update in records:
                record = update.new
                if record.type not in (_SRV, _TXT) or record.ttl == 0:
                    continue
                parsed = parse_instance(record.name)
                if parsed is not None:
                    on_sighting(*parsed)

    return Sightings()


class NodeRecovery:
    """Re-establish nodes the controller holds unavailable as soon as they are seen."""

    def __init__(
        self,
        adapter: MatterAdapter,
        *,
        restart: Callable[[str], Awaitable[bool]] | None = None,
        listen: bool = True,
        grace_s: float = 0.3,
        retry_s: float = 1.0,
        resubscribe_timeout_s: float = 15.0,
        settle_s: float = 6.0,
        min_restart_interval_s: float = 30.0,
        query_interval_s: float = 2.0,
        interview_timeout_s: float = 8.0,
        answer_window_s: float = 30.0,
        after_answer_s: float = 1.5,
    ) -> None:
        self.adapter = adapter
        self._restart = restart
        self._listen = listen
        self.grace_s = grace_s
        self.retry_s = retry_s
        self.resubscribe_timeout_s = resubscribe_timeout_s
        self.settle_s = settle_s
        self.min_restart_interval_s = min_restart_interval_s
        self.query_interval_s = query_interval_s
        self.interview_timeout_s = interview_timeout_s
        self.answer_window_s = answer_window_s
        self.after_answer_s = after_answer_s
        self._connected_at = 0.0
        # False once the controller answered that it does not know RESUBSCRIBE_COMMAND.
        self._can_resubscribe = True
        self._last_restart = -1e9
        # Restarts made for a node that stayed unavailable: each doubles its next wait.
        self._strikes: dict[int, int] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._querier: asyncio.Task[None] | None = None
        # Set when a node turns unavailable: the query loop asks for it at once.
        self._lost = asyncio.Event()
        self._zc: Any = None
        self._unsubscribe: Callable[[], None] | None = None
        # What happened, for tests, benches and diagnostics.
        self.counts = {
            "sightings": 0,
            "recovered_alone": 0,
            "resubscribed": 0,
            "resubscribe_failed": 0,
            "interviews": 0,
            "interview_failed": 0,
            "restarts": 0,
        }

    async def start(self) -> None:
        """Follow the adapter's nodes and, with ``listen``, the operational mDNS records."""
        self._unsubscribe = self.adapter.subscribe(self._on_event)
        if self.adapter.connected:
            self._connected_at = time.monotonic()
        if not self._listen:
            return
        try:
            from zeroconf import IPVersion
            from zeroconf.asyncio import AsyncZeroconf

            self._zc = AsyncZeroconf(ip_version=IPVersion.All)
            self._zc.zeroconf.async_add_listener(_sightings(self._on_sighting), None)
        except OSError as err:  # no multicast here: recovery waits for the controller
            _RATE_LOG.warning("mdns", "operational mDNS not watched: %s", err)
            self._zc = None
            return
        self._querier = asyncio.create_task(self._query_loop(), name="matter-recovery-query")

    async def stop(self) -> None:
        """Stop watching and end every recovery under way."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        tasks = [t for t in (self._querier, *self._tasks.values()) if t is not None]
        self._querier = None
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._zc is not None:
            zc, self._zc = self._zc, None
            await zc.async_close()

    def _on_event(self, event: AdapterEvent) -> None:
        if event.kind is AdapterEventKind.CONNECTED:
            self._connected_at = time.monotonic()
            self._can_resubscribe = True  # perhaps another controller now
        elif event.node_id is not None and self._available(event.node_id):
            self._strikes.pop(event.node_id, None)
        elif event.node_id is not None:
            self._lost.set()

    def _fabric(self) -> int | None:
        info = self.adapter.server_info()
        value = info.get("compressed_fabric_id") if info is not None else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _unavailable(self) -> list[int]:
        if not self.adapter.connected:
            return []
        return [node.node_id for node in self.adapter.nodes() if not node.available]

    def _on_sighting(self, fabric: int, node_id: int) -> None:
        if fabric != self._fabric():
            return  # another fabric's node, or not connected yet
        self.seen(node_id)

    def seen(self, node_id: int) -> None:
        """Take note that ``node_id``'s device is on the network; recover it if need be."""
        node = self.adapter.node(node_id)
        if node is None or node.available or not self.adapter.connected:
            return
        self.counts["sightings"] += 1
        if node_id in self._tasks:
            return
        task = asyncio.get_running_loop().create_task(
            self._recover(node_id), name=f"matter-recover-{node_id}"
        )
        self._tasks[node_id] = task
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        for node_id, running in tuple(self._tasks.items()):
            if running is task:
                del self._tasks[node_id]

    def _available(self, node_id: int) -> bool:
        node = self.adapter.node(node_id)
        return node is not None and node.available

    async def _recover(self, node_id: int) -> None:
        await asyncio.sleep(self.grace_s)  # one announcement comes as a burst of answers
        if self._can_resubscribe and await self._resubscribed(node_id):
            return
        await self._restart_if_stuck(node_id)

    async def _resubscribed(self, node_id: int) -> bool:
        """Have the controller set the node up now, again until the device answers.

        Return ``True`` once the node is available (or the controller is gone: its next
        start sets its nodes up), ``False`` when the controller lacks the command or the
        device did not answer within ``answer_window_s``.
        """
        give_up = time.monotonic() + self.answer_window_s
        while time.monotonic() < give_up:
            if self._available(node_id) or not self.adapter.connected:
                self.counts["recovered_alone"] += 1
                return True
            try:
                await self.adapter.send_command(
                    RESUBSCRIBE_COMMAND, timeout_s=self.resubscribe_timeout_s, node_id=node_id
                )
            except ControllerCommandError as err:
                if err.error_code == INVALID_COMMAND:
                    self._can_resubscribe = False
                    _RATE_LOG.warning(
                        "no-resubscribe",
                        "the controller has no %s command (it was not "
                        "started by the bridge's launcher): a node it holds unavailable "
                        "waits for its back-off or a restart",
                        RESUBSCRIBE_COMMAND,
                    )
                    return False
                failure = err.details
            except (BridgeError, TimeoutError) as err:
                failure = str(err) or type(err).__name__
            else:
                if await self._becomes_available(node_id, self.retry_s):
                    self.counts["resubscribed"] += 1
                    LOGGER.info("node %s is back: the controller set it up again", node_id)
                    return True
                failure = "the controller still holds it unavailable"
            self.counts["resubscribe_failed"] += 1
            _RATE_LOG.info(
                f"resubscribe:{node_id}",
                "node %s was seen on mDNS but does not answer yet: %s",
                node_id,
                failure,
            )
            await asyncio.sleep(self.retry_s)
        return False

    async def _becomes_available(self, node_id: int, within_s: float) -> bool:
        """Return whether the node is available within ``within_s``.

        The controller answers a command before the ``node_updated`` it signalled on
        the way reaches the bridge.
        """
        until = time.monotonic() + within_s
        while not self._available(node_id):
            if time.monotonic() > until:
                return False
            await asyncio.sleep(0.05)
        return True

    async def _restart_if_stuck(self, node_id: int) -> None:
        """Restart the controller if the device answers it in vain (the last resort)."""
        # The controller sets up its nodes right after it (re)starts: give it that time.
        await asyncio.sleep(max(0.0, self._connected_at + self.settle_s - time.monotonic()))
        while True:
            if not await self._stuck(node_id):
                return
            if self._restart is None:
                _RATE_LOG.warning(
                    f"stuck:{node_id}",
                    "node %s answers but the controller holds it "
                    "unavailable (its resubscription back-off); an external controller "
                    "cannot be restarted by the bridge",
                    node_id,
                )
                return
            strikes = self._strikes.get(node_id, 0)
            wait_s = min(self.min_restart_interval_s * 2**strikes, MAX_RESTART_INTERVAL_S)
            held_s = self._last_restart + wait_s - time.monotonic()
            if held_s <= 0:
                break
            _RATE_LOG.warning(
                f"held:{node_id}",
                "node %s answers but the controller holds it "
                "unavailable; the controller may be restarted again in %.0f s",
                node_id,
                held_s,
            )
            await asyncio.sleep(held_s)
        self._last_restart = time.monotonic()
        self._strikes[node_id] = strikes + 1
        self.counts["restarts"] += 1
        await self._restart(
            f"node {node_id} answers on the network but the controller holds it "
            "unavailable (resubscription back-off)"
        )

    async def _stuck(self, node_id: int) -> bool:
        """Return whether the device answers while the controller holds it unavailable.

        Interviews it until it answers, for at most ``answer_window_s``; ``False`` when
        the controller recovered it meanwhile or it never answered (a sighting too early,
        or stale: the next one tries again).
        """
        give_up = time.monotonic() + self.answer_window_s
        while True:
            if self._available(node_id) or not self.adapter.connected:
                self.counts["recovered_alone"] += 1
                return False
            if await self._answers(node_id):
                break
            if time.monotonic() > give_up:
                return False
            await asyncio.sleep(0.5)
        # A resubscription under way when the device came back lands now (it does in
        # about a second when the controller's own mDNS trigger caught it).
        await asyncio.sleep(self.after_answer_s)
        if self._available(node_id):
            self.counts["recovered_alone"] += 1
            return False
        return True

    async def _answers(self, node_id: int) -> bool:
        """Return whether the device answers an interview (a read of all its attributes)."""
        self.counts["interviews"] += 1
        LOGGER.info("node %s is on the network but unavailable: interviewing it", node_id)
        try:
            await self.adapter.send_command(
                "interview_node", timeout_s=self.interview_timeout_s, node_id=node_id
            )
        except (BridgeError, ControllerCommandError, TimeoutError) as err:
            self.counts["interview_failed"] += 1
            _RATE_LOG.info(
                f"interview:{node_id}",
                "node %s was seen on mDNS but does not answer yet: %s",
                node_id,
                err or type(err).__name__,
            )
            return False
        return True

    async def _query_loop(self) -> None:
        """Ask for every unavailable node's operational record by name, now and then.

        Every ``query_interval_s`` while the set of unavailable nodes changes, doubling
        up to ``MAX_QUERY_INTERVAL_S`` while it stays the same (a device away for days is
        not asked for every 2 s; one that comes back announces itself anyway), and at
        once when a node turns unavailable (its device may be back already: a
        controller notices a device gone only when its subscription fails).
        """
        from zeroconf._dns import DNSQuestion
        from zeroconf._protocol.outgoing import DNSOutgoing
        from zeroconf.const import _CLASS_IN, _FLAGS_QR_QUERY, _TYPE_SRV

        interval = self.query_interval_s
        asked: tuple[int, ...] = ()
        while True:
            try:
                await asyncio.wait_for(self._lost.wait(), interval)
            except TimeoutError:
                pass
            else:
                await asyncio.sleep(QUERY_FLOOR_S)  # a burst of events asks once
            self._lost.clear()
            fabric = self._fabric()
            wanted = tuple(self._unavailable())
            if wanted != asked:
                interval, asked = self.query_interval_s, wanted
            else:
                interval = min(interval * 2, MAX_QUERY_INTERVAL_S)
            if fabric is None or not wanted or self._zc is None:
                continue
            out = DNSOutgoing(_FLAGS_QR_QUERY, True)
            for node_id in wanted:
                out.add_question(DNSQuestion(instance_name(fabric, node_id), _TYPE_SRV, _CLASS_IN))
            try:
                self._zc.zeroconf.async_send(out)
            except OSError as err:
                _RATE_LOG.warning("query", "operational mDNS query failed: %s", err)
