"""In-process event bus: registry changes, tool-call status, device and commissioning events.

Publishers call ``publish(type, data)``; subscribers get a bounded queue per
subscription. A slow subscriber loses its oldest events (and is told how many) rather
than blocking publishers or growing without bound.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One published event: a dotted type (``tool_call.status``) and JSON-able data."""

    type: str
    data: dict[str, Any]
    ts: float = field(default_factory=time.time)
    # What the event is about (a tool's definition, ...), for a face to decide who may
    # see it; never part of the wire form.
    subject: Any = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """Return the wire form."""
        return {"type": self.type, "data": self.data, "ts": self.ts}


class Subscription:
    """A bounded queue of events whose type starts with one of the given prefixes."""

    def __init__(self, prefixes: tuple[str, ...], maxsize: int) -> None:
        self.prefixes = prefixes
        self.queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=maxsize)
        self.dropped = 0

    def wants(self, event_type: str) -> bool:
        """Return whether this subscription takes events of ``event_type``."""
        return not self.prefixes or event_type.startswith(self.prefixes)

    def offer(self, event: Event) -> None:
        """Queue ``event``, dropping the oldest one when full."""
        if self.queue.full():
            self.queue.get_nowait()
            self.dropped += 1
        self.queue.put_nowait(event)

    async def get(self) -> Event:
        """Wait for and return the next event."""
        return await self.queue.get()


class EventBus:
    """Fan-out of events to every matching subscription; never blocks the publisher."""

    def __init__(self, queue_size: int = 1000) -> None:
        self._subs: set[Subscription] = set()
        self._queue_size = queue_size

    def publish(self, event_type: str, data: dict[str, Any], subject: Any = None) -> Event:
        """Publish an event to every subscriber that wants it and return it."""
        event = Event(type=event_type, data=data, subject=subject)
        for sub in tuple(self._subs):
            if sub.wants(event_type):
                sub.offer(event)
        return event

    def wanted(self, event_type: str) -> bool:
        """Return whether any subscription takes events of ``event_type`` right now."""
        return any(sub.wants(event_type) for sub in self._subs)

    def subscribe(self, *prefixes: str) -> Subscription:
        """Return a new subscription; call ``unsubscribe`` when done."""
        sub = Subscription(prefixes, self._queue_size)
        self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Drop a subscription (idempotent)."""
        self._subs.discard(sub)

    @asynccontextmanager
    async def subscription(self, *prefixes: str) -> AsyncIterator[Subscription]:
        """Subscribe for the duration of an ``async with`` block."""
        sub = self.subscribe(*prefixes)
        try:
            yield sub
        finally:
            self.unsubscribe(sub)
